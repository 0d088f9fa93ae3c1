"""Legal holidays and the computation of time (docs/domain.md §4).

Minn. Stat. 645.44 subd. 5 names the legal holidays; a fixed-date one falling on a Sunday is
observed the following Monday, and on a Saturday the preceding Friday.  Two of them (the second
Monday in October and the Friday after Thanksgiving) are left to each branch and political
subdivision, so the board and every LGU each have their own ``Calendar``.

Minn. Stat. 645.15: a period excludes the day of the event and includes the last day; when the
last day is a Saturday, Sunday or legal holiday, the period runs to the next day that is none of
these.

A holiday added to 645.44 counts only from the year it took effect (``since``: Juneteenth from
2023), so deadlines of earlier years come out as they did then.

Pure: imports only the standard library and ``bank.rules.ruleset``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from functools import lru_cache
from types import MappingProxyType

from bank.rules.ruleset import FixedHoliday, Holiday, HolidayCalendar, Ruleset, WeekdayHoliday

SATURDAY, SUNDAY = 5, 6
_ONE_DAY = timedelta(days=1)


@dataclass(frozen=True)
class Calendar:
    """The legal holidays one body keeps: the statute's, plus the optional ones it observes.

    ``observed_optional`` holds keys of ``holidays.optional`` (Minn. Stat. 645.44 subd. 5 leaves
    those days to each branch of state government and each political subdivision).
    """

    holidays: HolidayCalendar
    observed_optional: frozenset[str]

    def __post_init__(self) -> None:
        unknown = self.observed_optional - self.holidays.optional.keys()
        if unknown:
            raise ValueError(f"unknown optional holidays: {sorted(unknown)}")

    @classmethod
    def board_calendar(cls, ruleset: Ruleset) -> Calendar:
        """The board's calendar: the optional holidays in ``ruleset.holidays.board_observes``."""
        return cls(ruleset.holidays, ruleset.holidays.board_observes)

    @classmethod
    def lgu_calendar(
        cls,
        ruleset: Ruleset,
        *,
        observes_indigenous_peoples_day: bool,
        observes_friday_after_thanksgiving: bool,
    ) -> Calendar:
        """An LGU's calendar: 645.44 subd. 5 lets it choose whether to keep the optional days."""
        chosen = {
            "indigenous_peoples_day": observes_indigenous_peoples_day,
            "friday_after_thanksgiving": observes_friday_after_thanksgiving,
        }
        return cls(ruleset.holidays, frozenset(key for key, keep in chosen.items() if keep))

    def holidays_in(self, year: int) -> dict[date, str]:
        """Observed legal holidays dated in ``year`` (645.44 subd. 5), date to name.

        Includes 31 December when the next New Year's Day falls on a Saturday; excludes the
        year's own 1 January when that is a Saturday (it is observed in the year before).
        """
        return dict(self._observed(year))

    def is_holiday(self, d: date) -> bool:
        """Whether ``d`` is an observed legal holiday on this calendar (645.44 subd. 5)."""
        return d in self._observed(d.year)

    def is_business_day(self, d: date) -> bool:
        """Whether ``d`` is none of Saturday, Sunday or a legal holiday (645.15)."""
        return d.weekday() not in (SATURDAY, SUNDAY) and not self.is_holiday(d)

    def roll_forward(self, d: date) -> date:
        """``d``, or the next day that is not a Saturday, Sunday or legal holiday (645.15)."""
        while not self.is_business_day(d):
            d += _ONE_DAY
        return d

    def add_days(self, start: date, days: int) -> date:
        """The last day of a period of ``days`` days after ``start`` (Minn. Stat. 645.15).

        The day of the event is excluded and the last day included (``start + days``); a last
        day that is a Saturday, Sunday or legal holiday runs to the next day that is none of them.
        """
        if days < 0:
            raise ValueError(f"a period cannot run backwards: {days} days")
        return self.roll_forward(start + timedelta(days=days))

    def _observed(self, year: int) -> Mapping[date, str]:
        optional = tuple(self.holidays.optional[key] for key in sorted(self.observed_optional))
        return _observed_holidays(self.holidays.fixed, self.holidays.weekday + optional, year)


def board_calendar(ruleset: Ruleset) -> Calendar:
    """The board's calendar (see ``Calendar.board_calendar``)."""
    return Calendar.board_calendar(ruleset)


def lgu_calendar(
    ruleset: Ruleset,
    *,
    observes_indigenous_peoples_day: bool,
    observes_friday_after_thanksgiving: bool,
) -> Calendar:
    """An LGU's calendar (see ``Calendar.lgu_calendar``)."""
    return Calendar.lgu_calendar(
        ruleset,
        observes_indigenous_peoples_day=observes_indigenous_peoples_day,
        observes_friday_after_thanksgiving=observes_friday_after_thanksgiving,
    )


@lru_cache(maxsize=512)
def _observed_holidays(
    fixed: tuple[FixedHoliday, ...], weekday: tuple[WeekdayHoliday, ...], year: int
) -> Mapping[date, str]:
    """Observed holidays dated in ``year``, read-only (cached: the arguments are hashable)."""
    found: dict[date, list[str]] = {}
    # the next year's 1 January, if a Saturday, is observed on this year's 31 December
    for holiday_year in (year, year + 1):
        for holiday in fixed:
            if in_force(holiday, holiday_year):
                found.setdefault(observed_date(holiday, holiday_year), []).append(holiday.name)
    for rule in weekday:
        if in_force(rule, year):
            found.setdefault(weekday_holiday_date(rule, year), []).append(rule.name)
    return MappingProxyType(
        {day: " / ".join(names) for day, names in sorted(found.items()) if day.year == year}
    )


def in_force(holiday: Holiday, year: int) -> bool:
    """Whether ``holiday`` is a legal holiday in ``year``: each carries the year it took effect
    (Juneteenth from 2023), and a deadline in an earlier year does not skip it."""
    return holiday.since is None or year >= holiday.since


def observed_date(holiday: FixedHoliday, year: int) -> date:
    """The day ``holiday`` is kept in ``year``: Sunday moves to Monday, Saturday to Friday.

    Minn. Stat. 645.44 subd. 5.  The result may lie in the year before (1 January on a Saturday).
    """
    actual = date(year, holiday.month, holiday.day)
    if actual.weekday() == SUNDAY:
        return actual + _ONE_DAY
    if actual.weekday() == SATURDAY:
        return actual - _ONE_DAY
    return actual


def weekday_holiday_date(rule: WeekdayHoliday, year: int) -> date:
    """The ``rule.nth`` ``rule.weekday`` of ``rule.month`` (negative counts from the end),
    plus ``rule.days_after`` days (Minn. Stat. 645.44 subd. 5)."""
    if rule.nth > 0:
        first = date(year, rule.month, 1)
        day = first + timedelta(days=(rule.weekday - first.weekday()) % 7 + 7 * (rule.nth - 1))
    elif rule.nth < 0:
        last = _first_of_next_month(year, rule.month) - _ONE_DAY
        day = last - timedelta(days=(last.weekday() - rule.weekday) % 7 + 7 * (-rule.nth - 1))
    else:
        raise ValueError(f"{rule.name}: nth must not be 0")
    if day.month != rule.month:
        raise ValueError(f"{rule.name}: no such weekday in {year}-{rule.month:02d}")
    return day + timedelta(days=rule.days_after)


def _first_of_next_month(year: int, month: int) -> date:
    """1st of the month after ``month`` of ``year``."""
    return date(year + month // 12, month % 12 + 1, 1)
