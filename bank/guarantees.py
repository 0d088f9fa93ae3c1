"""Guarantees of a project-specific replacement (Subd. 3; docs/domain.md §5).

"An irrevocable bank letter of credit or other security acceptable to the local government unit
must be given to the local government unit to guarantee the successful completion of the
replacement": the LGU states the amount it finds acceptable (``security_required_cents``) and
the replacement counts as guaranteed only while held, irrevocable, unexpired securities add up to
it, what was drawn from them not counted.

A security is a pending transfer from its issuer to "securities held for the LGU"
(``bank.securities``).  A draw posts the amount drawn and holds the rest again as a new pending
transfer with the same expiry, so a security drawn in part stays ``held`` with a cumulative
``drawn_cents`` until all of it is drawn (``drawn``); the rest can be released.  Each draw is a
sealed row, and the database keeps a security's ``drawn_on`` and ``drawn_cents`` its draws'
latest date and sum (migration 0027).  A draw needs an
approved plan: a security guarantees an approved replacement, nothing before.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date

from sqlalchemy.orm import Session

import ledger
from bank import plans, securities
from bank.access import Actor
from bank.errors import Conflict, ValidationFailed, found
from bank.ids import new_id
from bank.money_tables import Security, SecurityDraw
from bank.named_accounts import usd_meta
from bank.plan_tables import Plan
from bank.securities import SecurityView, undrawn_cents
from bank.wording import dollars
from ledger import clock
from ledger.db import Database
from ledger.slices import grouped

APPROVALS = ("approved", "deemed_approved")


# --- the requirement --------------------------------------------------------------------------


def check_requirement(method: str, required_cents: int | None) -> None:
    """A project-specific plan states the security the LGU requires; other plans state none."""
    if method == securities.PROJECT_SPECIFIC and not required_cents:
        raise ValidationFailed(
            "Subd. 3: a project-specific replacement states the security the LGU requires",
            {"security_required_cents": ["required when method is project_specific"]},
        )
    if method != securities.PROJECT_SPECIFIC and required_cents is not None:
        raise ValidationFailed(
            "only a project-specific replacement is guaranteed by a security",
            {"security_required_cents": ["only when method is project_specific"]},
        )


def guaranteeing_cents(session: Session, plan_id: str) -> int:
    """What held, irrevocable, unexpired securities still guarantee (drawn amounts excluded)."""
    return guaranteed_cents_of(session, [plan_id]).get(plan_id, 0)


def guaranteed_cents_of(session: Session, plan_ids: Sequence[str]) -> dict[str, int]:
    """``guaranteeing_cents`` of each of ``plan_ids`` that holds any security, read at once."""
    held = grouped(
        session,
        Security.plan_id,
        plan_ids,
        where=[securities.status_condition("held", clock.today())],
    )
    return {plan_id: guaranteed_by(found) for plan_id, found in held.items()}


def guaranteed_by(held: Iterable[Security]) -> int:
    """What the held securities ``held`` guarantee: the undrawn part of the irrevocable ones."""
    return sum(undrawn_cents(s) for s in held if s.irrevocable)


def guarantee_shortfall(session: Session, plan: Plan) -> str | None:
    """Why the securities do not guarantee the replacement, or ``None`` if they do.

    A plan recorded before the service asked for the amount (no requirement) is guaranteed by
    any held, irrevocable security, as it was then.
    """
    return shortfall_of(plan, guaranteeing_cents(session, plan.id))


def shortfall_of(plan: Plan, held: int) -> str | None:
    """``guarantee_shortfall`` given what the plan's securities guarantee (``held`` cents)."""
    required = plan.security_required_cents
    if required is None:
        return None if held > 0 else "Subd. 3: no irrevocable security is held"
    if held >= required:
        return None
    return (
        f"Subd. 3: held, irrevocable, unexpired securities guarantee {dollars(held)} of the "
        f"{dollars(required)} required"
    )


# --- draws and release ------------------------------------------------------------------------


def _holding(draws: list[SecurityDraw], security: Security) -> int:
    """The pending transfer that holds what is left of the security now."""
    if draws and draws[-1].held_transaction_id is not None:
        return draws[-1].held_transaction_id
    return security.pending_transaction_id


