"""Security instruments given to the LGU (Subd. 3; docs/domain.md §5): recording and reading them.

A security instrument is a pending transfer from its issuer to "securities held for the LGU"
(``bank.named_accounts``) that expires at the end of its expiry date: the memo balance the audit
sees, with exact expiry and no job.  Only a project-specific replacement is guaranteed by one
(``method_refusal``): credits withdrawn from the bank or an in-lieu payment is a replacement
completed, with nothing left to guarantee.  Its status is computed from the recorded facts and
today's date, never stored.  Drawing on it and releasing it are in ``bank.guarantees``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

from sqlalchemy import ColumnElement, Select, and_, or_, select
from sqlalchemy.orm import Session

import ledger
from bank import keyset, plans, policy
from bank.access import Actor
from bank.errors import BankError, NotEligible, NotFound, ValidationFailed, found
from bank.ids import new_id
from bank.money_tables import SECURITY_KINDS, Security, SecurityDraw
from bank.named_accounts import payers_account, securities_held_account, usd_meta
from bank.plan_tables import Plan
from ledger import clock
from ledger.db import Database
from ledger.slices import grouped

STATUSES = ("held", "released", "drawn", "expired")
#: the replacement method a security guarantees (``plans.METHODS``)
PROJECT_SPECIFIC = "project_specific"


@dataclass(frozen=True)
class SecurityRequest:
    """``POST /plans/{id}/securities``"""

    kind: str
    issuer: str
    amount_cents: int
    irrevocable: bool
    issued_on: date
    expires_on: date
    external_refs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class DrawView:
    """One draw on a security (``DrawOut``)."""

    drawn_on: date
    amount_cents: int
    transaction_id: str


@dataclass(frozen=True)
class SecurityView:
    """A security as the API shows it (``SecurityOut``), with each draw and what is left of it."""

    id: str
    plan_id: str
    kind: str
    issuer: str
    amount_cents: int
    irrevocable: bool
    issued_on: date
    expires_on: date
    status: str
    released_on: date | None
    release_reason: str | None
    drawn_on: date | None
    drawn_cents: int | None
    #: what may still be drawn (``drawable_cents``): what is left while it is held (a security
    #: drawn in part stays held for the rest), 0 once it is released, drawn or expired
    undrawn_cents: int
    draws: tuple[DrawView, ...]
    transaction_id: str
    external_refs: dict[str, str]

    @classmethod
    def of(cls, security: Security, draws: Iterable[SecurityDraw]) -> SecurityView:
        """``security`` with its ``draws`` (in the order they were posted) as of today."""
        return cls(
            id=security.id,
            plan_id=security.plan_id,
            kind=security.kind,
            issuer=security.issuer,
            amount_cents=security.amount_cents,
            irrevocable=security.irrevocable,
            issued_on=security.issued_on,
            expires_on=security.expires_on,
            status=security_status(security),
            released_on=security.released_on,
            release_reason=security.release_reason,
            drawn_on=security.drawn_on,
            drawn_cents=security.drawn_cents,
            undrawn_cents=drawable_cents(security),
            draws=tuple(DrawView(d.drawn_on, d.amount_cents, str(d.transaction_id)) for d in draws),
            transaction_id=str(security.pending_transaction_id),
            external_refs=dict(security.external_refs or {}),
        )


# --- recording --------------------------------------------------------------------------------


def hold_security(
    db: Database, actor: Actor, plan_id: str, request: SecurityRequest, request_id: str | None
) -> SecurityView:
    """Record a security given to the LGU of a project-specific plan the caller sees
    (``method_refusal``); a letter of credit must be irrevocable (Subd. 3).  Concurrent changes
    to the plan wait for it."""
    _check_request(request)
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id, lock=True)
        refusal = method_refusal(plan)
        if refusal is not None:
            raise refusal
        security_id = new_id("sec")
        meta = usd_meta(
            f"security:{security_id}",
            request.issued_on,
            f"{request.kind} from {request.issuer}",
            actor,
            request_id,
        )
        held = hold_for(session, plan.lgu_id, request.amount_cents, request.expires_on, meta)
        security = Security(
            id=security_id,
            plan_id=plan.id,
            kind=request.kind,
            issuer=request.issuer,
            amount_cents=request.amount_cents,
            irrevocable=request.irrevocable,
            issued_on=request.issued_on,
            expires_on=request.expires_on,
            pending_transaction_id=held,
            created_at=clock.utcnow(),
            external_refs=dict(request.external_refs),
        )
        session.add(security)
        session.flush()
        return SecurityView.of(security, ())


def method_refusal(plan: Plan) -> BankError | None:
    """``not_eligible`` when the plan's replacement is not project-specific: Subd. 3's security
    guarantees "the successful completion of the replacement", and credits withdrawn from the
    bank or an in-lieu payment is a replacement completed.  The plan page offers the security
    form by it (``plan_acts.open_acts``)."""
    if plan.method == PROJECT_SPECIFIC:
        return None
    return NotEligible(
        f"the plan's replacement is {plan.method.replace('_', ' ')}, not project-specific: "
        "only a project-specific replacement is guaranteed by a security",
        method=plan.method,
    )


def hold_for(
    session: Session, lgu_id: str, amount: int, expires_on: date, meta: ledger.Meta
) -> int:
    """Hold ``amount`` from its issuer for the LGU until the end of ``expires_on``: the pending
    transfer a security is, or what is left of it after a draw; returns its transaction id."""
    held = ledger.reserve(
        session,
        "security_held",
        [ledger.Leg(payers_account(session), securities_held_account(session, lgu_id), amount)],
        meta,
        expires_at=clock.end_of_day(expires_on),
    )
    return held.transaction_id


def _check_request(request: SecurityRequest) -> None:
    if request.kind not in SECURITY_KINDS:
        raise ValidationFailed("unknown kind", {"kind": [f"one of {', '.join(SECURITY_KINDS)}"]})
    if request.kind == "letter_of_credit" and not request.irrevocable:
        raise ValidationFailed(
            "Subd. 3 requires an irrevocable letter of credit",
            {"irrevocable": ["a letter of credit must be irrevocable"]},
        )
    if request.expires_on <= request.issued_on:
        raise ValidationFailed(
            "a security must expire after it is issued", {"expires_on": ["not after issued_on"]}
        )
    if request.issued_on > clock.today():
        raise ValidationFailed("this date is in the future", {"issued_on": ["in the future"]})
    today = clock.today()
    if request.expires_on < today:
        raise lapsed_refusal(request.expires_on, today)


def lapsed_refusal(expires_on: date, today: date) -> ValidationFailed:
    """The refusal of a security that expired before the day it is recorded (docs/domain.md §5
    "Guarantees").  A security is held to the end of its expiry date (``security_status``), so
    such a one would be expired from the start: it would count toward no guarantee and could
    never be drawn on or released, and nothing removes a recorded security, so the mistyped
    expiry that usually causes it would stay on the plan's record for good.  The refusal says
    what to do instead."""
    expired, now = expires_on.isoformat(), today.isoformat()
    return ValidationFailed(
        f"the security expired on {expired}, before the day it is recorded ({now}): it could "
        "guarantee nothing and never be drawn on. Check the expiry date; if the instrument was "
        "renewed or replaced, record the one in force with its own expiry date. A security that "
        "lapsed before it is recorded is kept in the LGU's own file, not here",
        {"expires_on": [f"before {now}: give the expiry of the instrument in force"]},
    )


# --- status -----------------------------------------------------------------------------------


def undrawn_cents(security: Security) -> int:
    """What is left of the security after its draws."""
    return security.amount_cents - (security.drawn_cents or 0)


def drawable_cents(security: Security, today: date | None = None) -> int:
    """What may still be drawn: what is left while the security is held, else nothing (once
    released, drawn in full or expired, what was left is no longer there to draw)."""
    return undrawn_cents(security) if security_status(security, today) == "held" else 0


def security_status(security: Security, today: date | None = None) -> str:
    """held, released, drawn (all of it), or expired (after the end of its expiry date, with no
    job); a security drawn in part is still held (``bank.guarantees``)."""
    if security.released_on is not None:
        return "released"
    if security.drawn_cents is not None and security.drawn_cents >= security.amount_cents:
        return "drawn"
    if (today or clock.today()) > security.expires_on:
        return "expired"
    return "held"


def status_condition(status: str, today: date) -> ColumnElement[bool]:
    """SQL: the security's ``security_status`` on ``today`` is ``status``."""
    if status == "released":
        return Security.released_on.is_not(None)
    fully_drawn = Security.drawn_cents >= Security.amount_cents
    if status == "drawn":
        return and_(Security.released_on.is_(None), fully_drawn)
    open_ = and_(
        Security.released_on.is_(None),
        or_(Security.drawn_cents.is_(None), Security.drawn_cents < Security.amount_cents),
    )
    if status == "expired":
        return and_(open_, Security.expires_on < today)
    if status == "held":
        return and_(open_, Security.expires_on >= today)
    raise ValidationFailed("unknown status", {"status": [f"one of {', '.join(STATUSES)}"]})


