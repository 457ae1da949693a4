"""Timestamp helpers for the source layer (all results are epoch seconds, UTC)."""

from __future__ import annotations

import calendar

_day_cache: dict[tuple[int, int, int], int] = {}
_date_cache: dict[bytes, int] = {}


def day_epoch(y: int, m: int, d: int) -> int:
    """Epoch seconds of 00:00:00 UTC on y-m-d (cached: logs repeat the same days)."""
    key = (y, m, d)
    v = _day_cache.get(key)
    if v is None:
        v = calendar.timegm((y, m, d, 0, 0, 0, 0, 0, 0))
        if len(_day_cache) > 100_000:
            _day_cache.clear()
        _day_cache[key] = v
    return v


def date_epoch(date: bytes) -> int:
    """Epoch seconds of 00:00 UTC for ``b"YYYY-MM-DD"``."""
    v = _date_cache.get(date)
    if v is None:
        v = day_epoch(int(date[0:4]), int(date[5:7]), int(date[8:10]))
        if len(_date_cache) > 100_000:
            _date_cache.clear()
        _date_cache[date] = v
    return v


def hms_seconds(hms: bytes) -> int:
    """``b"HH:MM:SS"`` -> seconds of the day."""
    return int(hms[0:2]) * 3600 + int(hms[3:5]) * 60 + int(hms[6:8])


def frac_seconds(frac: bytes | None) -> float:
    """``b".123456"`` -> 0.123456 (any number of digits; None -> 0)."""
    if not frac:
        return 0.0
    return int(frac[1:]) / (10 ** (len(frac) - 1))


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
