"""The printable documents the pages offer besides the notices (issue #26): the certificate of a
withdrawal, for the LGU's file, and an account's statement for a period.

Each is read in one unit of work, with the authorization of its API twin (``plans.visible_plan``:
the board or the plan's LGU; ``parties.visible_account``: the board or the account's holder), and
returned fully loaded, with the names people know (account numbers, lot labels, LGU and holder
names) in place of ids.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import parties, plan_decisions, plans, record_pages, reports
from bank.access import Actor
from bank.credits import CreditClass, Lot
from bank.entry_records import EntryRecord, Moved, entry_records
from bank.errors import NotFound
from bank.party_tables import BankAccount, Holder, Lgu
from bank.plan_record_tables import ApplicationRecord, PlanApplication
from bank.plan_tables import Appeal, Plan
from bank.rules.replacement_rules import ABOVE_1_TO_1, FIRST_1_TO_1
from bank.withdrawal_tables import Withdrawal, WithdrawalAllocation
from ledger import clock, sealer
from ledger.db import Database
from ledger.schema import LedgerChainLink, LedgerTransaction

#: how a certificate names the portion of the requirement some credits met
PORTIONS = {FIRST_1_TO_1: "First 1:1", ABOVE_1_TO_1: "Above 1:1"}


# --- the certificate of a withdrawal --------------------------------------------------------


@dataclass(frozen=True)
class CertifiedCredits:
    """Credits of one lot that met one portion of the plan's requirement."""

    account_number: str
    lot_label: str
    amount_sqft: int
    portion: str

    @property
    def portion_label(self) -> str:
        return PORTIONS.get(self.portion, self.portion)


@dataclass(frozen=True)
class CertifiedClass:
    """A credit class's part of a withdrawal: its total and the lots it came from."""

    code: str
    wetland_type: str
    restricted: bool
    amount_sqft: int
    credits: list[CertifiedCredits]


@dataclass(frozen=True)
class ChainLink:
    """A transaction's link in the SHA-256 hash chain (``ledger.chain``)."""

    seq: int
    hash: str
    prev_hash: str
    chained_at: datetime


@dataclass(frozen=True)
class BoardRuling:
    """The board's decision on an appeal of that decision (Subd. 9): ``plan_upheld`` or
    ``plan_reversed``, and the day it was made."""

    outcome: str
    decided_on: date


@dataclass(frozen=True)
class CertifiedDecision:
    """The decision the credits were withdrawn under, as the certificate states it: the LGU's
    (``outcome``: approved, denied or deemed_approved) with its record (date, resolution) when
    there is one, or the day a deemed approval took effect (it has no record); the board's
    rulings on appeals of it; the outcome in force after them (``outcome_now``: reversed, the
    LGU's outcome turned over); and the plan's status now.  The LGU's date and resolution
    belong to the LGU's outcome, never to the outcome after an appeal."""

    status: str
    outcome: str | None
    decided_on: date | None
    resolution_number: str | None
    resolution_adopted_on: date | None
    rulings: tuple[BoardRuling, ...]
    outcome_now: str | None
    #: Minn. Stat. 15.99 subd. 2: the day after the last day to decide (``deemed_approved``)
    deemed_approved_on: date | None = None


@dataclass(frozen=True)
class WithdrawalCertificate:
    """What was withdrawn for a plan, from which lots, for which portion, and where the ledger
    holds it: its transaction and that transaction's link in the hash chain (``None`` until the
    sealer has chained it)."""

    plan_id: str
    application_number: int
    project: str
    applicant: str
    lgu_name: str
    decision: CertifiedDecision
    impact_area_sqft: int
    replacement_ratio: str
    withdrawal_id: str
    withdrawn_sqft: int
    withdrawn_at: datetime
    first_1_to_1_sqft: int
    above_1_to_1_sqft: int
    classes: list[CertifiedClass]
    transaction_id: str
    transaction_on: date
    recorded_at: datetime
    reversal_transaction_id: str | None
    link: ChainLink | None


