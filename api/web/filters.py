"""How the pages print numbers, dates and times."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from flask import Blueprint

from ledger import clock

SQFT_PER_ACRE = 43_560


def sqft(value: int | None) -> str:
    """``52000`` → ``52,000``."""
    return "" if value is None else f"{value:,}"


def acres(value: int | None) -> str:
    """Square feet as acres, two decimals (DOMAIN.md: acres are for display only)."""
    return "" if value is None else f"{value / SQFT_PER_ACRE:,.2f}"


def cents(value: int | None) -> str:
    """``123456`` → ``$1,234.56``."""
    if value is None:
        return ""
    sign = "-" if value < 0 else ""
    dollars, rest = divmod(abs(value), 100)
    return f"{sign}${dollars:,}.{rest:02d}"


def day(value: date | None) -> str:
    return value.isoformat() if value else "—"


def moment(value: datetime | None) -> str:
    """A recorded time in Minnesota's zone, to the minute."""
    if value is None:
        return "—"
    local = clock.as_utc(value).astimezone(clock.BUSINESS_TZ)
    return local.strftime("%Y-%m-%d %H:%M %Z")


def yes_no(value: bool | None) -> str:
    return "Yes" if value else "No"


def register(blueprint: Blueprint) -> None:
    filters: dict[str, Callable[..., str]] = {
        "sqft": sqft,
        "acres": acres,
        "cents": cents,
        "day": day,
        "moment": moment,
        "yes_no": yes_no,
    }
    for name, function in filters.items():
        blueprint.add_app_template_filter(function, name)