# --- reading ----------------------------------------------------------------------------------


def visible_security(
    session: Session, actor: Actor, security_id: str, *, lock: bool = False
) -> Security:
    """A security the caller may see: the board, or its plan's LGU (``not_found``)."""
    security = found(
        session.get(Security, security_id, with_for_update=lock), f"no security {security_id}"
    )
    plan = session.get(Plan, security.plan_id)
    if plan is None or not policy.sees_plan(actor, plan.lgu_id):
        raise NotFound(f"no security {security_id}")
    return security


def draws_of(session: Session, security_id: str) -> list[SecurityDraw]:
    """A security's draws in the order they were posted."""
    of_security = select(SecurityDraw).where(SecurityDraw.security_id == security_id)
    return list(session.scalars(of_security.order_by(SecurityDraw.transaction_id)))


def view(session: Session, security: Security) -> SecurityView:
    """``security`` as the API shows it, with its draws."""
    return SecurityView.of(security, draws_of(session, security.id))


def get_security(db: Database, actor: Actor, security_id: str) -> SecurityView:
    """A security (board, or its plan's LGU)."""
    with db.transaction() as session:
        return view(session, visible_security(session, actor, security_id))


def list_securities(
    db: Database,
    actor: Actor,
    status: str | None = None,
    expiring_before: date | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    cursor: str | None = None,
    plan_id: str | None = None,
) -> list[SecurityView]:
    """Every security the caller may see, soonest expiry first (for LGUs chasing renewals),
    with ``status`` today, expiring before ``expiring_before``, that meets every condition of
    ``where`` (``bank.listing_filters``): the CSV export; ``page_of_securities`` pages them.
    A ``cursor`` (a security's id) is checked as a page checks it, ``UnknownCursor`` unless the
    caller sees that security, and moves nothing: every security is listed.  With ``plan_id``,
    that plan's (``not_found`` unless the caller sees the plan, as ``money.list_payments``)."""
    with db.transaction() as session:
        where = _of_plan(session, actor, plan_id, where)  # not_found first
        if cursor is not None:
            scope = plans.of_plans(Security.plan_id, actor)
            keyset.require_listed(session, Security.id, cursor, *scope)
        return securities_of(session, actor, status, expiring_before, where)


