"""How the pages print numbers, dates, times and the wetland types' names."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime

from flask import Blueprint

from bank import wording
from ledger import clock

SQFT_PER_ACRE = 43_560
#: the names of the wetland types (Circular 39), which every page may show
WETLAND_TYPES = {
    "1": "Seasonally flooded basin",
    "2": "Wet meadow",
    "3": "Shallow marsh",
    "4": "Deep marsh",
    "5": "Shallow open water",
    "6": "Shrub swamp",
    "7": "Wooded swamp",
    "8": "Bog",
}


def sqft(value: int | None) -> str:
    """``52000`` → ``52,000``."""
    return "" if value is None else f"{value:,}"


def acres(value: int | None) -> str:
    """Square feet as acres, two decimals (docs/domain.md §1: acres are for display only)."""
    return "" if value is None else f"{value / SQFT_PER_ACRE:,.2f}"


def cents(value: int | None) -> str:
    """``123456`` → ``$1,234.56``, as the bank's own sentences word money."""
    return "" if value is None else wording.dollars(value)


def label(value: str | None) -> str:
    """A code as a word: ``deemed_approved`` → ``Deemed approved``."""
    return (value or "").replace("_", " ").capitalize()


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
        "label": label,
    }
    for name, function in filters.items():
        blueprint.add_app_template_filter(function, name)
    blueprint.app_context_processor(lambda: {"wetland_types": WETLAND_TYPES})
