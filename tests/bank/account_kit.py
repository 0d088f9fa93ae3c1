"""Parties, accounts and deposits for the tests of ``bank.accounts`` and ``bank.deposits``.

Holders and LGUs are written as rows (their registration is ``bank.parties``' and tested there);
a bank site is registered with the area of its replacement wetland, and accounts and deposits go
through the use cases under test.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

from sqlalchemy import event, func, select

from bank import accounts, deposits, notices, parties, site_register
from bank.access import SYSTEM, Actor
from bank.deposit_views import DepositView
from bank.ids import new_id
from bank.rules.deposit_rules import ActionRequest
from bank.rules.ruleset import ruleset_for
from ledger import clock
from ledger.db import Database

DAY = date(2026, 6, 17)
RULESET = ruleset_for(DAY)
WETLAND = "replacement_wetland"
COVER = "vegetative_cover"


#: everyone Subd. 6 (b) mails the summary of an application to (none asked for a copy): the
#: technical evaluation panel and the DNR commissioner
SUMMARY_RECIPIENTS = (
    notices.Recipient("Ann Board", "520 Lafayette Rd N, St. Paul", "tep_member"),
    notices.Recipient("Sam Swcd", "311 Brighton Ave S, Buffalo", "tep_member"),
    notices.Recipient("Lee Lgu", "10 2nd St NW, Buffalo", "tep_member"),
    notices.Recipient("Commissioner", "500 Lafayette Rd, St. Paul", "dnr_commissioner"),
)


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def holder_actor(holder_id: str) -> Actor:
    return Actor(token_id=f"tok_{holder_id}", role="holder", name="owner", holder_id=holder_id)


def lgu_actor(lgu_id: str) -> Actor:
    return Actor(token_id=f"tok_{lgu_id}", role="lgu", name="county", lgu_id=lgu_id)


def new_holder(db: Database) -> str:
    with db.transaction() as session:
        holder = parties.Holder(
            id=new_id("hld"),
            name=unique("Holder"),
            email=None,
            address=None,
            created_at=clock.utcnow(),
        )
        session.add(holder)
        return holder.id


def new_lgu(db: Database) -> str:
    with db.transaction() as session:
        lgu = parties.Lgu(
            id=new_id("lgu"),
            name=unique("County"),
            kind="county",
            observes_indigenous_peoples_day=False,
            observes_friday_after_thanksgiving=False,
            created_at=clock.utcnow(),
        )
        session.add(lgu)
        return lgu.id


def new_site(db: Database, holder_id: str, areas: dict[str, int] | None = None) -> str:
    """A bank site of ``holder_id`` with ``areas`` registered (10,000 sq ft of wetland)."""
    with db.transaction() as session:
        site = parties.create_bank_site(
            session,
            RULESET,
            name=unique("Site"),
            holder_id=holder_id,
            service_area=5,
            county="Lyon",
        )
        registered = {WETLAND: 10_000} if areas is None else areas
        site_register.record(session, site.id, registered, SYSTEM, source="site_registered")
        return site.id


def new_account(db: Database, holder_id: str) -> accounts.AccountView:
    return accounts.open_account(
        db, RULESET, SYSTEM, holder_id=holder_id, service_area=5, county="Lyon"
    )


def wetland(area: int, credit: int | None = None) -> ActionRequest:
    return ActionRequest(WETLAND, area, area if credit is None else credit)


def cover(area: int, credit: int) -> ActionRequest:
    return ActionRequest(COVER, area, credit, qualifying_years=7)


def request(
    account_id: str, site_id: str, lgu_id: str, *actions: ActionRequest, on: date = DAY
) -> deposits.DepositRequest:
    return deposits.DepositRequest(
        account_id=account_id,
        bank_site_id=site_id,
        effective_on=on,
        banking_plan_reference=unique("BP"),
        banking_plan_approved_on=on,
        banking_plan_lgu_id=lgu_id,
        wetland_type="2",
        completed_on=on,
        federally_approved=False,
        designated_for_replacement=True,
        paid_by_performer=True,
        paid_back_with_interest=False,
        actions=actions,
    )


def deposit(db: Database, req: deposits.DepositRequest, actor: Actor = SYSTEM) -> DepositView:
    return deposits.post_deposit(db, RULESET, actor, req, "req-test")


def count(db: Database, model: Any, *where: Any) -> int:
    with db.transaction() as session:
        return int(session.execute(select(func.count()).select_from(model).where(*where)).scalar())


@contextmanager
def statements(db: Database) -> Iterator[list[str]]:
    """The SQL statements ``db`` runs inside the block, as they are sent."""
    sent: list[str] = []

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        sent.append(statement)

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(db.engine, "before_cursor_execute", note)