def page_of_securities(
    db: Database,
    actor: Actor,
    limit: int,
    status: str | None = None,
    expiring_before: date | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    after: str | None = None,
    plan_id: str | None = None,
) -> list[SecurityView]:
    """Up to ``limit + 1`` securities of ``list_securities`` (the extra one says there are
    more), after the security ``after`` in their order (by ``expires_on``, then id; an index
    holds it, so a later page reads no more rows than the first).  The cursor's security is
    looked up among those the caller sees, whatever the filters: one released while a client
    pages through ``?status=held`` still marks its place, and one the caller may not see (or
    none at all) is ``UnknownCursor``."""
    with db.transaction() as session:
        where = _of_plan(session, actor, plan_id, where)
        query = _listed(actor, status, expiring_before, where)
        if after is not None:
            scope = plans.of_plans(Security.plan_id, actor)
            query = query.where(
                keyset.listed_after(session, Security.expires_on, Security.id, after, *scope)
            )
        return _views(session, list(session.execute(query.limit(limit + 1)).scalars()))


def securities_of(
    session: Session,
    actor: Actor,
    status: str | None = None,
    expiring_before: date | None = None,
    where: Iterable[ColumnElement[bool]] = (),
) -> list[SecurityView]:
    """``list_securities`` in the caller's unit of work."""
    query = _listed(actor, status, expiring_before, where)
    return _views(session, list(session.execute(query).scalars()))


def _of_plan(
    session: Session, actor: Actor, plan_id: str | None, where: Iterable[ColumnElement[bool]]
) -> list[ColumnElement[bool]]:
    """``where``, and with ``plan_id`` that plan's securities: a plan the caller may not see is
    ``not_found``, as for its payments, not an empty list that reads as "none held"."""
    if plan_id is None:
        return list(where)
    plan = plans.visible_plan(session, actor, plan_id)
    return [*where, Security.plan_id == plan.id]


def _listed(
    actor: Actor,
    status: str | None,
    expiring_before: date | None,
    where: Iterable[ColumnElement[bool]],
) -> Select[Security]:
    """The securities ``list_securities`` lists, in its order."""
    query = _visible_securities(actor, where)
    if status is not None:
        query = query.where(status_condition(status, clock.today()))
    if expiring_before is not None:
        query = query.where(Security.expires_on < expiring_before)
    return query.order_by(Security.expires_on, Security.id)


def _views(session: Session, rows: list[Security]) -> list[SecurityView]:
    """``rows`` as the API shows them, each with its draws (read for all of them at once)."""
    ids = [row.id for row in rows]
    draws = grouped(session, SecurityDraw.security_id, ids, SecurityDraw.transaction_id)
    return [SecurityView.of(row, draws[row.id]) for row in rows]


def _visible_securities(actor: Actor, where: Iterable[ColumnElement[bool]]) -> Select[Security]:
    query = select(Security).join(Plan, Plan.id == Security.plan_id).where(*where)
    if not actor.is_board:
        query = query.where(Plan.lgu_id == actor.lgu_id)
    return query
