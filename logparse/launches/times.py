"""A launch's times as every surface prints them: ISO 8601 with their zone.

The model keeps each time as the log printed it (``started_at``: ISO text, no offset) and the
launch's zone apart (:attr:`logparse.launches.model.Launch.time_zone`, ``+00:00``), since a plain
log's stamps are the server's local time in a zone it never names.  Printed, a time carries its
offset when the input said it (``2026-11-29T08:08:05+00:00``), and says it has none otherwise
(``2026-11-29T08:08:05 (no zone)``), the same way everywhere.
"""

from __future__ import annotations

from datetime import UTC, datetime

#: What a printed time without an offset says.
NO_ZONE = "no zone"


def zone_text(minutes: int | None) -> str | None:
    """``+00:00``, ``+05:30``, ``-07:00`` for an offset in minutes east of UTC; None for None."""
    if minutes is None:
        return None
    sign = "+" if minutes >= 0 else "-"
    h, m = divmod(abs(minutes), 60)
    return f"{sign}{h:02d}:{m:02d}"


def iso_time(value: str | datetime | None, zone: str | None, *, sep: str = "T", mark: bool = True) -> str | None:
    """``value`` (ISO text or a naive datetime, to the second) in ISO 8601 with ``zone`` appended;
    without a zone, ``(no zone)`` after it when ``mark`` (a sentence; a table says it once, in its
    heading).  None stays None."""
    if value is None:
        return None
    if isinstance(value, datetime):
        text = value.isoformat(sep=sep, timespec="seconds")
    else:
        text = str(value).replace(" ", "T", 1) if sep == "T" else str(value).replace("T", sep, 1)
    if zone:
        return text + zone
    return f"{text} ({NO_ZONE})" if mark else text


def iso_utc(ts: float | tuple[int, int, int] | None) -> str | None:
    """The record time ``ts`` (seconds since the epoch) as naive ISO text in UTC; None without one."""
    if not isinstance(ts, (int, float)):  # none, or a year-less stamp the sources could not date
        return None
    try:
        return datetime.fromtimestamp(ts, tz=UTC).replace(tzinfo=None).isoformat(timespec="seconds")
    except (OverflowError, OSError, ValueError, TypeError):
        return None


#: How far a line's own stamp may lag its record time and still be read as the same moment (s).
_STAMP_LAG_S = 120


def utc_offset(ts: str | None, outer: str | None, instant: bool) -> int | None:
    """Minutes east of UTC of the event time ``ts``, when the record time ``outer`` (UTC) is a real
    instant: 0 when ``ts`` is that time; for a server's own stamp (its local time), the difference
    to the record time to the quarter hour, when the stamp is within :data:`_STAMP_LAG_S` of a
    quarter hour off it (a line is stamped twice within moments).  None without a zone."""
    if not instant or ts is None or outer is None:
        return None
    if ts == outer:
        return 0
    try:
        d = (datetime.fromisoformat(ts) - datetime.fromisoformat(outer)).total_seconds()
    except ValueError:
        return None
    quarter = round(d / 900) * 900
    if abs(d - quarter) > _STAMP_LAG_S or abs(quarter) > 14 * 3600:
        return None
    return int(quarter) // 60
