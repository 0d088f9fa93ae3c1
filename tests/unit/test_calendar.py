"""Legal holidays (Minn. Stat. 645.44 subd. 5) and the computation of time (645.15): docs/domain.md
§4.

Every date below was checked against ``date.weekday()``; the tables carry the weekday so a test can
check them again.
"""

from __future__ import annotations

from datetime import date, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bank.rules.calendar import Calendar, board_calendar, in_force, lgu_calendar, observed_date
from bank.rules.ruleset import SEED, FixedHoliday

BOARD = Calendar.board_calendar(SEED)
LGU_NEITHER = Calendar.lgu_calendar(
    SEED, observes_indigenous_peoples_day=False, observes_friday_after_thanksgiving=False
)
LGU_BOTH = Calendar.lgu_calendar(
    SEED, observes_indigenous_peoples_day=True, observes_friday_after_thanksgiving=True
)
CALENDARS = {"board": BOARD, "lgu_neither": LGU_NEITHER, "lgu_both": LGU_BOTH}
WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")

# (date, weekday, name, kept by): "all" = every calendar; otherwise the calendars keeping it
HOLIDAYS: dict[int, list[tuple[date, str, str, str]]] = {
    2026: [
        (date(2026, 1, 1), "Thu", "New Year's Day", "all"),
        (date(2026, 1, 19), "Mon", "Martin Luther King Jr. Day", "all"),
        (date(2026, 2, 16), "Mon", "Washington's and Lincoln's Birthday", "all"),
        (date(2026, 5, 25), "Mon", "Memorial Day", "all"),
        (date(2026, 6, 19), "Fri", "Juneteenth", "all"),
        (date(2026, 7, 3), "Fri", "Independence Day", "all"),  # Jul 4 is a Saturday
        (date(2026, 9, 7), "Mon", "Labor Day", "all"),
        (date(2026, 10, 12), "Mon", "Indigenous Peoples Day", "lgu_both"),
        (date(2026, 11, 11), "Wed", "Veterans Day", "all"),
        (date(2026, 11, 26), "Thu", "Thanksgiving Day", "all"),
        (date(2026, 11, 27), "Fri", "Friday after Thanksgiving", "board lgu_both"),
        (date(2026, 12, 25), "Fri", "Christmas Day", "all"),
    ],
    2027: [
        (date(2027, 1, 1), "Fri", "New Year's Day", "all"),
        (date(2027, 1, 18), "Mon", "Martin Luther King Jr. Day", "all"),
        (date(2027, 2, 15), "Mon", "Washington's and Lincoln's Birthday", "all"),
        (date(2027, 5, 31), "Mon", "Memorial Day", "all"),
        (date(2027, 6, 18), "Fri", "Juneteenth", "all"),  # Jun 19 is a Saturday
        (date(2027, 7, 5), "Mon", "Independence Day", "all"),  # Jul 4 is a Sunday
        (date(2027, 9, 6), "Mon", "Labor Day", "all"),
        (date(2027, 10, 11), "Mon", "Indigenous Peoples Day", "lgu_both"),
        (date(2027, 11, 11), "Thu", "Veterans Day", "all"),
        (date(2027, 11, 25), "Thu", "Thanksgiving Day", "all"),
        (date(2027, 11, 26), "Fri", "Friday after Thanksgiving", "board lgu_both"),
        (date(2027, 12, 24), "Fri", "Christmas Day", "all"),  # Dec 25 is a Saturday
        (date(2027, 12, 31), "Fri", "New Year's Day", "all"),  # 2028-01-01 is a Saturday
    ],
}


def expected_holidays(calendar_name: str, year: int) -> dict[date, str]:
    return {
        day: name
        for day, _, name, kept_by in HOLIDAYS[year]
        if kept_by == "all" or calendar_name in kept_by.split()
    }


def test_every_date_in_the_holiday_table_has_the_weekday_written_beside_it() -> None:
    for rows in HOLIDAYS.values():
        for day, weekday, name, _ in rows:
            assert WEEKDAYS[day.weekday()] == weekday, (day, name)


@pytest.mark.parametrize("year", sorted(HOLIDAYS))
@pytest.mark.parametrize("calendar_name", sorted(CALENDARS))
def test_each_calendar_observes_exactly_the_listed_holidays_of_2026_and_2027(
    calendar_name: str, year: int
) -> None:
    assert CALENDARS[calendar_name].holidays_in(year) == expected_holidays(calendar_name, year)


