"""Reports: the public credit availability report and account statements."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

import ledger
from bank import credits, parties
from bank.access import Actor
from bank.balances import posted_entries_query
from bank.deposits import Deposit
from bank.errors import ValidationFailed
from ledger import clock, sealer
from ledger.db import Database
from ledger.schema import PHASE_POSTED, LedgerChainLink, LedgerEntry


@dataclass(frozen=True)
class Availability:
    """The public credit availability report as of a day."""

    as_of: date
    items: list[dict[str, Any]]


def availability(db: Database) -> Availability:
    """Available credits per service area, wetland type and restriction, today (public)."""
    with db.transaction() as session:
        return Availability(clock.today(), credit_availability(session))


def credit_availability(session: Session) -> list[dict[str, Any]]:
    """Available credits per service area, wetland type and restriction: neither reserved nor
    frozen (a frozen account's or bank site's credits are not for sale)."""
    rows = session.execute(
        select(
            credits.Lot.ledger_account_id,
            credits.CreditClass.service_area,
            credits.CreditClass.wetland_type,
            credits.CreditClass.restricted,
        )
        .join(credits.CreditClass, credits.CreditClass.code == credits.Lot.credit_class)
        .join(parties.BankSite, parties.BankSite.id == credits.Lot.bank_site_id)
        .join(parties.BankAccount, parties.BankAccount.id == credits.Lot.account_id)
        .where(parties.BankSite.frozen.is_(False), parties.BankAccount.status == "open")
    ).all()
    balances = ledger.balances(session, [r.ledger_account_id for r in rows])
    totals: dict[tuple[int, str, bool], int] = defaultdict(int)
    for r in rows:
        totals[(r.service_area, r.wetland_type, r.restricted)] += balances[
            r.ledger_account_id
        ].available
    return [
        {"service_area": area, "wetland_type": kind, "restricted": restricted, "available_sqft": n}
        for (area, kind, restricted), n in sorted(totals.items())
        if n > 0
    ]


def lots_with_provenance(
    session: Session,
    account: parties.BankAccount,
    limit: int | None = None,
    after: str | None = None,
) -> list[dict[str, Any]]:
    """The account's lots as ``GET /accounts/{id}/lots`` shows them, each with where it came from:
    its bank site's name, the deposit's banking plan and date, and the lot it was split from:
    every lot, or with ``limit`` up to ``limit + 1`` after the lot ``after`` (``lot_page``)."""
    if limit is None:
        found = credits.lots_of(session, account)
    else:
        found = credits.lot_page(session, account, limit, after)
    items = [asdict(credits.LotView.of(item)) for item in found]
    sites = _names(session, parties.BankSite, {i["bank_site_id"] for i in items})
    deposits = {
        d.id: d
        for d in session.execute(
            select(Deposit).where(Deposit.id.in_({i["deposit_id"] for i in items}))
        ).scalars()
    }
    parents = {
        lot.id: lot
        for lot in session.execute(
            select(credits.Lot).where(
                credits.Lot.id.in_({i["parent_lot_id"] for i in items if i["parent_lot_id"]})
            )
        ).scalars()
    }
    for item in items:
        deposit, parent = deposits.get(item["deposit_id"]), parents.get(item["parent_lot_id"])
        item["bank_site_name"] = sites.get(item["bank_site_id"])
        item["banking_plan_reference"] = deposit.banking_plan_reference if deposit else None
        item["deposited_on"] = deposit.effective_on if deposit else None
        item["parent_lot_label"] = parent.label if parent else None
    return items


def _names(session: Session, model: Any, ids: set[str]) -> dict[str, str]:
    return dict(session.execute(select(model.id, model.name).where(model.id.in_(ids))).all())


@dataclass(frozen=True)
class StatementEntry:
    """One posted entry of a statement, with the class's balance after it."""

    transaction_id: str
    kind: str
    lot_id: str
    amount_sqft: int
    balance_after_sqft: int
    effective_on: date
    recorded_at: datetime
    memo: str | None


@dataclass(frozen=True)
class StatementClass:
    """A credit class's part of a statement: opening balance, entries, closing balance."""

    credit_class: credits.CreditClass
    opening_sqft: int
    entries: list[StatementEntry]
    closing_sqft: int


@dataclass(frozen=True)
class Statement:
    """``GET /accounts/{id}/statement``: the account's statement for a period."""

    account_id: str
    from_: date
    to: date
    classes: list[StatementClass]


def account_statement(
    db: Database, actor: Actor, account_id: str, start: date, end: date
) -> Statement:
    """An account's statement from ``start`` to ``end`` (board, or the account's holder)."""
    check_period(start, end)
    sealer.seal_committed(db)
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return Statement(account_id, start, end, statement(session, account, start, end))


def check_period(start: date, end: date) -> None:
    """A period that ends before it starts is ``validation_error``."""
    if end < start:
        raise ValidationFailed("the period ends before it starts", {"to": ["before from"]})


def statement(
    session: Session, account: parties.BankAccount, start: date, end: date
) -> list[StatementClass]:
    """Per credit class: the opening balance, every posted entry dated in [start, end], and the
    closing balance, which is the next period's opening balance.

    Entries are listed by effective date and, within a day, in the order they committed: by
    their transaction's place in the hash chain (``ledger_chain.seq``), then entry id.  Entry ids
    are not that order (on PostgreSQL two writes to different lots of one account can commit in
    the other order to their ids).  The caller seals what is queued first
    (``sealer.seal_committed``, before its unit of work), so every entry committed by then has
    its place; one committed later and not yet chained is in neither the opening balance nor the
    rows, so the closing balance is always the opening balance plus the entries listed, and a
    later read only adds entries after those of their day already shown."""
    E, L, C = LedgerEntry, credits.Lot, LedgerChainLink
    base = (
        select(L.credit_class, func.sum(E.amount))
        .join(L, L.ledger_account_id == E.account_id)
        .join(C, C.transaction_id == E.transaction_id)
        .where(L.account_id == account.id, E.phase == PHASE_POSTED)
        .group_by(L.credit_class)
    )
    opening = {
        code: int(total or 0) for code, total in session.execute(base.where(E.effective_on < start))
    }
    rows = session.execute(
        posted_entries_query(account.id)
        .join(C, C.transaction_id == E.transaction_id)
        .where(E.effective_on >= start, E.effective_on <= end)
        .order_by(E.effective_on, C.seq, E.id)
    ).all()
    codes = sorted({*opening, *(r.credit_class for r in rows)})
    running = {code: opening.get(code, 0) for code in codes}
    entries: dict[str, list[StatementEntry]] = {code: [] for code in codes}
    for r in rows:
        running[r.credit_class] += r.amount
        entries[r.credit_class].append(
            StatementEntry(
                transaction_id=str(r.transaction_id),
                kind=r.kind,
                lot_id=r.lot_id,
                amount_sqft=r.amount,
                balance_after_sqft=running[r.credit_class],
                effective_on=r.effective_on,
                recorded_at=r.recorded_at,
                memo=r.memo,
            )
        )
    classes = credits.classes(session, codes)
    return [
        StatementClass(classes[code], opening.get(code, 0), entries[code], running[code])
        for code in codes
    ]


def day_before(day: date) -> date:
    """The last day of the previous period."""
    return day - timedelta(days=1)
