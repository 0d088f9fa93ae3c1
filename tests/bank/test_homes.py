"""``bank.homes``, ``bank.page_lists``, ``bank.record_pages`` and ``bank.web_sessions``, on both
databases: each role's home and lists hold its own records only, another role's are refused
(``forbidden``) or not found, and signing in and out is recorded in the access trail."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import select

from bank import access, homes, page_lists, plan_cases, plans, record_pages, web_sessions
from bank.access import SYSTEM
from bank.access_tables import AuditEvent
from bank.errors import Forbidden, NotFound
from ledger import clock
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    statements,
    unique,
)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[Any]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00") as clock_:
        yield clock_


def _plan(db: Database, lgu_id: str, days_ago: int = 2) -> str:
    request = plans.PlanRequest(
        lgu_id=lgu_id,
        applicant=unique("Hollis Township"),
        project=unique("Road 12 widening"),
        received_on=clock.today() - timedelta(days=days_ago),
        area_sqft=2_000,
        wetland_type="2",
        service_area=5,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
        replacement_outside_service_area=False,
    )
    return plan_cases.record(db, SYSTEM, RULESET, request).id


def test_a_holders_home_lists_its_own_accounts_by_number_with_totals(db: Database) -> None:
    holder, stranger = new_holder(db), new_holder(db)
    mine = new_account(db, holder)
    new_account(db, stranger)

    home = homes.home(db, holder_actor(holder), DAY)

    assert isinstance(home, homes.HolderHome)
    assert [(a.id, a.number) for a in home.accounts] == [(mine.id, mine.number)]
    assert home.accounts[0].available_sqft == 0 and home.reservations == []


def test_an_lgus_home_puts_its_plans_due_soon_first_and_leaves_out_others(db: Database) -> None:
    lgu, other = new_lgu(db), new_lgu(db)
    due = _plan(db, lgu)
    _plan(db, other)

    home = homes.home(db, lgu_actor(lgu), DAY)

    assert isinstance(home, homes.LguHome)
    assert [p.id for p in home.due_soon] == [due]
    (line,) = home.due_soon
    assert line.next_deadline is not None and line.next_deadline.name == "Notice of application"
    assert [p.id for p in home.plans] == [due]


def test_the_dashboard_is_the_boards(db: Database) -> None:
    assert isinstance(homes.home(db, SYSTEM, DAY), homes.Dashboard)
    with pytest.raises(Forbidden):
        homes.dashboard(db, lgu_actor(new_lgu(db)), DAY)


def test_accounts_are_listed_to_their_holder_and_the_board_in_pages(db: Database) -> None:
    holder = new_holder(db)
    first, second = new_account(db, holder), new_account(db, holder)
    own = page_lists.accounts(db, holder_actor(holder), q=None, holder_id=None, after=None, limit=1)
    # one row more than the page: there is a next page (opened at once, so in id order)
    assert sorted(a.id for a in own) == sorted([first.id, second.id])
    rest = page_lists.accounts(
        db, holder_actor(holder), q=None, holder_id=None, after=own[0].id, limit=1
    )
    assert [a.id for a in rest] == [own[1].id]
    found = page_lists.accounts(db, SYSTEM, q=second.number, holder_id=None, after=None, limit=5)
    assert [a.id for a in found] == [second.id]
    with pytest.raises(Forbidden):
        page_lists.accounts(db, lgu_actor(new_lgu(db)), q=None, holder_id=None, after=None, limit=5)


def test_plans_payments_and_securities_are_the_boards_and_lgus_lists(db: Database) -> None:
    lgu = new_lgu(db)
    mine = _plan(db, lgu)
    _plan(db, new_lgu(db))
    listed = page_lists.plan_list(
        db, lgu_actor(lgu), q=None, status=None, after=None, limit=10, today=DAY
    )
    assert [p.id for p in listed.items] == [mine] and [p.id for p in listed.due_soon] == [mine]
    decided = page_lists.plan_list(
        db, lgu_actor(lgu), q=None, status="approved", after=None, limit=10, today=DAY
    )
    assert decided.items == [] and decided.due_soon == []
    assert page_lists.payments(db, lgu_actor(lgu), status=None, after=None, limit=5) == []
    holder = holder_actor(new_holder(db))
    for listing in (
        lambda: page_lists.plan_list(
            db, holder, q=None, status=None, after=None, limit=5, today=DAY
        ),
        lambda: page_lists.payments(db, holder, status=None, after=None, limit=5),
        lambda: page_lists.securities(
            db, holder, expiring_days=None, status=None, after=None, limit=5, today=DAY
        ),
    ):
        with pytest.raises(Forbidden):
            listing()


def test_the_record_pages_answer_not_found_or_forbidden_to_others(db: Database) -> None:
    lgu, holder = new_lgu(db), new_holder(db)
    plan_id = _plan(db, lgu)
    account = new_account(db, holder)

    page = record_pages.plan_page(db, lgu_actor(lgu), plan_id, DAY)
    assert page.report.id == plan_id and page.payments == [] and page.securities == []
    shown = record_pages.account_page(db, holder_actor(holder), account.id, (DAY, DAY))
    assert shown.account.number == account.number and shown.holder_name.startswith("Holder")
    with pytest.raises(NotFound):
        record_pages.plan_page(db, lgu_actor(new_lgu(db)), plan_id, DAY)
    with pytest.raises(NotFound):
        record_pages.account_page(db, holder_actor(new_holder(db)), account.id, None)
    with pytest.raises(Forbidden):
        record_pages.audit_page(db, holder_actor(holder), DAY, 5)


def _events(db: Database, path: str) -> list[tuple[str, int, str | None]]:
    with db.transaction() as session:
        rows = session.execute(select(AuditEvent).where(AuditEvent.path == path)).scalars()
        return [(e.kind, e.status, e.actor) for e in rows]


def test_signing_in_and_out_is_a_use_case_recorded_in_the_access_trail(db: Database) -> None:
    path = f"POST /sign-in/{unique('test').replace(' ', '-')}"
    trail = web_sessions.Trail(path, None)
    assert web_sessions.sign_in(db, "not a token", None, trail) is None
    with db.transaction() as session:
        _row, secret = access.create_token(session, role="board", name="signer")

    started = web_sessions.sign_in(db, secret, None, trail)

    assert started is not None
    cookie, who = started
    assert web_sessions.resume(db, cookie) == who
    web_sessions.sign_out(db, cookie, who, trail)
    assert web_sessions.resume(db, cookie) is None
    kinds = [(kind, status) for kind, status, _actor in _events(db, path)]
    assert kinds == [("unauthorized", 401), ("signed_in", 303), ("signed_out", 303)]


def test_the_lists_read_as_many_statements_for_three_rows_as_for_one(db: Database) -> None:
    """An account's totals and a plan's status are read for the whole page at once, not with
    queries per row."""
    holder, lgu = new_holder(db), new_lgu(db)
    new_account(db, holder)
    _plan(db, lgu)

    def reads() -> list[int]:
        counts = []
        for listing in (
            lambda: page_lists.accounts(
                db, holder_actor(holder), q=None, holder_id=None, after=None, limit=10
            ),
            lambda: page_lists.plan_list(
                db, lgu_actor(lgu), q=None, status=None, after=None, limit=10, today=DAY
            ),
            lambda: homes.home(db, holder_actor(holder), DAY),
            lambda: homes.home(db, lgu_actor(lgu), DAY),
        ):
            with statements(db) as sent:
                listing()
            counts.append(len(sent))
        return counts

    for_one = reads()
    for _ in range(2):
        new_account(db, holder)
        _plan(db, lgu)
    assert reads() == for_one


def test_a_cursor_into_a_list_the_caller_may_not_see_gives_an_empty_page(db: Database) -> None:
    holder, stranger = new_holder(db), new_holder(db)
    new_account(db, holder)
    theirs = new_account(db, stranger)

    page = page_lists.accounts(
        db, holder_actor(holder), q=None, holder_id=None, after=theirs.id, limit=5
    )

    assert page == []