@pytest.mark.parametrize("year", sorted(HOLIDAYS))
@pytest.mark.parametrize("calendar_name", sorted(CALENDARS))
def test_every_listed_holiday_is_a_holiday_and_not_a_business_day(
    calendar_name: str, year: int
) -> None:
    calendar = CALENDARS[calendar_name]
    for day in expected_holidays(calendar_name, year):
        assert calendar.is_holiday(day) and not calendar.is_business_day(day), day


@pytest.mark.parametrize("calendar_name", sorted(CALENDARS))
def test_no_other_day_of_2026_or_2027_is_a_holiday(calendar_name: str) -> None:
    calendar = CALENDARS[calendar_name]
    listed = expected_holidays(calendar_name, 2026) | expected_holidays(calendar_name, 2027)
    day = date(2026, 1, 1)
    while day <= date(2027, 12, 31):
        assert calendar.is_holiday(day) == (day in listed), day
        day += timedelta(days=1)


# (holiday, year, actual weekday, observed date, observed weekday)
WEEKEND_FIXED_HOLIDAYS = [
    ("New Year's Day", 2028, "Sat", date(2027, 12, 31), "Fri"),
    ("New Year's Day", 2034, "Sun", date(2034, 1, 2), "Mon"),
    ("Juneteenth", 2027, "Sat", date(2027, 6, 18), "Fri"),
    ("Juneteenth", 2033, "Sun", date(2033, 6, 20), "Mon"),
    ("Independence Day", 2026, "Sat", date(2026, 7, 3), "Fri"),
    ("Independence Day", 2027, "Sun", date(2027, 7, 5), "Mon"),
    ("Veterans Day", 2028, "Sat", date(2028, 11, 10), "Fri"),
    ("Veterans Day", 2029, "Sun", date(2029, 11, 12), "Mon"),
    ("Christmas Day", 2027, "Sat", date(2027, 12, 24), "Fri"),
    ("Christmas Day", 2033, "Sun", date(2033, 12, 26), "Mon"),
]


def fixed_holiday(name: str) -> FixedHoliday:
    return next(h for h in SEED.holidays.fixed if h.name == name)


@pytest.mark.parametrize(
    ("name", "year", "actual_weekday", "observed", "observed_weekday"), WEEKEND_FIXED_HOLIDAYS
)
def test_a_fixed_holiday_on_saturday_is_kept_friday_and_on_sunday_is_kept_monday(
    name: str, year: int, actual_weekday: str, observed: date, observed_weekday: str
) -> None:
    holiday = fixed_holiday(name)
    actual = date(year, holiday.month, holiday.day)
    assert WEEKDAYS[actual.weekday()] == actual_weekday
    assert WEEKDAYS[observed.weekday()] == observed_weekday
    assert observed_date(holiday, year) == observed
    for calendar in CALENDARS.values():
        assert calendar.holidays_in(observed.year)[observed] == name
        assert calendar.is_holiday(observed)
        assert not calendar.is_holiday(actual)  # the weekend day itself is not "observed"
        assert not calendar.is_business_day(actual)


def test_new_years_day_2028_on_a_saturday_is_kept_on_friday_2027_12_31_not_in_2028() -> None:
    assert date(2028, 1, 1).weekday() == 5
    assert date(2027, 12, 31) in BOARD.holidays_in(2027)
    holidays_2028 = BOARD.holidays_in(2028)
    assert date(2027, 12, 31) not in holidays_2028
    assert date(2028, 1, 1) not in holidays_2028
    assert "New Year's Day" not in holidays_2028.values()


def test_a_period_ending_on_friday_2027_12_31_runs_across_the_year_to_monday_2028_01_03() -> None:
    assert date(2027, 12, 21) + timedelta(days=10) == date(2027, 12, 31)
    assert date(2028, 1, 3).weekday() == 0
    for calendar in CALENDARS.values():
        assert calendar.add_days(date(2027, 12, 21), 10) == date(2028, 1, 3)


def test_a_period_ending_on_observed_independence_day_friday_07_03_runs_to_monday() -> None:
    assert date(2026, 7, 6).weekday() == 0
    assert BOARD.add_days(date(2026, 6, 23), 10) == date(2026, 7, 6)


def test_a_period_ending_on_christmas_friday_2026_12_25_runs_to_monday_2026_12_28() -> None:
    assert date(2026, 12, 25).weekday() == 4 and date(2026, 12, 28).weekday() == 0
    assert LGU_NEITHER.add_days(date(2026, 12, 15), 10) == date(2026, 12, 28)


