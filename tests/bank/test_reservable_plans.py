"""``bank.reservable_plans``, on both databases: the plans a holder may reserve an account's
credits for are those of the account's service area (or approved for replacement outside it),
without those denied, and the account is its holder's and the board's to ask about."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta

import pytest
from freezegun import freeze_time

from bank import plan_acts, plan_cases, plan_decisions, plans, reservable_plans
from bank.access import SYSTEM
from bank.errors import NotFound
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    unique,
)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def _plan(lgu_id: str, service_area: int = 5, outside: bool = False) -> plans.PlanRequest:
    return plans.PlanRequest(
        lgu_id=lgu_id,
        applicant="Hollis Township",
        project=unique("Road 12 widening"),
        received_on=DAY - timedelta(days=5),
        area_sqft=2_000,
        wetland_type="2",
        service_area=service_area,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
        replacement_outside_service_area=outside,
    )


def test_the_plans_of_the_account_s_area_are_offered_newest_first(db: Database) -> None:
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)  # service area 5
    first = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu))
    second = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu))
    elsewhere = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu, service_area=6))
    outside = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu, service_area=6, outside=True))
    denied = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu))
    refusal = plan_decisions.DecisionRequest("denied", DAY, reasons="no public value replaced")
    plan_acts.decide(db, lgu_actor(lgu), denied.id, refusal)

    offered = reservable_plans.for_account(db, holder_actor(holder), account.id)

    ids = [p.id for p in offered]
    assert ids.index(outside.id) < ids.index(second.id) < ids.index(first.id)
    assert elsewhere.id not in ids and denied.id not in ids
    shown = offered[ids.index(first.id)]
    assert (shown.project, shown.status) == (first.project, "received")
    assert ids == [p.id for p in reservable_plans.for_account(db, SYSTEM, account.id)]


def test_only_the_account_s_holder_and_the_board_may_ask(db: Database) -> None:
    holder, stranger, lgu = new_holder(db), new_holder(db), new_lgu(db)
    account = new_account(db, holder)
    for who in (holder_actor(stranger), lgu_actor(lgu)):
        with pytest.raises(NotFound):
            reservable_plans.for_account(db, who, account.id)


def test_at_most_the_limit_is_offered(db: Database) -> None:
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)
    for _ in range(3):
        plan_cases.record(db, SYSTEM, RULESET, _plan(lgu))
    assert len(reservable_plans.for_account(db, SYSTEM, account.id, limit=2)) == 2
