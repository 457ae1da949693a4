"""Timestamp helpers for the source layer (all results are epoch seconds, UTC)."""

from __future__ import annotations

import calendar

_day_cache: dict[tuple[int, int, int], int] = {}
_date_cache: dict[bytes, int | None] = {}

#: The times a stamp may name: those every surface can hold (Python's datetime, DuckDB's
#: TIMESTAMP): years 1 to 9999, UTC.
MIN_EPOCH = -62_135_596_800  # 0001-01-01T00:00:00Z
MAX_EPOCH = 253_402_300_800  # 10000-01-01T00:00:00Z

#: The start of the note on a record whose outer time is no real time (month 13, Feb 30, hour
#: 25, year 0): the line is read without that time; the pipeline says so once per input.
NOTE_BAD_TIME = "impossible time"

#: Formats whose record time is an instant: they print its zone (``+0000``, ``Z``, a known zone
#: name) or store epoch time.  Zone-less renderings (journald ``short``, Docker Desktop, Python
#: logging wrappers) are read as UTC without being UTC, and a compose capture may mix both.
ZONED_FORMATS = frozenset(
    {
        "journal-short-iso",
        "journal-short-iso-precise",
        "journal-short-full",
        "journal-with-unit",
        "journal-short-unix",
        "journal-json",
        "journal-json-seq",
        "journal-json-sse",
        "journal-json-pretty",
        "journal-export",
        "journal-verbose",
        "docker",
        "docker-json",
        "kubectl",
    }
)


def record_time_is_instant(fmt: str, notes: list[str]) -> bool:
    """Is a record's time a real instant (its zone was printed), not a local time read as UTC?"""
    return fmt in ZONED_FORMATS and not any("read as UTC" in n for n in notes)


def bad_time_note(when: str) -> str:
    """The note on a record whose time ``when`` (as printed) names no real time."""
    return f"{NOTE_BAD_TIME} {when!r}, read without it"


def civil_epoch(year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0) -> int | None:
    """Epoch seconds (UTC) of a calendar date and time of day; None when it names no real time
    (month 13, Feb 30, Apr 31, hour 25, minute 60, year 0 or above 9999).

    The one checked constructor: every time read from a log's text goes through it (the outer
    layers' stamps through :func:`stamp_epoch`, SGLang's and vLLM's own through
    :func:`iso_stamp_ok`), so that an absurd stamp costs its line its time and nothing else."""
    if not (1 <= month <= 12 and 1 <= year <= 9999 and 1 <= day <= 31):
        return None
    if day > 28 and day > calendar.monthrange(year, month)[1]:
        return None
    if not (0 <= hour < 24 and 0 <= minute < 60 and 0 <= second < 60):
        return None
    return day_epoch(year, month, day) + hour * 3600 + minute * 60 + second


def epoch_in_range(ts: float | None) -> float | None:
    """``ts`` when it is a time every surface can hold (years 1-9999), else None."""
    if ts is None or not (MIN_EPOCH <= ts < MAX_EPOCH):  # NaN fails the comparison too
        return None
    return ts


def epoch_of_micros(value: str | None) -> tuple[float | None, bool]:
    """journald's microseconds since the epoch (``__REALTIME_TIMESTAMP``) as epoch seconds, and
    whether a value was given that is none (not a number, or a time no surface can hold)."""
    if value is None:
        return None, False
    try:
        us = int(value)
    except ValueError:
        return None, True
    if not (MIN_EPOCH * 1_000_000 <= us < MAX_EPOCH * 1_000_000):  # before dividing: 10**400 / 1e6 overflows
        return None, True
    return us / 1e6, False


def day_epoch(y: int, m: int, d: int) -> int:
    """Epoch seconds of 00:00:00 UTC on y-m-d (cached: logs repeat the same days); unchecked:
    callers go through :func:`civil_epoch`."""
    key = (y, m, d)
    v = _day_cache.get(key)
    if v is None:
        v = calendar.timegm((y, m, d, 0, 0, 0, 0, 0, 0))
        if len(_day_cache) > 100_000:
            _day_cache.clear()
        _day_cache[key] = v
    return v


