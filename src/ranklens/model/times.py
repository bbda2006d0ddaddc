"""Points in time as freshness reads them: seconds since 1970-01-01 UTC, as float64.

A time is given as an ISO 8601 string with a time zone (``"2024-05-01T09:30:00+02:00"``,
``"2024-05-01T07:30Z"``), a calendar date (``"2024-05-01"``: midnight UTC, or midnight in
``tz``), a timezone-aware ``datetime``, a ``date``, or a number of seconds since the epoch.
A time of day without a zone is ambiguous by up to a day, so it is refused with the
document it belongs to and the fix (add the zone, or say which zone with ``tz=``); so are
strings that are not ISO 8601 and numbers that look like milliseconds. Missing values
(``None``, ``""``, NaN) are NaN: unknown, never "now" or "fresh".
"""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import numpy as np

from ..declared import ParameterError
from ..errors import InputError
from ..text import shown

MAX_SECONDS = 32_503_680_000.0
"""Seconds of 3000-01-01 UTC: a number beyond it is taken for milliseconds (an error)."""

TzLike = str | dt.tzinfo | None


def zone(tz: TzLike) -> dt.tzinfo | None:
    """A ``tzinfo`` from ``"UTC"``, an IANA name (``"Europe/Paris"``) or itself."""
    if tz is None or isinstance(tz, dt.tzinfo):
        return tz
    if str(tz).upper() in ("UTC", "Z", "GMT"):
        return dt.timezone.utc
    try:
        from zoneinfo import ZoneInfo

        return ZoneInfo(str(tz))
    except Exception:
        raise InputError(
            f"unknown time zone {tz!r}: use 'UTC' or an IANA name such as 'Europe/Paris'"
        ) from None


def parse_time(value: Any, where: str, tz: TzLike = None) -> float:
    """``value`` as seconds since the epoch (UTC); NaN when missing. ``where`` names the
    document or query in errors; ``tz`` reads times of day without a zone (and dates) in
    that zone."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return math.nan
    if isinstance(value, bool):
        raise InputError(f"{where}: a time must be a date, a datetime or seconds, got {value!r}")
    if isinstance(value, (int, float, np.integer, np.floating)):
        x = float(value)
        if math.isnan(x):
            return math.nan
        if not math.isfinite(x) or abs(x) > MAX_SECONDS:
            raise InputError(
                f"{where}: {value!r} is not a plausible time in seconds since 1970 (beyond the "
                "year 3000): milliseconds? divide by 1000, or write an ISO date"
            )
        return x
    if isinstance(value, np.datetime64):
        if np.isnat(value):
            return math.nan
        value = value.astype("datetime64[us]").item()
    if isinstance(value, str):
        value = _iso(value.strip(), where)
    if isinstance(value, dt.datetime):
        if value.tzinfo is None or value.utcoffset() is None:
            z = zone(tz)
            if z is None:
                raise InputError(
                    f"{where}: the time {value.isoformat()!r} has no time zone: write it with "
                    "one ('...Z' or '...+02:00'), or give tz='UTC' (or the zone it was "
                    "written in)"
                )
            value = value.replace(tzinfo=z)
        return float(value.timestamp())
    if isinstance(value, dt.date):
        z = zone(tz) or dt.timezone.utc
        return dt.datetime(value.year, value.month, value.day, tzinfo=z).timestamp()
    raise InputError(
        f"{where}: a time must be an ISO 8601 string, a date, a datetime or seconds since "
        f"1970, got {type(value).__name__} {shown(value)}"
    )


def _iso(text: str, where: str) -> dt.date | dt.datetime:
    """An ISO 8601 date or datetime (a trailing ``Z`` read as UTC on every Python)."""
    s = text[:-1] + "+00:00" if text.endswith(("Z", "z")) else text
    try:
        if len(s) == 10 and "T" not in s and " " not in s:
            return dt.date.fromisoformat(s)
        return dt.datetime.fromisoformat(s)
    except ValueError:
        raise InputError(
            f"{where}: cannot read {text!r} as a time: write ISO 8601, such as 2024-05-01 or "
            "2024-05-01T09:30:00+00:00"
        ) from None


def required_time(value: Any, where: str, tz: TzLike = None) -> float:
    """``value`` as seconds since the epoch where a time is required (an as-of time): a
    missing value (None, ``""``, NaN, NaT) is an error naming ``where``, never "the newest
    state" in silence."""
    seconds = parse_time(value, where, tz)
    if math.isnan(seconds):
        raise ParameterError(
            f"{where} must be a time (an ISO 8601 text, a date, a datetime or seconds since "
            f"1970), got {shown(value)}; leave as_of out to judge as of the newest version"
        )
    return seconds


def parse_times(values: Any, where: list[str] | Any, tz: TzLike = None) -> np.ndarray:
    """Many times at once (``where``: one label per value, or a function of the index)."""
    out = np.empty(len(values), dtype=np.float64)
    label = where if callable(where) else where.__getitem__
    for i, v in enumerate(values):
        out[i] = parse_time(v, label(i), tz)
    return out


def show_time(seconds: float) -> str:
    """``2024-05-01`` for a midnight UTC, else ``2024-05-01T09:30:00Z``; ``unknown`` for
    NaN."""
    if seconds is None or math.isnan(seconds):
        return "unknown"
    if math.isinf(seconds):
        return "never" if seconds > 0 else "always"
    t = dt.datetime.fromtimestamp(seconds, dt.timezone.utc)
    if t.hour == t.minute == t.second == t.microsecond == 0:
        return t.date().isoformat()
    return t.strftime("%Y-%m-%dT%H:%M:%S") + "Z"