def test_a_board_period_ending_on_thanksgiving_runs_past_friday_and_the_weekend_to_monday() -> None:
    assert date(2026, 11, 16) + timedelta(days=10) == date(2026, 11, 26)
    assert date(2026, 11, 30).weekday() == 0
    assert BOARD.add_days(date(2026, 11, 16), 10) == date(2026, 11, 30)
    assert LGU_BOTH.add_days(date(2026, 11, 16), 10) == date(2026, 11, 30)


def test_an_lgu_keeping_neither_optional_day_ends_that_thanksgiving_period_on_friday() -> None:
    assert date(2026, 11, 27).weekday() == 4
    assert LGU_NEITHER.add_days(date(2026, 11, 16), 10) == date(2026, 11, 27)


def test_the_board_works_on_the_second_monday_of_october_and_an_lgu_may_not() -> None:
    oct_12 = date(2026, 10, 12)
    assert oct_12.weekday() == 0 and date(2026, 10, 5).weekday() == 0  # the 2nd Monday
    assert BOARD.is_business_day(oct_12) and LGU_NEITHER.is_business_day(oct_12)
    assert LGU_BOTH.is_holiday(oct_12) and not LGU_BOTH.is_business_day(oct_12)
    assert BOARD.add_days(date(2026, 10, 2), 10) == oct_12
    assert LGU_NEITHER.add_days(date(2026, 10, 2), 10) == oct_12
    assert LGU_BOTH.add_days(date(2026, 10, 2), 10) == date(2026, 10, 13)


def test_the_board_rests_the_friday_after_thanksgiving_and_an_lgu_may_not() -> None:
    nov_27 = date(2026, 11, 27)
    assert BOARD.is_holiday(nov_27) and LGU_BOTH.is_holiday(nov_27)
    assert LGU_NEITHER.is_business_day(nov_27)
    only_friday = Calendar.lgu_calendar(
        SEED, observes_indigenous_peoples_day=False, observes_friday_after_thanksgiving=True
    )
    assert only_friday == BOARD
    only_october = Calendar.lgu_calendar(
        SEED, observes_indigenous_peoples_day=True, observes_friday_after_thanksgiving=False
    )
    assert only_october.is_holiday(date(2026, 10, 12)) and not only_october.is_holiday(nov_27)


def test_the_module_functions_build_the_same_calendars_as_the_classmethods() -> None:
    assert board_calendar(SEED) == BOARD
    assert (
        lgu_calendar(
            SEED, observes_indigenous_peoples_day=True, observes_friday_after_thanksgiving=True
        )
        == LGU_BOTH
    )


def test_an_unknown_optional_holiday_is_refused() -> None:
    with pytest.raises(ValueError):
        Calendar(SEED.holidays, frozenset({"columbus_day"}))


def test_a_negative_period_is_refused() -> None:
    with pytest.raises(ValueError):
        BOARD.add_days(date(2026, 6, 8), -1)


def test_a_business_day_rolls_forward_to_itself_and_a_saturday_to_the_monday() -> None:
    assert BOARD.roll_forward(date(2026, 6, 18)) == date(2026, 6, 18)
    assert date(2026, 6, 27).weekday() == 5
    assert BOARD.roll_forward(date(2026, 6, 27)) == date(2026, 6, 29)


# worked examples: (what, calendar, start, days, plain last day, its weekday, deadline, its weekday)
WORKED_EXAMPLES = [
    ("Hollis notice due", "lgu_neither", date(2026, 6, 8), 10, date(2026, 6, 18), "Thu", None),
    ("Hollis decision due", "lgu_neither", date(2026, 6, 8), 60, date(2026, 8, 7), "Fri", None),
    ("Hollis appeal window", "board", date(2026, 7, 2), 15, date(2026, 7, 17), "Fri", None),
    (
        "contested notice due",
        "lgu_neither",
        date(2026, 6, 17),
        10,
        date(2026, 6, 27),
        "Sat",
        date(2026, 6, 29),
    ),
    ("comment period", "lgu_neither", date(2026, 6, 22), 30, date(2026, 7, 22), "Wed", None),
    (
        "contested decision due",
        "lgu_neither",
        date(2026, 6, 17),
        60,
        date(2026, 8, 16),
        "Sun",
        date(2026, 8, 17),
    ),
    ("extended decision", "lgu_neither", date(2026, 6, 17), 90, date(2026, 9, 15), "Tue", None),
    (
        "contested appeal window",
        "board",
        date(2026, 9, 4),
        15,
        date(2026, 9, 19),
        "Sat",
        date(2026, 9, 21),
    ),
    (
        "board grant decision",
        "board",
        date(2026, 9, 24),
        30,
        date(2026, 10, 24),
        "Sat",
        date(2026, 10, 26),
    ),
    (
        "board appeal decision",
        "board",
        date(2026, 10, 6),
        60,
        date(2026, 12, 5),
        "Sat",
        date(2026, 12, 7),
    ),
]