def date_epoch(date: bytes) -> int | None:
    """Epoch seconds of 00:00 UTC for ``b"YYYY-MM-DD"``; None when it is no real date."""
    try:
        return _date_cache[date]
    except KeyError:
        pass
    v = civil_epoch(int(date[0:4]), int(date[5:7]), int(date[8:10]))
    if len(_date_cache) > 100_000:
        _date_cache.clear()
    _date_cache[date] = v
    return v


def hms_seconds(hms: bytes) -> int | None:
    """``b"HH:MM:SS"`` -> seconds of the day; None when it is no time of day (25:00:00)."""
    h, m, s = int(hms[0:2]), int(hms[3:5]), int(hms[6:8])
    if h > 23 or m > 59 or s > 59:
        return None
    return h * 3600 + m * 60 + s


def frac_seconds(frac: bytes | None) -> float:
    """``b".123456"`` -> 0.123456 (any number of digits; None -> 0)."""
    if not frac:
        return 0.0
    return int(frac[1:]) / (10 ** (len(frac) - 1))


def stamp_epoch(date: bytes, hms: bytes, frac: bytes | None = None, offset: int = 0) -> float | None:
    """Epoch seconds (UTC) of ``b"YYYY-MM-DD"``, ``b"HH:MM:SS"``, an optional fraction and
    the offset east of UTC the stamp was written in; None when they name no real time (see
    :func:`civil_epoch`).  Every outer layer's printed time is read here."""
    day = date_epoch(date)
    sod = hms_seconds(hms)
    if day is None or sod is None:
        return None
    return epoch_in_range(day + sod + frac_seconds(frac) - offset)


#: :func:`civil_epoch`'s checks as a regexp (Rust's regex crate too: polars runs it over a block's
#: batch lines): ``YYYY-MM-DD HH:MM:SS`` that names a real time, or a real ``HH:MM:SS``.
#: ``tests/test_bad_stamps.py`` proves that it, the numpy check of :mod:`logparse.engines.sglang.bulk_template`
#: and :func:`civil_epoch` agree.
_YEAR = r"(?:[1-9]\d{3}|0[1-9]\d\d|00[1-9]\d|000[1-9])"
_MONTH_DAY = r"(?:(?:0[1-9]|1[0-2])-(?:0[1-9]|1\d|2[0-8])|(?:0[13-9]|1[0-2])-(?:29|30)|(?:0[13578]|1[02])-31)"
_LEAP_DAY = r"(?:\d\d(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)-02-29"
_TIME_OF_DAY = r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d"
REAL_STAMP = rf"(?:{_YEAR}-{_MONTH_DAY}|{_LEAP_DAY}) {_TIME_OF_DAY}|{_TIME_OF_DAY}"

#: Dates of SGLang's and vLLM's stamps already checked (logs repeat the same few days).
_iso_day_ok: dict[str, bool] = {}


def iso_stamp_ok(text: str) -> bool:
    """Whether ``YYYY-MM-DD[T ]HH:MM:SS[.fff]`` (SGLang's stamp, vLLM's completed with its year)
    names a real time; a bare ``HH:MM:SS`` (SGLang 0.2.14-0.3.3) is checked as a time of day."""
    if not text.isascii():  # "\d" also matches other scripts' digits
        return False
    if len(text) < 19:
        return len(text) >= 8 and text[2] == ":" and _time_ok(text)
    day = text[:10]
    ok = _iso_day_ok.get(day)
    if ok is None:
        try:
            ok = civil_epoch(int(day[0:4]), int(day[5:7]), int(day[8:10])) is not None and day[4] == day[7] == "-"
        except ValueError:
            ok = False
        if len(_iso_day_ok) > 10_000:
            _iso_day_ok.clear()
        _iso_day_ok[day] = ok
    return ok and _time_ok(text[11:])


def _time_ok(hms: str) -> bool:
    try:
        return int(hms[0:2]) < 24 and int(hms[3:5]) < 60 and int(hms[6:8]) < 60 and hms[2] == hms[5] == ":"
    except (ValueError, IndexError):
        return False


