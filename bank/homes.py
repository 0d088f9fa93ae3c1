"""What each role finds first on the pages once signed in: a holder its accounts (with balances)
and the reservations held against them; an LGU its plans, those with a deadline in the next 14
days first; the board a dashboard (plans with a deadline this week, securities expiring within 60
days, the last full verification of the ledger).

Each home is one use case, one unit of work, read as the API reads: the same ``bank.policy``
answers who sees what, and every row comes back as a frozen dataclass with the names people know
(account numbers, LGU and holder names) beside the ids the links need.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import ColumnElement, or_, select
from sqlalchemy.orm import Session

from bank import balances, keyset, parties, plans, policy, reservations
from bank.access import Actor
from bank.audit import LastFullPass
from bank.money_tables import Security
from bank.party_tables import BankAccount, Lgu
from bank.plan_tables import Plan
from bank.reservation_tables import Reservation
from bank.securities import drawable_cents, security_status, status_condition
from ledger import checkpoint
from ledger.db import Database

#: how many accounts, reservations or plans a home lists before pointing to the full list
SHORTCUTS = 50
#: an LGU's home and plan list put the plans with a deadline this close first
DUE_SOON_DAYS = 14
#: the board's dashboard: plans with a deadline this close, securities expiring this soon
THIS_WEEK_DAYS = 7
EXPIRING_DAYS = 60
#: a plan's open deadlines all fall within a year and a month of its receipt (60 days to decide,
#: at most 60 more by extension, then the notices and the 15-day appeal window): older plans
#: are not looked at for deadlines, and at most ``WATCHED_PLANS`` of the newest are
WATCHED_SINCE = timedelta(days=400)
WATCHED_PLANS = 300
#: no longer than Subd. 9's 15-day appeal window after the notice of decision (with room for
#: the weekends and holidays it may be extended over)
APPEAL_WINDOW = timedelta(days=30)


@dataclass(frozen=True)
class AccountLine:
    """An account as a list shows it: its number, holder and credit totals now
    (``available = posted - reserved - frozen``, as the account's balances)."""

    id: str
    number: str
    name: str | None
    holder_id: str
    holder_name: str
    service_area: int
    county: str
    status: str
    posted_sqft: int
    reserved_sqft: int
    frozen_sqft: int
    available_sqft: int


@dataclass(frozen=True)
class ReservationLine:
    """A reservation against a holder's account, with the plan it is for (as much of the plan as
    the holder may know: project, LGU, status)."""

    id: str
    account_id: str
    account_number: str
    credit_class: str
    amount_sqft: int
    status: str
    #: posted by a withdrawal an appeal then reversed: its credits went back to their lots
    reversed_on_appeal: bool
    expires_on: date
    plan_project: str
    plan_lgu: str
    plan_status: str


@dataclass(frozen=True)
class Deadline:
    """The next thing due on a plan."""

    name: str
    due: date


@dataclass(frozen=True)
class PlanLine:
    """A plan as a list shows it: project, applicant, LGU, status and its next deadline."""

    id: str
    project: str
    applicant: str
    lgu_id: str
    lgu_name: str
    received_on: date
    status: str
    next_deadline: Deadline | None


@dataclass(frozen=True)
class SecurityLine:
    """A security as a list shows it, with the plan it guarantees."""

    id: str
    plan_id: str
    plan_project: str
    lgu_name: str
    kind: str
    issuer: str
    amount_cents: int
    undrawn_cents: int
    expires_on: date
    status: str


@dataclass(frozen=True)
class HolderHome:
    holder_name: str
    accounts: list[AccountLine]
    reservations: list[ReservationLine]


@dataclass(frozen=True)
class LguHome:
    lgu_name: str
    #: the first ``SHORTCUTS`` plans due soonest (``more_due``: more are, listed in full by
    #: ``page_lists.due_plans``)
    due_soon: list[PlanLine]
    plans: list[PlanLine]
    more_due: bool = False


@dataclass(frozen=True)
class Dashboard:
    #: the first ``SHORTCUTS`` plans due soonest (``more_due``: more are)
    due_this_week: list[PlanLine]
    expiring: list[SecurityLine]
    last_full_pass: LastFullPass | None
    more_due: bool = False


def home(db: Database, actor: Actor, today: date) -> HolderHome | LguHome | Dashboard:
    """The signed-in person's home as of ``today``."""
    if actor.is_board:
        return dashboard(db, actor, today)
    if actor.role == policy.LGU:
        return lgu_home(db, actor, today)
    return holder_home(db, actor, today)


def holder_home(db: Database, actor: Actor, today: date) -> HolderHome:
    """The holder's accounts with their totals, and the newest reservations against them."""
    with db.transaction() as session:
        holder = parties.get_holder(session, actor.holder_id or "")
        own = list(
            session.execute(
                select(BankAccount)
                .where(BankAccount.holder_id == holder.id)
                .order_by(BankAccount.created_at, BankAccount.id)
                .limit(SHORTCUTS)
            ).scalars()
        )
        lines = account_lines(session, [(account, holder.name) for account in own])
        return HolderHome(holder.name, lines, _reservations_of(session, holder.id, today))


def account_lines(session: Session, listed: list[tuple[BankAccount, str]]) -> list[AccountLine]:
    """Each of ``listed`` (an account and its holder's name) with its totals over every credit
    class, now."""
    totals = balances.totals_of(session, [account for account, _ in listed])
    return [
        AccountLine(
            id=account.id,
            number=account.number,
            name=account.name,
            holder_id=account.holder_id,
            holder_name=holder_name,
            service_area=account.service_area,
            county=account.county,
            status=account.status,
            posted_sqft=totals[account.id].posted_sqft,
            reserved_sqft=totals[account.id].reserved_sqft,
            frozen_sqft=totals[account.id].frozen_sqft,
            available_sqft=totals[account.id].available_sqft,
        )
        for account, holder_name in listed
    ]


def _reservations_of(session: Session, holder_id: str, today: date) -> list[ReservationLine]:
    query = (
        select(Reservation, BankAccount.number, Plan, Lgu.name)
        .join(BankAccount, BankAccount.id == Reservation.account_id)
        .join(Plan, Plan.id == Reservation.plan_id)
        .join(Lgu, Lgu.id == Plan.lgu_id)
        .where(BankAccount.holder_id == holder_id)
        .order_by(Reservation.created_at.desc(), Reservation.id.desc())
        .limit(SHORTCUTS)
    )
    rows = session.execute(query).all()
    state_of = plans.states(session, list({p.id: p for _r, _n, p, _l in rows}.values()), today)
    # as the account's reservations page reads them: with a withdrawal reversed on appeal
    views = reservations.reservation_views(session, [row for row, *_ in rows])
    return [
        ReservationLine(
            id=row.id,
            account_id=row.account_id,
            account_number=number,
            credit_class=row.credit_class,
            amount_sqft=row.amount_sqft,
            status=view.status,
            reversed_on_appeal=view.reversed_on_appeal,
            expires_on=row.expires_on,
            plan_project=plan.project,
            plan_lgu=lgu_name,
            plan_status=state_of[plan.id].status,
        )
        for (row, number, plan, lgu_name), view in zip(rows, views, strict=True)
    ]


def lgu_home(db: Database, actor: Actor, today: date) -> LguHome:
    """The LGU's plans with a deadline in the next ``DUE_SOON_DAYS`` days (the first
    ``SHORTCUTS``, soonest first), and its newest plans."""
    with db.transaction() as session:
        lgu = parties.get_lgu(session, actor.lgu_id or "")
        due = due_within(session, actor, today, DUE_SOON_DAYS)
        newest = session.execute(
            select(Plan)
            .where(Plan.lgu_id == lgu.id)
            .order_by(Plan.created_at.desc(), Plan.id.desc())
            .limit(SHORTCUTS)
        ).scalars()
        newest_lines = plan_lines(session, list(newest), today)
        return LguHome(lgu.name, due[:SHORTCUTS], newest_lines, len(due) > SHORTCUTS)


def dashboard(db: Database, actor: Actor, today: date) -> Dashboard:
    """For the board: plans with a deadline this week (the first ``SHORTCUTS``, soonest first),
    securities held that expire within ``EXPIRING_DAYS`` days, and the last full pass that
    found the ledger intact."""
    policy.require_board(actor, "see the dashboard")
    with db.transaction() as session:
        due = due_within(session, actor, today, THIS_WEEK_DAYS)
        expiring = expiring_securities(session, actor, today, EXPIRING_DAYS, None, SHORTCUTS)
        found = checkpoint.latest(session.connection())
        last = LastFullPass.of(found) if found else None
        return Dashboard(due[:SHORTCUTS], expiring, last, len(due) > SHORTCUTS)


# --- plans and their deadlines ----------------------------------------------------------------


def lgu_names(session: Session, ids: set[str]) -> dict[str, str]:
    """The names of the LGUs ``ids``."""
    if not ids:
        return {}
    query = select(Lgu.id, Lgu.name).where(Lgu.id.in_(ids))
    return {lgu_id: name for lgu_id, name in session.execute(query).all()}


def plan_lines(session: Session, listed: list[Plan], today: date) -> list[PlanLine]:
    """Each of ``listed`` with its LGU's name, status and next open deadline as of ``today``."""
    names = lgu_names(session, {p.lgu_id for p in listed})
    state_of = plans.states(session, listed, today)
    return [plan_line(plan, state_of[plan.id], names, today) for plan in listed]


def plan_line(plan: Plan, state: plans.PlanState, names: dict[str, str], today: date) -> PlanLine:
    """``plan`` with its status and next open deadline as of ``today``."""
    return PlanLine(
        id=plan.id,
        project=plan.project,
        applicant=plan.applicant,
        lgu_id=plan.lgu_id,
        lgu_name=names.get(plan.lgu_id, plan.lgu_id),
        received_on=plan.received_on,
        status=state.status,
        next_deadline=next_deadline(plan, state, today),
    )


def next_deadline(plan: Plan, state: plans.PlanState, today: date) -> Deadline | None:
    """The earliest deadline not yet met: a notice not mailed (overdue ones too, the notice of
    application until the decision), the decision, or a period (comments, appeals) still
    running; ``None`` once the plan is final."""
    if state.status == "final":
        return None
    d = state.deadlines
    tasks = []
    if plan.notice_mailed_on is None and state.outcome is None:
        tasks.append(Deadline("Notice of application", d.notice_due))
    if state.outcome is None and d.decision_due >= today:
        tasks.append(Deadline("Decision", d.decision_due))
    if d.decision_notice_due is not None and plan.decision_notice_mailed_on is None:
        tasks.append(Deadline("Notice of decision", d.decision_notice_due))
    for name, ends in (
        ("Comment period ends", d.comment_period_ends),
        ("Appeal window ends", d.appeal_window_ends),
    ):
        if ends is not None and ends >= today:
            tasks.append(Deadline(name, ends))
    return min(tasks, key=lambda t: t.due) if tasks else None


def due_within(
    session: Session,
    actor: Actor,
    today: date,
    days: int,
    where: Iterable[ColumnElement[bool]] = (),
) -> list[PlanLine]:
    """The caller's plans (``plans.list_plans``'s scope and ``where``) with a deadline due by
    ``today + days`` (overdue notices too), soonest first."""
    horizon = today + timedelta(days=days)
    scope = [] if actor.is_board else [Plan.lgu_id == actor.lgu_id]
    query = (
        select(Plan)
        .where(*scope, *where, *_may_be_due(today))
        .order_by(Plan.received_on.desc(), Plan.id)
        .limit(WATCHED_PLANS)
    )
    lines = plan_lines(session, list(session.execute(query).scalars()), today)
    due = [
        line
        for line in lines
        if line.next_deadline is not None and line.next_deadline.due <= horizon
    ]
    return sorted(due, key=lambda line: line.next_deadline.due if line.next_deadline else today)


def _may_be_due(today: date) -> list[ColumnElement[bool]]:
    """Plans that may have a deadline to come: received by ``today`` and within
    ``WATCHED_SINCE``, and with no notice of decision mailed before the appeal window."""
    return [
        Plan.received_on <= today,
        Plan.received_on >= today - WATCHED_SINCE,
        or_(
            Plan.decision_notice_mailed_on.is_(None),
            Plan.decision_notice_mailed_on >= today - APPEAL_WINDOW,
        ),
    ]


# --- securities -------------------------------------------------------------------------------


def expiring_securities(
    session: Session,
    actor: Actor,
    today: date,
    days: int | None,
    status: str | None,
    limit: int,
    after: str | None = None,
) -> list[SecurityLine]:
    """Up to ``limit`` securities the caller sees (board: all; an LGU: its plans'), soonest
    expiry first, after the security ``after``: held ones expiring within ``days`` when given,
    else of ``status`` (any when ``None``)."""
    S = Security  # noqa: N806
    query = select(S, Plan.project, Lgu.name).join(Plan, Plan.id == S.plan_id)
    query = query.join(Lgu, Lgu.id == Plan.lgu_id)
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    if days is not None:
        query = query.where(
            status_condition("held", today), S.expires_on <= today + timedelta(days=days)
        )
    elif status is not None:
        query = query.where(status_condition(status, today))
    if after is not None:
        scope = plans.of_plans(S.plan_id, actor)
        query = query.where(keyset.after(S.expires_on, S.id, after, *scope))
    query = query.order_by(S.expires_on, S.id).limit(limit)
    return [
        SecurityLine(
            id=row.id,
            plan_id=row.plan_id,
            plan_project=project,
            lgu_name=lgu_name,
            kind=row.kind,
            issuer=row.issuer,
            amount_cents=row.amount_cents,
            undrawn_cents=drawable_cents(row, today),
            expires_on=row.expires_on,
            status=security_status(row, today),
        )
        for row, project, lgu_name in session.execute(query).all()
    ]