def _check_held(security: Security, on: date) -> None:
    """The security is held, and ``on`` (a draw's or release's day) is neither in the future nor
    before the security was issued or last drawn on."""
    if on > clock.today():
        raise ValidationFailed("this date is in the future", {"date": ["in the future"]})
    earliest = max(security.issued_on, security.drawn_on or security.issued_on)
    if on < earliest:
        raise ValidationFailed(
            f"the security was issued or last drawn on {earliest.isoformat()}",
            {"date": [f"on or after {earliest.isoformat()}"]},
        )
    status = securities.security_status(security)
    if status != "held":
        raise Conflict(f"the security is {status}, not held", status=status)


def _check_drawn_once_approved(session: Session, security: Security, on: date) -> None:
    """A draw is dated no earlier than the approval it is drawn for took effect."""
    plan = session.get(Plan, security.plan_id)
    since = plans.approved_since(session, plan) if plan is not None else None
    if since is not None and on < since:
        raise ValidationFailed(
            f"the plan was approved on {since.isoformat()}: a draw is dated on or after that",
            {"drawn_on": [f"before {since.isoformat()}"]},
        )


def draw(
    db: Database,
    actor: Actor,
    security_id: str,
    on: date,
    amount: int,
    request_id: str | None,
) -> SecurityView:
    """Draw ``amount`` on a held security of an approved plan the caller sees; what is left
    stays held."""
    with db.transaction() as session:
        security = securities.visible_security(session, actor, security_id, lock=True)
        _check_held(security, on)
        left = undrawn_cents(security)
        if amount > left:
            raise ValidationFailed(
                "a draw cannot exceed what is left of the security",
                {"amount_cents": [f"at most {dollars(left)}"]},
            )
        outcome = plans.outcome_held(session, security.plan_id)  # a reversal waits, or is seen
        if outcome not in APPROVALS:
            raise Conflict(
                f"the plan is {outcome or 'not yet decided'}: a security is drawn on for an "
                "approved replacement only",
                outcome=outcome,
            )
        _check_drawn_once_approved(session, security, on)
        draws = securities.draws_of(session, security.id)
        draw_id = new_id("draw")
        meta = usd_meta(
            f"security-draw:{draw_id}", on, f"drawn on {security.kind}", actor, request_id
        )
        posted = ledger.post_pending(
            session, _holding(draws, security), meta, amount=amount, kind="security_drawn"
        )
        held = None
        if amount < left:
            held = _hold_again(session, actor, security, draw_id, on, left - amount, request_id)
        posted_draw = SecurityDraw(
            id=draw_id,
            security_id=security.id,
            drawn_on=on,
            amount_cents=amount,
            transaction_id=posted.transaction_id,
            held_transaction_id=held,
            recorded_at=clock.utcnow(),
        )
        session.add(posted_draw)
        session.flush()  # the draw first: the database refuses a total its draws do not give
        security.drawn_on, security.drawn_cents = on, (security.drawn_cents or 0) + amount
        session.flush()
        return SecurityView.of(security, [*draws, posted_draw])


def _hold_again(
    session: Session,
    actor: Actor,
    security: Security,
    draw_id: str,
    on: date,
    amount: int,
    request_id: str | None,
) -> int:
    """Hold what is left after a draw until the security's expiry, as before the draw."""
    plan = found(session.get(Plan, security.plan_id), f"no plan {security.plan_id}")
    meta = usd_meta(f"security-rest:{draw_id}", on, f"rest of {security.kind}", actor, request_id)
    return securities.hold_for(session, plan.lgu_id, amount, security.expires_on, meta)


def release(
    db: Database,
    actor: Actor,
    security_id: str,
    on: date,
    reason: str,
    request_id: str | None,
) -> SecurityView:
    """Give back what is left of a held security the caller sees; one no longer held is
    ``conflict``."""
    with db.transaction() as session:
        security = securities.visible_security(session, actor, security_id, lock=True)
        _check_held(security, on)
        draws = securities.draws_of(session, security.id)
        ledger.void_pending(
            session,
            _holding(draws, security),
            usd_meta(f"security-release:{security.id}", on, reason, actor, request_id),
            kind="security_released",
        )
        security.released_on, security.release_reason = on, reason
        session.flush()
        return SecurityView.of(security, draws)
