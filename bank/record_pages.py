"""What the account, plan and audit pages show, each read in one unit of work: the API's own
answers (balances, lots, statement; the plan's report; the trial balance and journal) with the
names people know for what the API names by id: account numbers, lot labels (``WB-000003 lot
A``), LGU, holder and project names.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import (
    audit,
    balances,
    in_lieu,
    money,
    parties,
    plan_acts,
    plan_report,
    plans,
    policy,
    reports,
    securities,
)
from bank.access import Actor
from bank.balances import ClassBalance
from bank.credits import Lot
from bank.entry_records import EntryRecord, Moved, entry_records, with_names
from bank.money_tables import Security
from bank.notices import MailedNotice
from bank.party_tables import BankAccount, Holder, Lgu
from bank.plan_report import PlanReport
from bank.plan_tables import Appeal, Plan
from ledger import sealer
from ledger.db import Database
from ledger.schema import LedgerAccount


@dataclass(frozen=True)
class AccountPage:
    """An account, its holder, balances, lots and (when the period is sound) its statement."""

    account: BankAccount
    holder_name: str
    balances: list[ClassBalance]
    lots: list[dict[str, Any]]
    lot_labels: dict[str, str]
    statement: list[reports.StatementClass]
    #: what each statement entry's transaction was, by transaction id
    entry_records: dict[str, EntryRecord]


def account_page(
    db: Database,
    actor: Actor,
    account_id: str,
    period: tuple[date, date] | None,
    *,
    lots_limit: int | None = None,
    lots_after: str | None = None,
) -> AccountPage:
    """The account (board, or its holder; ``not_found`` otherwise), its lots (every one, or up
    to ``lots_limit + 1`` after the lot ``lots_after``: ``reports.lots_with_provenance``), and
    the statement of ``period`` (none when ``None``)."""
    if period:
        sealer.seal_committed(db)
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        holder = session.get(Holder, account.holder_id)
        lots = reports.lots_with_provenance(session, account, lots_limit, lots_after)
        statement = reports.statement(session, account, *period) if period else []
        moved = [Moved(e.transaction_id, e.kind, e.memo) for c in statement for e in c.entries]
        entry_lots = {e.lot_id for c in statement for e in c.entries}
        return AccountPage(
            account=account,
            holder_name=holder.name if holder else account.holder_id,
            balances=balances.balance_rows(session, account),
            lots=lots,
            lot_labels=_labels(session, entry_lots),
            statement=statement,
            entry_records=entry_records(session, actor, account, moved),
        )


@dataclass(frozen=True)
class PlanPage:
    """A plan's report, its LGU's name, its payments and securities, and the numbers of the
    accounts and labels of the lots its reservations and withdrawals draw on."""

    report: PlanReport
    lgu_name: str
    payments: list[money.PaymentView]
    #: what its in-lieu payments came to against what is due (``None``: none due or received)
    in_lieu: in_lieu.Standing | None
    securities: list[securities.SecurityView]
    account_numbers: dict[str, str]
    lot_labels: dict[str, str]
    #: the acts on the plan's record its state lets the reader record now
    #: (``plan_acts.open_acts``)
    open_acts: frozenset[str]
    #: the notices mailed for it that print as documents (``notice_document.document``), an
    #: earlier application's too: read with its report (``plan_report.report_with_rows``)
    notices: list[MailedNotice]


def plan_page(db: Database, actor: Actor, plan_id: str, today: date) -> PlanPage:
    """The plan as of ``today`` (board, or its LGU; ``not_found`` otherwise)."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        report, rows = plan_report.report_with_rows(session, plan, today)
        lgu = session.get(Lgu, plan.lgu_id)
        lot_ids = {a.lot_id for w in report.withdrawals for a in w.allocations}
        lot_ids |= {share.lot_id for r in report.reservations for share in r.lots}
        account_ids = {r.account_id for r in report.reservations}
        return PlanPage(
            report=report,
            lgu_name=lgu.name if lgu else plan.lgu_id,
            payments=money.payments_of(session, actor, plan.id),
            in_lieu=in_lieu.standing(
                report.in_lieu_amount_due_cents,
                rows.in_lieu_received_cents.get(plan.id, 0),
                report.outcome,
            ),
            securities=securities.securities_of(
                session, actor, where=[Security.plan_id == plan.id]
            ),
            account_numbers=_numbers(session, account_ids),
            lot_labels=lot_labels(session, lot_ids),
            open_acts=plan_acts.open_acts(session, plan, today),
            notices=rows.mailed[plan.id],
        )


