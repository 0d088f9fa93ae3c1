"""Time, in one place, so tests freeze it with freezegun and every dialect stores UTC."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

#: the business calendar's zone: dates on the wire are Minnesota dates (docs/http.md "Conventions")
BUSINESS_TZ = ZoneInfo("America/Chicago")


def utcnow() -> datetime:
    """The current instant, timezone-aware UTC."""
    return datetime.now(UTC)


def as_utc(moment: datetime) -> datetime:
    """``moment`` as aware UTC; naive values (SQLite returns them) are taken as UTC."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def business_date(moment: datetime) -> date:
    """The Minnesota calendar date of an instant."""
    return as_utc(moment).astimezone(BUSINESS_TZ).date()


def today() -> date:
    """Today's Minnesota date."""
    return business_date(utcnow())


def end_of_day(day: date) -> datetime:
    """Midnight at the end of ``day`` in Minnesota, as UTC: when an ``expires_on`` date ends."""
    local_midnight = datetime.combine(day + timedelta(days=1), time(0), tzinfo=BUSINESS_TZ)
    return local_midnight.astimezone(UTC)
