"""Appeals to the board (Subd. 9): the petition, the board's grant decision, the appeal decision.

The board's decisions after their deadlines are recorded and flagged ``late`` (the statute gives
the board no remedy to enforce against itself).  A reversal of an approval reverses the plan's
withdrawals; a granted petition returns the appeal security the petitioner posted.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy.orm import Session

from bank import money, plans, timeline, withdrawals
from bank.access import Actor
from bank.errors import Conflict, NotFound, ValidationFailed
from bank.ids import new_id
from bank.plan_tables import Appeal, Plan
from ledger import clock

PETITIONER_KINDS = ("owner", "notice_recipient", "residents")


@dataclass(frozen=True)
class PetitionRequest:
    """``POST /plans/{id}/appeals``"""

    petitioner_kind: str
    postmarked_on: date
    received_on: date
    filing_fee_cents: int
    resident_count: int | None = None
    security_cents: int | None = None


def file_petition(session: Session, plan_id: str, request: PetitionRequest) -> Appeal:
    """Record a petition the board received; the fee and security amounts are checked here."""
    plan = session.get(Plan, plan_id)
    if plan is None:
        raise NotFound(f"no plan {plan_id}")
    for field in ("postmarked_on", "received_on"):
        if getattr(request, field) > clock.today():
            raise ValidationFailed("this date is in the future", {field: ["in the future"]})
    if request.received_on < request.postmarked_on:
        raise ValidationFailed(
            "received before it was mailed", {"received_on": ["before postmark"]}
        )
    c = plans.clocks(session, plan)
    timeline.check_petition(
        c.ruleset,
        c.lgu,
        c.board,
        plans.facts(session, plan),
        petitioner_kind=request.petitioner_kind,
        resident_count=request.resident_count,
        postmarked_on=request.postmarked_on,
        filing_fee_cents=request.filing_fee_cents,
        security_cents=request.security_cents,
    )
    appeal = Appeal(
        id=new_id("apl"),
        plan_id=plan.id,
        petitioner_kind=request.petitioner_kind,
        resident_count=request.resident_count,
        postmarked_on=request.postmarked_on,
        received_on=request.received_on,
        filing_fee_cents=request.filing_fee_cents,
        security_cents=request.security_cents,
        ruleset=c.ruleset.id,
        created_at=clock.utcnow(),
    )
    session.add(appeal)
    session.flush()
    return appeal


def get_appeal(session: Session, appeal_id: str) -> Appeal:
    """The appeal, or ``not_found``."""
    appeal = session.get(Appeal, appeal_id)
    if appeal is None:
        raise NotFound(f"no appeal {appeal_id}")
    return appeal


def decide_petition(
    session: Session,
    actor: Actor,
    appeal_id: str,
    granted: bool,
    decided_on: date,
    reason: str,
    request_id: str | None,
) -> Appeal:
    """The board's decision whether to grant the petition and hear the appeal, with its reason."""
    appeal = get_appeal(session, appeal_id)
    _check_day(decided_on, appeal.received_on, "decided_on")
    if appeal.petition_granted is not None:
        raise Conflict("the petition was already decided")
    appeal.petition_granted, appeal.petition_decided_on = granted, decided_on
    appeal.petition_reason = reason
    session.flush()
    if granted:
        # Subd. 9: "If the petition for hearing is accepted, the amount posted must be returned"
        money.return_appeal_security(session, actor, appeal, decided_on, request_id)
    return appeal


def decide_appeal(
    session: Session,
    actor: Actor,
    appeal_id: str,
    outcome: str,
    decided_on: date,
    request_id: str | None,
) -> Appeal:
    """The board's decision on the merits: the plan upheld, or reversed."""
    appeal = get_appeal(session, appeal_id)
    if appeal.petition_granted is not True:
        raise Conflict("only a granted petition is decided on its merits")
    if appeal.outcome is not None:
        raise Conflict("the appeal was already decided")
    assert appeal.petition_decided_on is not None
    _check_day(decided_on, appeal.petition_decided_on, "decided_on")
    plan = session.get(Plan, appeal.plan_id)
    assert plan is not None
    was = plans.state(session, plan).outcome
    appeal.outcome, appeal.decided_on = outcome, decided_on
    session.flush()
    if outcome == "plan_reversed" and was in withdrawals.APPROVALS:
        withdrawals.reverse_for_plan(session, plan.id, actor, request_id)
    return appeal


def _check_day(day: date, not_before: date, field: str) -> None:
    if day > clock.today():
        raise ValidationFailed("this date is in the future", {field: ["in the future"]})
    if day < not_before:
        raise ValidationFailed(
            "this date is too early", {field: [f"before {not_before.isoformat()}"]}
        )


def appeal_dict(session: Session, appeal: Appeal) -> dict[str, Any]:
    """An appeal with its deadlines (board's calendar) and whether decisions were late."""
    plan = session.get(Plan, appeal.plan_id)
    assert plan is not None
    c = plans.clocks(session, plan)
    grant_due = timeline.grant_decision_due(c.board, c.ruleset, appeal.received_on)
    decision_due = (
        timeline.appeal_decision_due(c.board, c.ruleset, appeal.petition_decided_on)
        if appeal.petition_granted and appeal.petition_decided_on
        else None
    )
    return {
        "id": appeal.id,
        "plan_id": appeal.plan_id,
        "petitioner_kind": appeal.petitioner_kind,
        "resident_count": appeal.resident_count,
        "postmarked_on": appeal.postmarked_on,
        "received_on": appeal.received_on,
        "filing_fee_cents": appeal.filing_fee_cents,
        "security_cents": appeal.security_cents,
        "ruleset": appeal.ruleset,
        "grant_decision_due": grant_due,
        "petition": None
        if appeal.petition_granted is None
        else {
            "granted": appeal.petition_granted,
            "decided_on": appeal.petition_decided_on,
            "reason": appeal.petition_reason,
            "late": bool(appeal.petition_decided_on and appeal.petition_decided_on > grant_due),
        },
        "decision_due": decision_due,
        "decision": None
        if appeal.outcome is None
        else {
            "outcome": appeal.outcome,
            "decided_on": appeal.decided_on,
            "late": bool(decision_due and appeal.decided_on and appeal.decided_on > decision_due),
        },
        "status": _appeal_status(appeal),
    }


def _appeal_status(appeal: Appeal) -> str:
    if appeal.petition_granted is None:
        return "petition_received"
    if not appeal.petition_granted:
        return "petition_denied"
    return "decided" if appeal.outcome else "granted"