@dataclass(frozen=True)
class PaymentPage:
    """A payment, the plan (and appeal) it is for, the day it was refunded, returned or reversed,
    and what the reader may do with it now."""

    payment: money.PaymentView
    plan_project: str
    lgu_name: str
    #: the petitioner of the appeal it was paid for (an appeal's fee or security only)
    petitioner: str | None
    #: the day of its compensating transaction (``money.compensated_on``)
    compensated_on: date | None
    #: the acts the reader may record on it now (``money.open_acts``): the board's refund or
    #: reversal, the plan's LGU's refund of an in-lieu payment or processing fee
    open_acts: frozenset[str]
    #: why no act is open on it while it is received (``money.why_closed``)
    closed_because: str | None = None


def payment_page(db: Database, actor: Actor, payment_id: str) -> PaymentPage:
    """The payment (board, or its plan's LGU; ``not_found`` otherwise)."""
    with db.transaction() as session:
        payment = money.visible_payment(session, actor, payment_id)
        plan = session.get(Plan, payment.plan_id) if payment.plan_id else None
        lgu = session.get(Lgu, plan.lgu_id) if plan else None
        appeal = session.get(Appeal, payment.appeal_id) if payment.appeal_id else None
        return PaymentPage(
            payment=money.PaymentView.of(payment),
            plan_project=plan.project if plan else "",
            lgu_name=lgu.name if lgu else "",
            petitioner=(appeal.petitioner_name or appeal.petitioner_kind) if appeal else None,
            compensated_on=money.compensated_on(session, payment),
            open_acts=(acts := money.open_acts(session, actor, payment)),
            closed_because=(
                money.why_closed(session, actor, payment)
                if not acts and payment.status == "received"
                else None
            ),
        )


def _numbers(session: Session, account_ids: set[str]) -> dict[str, str]:
    if not account_ids:
        return {}
    query = select(BankAccount.id, BankAccount.number).where(BankAccount.id.in_(account_ids))
    return {account_id: number for account_id, number in session.execute(query).all()}


def _labels(session: Session, lot_ids: set[str]) -> dict[str, str]:
    """The labels of the account's lots ``lot_ids`` (a statement's), as its page names them."""
    if not lot_ids:
        return {}
    query = select(Lot.id, Lot.label).where(Lot.id.in_(lot_ids))
    return {lot: label for lot, label in session.execute(query).all()}


def lot_labels(session: Session, lot_ids: set[str]) -> dict[str, str]:
    """Each lot as people name it: its account's number and its label (``WB-000003 lot A``)."""
    if not lot_ids:
        return {}
    query = (
        select(Lot.id, BankAccount.number, Lot.label)
        .join(BankAccount, BankAccount.id == Lot.account_id)
        .where(Lot.id.in_(lot_ids))
    )
    return {lot: f"{number} lot {label}" for lot, number, label in session.execute(query).all()}


@dataclass(frozen=True)
class AuditPage:
    """The trial balance as of a day, the newest journal page and a readable name for each
    ledger account the journal names."""

    assets: list[audit.AssetTotals]
    balanced: bool
    journal: list[dict[str, Any]]
    account_names: dict[str, str]


def audit_page(db: Database, actor: Actor, today: date, rows: int) -> AuditPage:
    """For the board: the trial balance to ``today`` and the ``rows`` newest transactions."""
    policy.require_board(actor, "see the audit page")
    with db.transaction() as session:
        assets = audit.trial_balance(session, today)
        journal = audit.latest_journal(session, rows)
        codes = {e["account"] for t in journal for e in t["entries"]}
        return AuditPage(
            assets, all(a.balanced for a in assets), journal, ledger_names(session, codes)
        )


def ledger_names(session: Session, codes: set[str]) -> dict[str, str]:
    """Each ledger account's name, with the ids in it replaced by the names they stand for."""
    if not codes:
        return {}
    query = select(LedgerAccount.code, LedgerAccount.name).where(LedgerAccount.code.in_(codes))
    names = {code: name for code, name in session.execute(query).all()}
    readable = with_names(session, set(names.values()))
    return {code: readable[name] for code, name in names.items()}


def numbered_statement(
    db: Database, actor: Actor, account_id: str, start: date, end: date
) -> tuple[str, list[reports.StatementClass]]:
    """The account's number and its statement from ``start`` to ``end`` (board, or its holder)."""
    reports.check_period(start, end)
    sealer.seal_committed(db)
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        return account.number, reports.statement(session, account, start, end)
