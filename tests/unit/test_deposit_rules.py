"""Subd. 12 (a), (b), (c): deposit eligibility and credit caps (docs/domain.md §2, the worked
deposit).

Every cap and precondition is tried on both sides of its boundary, with the statute's numbers
(the seed ruleset) written out in the tests.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import date, timedelta

import pytest

from bank.errors import CapExceeded, NotEligible, ValidationFailed
from bank.rules.deposit_rules import (
    CATEGORIES,
    ActionCredit,
    ActionRequest,
    DepositFacts,
    SiteRegister,
    evaluate_deposit,
)
from bank.rules.ruleset import SEED, SectionCaps

COMPLETED = date(2026, 4, 14)
DEPOSITED = date(2026, 5, 1)
FACTS = DepositFacts(
    deposit_on=DEPOSITED,
    completed_on=COMPLETED,
    designated_for_replacement=True,
    paid_by_performer=True,
    paid_back_with_interest=False,
)


def wetland(area: int, credit: int | None = None) -> ActionRequest:
    return ActionRequest("replacement_wetland", area, area if credit is None else credit)


def buffer(area: int, credit: int, established_on: date | None = COMPLETED) -> ActionRequest:
    return ActionRequest("upland_buffer", area, credit, established_on=established_on)


def vegetative(area: int, credit: int, years: int | None) -> ActionRequest:
    return ActionRequest("vegetative_cover", area, credit, qualifying_years=years)


def easement(area: int, credit: int, ended: date | None = date(2020, 1, 1)) -> ActionRequest:
    return ActionRequest("easement_restoration", area, credit, easement_terminated_on=ended)


def easement_buffer(area: int, credit: int) -> ActionRequest:
    return ActionRequest("easement_buffer", area, credit)


def pond(area: int, credit: int, project: str | None = "CSAH 9 rebuild") -> ActionRequest:
    return ActionRequest("treatment_pond", area, credit, associated_project=project)


def evaluate(*actions: ActionRequest, facts: DepositFacts = FACTS) -> list[ActionCredit]:
    return evaluate_deposit(SEED, facts, list(actions))


def only(*actions: ActionRequest) -> ActionCredit:
    """The credit of the last action (the earlier ones give it its base area)."""
    return evaluate(*actions)[-1]


# --- the categories ---------------------------------------------------------------------------


def test_the_six_categories_are_known_and_only_buffers_and_ponds_are_restricted() -> None:
    assert CATEGORIES == {
        "replacement_wetland": False,
        "vegetative_cover": False,
        "upland_buffer": True,
        "easement_restoration": False,
        "easement_buffer": True,
        "treatment_pond": True,
    }


def test_a_replacement_wetland_earns_up_to_its_whole_area_unrestricted() -> None:
    assert only(wetland(60_000)) == ActionCredit(
        "replacement_wetland", 60_000, 60_000, 60_000, False
    )


def test_a_replacement_wetland_asking_one_square_foot_more_than_its_area_is_refused() -> None:
    with pytest.raises(CapExceeded) as refused:
        evaluate(wetland(60_000, 60_001))
    assert refused.value.fields["cap_sqft"] == 60_000
    assert refused.value.fields["requested_sqft"] == 60_001


# --- Subd. 12 (c)(1): vegetative cover, 50% and 6 of 10 years -------------------------------------


def test_vegetative_cover_with_6_qualifying_years_earns_50_percent_of_its_area() -> None:
    credit = only(vegetative(10_000, 5_000, years=6))
    assert (credit.cap_sqft, credit.credit_sqft, credit.restricted) == (5_000, 5_000, False)


def test_vegetative_cover_with_10_qualifying_years_is_eligible_too() -> None:
    assert only(vegetative(10_000, 5_000, years=10)).cap_sqft == 5_000


def test_vegetative_cover_with_5_qualifying_years_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(vegetative(10_000, 5_000, years=5))
    assert refused.value.code == "not_eligible"
    assert refused.value.fields["category"] == "vegetative_cover"
    assert refused.value.fields["field"] == "qualifying_years"


def test_vegetative_cover_without_qualifying_years_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(vegetative(10_000, 5_000, years=None))
    assert refused.value.fields["field"] == "qualifying_years"


def test_vegetative_cover_asking_one_over_50_percent_is_refused_naming_the_cap() -> None:
    with pytest.raises(CapExceeded) as refused:
        evaluate(vegetative(10_000, 5_001, years=6))
    assert refused.value.code == "cap_exceeded"
    assert refused.value.fields == {
        "category": "vegetative_cover",
        "cap_sqft": 5_000,
        "requested_sqft": 5_001,
        "action_index": 0,
    }


def test_50_percent_of_an_odd_vegetative_area_rounds_down() -> None:
    assert only(vegetative(10_001, 5_000, years=6)).cap_sqft == 5_000
    with pytest.raises(CapExceeded):
        evaluate(vegetative(10_001, 5_001, years=6))


@pytest.mark.parametrize("years", [-1, 11])
def test_qualifying_years_outside_0_to_10_are_a_validation_error(years: int) -> None:
    with pytest.raises(ValidationFailed) as refused:
        evaluate(vegetative(10_000, 5_000, years=years))
    assert refused.value.fields["errors"] == {
        "actions.0.qualifying_years": ["must be a whole number from 0 to 10"]
    }


# --- Subd. 12 (c)(2): upland buffer, 75% of the replacement wetland, restricted -----------------


def test_an_upland_buffer_earns_up_to_75_percent_of_the_replacement_wetland_restricted() -> None:
    credit = only(wetland(60_000), buffer(52_000, 45_000))
    assert credit == ActionCredit("upland_buffer", 52_000, 45_000, 45_000, True)


def test_an_upland_buffer_asking_45_001_of_a_45_000_cap_is_refused_naming_the_cap() -> None:
    with pytest.raises(CapExceeded) as refused:
        evaluate(wetland(60_000), buffer(52_000, 45_001))
    assert refused.value.fields["category"] == "upland_buffer"
    assert refused.value.fields["cap_sqft"] == 45_000
    assert refused.value.fields["requested_sqft"] == 45_001


def test_75_percent_of_10_001_square_feet_of_wetland_is_7_500() -> None:
    assert only(wetland(10_001), buffer(9_000, 7_500)).cap_sqft == 7_500
    with pytest.raises(CapExceeded) as refused:
        evaluate(wetland(10_001), buffer(9_000, 7_501))
    assert refused.value.fields["cap_sqft"] == 7_500


def test_a_buffer_smaller_than_75_percent_of_the_wetland_is_capped_at_its_own_area() -> None:
    assert only(wetland(60_000), buffer(20_000, 20_000)).cap_sqft == 20_000
    with pytest.raises(CapExceeded) as refused:
        evaluate(wetland(60_000), buffer(20_000, 20_001))
    assert refused.value.fields["cap_sqft"] == 20_000


def test_an_upland_buffer_counts_every_replacement_wetland_in_the_deposit() -> None:
    assert only(wetland(30_000), wetland(30_000), buffer(52_000, 45_000)).cap_sqft == 45_000


def test_a_buffer_listed_before_its_wetland_still_counts_that_wetland() -> None:
    assert evaluate(buffer(52_000, 45_000), wetland(60_000))[0].cap_sqft == 45_000


def test_two_upland_buffers_share_one_75_percent_cap() -> None:
    credits = evaluate(wetland(60_000), buffer(30_000, 30_000), buffer(30_000, 15_000))
    assert [c.cap_sqft for c in credits] == [60_000, 30_000, 15_000]
    with pytest.raises(CapExceeded) as refused:
        evaluate(wetland(60_000), buffer(30_000, 30_000), buffer(30_000, 15_001))
    assert refused.value.fields["cap_sqft"] == 15_000
    assert refused.value.fields["action_index"] == 2


def test_an_upland_buffer_without_a_replacement_wetland_in_the_deposit_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(buffer(10_000, 1))
    assert refused.value.fields["category"] == "upland_buffer"
    assert refused.value.fields["requires"] == "replacement_wetland"


def test_an_upland_buffer_established_a_day_after_the_replacement_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(60_000), buffer(52_000, 45_000, established_on=date(2026, 4, 15)))
    assert refused.value.fields["category"] == "upland_buffer"
    assert refused.value.fields["field"] == "established_on"


def test_an_upland_buffer_established_a_day_before_the_replacement_is_not_eligible() -> None:
    with pytest.raises(NotEligible):
        evaluate(wetland(60_000), buffer(52_000, 45_000, established_on=date(2026, 4, 13)))


def test_an_upland_buffer_without_an_establishment_date_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(60_000), buffer(52_000, 45_000, established_on=None))
    assert refused.value.fields["field"] == "established_on"


# --- Subd. 12 (c)(3): easement restoration 75%, its buffer 25% restricted ----------------------


def test_a_wetland_restored_under_a_terminated_easement_earns_75_percent_unrestricted() -> None:
    credit = only(easement(8_000, 6_000))
    assert (credit.cap_sqft, credit.restricted) == (6_000, False)
    with pytest.raises(CapExceeded) as refused:
        evaluate(easement(8_000, 6_001))
    assert refused.value.fields["category"] == "easement_restoration"
    assert refused.value.fields["cap_sqft"] == 6_000


def test_an_easement_restoration_without_a_termination_date_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(easement(8_000, 6_000, ended=None))
    assert refused.value.fields["field"] == "easement_terminated_on"


def test_an_easement_terminated_on_the_deposit_date_qualifies_but_not_a_day_later() -> None:
    assert only(easement(8_000, 6_000, ended=DEPOSITED)).credit_sqft == 6_000
    with pytest.raises(NotEligible) as refused:
        evaluate(easement(8_000, 6_000, ended=date(2026, 5, 2)))
    assert refused.value.fields["field"] == "easement_terminated_on"


def test_an_easement_buffer_earns_up_to_25_percent_of_the_restored_wetland_restricted() -> None:
    credit = only(easement(8_000, 6_000), easement_buffer(4_000, 2_000))
    assert credit == ActionCredit("easement_buffer", 4_000, 2_000, 2_000, True)
    with pytest.raises(CapExceeded) as refused:
        evaluate(easement(8_000, 6_000), easement_buffer(4_000, 2_001))
    assert refused.value.fields["category"] == "easement_buffer"
    assert refused.value.fields["cap_sqft"] == 2_000


def test_25_percent_of_an_odd_easement_area_rounds_down() -> None:
    assert only(easement(8_003, 6_002), easement_buffer(4_000, 2_000)).cap_sqft == 2_000


def test_an_easement_buffer_without_an_easement_restoration_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(60_000), easement_buffer(4_000, 1))
    assert refused.value.fields["category"] == "easement_buffer"
    assert refused.value.fields["requires"] == "easement_restoration"


def test_a_replacement_wetland_does_not_give_an_easement_buffer_its_base() -> None:
    with pytest.raises(NotEligible):
        evaluate(wetland(8_000), easement_buffer(1_000, 1))


# --- Subd. 12 (c)(4): treatment ponds, 75% restricted, with an associated project ---------------


def test_a_treatment_pond_with_an_associated_project_earns_75_percent_restricted() -> None:
    credit = only(pond(12_001, 9_000))
    assert credit == ActionCredit("treatment_pond", 12_001, 9_000, 9_000, True)


def test_a_treatment_pond_asking_one_over_75_percent_is_refused() -> None:
    with pytest.raises(CapExceeded) as refused:
        evaluate(pond(12_001, 9_001))
    assert refused.value.fields["category"] == "treatment_pond"
    assert refused.value.fields["cap_sqft"] == 9_000


@pytest.mark.parametrize("project", [None, "", "   ", "\u200b", "\x07", "\u00ad\u0301"])
def test_a_treatment_pond_without_an_associated_project_is_not_eligible(
    project: str | None,
) -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(pond(12_001, 9_000, project=project))
    assert refused.value.fields["category"] == "treatment_pond"
    assert refused.value.fields["field"] == "associated_project"


# --- Subd. 12 (a) and (b) ----------------------------------------------------------------------


def test_a_restoration_completed_on_the_deposit_date_is_eligible() -> None:
    assert evaluate(wetland(1_000), facts=replace(FACTS, completed_on=DEPOSITED))


def test_a_restoration_completed_after_the_deposit_date_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(1_000), facts=replace(FACTS, completed_on=date(2026, 5, 2)))
    assert refused.value.fields["field"] == "completed_on"


def test_a_restoration_not_designated_for_replacement_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(1_000), facts=replace(FACTS, designated_for_replacement=False))
    assert refused.value.fields["field"] == "designated_for_replacement"


def test_a_restoration_not_paid_for_by_its_performer_is_not_eligible() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(1_000), facts=replace(FACTS, paid_by_performer=False))
    assert refused.value.fields["field"] == "paid_by_performer"


@pytest.mark.parametrize(
    "changes",
    [
        {"designated_for_replacement": False},
        {"paid_by_performer": False},
        {"completed_on": date(2026, 5, 2)},
        {"designated_for_replacement": False, "paid_by_performer": False},
    ],
)
def test_paying_the_performer_back_with_interest_lifts_subd_12_a(
    changes: dict[str, object],
) -> None:
    facts = replace(FACTS, paid_back_with_interest=True, **changes)  # type: ignore[arg-type]
    assert evaluate(wetland(1_000), facts=facts)[0].credit_sqft == 1_000


def test_paying_back_with_interest_does_not_lift_the_category_caps() -> None:
    facts = replace(FACTS, paid_back_with_interest=True, designated_for_replacement=False)
    with pytest.raises(CapExceeded):
        evaluate(pond(12_001, 9_001), facts=facts)


# --- the worked deposit: wetland, buffer and pond --------------------------------------------


STORY_1 = [
    wetland(60_000),
    buffer(52_000, 45_000),
    pond(12_001, 9_000),
]


def test_story_1_credits_60_000_unrestricted_and_45_000_plus_9_000_restricted() -> None:
    credits = evaluate(*STORY_1)
    assert credits == [
        ActionCredit("replacement_wetland", 60_000, 60_000, 60_000, False),
        ActionCredit("upland_buffer", 52_000, 45_000, 45_000, True),
        ActionCredit("treatment_pond", 12_001, 9_000, 9_000, True),
    ]
    assert sum(c.credit_sqft for c in credits if not c.restricted) == 60_000
    assert sum(c.credit_sqft for c in credits if c.restricted) == 54_000
    assert sum(c.credit_sqft for c in credits) == 114_000


def test_story_1_with_the_buffer_asking_45_001_refuses_the_whole_deposit() -> None:
    with pytest.raises(CapExceeded) as refused:
        evaluate(STORY_1[0], buffer(52_000, 45_001), STORY_1[2])
    assert refused.value.fields["category"] == "upland_buffer"
    assert refused.value.fields["cap_sqft"] == 45_000
    assert refused.value.fields["requested_sqft"] == 45_001
    assert "45,000 sq ft" in refused.value.detail and "45,001 sq ft" in refused.value.detail


# --- order, shape and the ruleset ----------------------------------------------------------------


def test_the_first_failing_action_in_request_order_is_the_one_reported() -> None:
    with pytest.raises(NotEligible) as refused:
        evaluate(pond(12_001, 9_000, project=None), vegetative(10_000, 5_000, years=5))
    assert refused.value.fields["category"] == "treatment_pond"
    with pytest.raises(CapExceeded) as over:
        evaluate(vegetative(10_000, 5_001, years=6), pond(12_001, 9_000, project=None))
    assert over.value.fields["category"] == "vegetative_cover"


def test_a_malformed_action_is_reported_before_subd_12_a() -> None:
    facts = replace(FACTS, designated_for_replacement=False)
    with pytest.raises(ValidationFailed):
        evaluate(wetland(1_000), ActionRequest("replacement_wetland", 0, 1), facts=facts)


def test_subd_12_a_is_checked_before_any_category_rule() -> None:
    facts = replace(FACTS, paid_by_performer=False)
    with pytest.raises(NotEligible) as refused:
        evaluate(wetland(1_000, 1_001), facts=facts)
    assert refused.value.fields["field"] == "paid_by_performer"


@pytest.mark.parametrize(
    ("area", "credit", "field"),
    [(0, 1, "area_sqft"), (-5, 1, "area_sqft"), (10, 0, "credit_sqft"), (10, -1, "credit_sqft")],
)
def test_areas_and_credits_must_be_positive_whole_square_feet(
    area: int, credit: int, field: str
) -> None:
    with pytest.raises(ValidationFailed) as refused:
        evaluate(ActionRequest("replacement_wetland", area, credit))
    assert refused.value.code == "validation_error"
    assert list(refused.value.fields["errors"]) == [f"actions.0.{field}"]


def test_a_float_or_boolean_area_is_a_validation_error() -> None:
    with pytest.raises(ValidationFailed):
        evaluate(ActionRequest("replacement_wetland", 10.5, 1))  # type: ignore[arg-type]
    with pytest.raises(ValidationFailed):
        evaluate(ActionRequest("replacement_wetland", True, 1))


def test_an_unknown_category_is_a_validation_error() -> None:
    with pytest.raises(ValidationFailed) as refused:
        evaluate(ActionRequest("peat_mine", 1_000, 1))
    assert list(refused.value.fields["errors"]) == ["actions.0.category"]


def test_every_number_comes_from_the_ruleset_passed_in() -> None:
    stricter = replace(
        SEED,
        caps=SectionCaps(
            replacement_wetland_pct=90,
            vegetative_cover_pct=40,
            upland_buffer_pct=50,
            easement_restoration_pct=60,
            easement_buffer_pct=10,
            treatment_pond_pct=30,
        ),
        vegetative_cover_min_years=8,
    )
    credits = evaluate_deposit(
        stricter,
        FACTS,
        [
            wetland(10_000, 1),
            vegetative(10_000, 1, years=8),
            buffer(10_000, 1),
            easement(10_000, 1),
            easement_buffer(10_000, 1),
            pond(10_000, 1),
        ],
    )
    assert [c.cap_sqft for c in credits] == [9_000, 4_000, 5_000, 6_000, 1_000, 3_000]
    with pytest.raises(NotEligible):
        evaluate_deposit(stricter, FACTS, [vegetative(10_000, 1, years=7)])


# --- the bank site's register: caps per restoration, not per request -----------------------------


def on_site(site: SiteRegister, *actions: ActionRequest) -> list[ActionCredit]:
    return evaluate_deposit(SEED, FACTS, list(actions), site.with_first_areas(list(actions)))


def test_a_first_deposit_registers_the_areas_it_states():
    site = SiteRegister().with_first_areas([wetland(60_000), buffer(52_000, 45_000)])
    assert dict(site.areas) == {"replacement_wetland": 60_000, "upland_buffer": 52_000}
    assert site.cap_sqft(SEED, "upland_buffer") == 45_000  # 75% of the wetland, (c)(2)
    # a registered area is kept: a later deposit's own area does not replace it
    assert site.with_first_areas([wetland(1)]).areas["replacement_wetland"] == 60_000


def test_the_site_yields_no_more_than_its_cap_whatever_the_requests():
    site = SiteRegister({"replacement_wetland": 100_000}, {"replacement_wetland": 75_000})
    assert on_site(site, wetland(100_000, 25_000))[0].cap_sqft == 25_000
    with pytest.raises(CapExceeded) as refused:
        on_site(site, wetland(100_000, 25_001))
    assert refused.value.fields["cap_sqft"] == 100_000
    assert refused.value.fields["credited_sqft"] == 75_000
    assert refused.value.fields["requested_sqft"] == 25_001


def test_two_actions_of_one_deposit_share_the_sites_cap():
    site = SiteRegister({"replacement_wetland": 100_000}, {})
    with pytest.raises(CapExceeded) as refused:
        on_site(site, wetland(60_000, 60_000), wetland(60_000, 40_001))
    assert refused.value.fields["credited_sqft"] == 60_000


def test_an_action_larger_than_the_registered_area_is_not_eligible():
    site = SiteRegister({"replacement_wetland": 100_000}, {})
    with pytest.raises(NotEligible) as refused:
        on_site(site, wetland(100_001, 1))
    assert refused.value.fields["field"] == "area_sqft"


def test_a_buffer_released_later_is_capped_by_the_sites_registered_wetland():
    site = SiteRegister(
        {"replacement_wetland": 60_000, "upland_buffer": 52_000},
        {"replacement_wetland": 60_000, "upland_buffer": 20_000},
        {"replacement_wetland": COMPLETED, "upland_buffer": COMPLETED},
    )
    assert on_site(site, buffer(52_000, 25_000))[0].credit_sqft == 25_000
    with pytest.raises(CapExceeded) as refused:
        on_site(site, buffer(52_000, 25_001))
    assert refused.value.fields["cap_sqft"] == 45_000


def test_a_buffer_released_later_is_established_when_its_wetland_was_completed():
    """Subd. 12 (c)(2): the wetland credited earlier was completed a year before this
    deposit's own ``completed_on``; the buffer is established at that earlier date."""
    earlier = COMPLETED - timedelta(days=365)
    site = SiteRegister(
        {"replacement_wetland": 60_000},
        {"replacement_wetland": 60_000},
        {"replacement_wetland": earlier},
    )
    assert on_site(site, buffer(52_000, 1_000, established_on=earlier))[0].credit_sqft == 1_000
    with pytest.raises(NotEligible) as refused:
        on_site(site, buffer(52_000, 1_000))  # established on this deposit's completed_on
    assert refused.value.fields["field"] == "established_on"


def test_a_buffer_beside_a_wetland_registered_but_never_credited_is_not_eligible():
    site = SiteRegister({"replacement_wetland": 60_000})
    with pytest.raises(NotEligible) as refused:
        on_site(site, buffer(52_000, 1_000))
    assert refused.value.fields["requires"] == "replacement_wetland"
    # the wetland in the same deposit: credited beside it, established at its completion
    assert [c.credit_sqft for c in on_site(site, wetland(60_000), buffer(52_000, 1_000))] == [
        60_000,
        1_000,
    ]


def test_a_buffer_on_a_site_without_a_wetland_is_not_eligible():
    with pytest.raises(NotEligible):
        on_site(SiteRegister(), buffer(1_000, 100))
