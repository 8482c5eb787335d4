"""The times a user may give, and how they map to Hudi instants.

Accepted: a Hudi instant (yyyyMMddHHmmssSSS, or yyyyMMddHHmmss), an ISO 8601 time with or
without a zone (``2021-12-30T13:00:00Z``, ``2021-12-30 08:00:00-05:00``; no zone means UTC) or
a date (``2021-12-30``, midnight UTC). Instants are wall-clock times in the table's timeline
zone (``hoodie.table.timeline.timezone``: UTC, or LOCAL = the zone of the machine that wrote).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone, tzinfo

from hudi_cdc.query.errors import BadTimeError

UTC = timezone.utc
_INSTANT = re.compile(r"^\d{14}(\d{3})?$")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}(:?\d{2})?)?$", re.I)
ACCEPTED = ("a Hudi instant (yyyyMMddHHmmssSSS), an ISO time (2021-12-30T13:00:00Z; no zone = UTC) "
            "or a date (2021-12-30)")


@dataclass(frozen=True)
class UserTime:
    """What the user typed, read: `instant` in the timeline's zone; `exact` when typed as an instant
    (so it can name a commit by its requested time)."""

    text: str
    instant: str
    exact: bool


def timeline_zone(name: str | None) -> tzinfo | None:
    """The zone instants are written in, from hoodie.table.timeline.timezone: UTC, or LOCAL (the
    default) = this machine's zone, returned as None (Python's own "local time", DST included)."""
    return UTC if (name or "LOCAL").upper() == "UTC" else None


def format_instant(moment: datetime, zone: tzinfo | None = UTC) -> str:
    """yyyyMMddHHmmssSSS of an aware datetime, in `zone`."""
    local = moment.astimezone(zone)
    return local.strftime("%Y%m%d%H%M%S") + f"{local.microsecond // 1000:03d}"


def instant_datetime(instant: str, zone: tzinfo | None = UTC) -> datetime:
    """The aware datetime of an instant written in `zone`."""
    if not instant or not _INSTANT.match(instant):
        raise BadTimeError(f"{instant!r} is not a Hudi instant (yyyyMMddHHmmssSSS)")
    ms = int(instant[14:17] or 0)
    try:
        naive = datetime.strptime(instant[:14], "%Y%m%d%H%M%S") + timedelta(milliseconds=ms)
    except ValueError:
        raise BadTimeError(f"{instant!r} is not a valid Hudi instant (yyyyMMddHHmmssSSS)") from None
    return naive.astimezone() if zone is None else naive.replace(tzinfo=zone)


def wall_clock(instant: str | None, zone: tzinfo | None = UTC) -> str | None:
    """An instant as an ISO time in UTC with milliseconds: 2021-12-30T13:26:28.123Z."""
    if not instant:
        return None
    moment = instant_datetime(instant, zone).astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def parse_moment(text: str) -> str | datetime:
    """A bare instant (17 digits) or an aware datetime; BadTimeError for anything else."""
    raw = (text or "").strip()
    if _INSTANT.match(raw):
        instant = raw if len(raw) == 17 else raw + "000"
        instant_datetime(instant)  # validates month, day, hour ...
        return instant
    try:
        if _DATE.match(raw):
            d = date.fromisoformat(raw)
            return datetime(d.year, d.month, d.day, tzinfo=UTC)
        if _ISO.match(raw):
            iso = re.sub(r"z$", "+00:00", raw, flags=re.I)
            iso = re.sub(r"([+-]\d{2})(\d{2})$", r"\1:\2", iso)
            iso = re.sub(r"([+-]\d{2})$", r"\1:00", iso) if re.search(r"[T ]\S*[+-]\d{2}$", iso) else iso
            frac = re.search(r"\.(\d+)", iso)
            if frac and len(frac.group(1)) > 6:
                iso = iso.replace(frac.group(0), "." + frac.group(1)[:6])
            moment = datetime.fromisoformat(iso)
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    except ValueError:
        pass
    raise BadTimeError(f"bad time {text!r}: use {ACCEPTED}")


def read_time(text: str, zone: tzinfo | None = UTC) -> UserTime:
    """The user's time as an instant in the timeline's zone."""
    moment = parse_moment(text)
    if isinstance(moment, str):
        return UserTime(text, moment, exact=True)
    return UserTime(text, format_instant(moment, zone), exact=False)
