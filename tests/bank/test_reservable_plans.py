"""``bank.reservable_plans``, on both databases: the plans a holder may reserve an account's
credits for are those of the account's service area (or approved for replacement outside it),
without those denied, read in a bounded number of batches, and the account is its holder's and
the board's to ask about.  (Plans whose credits are all withdrawn, or final and replaced
otherwise, are left out too: ``tests/api/test_web_forms.py``, through the reserve form.)"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from freezegun import freeze_time

from bank import plan_acts, plan_cases, plan_decisions, plans, reservable_plans
from bank.access import SYSTEM
from bank.errors import NotFound
from bank.plan_report import PlanReport
from ledger import clock
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    SUMMARY_RECIPIENTS,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    statements,
    unique,
)

#: when the listing tests record their plans: the database is the whole session's, and the newest
#: plans it offers must be theirs
LATER = datetime(2150, 1, 1, 12, tzinfo=UTC)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[Any]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00") as clock:
        yield clock


def _deny(db: Database, lgu_id: str, plan_id: str) -> None:
    """The LGU denies the plan today, its summary mailed first (Subd. 6 (b))."""
    lgu = lgu_actor(lgu_id)
    plan_acts.mail_notice(db, lgu, plan_id, "application", clock.today(), SUMMARY_RECIPIENTS)
    refusal = plan_decisions.DecisionRequest("denied", clock.today(), reasons="avoidable")
    plan_acts.decide(db, lgu, plan_id, refusal)


def _plan(lgu_id: str, service_area: int = 5, outside: bool = False) -> plans.PlanRequest:
    return plans.PlanRequest(
        lgu_id=lgu_id,
        applicant="Hollis Township",
        project=unique("Road 12 widening"),
        received_on=clock.today() - timedelta(days=5),
        area_sqft=2_000,
        wetland_type="2",
        service_area=service_area,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
        replacement_outside_service_area=outside,
    )


def test_the_plans_of_the_account_s_area_are_offered_newest_first(
    db: Database, frozen: Any
) -> None:
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)  # service area 5
    frozen.move_to(LATER)  # after every plan the session's other tests record

    def record(request: plans.PlanRequest) -> PlanReport:
        frozen.tick(timedelta(seconds=1))  # each recorded after the last
        return plan_cases.record(db, SYSTEM, RULESET, request)

    first = record(_plan(lgu))
    second = record(_plan(lgu))
    elsewhere = record(_plan(lgu, service_area=6))
    outside = record(_plan(lgu, service_area=6, outside=True))
    denied = record(_plan(lgu))
    _deny(db, lgu, denied.id)

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


def test_at_most_the_limit_is_offered(db: Database, frozen: Any) -> None:
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)
    frozen.move_to(LATER + timedelta(days=1))  # after the other tests' plans, this file's too
    recorded = []
    for _ in range(3):
        frozen.tick(timedelta(seconds=1))
        recorded.append(plan_cases.record(db, SYSTEM, RULESET, _plan(lgu)).id)
    offered = reservable_plans.for_account(db, SYSTEM, account.id, limit=2)
    assert [p.id for p in offered] == recorded[:0:-1]


def test_denied_plans_do_not_take_the_places_of_those_offered(db: Database, frozen: Any) -> None:
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)
    frozen.move_to(LATER + timedelta(days=2))  # after the other tests' plans, this file's too
    recorded = []
    for _ in range(4):
        frozen.tick(timedelta(seconds=1))
        recorded.append(plan_cases.record(db, SYSTEM, RULESET, _plan(lgu)).id)
    for newest in recorded[2:]:
        _deny(db, lgu, newest)

    offered = reservable_plans.for_account(db, SYSTEM, account.id, limit=2)

    assert [p.id for p in offered] == [recorded[1], recorded[0]]


def test_the_plans_read_are_bounded_and_past_them_a_plan_is_not_offered(
    db: Database, frozen: Any
) -> None:
    """At most ``BATCHES`` batches of ``limit`` plans are read: an area whose newest plans no
    reservation can serve offers none older (the reserve form names such a plan by its id), and
    reads no more statements however many plans it has."""
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder)
    frozen.move_to(LATER + timedelta(days=3))  # after the other tests' plans, this file's too
    live = plan_cases.record(db, SYSTEM, RULESET, _plan(lgu)).id
    for _ in range(reservable_plans.BATCHES):
        frozen.tick(timedelta(seconds=1))
        _deny(db, lgu, plan_cases.record(db, SYSTEM, RULESET, _plan(lgu)).id)

    with statements(db) as read:
        assert reservable_plans.for_account(db, SYSTEM, account.id, limit=1) == []
    frozen.tick(timedelta(seconds=1))
    _deny(db, lgu, plan_cases.record(db, SYSTEM, RULESET, _plan(lgu)).id)
    with statements(db) as more:
        assert reservable_plans.for_account(db, SYSTEM, account.id, limit=1) == []

    assert len(more) == len(read)
    offered = reservable_plans.for_account(db, SYSTEM, account.id, limit=2)  # reads 8 plans
    assert [p.id for p in offered][:1] == [live]