def withdrawal_certificate(
    db: Database, actor: Actor, plan_id: str, withdrawal_id: str
) -> WithdrawalCertificate:
    """The certificate of one of the plan's withdrawals (board, or the plan's LGU;
    ``not_found`` otherwise, and for a withdrawal of another plan)."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        row = session.get(Withdrawal, withdrawal_id)
        if row is None or row.plan_id != plan.id:
            raise NotFound(f"no withdrawal {withdrawal_id} for plan {plan_id}")
        transaction = session.get(LedgerTransaction, row.transaction_id)
        if transaction is None:  # a foreign key: the withdrawal's transaction exists
            raise NotFound(f"no ledger transaction {row.transaction_id}")
        lgu = session.get(Lgu, plan.lgu_id)
        classes = _certified_classes(session, row.id)
        first = sum(c.amount_sqft for k in classes for c in k.credits if c.portion == FIRST_1_TO_1)
        state = plans.state(session, plan)
        appeals = plans.appeals_of(session, plan.id)
        # withdrawn under the approval of an application a revision counting as new has since
        # superseded, or of the one that stood after a denied revision: that application's
        # decision and impact, not the revision's
        earlier = _drawn_on(session, plan, appeals, row.created_at)
        return WithdrawalCertificate(
            plan_id=plan.id,
            application_number=earlier.number if earlier else plan.application_number,
            project=plan.project,
            applicant=plan.applicant,
            lgu_name=lgu.name if lgu else plan.lgu_id,
            decision=_decision(session, plan, state, appeals, earlier),
            impact_area_sqft=earlier.impact_area_sqft if earlier else plan.impact_area_sqft,
            replacement_ratio=plan.replacement_ratio,
            withdrawal_id=row.id,
            withdrawn_sqft=row.withdrawn_sqft,
            withdrawn_at=row.created_at,
            first_1_to_1_sqft=first,
            above_1_to_1_sqft=row.withdrawn_sqft - first,
            classes=classes,
            transaction_id=str(transaction.id),
            transaction_on=transaction.effective_on,
            recorded_at=transaction.recorded_at,
            reversal_transaction_id=(
                str(row.reversal_transaction_id) if row.reversal_transaction_id else None
            ),
            link=chain_link(session, transaction.id),
        )


def _drawn_on(
    session: Session, plan: Plan, appeals: list[Appeal], at: datetime
) -> PlanApplication | None:
    """The application whose approval a withdrawal made ``at`` drew on (``None``: the plan's
    current one): the application current then (``plans.application_at``) if it stood approved
    then, else the last earlier one that did, the approval a denied revision leaves standing
    (Subd. 6 (c)).  A reversal on appeal counts from its petition: while the board has an
    appeal before it the plan takes no withdrawal, so one made after the petition of an appeal
    the board reversed was made after the reversal."""
    number = plans.application_at(session, plan, at)
    earlier = {a.number: a for a in plans.earlier_applications(session, plan)}
    for candidate in range(number, 0, -1):
        if candidate == plan.application_number:
            if _approved_at(plan, candidate, appeals, at, current=True):
                return None
            continue
        record = earlier.get(candidate)
        if record is not None and _approved_at(record, candidate, appeals, at, current=False):
            return record
    # none stood approved (the withdrawal was refused then): the application current then
    return earlier.get(number)


def _approved_at(
    record: ApplicationRecord,
    number: int,
    appeals: list[Appeal],
    at: datetime,
    *,
    current: bool,
) -> bool:
    """Whether application ``number`` (its ``record``) stood approved at ``at``: its LGU's
    outcome, or a deemed approval (the current application takes a withdrawal undecided only
    when deemed approved; an earlier one is deemed approved when superseded so), turned over
    by an appeal reversing it petitioned by then."""
    if record.decision_outcome is not None:
        approved = record.decision_outcome in plans.APPROVED_OUTCOMES
    else:
        approved = current or (isinstance(record, PlanApplication) and record.outcome is not None)
    reversed_by_then = any(
        a.application_number == number
        and a.outcome == "plan_reversed"
        and clock.as_utc(a.created_at) <= clock.as_utc(at)
        for a in appeals
    )
    return approved != reversed_by_then  # a reversal turns the outcome over


def _decision(
    session: Session,
    plan: Plan,
    state: plans.PlanState,
    appeals: list[Appeal],
    earlier: PlanApplication | None,
) -> CertifiedDecision:
    """The decision the credits were withdrawn under: the current application's, or an earlier
    one's (``earlier``), with the board's rulings on appeals of it and its outcome after them;
    and the plan's status now."""
    if earlier is not None:
        recorded: plan_decisions.Decision | None = plan_decisions.decision_record(earlier)
        outcome_now = plans.outcome_now(earlier, appeals)
        number = earlier.number
    else:
        recorded = plan_decisions.decision_record(plan)
        # its own outcome, not the approval a denial of it leaves standing
        outcome_now = "denied" if state.revision_denied else state.outcome
        number = plan.application_number
    resolution = recorded.resolution if recorded else None
    # decided without a record: deemed approved (Minn. Stat. 15.99), whatever an appeal made of it
    outcome = recorded.outcome if recorded else ("deemed_approved" if outcome_now else None)
    rulings = tuple(
        BoardRuling(a.outcome, a.decided_on)
        for a in sorted(appeals, key=lambda a: (a.decided_on or date.max, a.received_on))
        if a.application_number == number and a.outcome and a.decided_on
    )
    return CertifiedDecision(
        status=state.status,
        outcome=outcome,
        decided_on=recorded.decided_on if recorded else None,
        resolution_number=resolution.number if resolution else None,
        resolution_adopted_on=resolution.adopted_on if resolution else None,
        deemed_approved_on=(
            plans.deemed_approved_on(session, plan, earlier)
            if outcome == "deemed_approved"
            else None
        ),
        rulings=rulings,
        outcome_now=outcome_now,
    )