def offset_seconds(tz: bytes) -> int:
    """``Z``, ``+0000``, ``+00:00``, ``-0530``, ``+03`` -> seconds east of UTC."""
    if tz in (b"Z", b"z"):
        return 0
    sign = -1 if tz[:1] == b"-" else 1
    digits = tz[1:].replace(b":", b"")
    if len(digits) <= 2:
        return sign * int(digits) * 3600
    return sign * (int(digits[:-2]) * 3600 + int(digits[-2:]) * 60)


#: Zone abbreviations journalctl prints in short-full / with-unit / verbose.  Only the
#: unambiguous common ones; an unknown abbreviation is read as UTC (with a note).
ZONE_ABBREV: dict[bytes, int] = {
    b"UTC": 0,
    b"GMT": 0,
    b"UCT": 0,
    b"UT": 0,
    b"Z": 0,
    b"Universal": 0,
    b"Zulu": 0,
    b"WET": 0,
    b"WEST": 3600,
    b"BST": 3600,
    b"CET": 3600,
    b"CEST": 7200,
    b"MET": 3600,
    b"MEST": 7200,
    b"EET": 7200,
    b"EEST": 10800,
    b"MSK": 10800,
    b"SAST": 7200,
    b"EST": -5 * 3600,
    b"EDT": -4 * 3600,
    b"CDT": -5 * 3600,
    b"MST": -7 * 3600,
    b"MDT": -6 * 3600,
    b"PST": -8 * 3600,
    b"PDT": -7 * 3600,
    b"AKST": -9 * 3600,
    b"AKDT": -8 * 3600,
    b"HST": -10 * 3600,
    b"JST": 9 * 3600,
    b"KST": 9 * 3600,
    b"HKT": 8 * 3600,
    b"SGT": 8 * 3600,
    b"AWST": 8 * 3600,
    b"ACST": 34200,
    b"ACDT": 37800,
    b"AEST": 10 * 3600,
    b"AEDT": 11 * 3600,
    b"NZST": 12 * 3600,
    b"NZDT": 13 * 3600,
    b"IDT": 3 * 3600,
    b"PKT": 5 * 3600,
}


def zone_offset(tz: bytes) -> int | None:
    """Offset of a zone abbreviation or numeric zone (``+03``, ``-0530``); None if unknown."""
    c = tz[:1]
    if c in (b"+", b"-") and tz[1:].replace(b":", b"").isdigit():
        return offset_seconds(tz)
    return ZONE_ABBREV.get(tz)


#: Month names as printed by ``strftime("%b")``: English (C locale) plus a few common
#: locales (journalctl's short/short-precise follow LC_TIME).  Keys are lower-cased.
MONTHS: dict[str, int] = {}
for _names in (
    "jan feb mar apr may jun jul aug sep oct nov dec",  # C / English
    "jan feb mär apr mai jun jul aug sep okt nov dez",  # German
    "janv. févr. mars avr. mai juin juil. août sept. oct. nov. déc.",  # French
    "ene feb mar abr may jun jul ago sep oct nov dic",  # Spanish
    "gen feb mar apr mag giu lug ago set ott nov dic",  # Italian
    "jan fev mar abr mai jun jul ago set out nov dez",  # Portuguese
    "січ лют бер кві тра чер лип сер вер жов лис гру",  # Ukrainian
    "янв фев мар апр мая июн июл авг сен окт ноя дек",  # Russian
):
    for _i, _n in enumerate(_names.split(), 1):
        MONTHS.setdefault(_n, _i)
        MONTHS.setdefault(_n.rstrip("."), _i)


def month_number(name: bytes) -> int | None:
    try:
        s = name.decode("utf-8").lower()
    except UnicodeDecodeError:
        return None
    return MONTHS.get(s) or MONTHS.get(s.rstrip("."))


def fmt_utc(ts: float | None) -> str:
    """``2026-11-29 08:09:15 UTC`` for messages (``unknown time`` for None)."""
    if ts is None:
        return "unknown time"
    import time as _t

    return _t.strftime("%Y-%m-%d %H:%M:%S UTC", _t.gmtime(ts))
