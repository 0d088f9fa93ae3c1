"""Every number of Minn. Stat. 103G.2242 as one typed, effective-dated object (docs/domain.md §0).

Code never scatters a literal such as ``10_000`` or ``0.75``: it asks the ruleset in force on the
relevant date, and every record a rule was applied to stores ``ruleset.id``.  A later ruleset (for
instance Minn. R. 8420.0255's business-day deadlines) is added as data to ``RULESETS``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date


@dataclass(frozen=True)
class Holiday:
    """A legal holiday in ``month``, from the year ``since`` on (every year when ``None``)."""

    name: str
    month: int
    since: int | None = field(default=None, kw_only=True)


@dataclass(frozen=True)
class FixedHoliday(Holiday):
    """A holiday on a fixed day of its month (observed Friday/Monday when on a weekend)."""

    day: int


@dataclass(frozen=True)
class WeekdayHoliday(Holiday):
    """A holiday on the ``nth`` given weekday (Mon=0) of its month; ``nth=-1`` is the last one."""

    weekday: int
    nth: int
    days_after: int = 0  # the Friday after Thanksgiving is the 4th Thursday + 1


@dataclass(frozen=True)
class HolidayCalendar:
    """Minn. Stat. 645.44 subd. 5: holidays every calendar keeps, and those left to each body."""

    fixed: tuple[FixedHoliday, ...]
    weekday: tuple[WeekdayHoliday, ...]
    #: holidays each branch or political subdivision chooses to observe or not, by key
    optional: dict[str, WeekdayHoliday]
    #: the optional holidays the board observes
    board_observes: frozenset[str]


@dataclass(frozen=True)
class SectionCaps:
    """Subd. 12 (c) credit caps, as whole percentages of the relevant area."""

    replacement_wetland_pct: int
    vegetative_cover_pct: int
    upland_buffer_pct: int
    easement_restoration_pct: int
    easement_buffer_pct: int
    treatment_pond_pct: int


@dataclass(frozen=True)
class Ruleset:
    """The statute's numbers, in force from ``effective_from``."""

    id: str
    effective_from: date
    caps: SectionCaps
    # Subd. 12 (c)(1): cropped in 6 of the 10 years before 1991-01-01
    vegetative_cover_min_years: int
    vegetative_cover_window_years: int
    vegetative_cover_reference_date: date
    # Subd. 6 (b), Subd. 8: below this area a summary notice and no comment period
    small_impact_threshold_sqft: int
    notice_days: int  # Subd. 6
    comment_period_days: int  # Subd. 8
    decision_days: int  # Subd. 4, Minn. Stat. 15.99 subd. 2
    max_extension_days: int  # Minn. Stat. 15.99 subd. 3 (f)
    # (choice) 15.99 subd. 3 (g) bounds no extension the applicant agrees to; the service keeps
    # the sum of a plan's extensions to this, so that every deadline stays a real date
    max_total_extension_days: int
    decision_notice_days: int  # Subd. 7
    appeal_window_days: int  # Subd. 9
    grant_decision_days: int  # Subd. 9
    appeal_decision_days: int  # Subd. 9
    judicial_review_days: int  # Subd. 9, Minn. Stat. 14.63: review petitioned after service
    appeal_filing_fee_cents: int  # Subd. 9
    appeal_security_max_cents: int  # Subd. 9
    min_resident_petitioners: int  # Subd. 9
    revision_area_increase_pct: int  # Subd. 6 (c)(1): "at least ten percent larger"
    revision_distance_ft: int  # Subd. 6 (c)(2): "more than 500 feet"
    service_area_count: int  # (practice) bank service areas 1..10
    sqft_per_acre: int
    holidays: HolidayCalendar = field(repr=False)


MONDAY, THURSDAY = 0, 3

MINNESOTA_HOLIDAYS = HolidayCalendar(
    fixed=(
        FixedHoliday("New Year's Day", 1, 1),
        # added to Minn. Stat. 645.44 subd. 5 in 2023: a legal holiday from 2023 on
        FixedHoliday("Juneteenth", 6, 19, since=2023),
        FixedHoliday("Independence Day", 7, 4),
        FixedHoliday("Veterans Day", 11, 11),
        FixedHoliday("Christmas Day", 12, 25),
    ),
    weekday=(
        WeekdayHoliday("Martin Luther King Jr. Day", 1, MONDAY, 3),
        WeekdayHoliday("Washington's and Lincoln's Birthday", 2, MONDAY, 3),
        WeekdayHoliday("Memorial Day", 5, MONDAY, -1),
        WeekdayHoliday("Labor Day", 9, MONDAY, 1),
        WeekdayHoliday("Thanksgiving Day", 11, THURSDAY, 4),
    ),
    optional={
        "indigenous_peoples_day": WeekdayHoliday("Indigenous Peoples Day", 10, MONDAY, 2),
        "friday_after_thanksgiving": WeekdayHoliday(
            "Friday after Thanksgiving", 11, THURSDAY, 4, days_after=1
        ),
    },
    board_observes=frozenset({"friday_after_thanksgiving"}),
)

SEED = Ruleset(
    id="103G.2242 (seed)",
    effective_from=date(1991, 1, 1),
    caps=SectionCaps(
        replacement_wetland_pct=100,
        vegetative_cover_pct=50,
        upland_buffer_pct=75,
        easement_restoration_pct=75,
        easement_buffer_pct=25,
        treatment_pond_pct=75,
    ),
    vegetative_cover_min_years=6,
    vegetative_cover_window_years=10,
    vegetative_cover_reference_date=date(1991, 1, 1),
    small_impact_threshold_sqft=10_000,
    notice_days=10,
    comment_period_days=30,
    decision_days=60,
    max_extension_days=60,
    max_total_extension_days=3_650,
    decision_notice_days=10,
    appeal_window_days=15,
    grant_decision_days=30,
    appeal_decision_days=60,
    judicial_review_days=30,
    appeal_filing_fee_cents=20_000,
    appeal_security_max_cents=50_000,
    min_resident_petitioners=100,
    revision_area_increase_pct=10,
    revision_distance_ft=500,
    service_area_count=10,
    sqft_per_acre=43_560,
    holidays=MINNESOTA_HOLIDAYS,
)

#: every ruleset ever in force, oldest first
RULESETS: tuple[Ruleset, ...] = (SEED,)


def ruleset_for(on: date) -> Ruleset:
    """The ruleset in force on ``on`` (the latest whose ``effective_from`` is not after it)."""
    in_force = [r for r in RULESETS if r.effective_from <= on]
    return in_force[-1] if in_force else RULESETS[0]


def ruleset_by_id(ruleset_id: str) -> Ruleset:
    """The ruleset a record was decided under; ``KeyError`` if it is unknown."""
    for ruleset in RULESETS:
        if ruleset.id == ruleset_id:
            return ruleset
    raise KeyError(ruleset_id)
