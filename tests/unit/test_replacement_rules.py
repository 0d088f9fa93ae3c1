"""Ratios, required credits, withdrawal allocation (docs/domain.md §3, the worked Hollis Township
plan), revisions (Subd. 6 (c)) and notice kinds (Subd. 6 (b), Subd. 8)."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bank.errors import RatioTooLow, RestrictedCreditMisuse, ValidationFailed
from bank.rules.replacement_rules import (
    ABOVE_1_TO_1,
    FIRST_1_TO_1,
    Allocated,
    Offer,
    allocate_withdrawal,
    check_ratio,
    has_comment_period,
    notice_kind,
    parse_ratio,
    remaining_requirement,
    required_credit_sqft,
    required_unrestricted_sqft,
    revision_counts_as_new,
)
from bank.rules.ruleset import SEED
from ledger.errors import InsufficientFunds

UNRESTRICTED = "5-2-U"
RESTRICTED = "5-2-R"


def unrestricted(key: str, amount: int) -> Offer:
    return Offer(key=key, restricted=False, amount_sqft=amount, credit_class_code=UNRESTRICTED)


def restricted(key: str, amount: int) -> Offer:
    return Offer(key=key, restricted=True, amount_sqft=amount, credit_class_code=RESTRICTED)


# --- ratios ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "ratio"),
    [
        ("1", Fraction(1)),
        ("2", Fraction(2)),
        ("1.5", Fraction(3, 2)),
        ("1.25", Fraction(5, 4)),
        ("1.50", Fraction(3, 2)),
        ("0.99", Fraction(99, 100)),
    ],
)
def test_a_decimal_string_is_read_as_an_exact_fraction(text: str, ratio: Fraction) -> None:
    assert parse_ratio(text) == ratio


@pytest.mark.parametrize(
    "text",
    [
        "",
        "abc",
        "1e2",
        "1E0",
        "-2",
        "+2",
        "0",
        "0.0",
        "1.",
        ".5",
        "1,5",
        "3/2",
        " 2",
        "2\n",
        "inf",
        "nan",
        "1_000",
        "\u0661",
        "1.2.3",
    ],
)
def test_anything_but_a_positive_plain_decimal_is_not_a_ratio(text: str) -> None:
    with pytest.raises(ValidationFailed) as refused:
        parse_ratio(text)
    assert list(refused.value.fields["errors"]) == ["replacement_ratio"]


@pytest.mark.parametrize("value", [1.5, 2, Fraction(3, 2), None])
def test_a_ratio_that_is_not_a_string_is_refused(value: object) -> None:
    with pytest.raises(ValidationFailed):
        parse_ratio(value)  # type: ignore[arg-type]


def test_a_ratio_of_1_to_1_is_accepted() -> None:
    check_ratio(SEED, parse_ratio("1"))


def test_a_ratio_of_0_99_is_refused_as_too_low() -> None:
    with pytest.raises(RatioTooLow) as refused:
        check_ratio(SEED, parse_ratio("0.99"))
    assert refused.value.code == "ratio_too_low"
    assert refused.value.fields["ratio"] == "0.99"


def test_2_to_1_on_9_000_square_feet_needs_18_000_of_which_9_000_unrestricted() -> None:
    assert required_credit_sqft(9_000, Fraction(2)) == 18_000
    assert required_unrestricted_sqft(9_000) == 9_000


def test_1_5_to_1_on_an_odd_area_rounds_up_to_the_next_square_foot() -> None:
    assert required_credit_sqft(9_001, parse_ratio("1.5")) == 13_502  # 13,501.5


def test_an_exact_product_is_not_rounded_up() -> None:
    assert required_credit_sqft(9_000, parse_ratio("1.5")) == 13_500
    assert required_credit_sqft(4, parse_ratio("1.25")) == 5


# --- withdrawal allocation ---------------------------------------------------------------------


def test_2_to_1_met_half_unrestricted_and_half_restricted_is_accepted() -> None:
    allocation = allocate_withdrawal(
        9_000, Fraction(2), [unrestricted("u", 9_000), restricted("r", 9_000)]
    )
    assert allocation.allocations == [
        Allocated("r", RESTRICTED, 9_000, ABOVE_1_TO_1),
        Allocated("u", UNRESTRICTED, 9_000, FIRST_1_TO_1),
    ]
    assert allocation.required_sqft == 18_000
    assert allocation.released == {"u": 0, "r": 0}


def test_story_2_10_000_unrestricted_and_8_000_restricted_meet_9_000_at_2_to_1() -> None:
    allocation = allocate_withdrawal(
        9_000, parse_ratio("2"), [unrestricted("u", 10_000), restricted("r", 8_000)]
    )
    assert allocation.allocations == [
        Allocated("r", RESTRICTED, 8_000, ABOVE_1_TO_1),
        Allocated("u", UNRESTRICTED, 9_000, FIRST_1_TO_1),
        Allocated("u", UNRESTRICTED, 1_000, ABOVE_1_TO_1),
    ]
    assert allocation.used == {"u": 10_000, "r": 8_000}
    assert allocation.released == {"u": 0, "r": 0}
    assert sum(a.amount_sqft for a in allocation.allocations) == 18_000


def test_story_2_6_000_unrestricted_and_12_000_restricted_is_restricted_credit_misuse() -> None:
    with pytest.raises(RestrictedCreditMisuse) as refused:
        allocate_withdrawal(
            9_000, parse_ratio("2"), [unrestricted("u", 6_000), restricted("r", 12_000)]
        )
    assert refused.value.code == "restricted_credit_misuse"
    assert refused.value.fields["required_unrestricted_sqft"] == 9_000
    assert refused.value.fields["offered_unrestricted_sqft"] == 6_000


def test_only_restricted_credits_for_a_1_to_1_ratio_is_restricted_credit_misuse() -> None:
    with pytest.raises(RestrictedCreditMisuse):
        allocate_withdrawal(1_000, Fraction(1), [restricted("r", 5_000)])


def test_reservations_totalling_less_than_required_are_insufficient_credits() -> None:
    with pytest.raises(InsufficientFunds) as refused:
        allocate_withdrawal(9_000, Fraction(2), [unrestricted("u", 9_999), restricted("r", 8_000)])
    assert refused.value.code == "insufficient_credits"
    assert refused.value.fields == {"available_sqft": 17_999, "required_sqft": 18_000}


def test_too_few_credits_in_all_is_insufficient_before_it_is_misuse() -> None:
    with pytest.raises(InsufficientFunds):
        allocate_withdrawal(9_000, Fraction(2), [restricted("r", 17_999)])


# a revision (Subd. 6 (c)) after a withdrawal: what was withdrawn counts toward the new requirement


@pytest.mark.parametrize(
    ("area", "met", "remaining"),
    [
        (9_000, (9_000, 9_000), (0, 0)),  # the requirement withdrawn in full
        (9_900, (9_000, 9_000), (900, 900)),  # 10% larger at 2:1: 1,800 more
        (8_000, (9_000, 9_000), (0, 0)),  # smaller: nothing more
        (8_000, (9_000, 6_000), (0, 1_000)),  # 1,000 of the old first 1:1 counts above it
        (9_000, (0, 0), (9_000, 9_000)),  # nothing withdrawn yet
    ],
)
def test_the_requirement_remaining_after_earlier_withdrawals(
    area: int, met: tuple[int, int], remaining: tuple[int, int]
) -> None:
    assert remaining_requirement(area, Fraction(2), met) == remaining


def test_a_revised_plan_withdraws_only_what_its_earlier_withdrawal_did_not_meet() -> None:
    allocation = allocate_withdrawal(
        9_900, Fraction(2), [restricted("r", 1_000), unrestricted("u", 2_000)], met=(9_000, 9_000)
    )
    assert allocation.allocations == [
        Allocated("r", RESTRICTED, 900, ABOVE_1_TO_1),
        Allocated("u", UNRESTRICTED, 900, FIRST_1_TO_1),
    ]
    assert allocation.released == {"r": 100, "u": 1_100}
    with pytest.raises(RestrictedCreditMisuse):
        allocate_withdrawal(9_900, Fraction(2), [restricted("r", 1_800)], met=(9_000, 9_000))
    with pytest.raises(InsufficientFunds) as refused:
        allocate_withdrawal(9_900, Fraction(2), [unrestricted("u", 1_799)], met=(9_000, 9_000))
    assert refused.value.fields == {"available_sqft": 1_799, "required_sqft": 1_800}


def test_reserved_credits_beyond_the_requirement_are_released() -> None:
    allocation = allocate_withdrawal(
        9_000,
        Fraction(2),
        [unrestricted("u1", 12_000), restricted("r1", 10_000), unrestricted("u2", 3_000)],
    )
    assert allocation.allocations == [
        Allocated("r1", RESTRICTED, 9_000, ABOVE_1_TO_1),
        Allocated("u1", UNRESTRICTED, 9_000, FIRST_1_TO_1),
    ]
    assert allocation.used == {"u1": 9_000, "r1": 9_000, "u2": 0}
    assert allocation.released == {"u1": 3_000, "r1": 1_000, "u2": 3_000}


def test_restricted_credits_beyond_the_above_1_to_1_portion_are_released_not_misused() -> None:
    allocation = allocate_withdrawal(
        9_000, Fraction(2), [unrestricted("u", 9_000), restricted("r", 12_000)]
    )
    assert allocation.used == {"u": 9_000, "r": 9_000}
    assert allocation.released == {"u": 0, "r": 3_000}


def test_unrestricted_offers_are_drawn_in_the_order_given() -> None:
    allocation = allocate_withdrawal(
        9_001,
        parse_ratio("1.5"),
        [unrestricted("a", 5_000), restricted("r", 1_000), unrestricted("b", 10_000)],
    )
    assert allocation.required_sqft == 13_502
    assert allocation.allocations == [
        Allocated("r", RESTRICTED, 1_000, ABOVE_1_TO_1),
        Allocated("a", UNRESTRICTED, 5_000, FIRST_1_TO_1),
        Allocated("b", UNRESTRICTED, 4_001, FIRST_1_TO_1),
        Allocated("b", UNRESTRICTED, 3_501, ABOVE_1_TO_1),
    ]
    assert allocation.released == {"a": 0, "r": 0, "b": 2_498}


def test_a_ratio_below_1_to_1_cannot_be_allocated() -> None:
    with pytest.raises(RatioTooLow):
        allocate_withdrawal(1_000, parse_ratio("0.99"), [unrestricted("u", 1_000)])


def test_repeated_offer_keys_are_a_programming_error() -> None:
    with pytest.raises(ValueError):
        allocate_withdrawal(1_000, Fraction(1), [unrestricted("u", 500), unrestricted("u", 500)])


offers = st.lists(
    st.tuples(st.booleans(), st.integers(min_value=0, max_value=50_000)), max_size=6
).map(
    lambda pairs: [
        Offer(f"k{i}", is_restricted, amount, RESTRICTED if is_restricted else UNRESTRICTED)
        for i, (is_restricted, amount) in enumerate(pairs)
    ]
)
ratios = st.integers(min_value=100, max_value=400).map(lambda hundredths: Fraction(hundredths, 100))


@given(area=st.integers(min_value=1, max_value=40_000), ratio=ratios, offered=offers)
def test_an_allocation_never_uses_restricted_credit_for_the_first_1_to_1_and_totals_the_need(
    area: int, ratio: Fraction, offered: list[Offer]
) -> None:
    required = required_credit_sqft(area, ratio)
    total = sum(o.amount_sqft for o in offered)
    unrestricted_total = sum(o.amount_sqft for o in offered if not o.restricted)
    try:
        allocation = allocate_withdrawal(area, ratio, offered)
    except InsufficientFunds:
        assert total < required
        return
    except RestrictedCreditMisuse:
        assert total >= required and unrestricted_total < area
        return
    by_key = {o.key: o for o in offered}
    parts = allocation.allocations
    assert sum(a.amount_sqft for a in parts) == required
    assert sum(a.amount_sqft for a in parts if a.portion == FIRST_1_TO_1) == area
    assert not any(by_key[a.key].restricted and a.portion == FIRST_1_TO_1 for a in parts)
    for offer in offered:
        assert allocation.used[offer.key] + allocation.released[offer.key] == offer.amount_sqft
        assert allocation.released[offer.key] >= 0


# --- Subd. 6 (c): revisions ----------------------------------------------------------------------


def test_a_revision_9_99_percent_larger_is_not_a_new_application() -> None:
    assert not revision_counts_as_new(SEED, 10_000, 10_999, 0)


def test_a_revision_exactly_10_percent_larger_is_a_new_application() -> None:
    assert revision_counts_as_new(SEED, 10_000, 11_000, 0)


def test_a_revision_on_an_odd_area_needs_the_full_10_percent() -> None:
    assert not revision_counts_as_new(SEED, 10_001, 11_001, 0)  # 9.999...%
    assert revision_counts_as_new(SEED, 10_001, 11_002, 0)


def test_a_smaller_revision_is_not_a_new_application() -> None:
    assert not revision_counts_as_new(SEED, 10_000, 5_000, 0)


def test_a_revision_500_feet_away_is_not_a_new_application_but_501_feet_is() -> None:
    assert not revision_counts_as_new(SEED, 10_000, 10_000, 500)
    assert revision_counts_as_new(SEED, 10_000, 10_000, 501)


def test_the_revision_thresholds_come_from_the_ruleset() -> None:
    looser = replace(SEED, revision_area_increase_pct=20, revision_distance_ft=1_000)
    assert not revision_counts_as_new(looser, 10_000, 11_000, 501)
    assert revision_counts_as_new(looser, 10_000, 12_000, 0)
    assert revision_counts_as_new(looser, 10_000, 10_000, 1_001)


# --- Subd. 6 (b), Subd. 8: notice kind and comment period --------------------------------------


def test_an_impact_of_9_999_square_feet_gets_a_summary_notice_and_no_comment_period() -> None:
    assert notice_kind(SEED, 9_999) == "summary"
    assert not has_comment_period(SEED, 9_999)


def test_an_impact_of_10_000_square_feet_gets_the_full_notice_and_a_comment_period() -> None:
    assert notice_kind(SEED, 10_000) == "full"
    assert has_comment_period(SEED, 10_000)