def _certified_classes(session: Session, withdrawal_id: str) -> list[CertifiedClass]:
    """The withdrawal's allocations by credit class, each with its lots, in allocation order."""
    A = WithdrawalAllocation
    rows = session.execute(
        select(A.credit_class, A.amount_sqft, A.portion, BankAccount.number, Lot.label)
        .join(Lot, Lot.id == A.lot_id)
        .join(BankAccount, BankAccount.id == Lot.account_id)
        .where(A.withdrawal_id == withdrawal_id)
        .order_by(A.id)
    ).all()
    by_class: dict[str, list[CertifiedCredits]] = {}
    for code, amount, portion, number, label in rows:
        by_class.setdefault(code, []).append(CertifiedCredits(number, label, amount, portion))
    kinds = _classes(session, by_class)
    return [
        CertifiedClass(
            code=code,
            wetland_type=kinds[code].wetland_type,
            restricted=kinds[code].restricted,
            amount_sqft=sum(c.amount_sqft for c in credits),
            credits=credits,
        )
        for code, credits in sorted(by_class.items())
    ]


def _classes(session: Session, codes: Iterable[str]) -> dict[str, CreditClass]:
    query = select(CreditClass).where(CreditClass.code.in_(set(codes)))
    return {row.code: row for row in session.execute(query).scalars()}


def chain_link(session: Session, transaction_id: int) -> ChainLink | None:
    """The transaction's link in the hash chain, or ``None`` while it waits for the sealer."""
    link = session.execute(
        select(LedgerChainLink).where(LedgerChainLink.transaction_id == transaction_id)
    ).scalar_one_or_none()
    if link is None:
        return None
    return ChainLink(link.seq, link.hash, link.prev_hash, link.chained_at)


# --- an account's statement -----------------------------------------------------------------


@dataclass(frozen=True)
class StatementLine:
    """One posted entry: when, what (``record``: what its transaction was), which lot, how
    much, and the class's balance after it."""

    effective_on: date
    transaction_id: str
    record: EntryRecord
    lot_label: str
    amount_sqft: int
    balance_after_sqft: int

    @property
    def description(self) -> str:
        return self.record.description


@dataclass(frozen=True)
class StatementPart:
    """A credit class's part of the statement: opening balance, entries, closing balance."""

    code: str
    wetland_type: str
    restricted: bool
    opening_sqft: int
    lines: list[StatementLine]
    closing_sqft: int


@dataclass(frozen=True)
class AccountStatement:
    """An account's statement from ``start`` to ``end``, both days included."""

    account_id: str
    account_number: str
    account_name: str | None
    holder_name: str
    service_area: int
    county: str
    status: str
    start: date
    end: date
    parts: list[StatementPart]


def account_statement(
    db: Database, actor: Actor, account_id: str, start: date, end: date, *, entries: bool = True
) -> AccountStatement:
    """The account's statement (board, or the account's holder; ``not_found`` otherwise); a
    period that ends before it starts is ``validation_error``.  Without ``entries``, only the
    account's particulars (for a page that asks for the period again)."""
    if entries:
        reports.check_period(start, end)
        sealer.seal_committed(db)
    with db.transaction() as session:
        account = parties.visible_account(session, actor, account_id)
        holder = session.get(Holder, account.holder_id)
        classes = reports.statement(session, account, start, end) if entries else []
        posted = [e for c in classes for e in c.entries]
        labels = record_pages.lot_labels(session, {e.lot_id for e in posted})
        moved = [Moved(e.transaction_id, e.kind, e.memo) for e in posted]
        records = entry_records(session, actor, account, moved)
        return AccountStatement(
            account_id=account.id,
            account_number=account.number,
            account_name=account.name,
            holder_name=holder.name if holder else account.holder_id,
            service_area=account.service_area,
            county=account.county,
            status=account.status,
            start=start,
            end=end,
            parts=[
                StatementPart(
                    code=c.credit_class.code,
                    wetland_type=c.credit_class.wetland_type,
                    restricted=c.credit_class.restricted,
                    opening_sqft=c.opening_sqft,
                    lines=[_line(e, labels, records) for e in c.entries],
                    closing_sqft=c.closing_sqft,
                )
                for c in classes
            ],
        )


def _line(
    entry: reports.StatementEntry, labels: dict[str, str], records: dict[str, EntryRecord]
) -> StatementLine:
    return StatementLine(
        effective_on=entry.effective_on,
        transaction_id=entry.transaction_id,
        record=records[entry.transaction_id],
        lot_label=labels.get(entry.lot_id, entry.lot_id),
        amount_sqft=entry.amount_sqft,
        balance_after_sqft=entry.balance_after_sqft,
    )