@pytest.mark.parametrize(
    ("what", "calendar_name", "start", "days", "last_day", "weekday", "rolled_to"),
    WORKED_EXAMPLES,
    ids=[row[0] for row in WORKED_EXAMPLES],
)
def test_the_worked_examples_deadlines_come_out_as_in_examples_md(
    what: str,
    calendar_name: str,
    start: date,
    days: int,
    last_day: date,
    weekday: str,
    rolled_to: date | None,
) -> None:
    assert start + timedelta(days=days) == last_day
    assert WEEKDAYS[last_day.weekday()] == weekday
    expected = rolled_to or last_day
    assert WEEKDAYS[expected.weekday()] not in ("Sat", "Sun")
    for calendar in CALENDARS.values():  # none of these dates touches an optional holiday
        assert calendar.add_days(start, days) == expected, calendar
    assert CALENDARS[calendar_name].add_days(start, days) == expected


@given(
    start=st.dates(min_value=date(1991, 1, 1), max_value=date(2099, 12, 31)),
    days=st.integers(min_value=0, max_value=400),
    calendar_name=st.sampled_from(sorted(CALENDARS)),
)
def test_a_deadline_is_the_first_business_day_on_or_after_the_plain_last_day(
    start: date, days: int, calendar_name: str
) -> None:
    calendar = CALENDARS[calendar_name]
    plain = start + timedelta(days=days)
    deadline = calendar.add_days(start, days)
    assert calendar.is_business_day(deadline)
    assert plain <= deadline <= plain + timedelta(days=5)
    day = plain
    while day < deadline:
        assert not calendar.is_business_day(day)
        day += timedelta(days=1)


# --- holidays by the year they took effect (Minn. Stat. 645.44 subd. 5: Juneteenth from 2023) ----


@pytest.mark.parametrize("calendar_name", sorted(CALENDARS))
def test_juneteenth_is_a_holiday_from_2023_and_not_before(calendar_name: str) -> None:
    calendar = CALENDARS[calendar_name]
    # 2022-06-19 was a Sunday: had Juneteenth been a holiday it would have been kept Monday 06-20
    assert WEEKDAYS[date(2022, 6, 19).weekday()] == "Sun"
    assert WEEKDAYS[date(2022, 6, 20).weekday()] == "Mon"
    assert WEEKDAYS[date(2023, 6, 19).weekday()] == "Mon"
    assert "Juneteenth" not in calendar.holidays_in(2022).values()
    assert calendar.is_business_day(date(2022, 6, 20))
    assert calendar.holidays_in(2023)[date(2023, 6, 19)] == "Juneteenth"
    assert not calendar.is_business_day(date(2023, 6, 19))


@pytest.mark.parametrize("calendar_name", sorted(CALENDARS))
def test_a_period_ending_2022_06_20_ends_that_day_and_one_ending_2023_06_19_runs_to_06_20(
    calendar_name: str,
) -> None:
    calendar = CALENDARS[calendar_name]
    assert date(2022, 4, 21) + timedelta(days=60) == date(2022, 6, 20)
    assert date(2023, 4, 20) + timedelta(days=60) == date(2023, 6, 19)
    assert calendar.add_days(date(2022, 4, 21), 60) == date(2022, 6, 20)
    assert calendar.add_days(date(2023, 4, 20), 60) == date(2023, 6, 20)


def test_a_holiday_counts_from_the_year_it_took_effect() -> None:
    juneteenth = fixed_holiday("Juneteenth")
    assert juneteenth.since == 2023
    assert not in_force(juneteenth, 2022) and in_force(juneteenth, 2023)
    assert in_force(juneteenth, 2099)
    # every other legal holiday applies in every year the rules cover (1991 on)
    others = [h for h in SEED.holidays.fixed + SEED.holidays.weekday if h.name != "Juneteenth"]
    assert others and all(h.since is None and in_force(h, 1991) for h in others)
