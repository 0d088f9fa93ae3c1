"""Appeals to the board (Subd. 9): the petition, the board's grant decision, the appeal decision,
and its service on the parties.

The board's decisions after their deadlines are recorded and flagged ``late`` (the statute gives
the board no remedy to enforce against itself).  A petition is granted only with the filing fee
of the rule set it was filed under ($200 under the statute) paid and, when the LGU required it,
its security posted; it is denied only on the grounds Subd. 9 names.  A petition whose window
closed with no fee recorded obtained no appeal (``timeline.obtained_no_appeal``): it holds nothing
and needs no decision, so no "no fee" ground is added; a grant of it is ``invalid_fee``, naming
the window's last day, and a denial checks no fee.  An appeal decided
``plan_reversed`` reverses the LGU's decision for good, whatever other appeals decide: reversing
an approval reverses the plan's withdrawals and voids its pending reservations (a revision's
approval: the withdrawals since the revision, and the reservations only if the approval that
stands can take none of them).  A granted petition returns the appeal security the petitioner
posted.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date

from sqlalchemy.orm import Session

import ledger
from bank import credit_needs, money, plans, policy, reservations, withdrawals
from bank.access import Actor
from bank.appeal_views import AppealView, view
from bank.errors import Conflict, InvalidFee, SecurityRequired, ValidationFailed, found
from bank.ids import new_id
from bank.plan_tables import Appeal, Plan
from bank.rules import timeline
from bank.rules.ruleset import ruleset_by_id
from bank.wording import dollars
from ledger import clock
from ledger.account_cache import AccountRow
from ledger.db import Database

PETITIONER_KINDS = timeline.PETITIONER_KINDS

#: Subd. 9: the board grants the petition unless it finds the appeal meritless, trivial, or
#: brought solely for delay; local administrative remedies not exhausted; or required security
#: not posted.  These are the only grounds for denying a petition (a petition without its fee
#: mailed within the window obtained no appeal, and needs none: ``timeline.obtained_no_appeal``).
DENIAL_GROUNDS = (
    "meritless",
    "trivial",
    "solely_for_delay",
    "local_remedies_not_exhausted",
    "security_not_posted",
)


@dataclass(frozen=True)
class PetitionRequest:
    """``POST /plans/{id}/appeals``"""

    petitioner_kind: str
    petitioner_name: str
    petitioner_address: str
    postmarked_on: date
    received_on: date
    filing_fee_cents: int
    resident_count: int | None = None
    security_cents: int | None = None


def file(db: Database, board: Actor, plan_id: str, request: PetitionRequest) -> AppealView:
    """Record a petition the board received (board staff), with the plan locked."""
    policy.require_board(board, "record petitions")
    with db.transaction() as session:
        plan = plans.visible_plan(session, board, plan_id, lock=True)
        return view(session, _file_petition(session, plan, request))


def show(db: Database, who: Actor, appeal_id: str) -> AppealView:
    """An appeal (board, or the plan's LGU; ``not_found`` for anyone else)."""
    with db.transaction() as session:
        appeal = get_appeal(session, appeal_id)
        plans.visible_plan(session, who, appeal.plan_id)
        return view(session, appeal)


def _file_petition(session: Session, plan: Plan, request: PetitionRequest) -> Appeal:
    """The petition, its fee and security amounts checked."""
    for field in ("postmarked_on", "received_on"):
        if getattr(request, field) > clock.today():
            raise ValidationFailed("this date is in the future", {field: ["in the future"]})
    if request.received_on < request.postmarked_on:
        raise ValidationFailed(
            "received before it was mailed", {"received_on": ["before postmark"]}
        )
    for field in ("petitioner_name", "petitioner_address"):
        if not getattr(request, field).strip():
            raise ValidationFailed(f"the petition names its {field}", {field: ["required"]})
    c = plans.clocks(session, plan)
    facts = plans.facts(session, plan)
    earlier = None
    if not timeline.noticed_by(c.ruleset, c.lgu, facts, request.postmarked_on):
        # mailed before anything of the current application could be appealed: it appeals the
        # earlier application noticed last by then, with that application's facts as they
        # stood, though it reached the board after a revision superseded it (Subd. 9 counts to
        # the mailing); timely within that window, else appeal_window_closed
        earlier = plans.appealed_application(session, plan, request.postmarked_on)
        if earlier is not None:
            facts = plans.application_facts(session, plan, earlier)
    timeline.check_petition(
        c.ruleset,
        c.lgu,
        c.board,
        facts,
        petitioner_kind=request.petitioner_kind,
        resident_count=request.resident_count,
        postmarked_on=request.postmarked_on,
        filing_fee_cents=request.filing_fee_cents,
        security_cents=request.security_cents,
    )
    appeal = Appeal(
        id=new_id("apl"),
        plan_id=plan.id,
        application_number=plan.application_number if earlier is None else earlier.number,
        petitioner_kind=request.petitioner_kind,
        petitioner_name=request.petitioner_name.strip(),
        petitioner_address=request.petitioner_address.strip(),
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
    return found(session.get(Appeal, appeal_id), f"no appeal {appeal_id}")


@dataclass(frozen=True)
class PetitionDecision:
    """``POST /appeals/{id}/petition``"""

    granted: bool
    decided_on: date
    reason: str | None = None
    grounds: tuple[str, ...] = ()
    factors_considered: str | None = None


def decide_petition(
    db: Database,
    board: Actor,
    appeal_id: str,
    decision: PetitionDecision,
    request_id: str | None,
) -> AppealView:
    """The board's decision whether to grant the petition and hear the appeal.

    Granting needs the filing fee of the rule set it was filed under paid (``invalid_fee``; once
    the window closed without it, the detail says the petition obtained no appeal) and, when the
    LGU required security, at least that much posted (``security_required``);
    denying needs one or more of the grounds Subd. 9 names, and ``security_not_posted`` only
    when the LGU required security and less is posted (``validation_error``).
    """

    def decide(session: Session, appeal: Appeal, plan: Plan) -> None:
        _check_day(decision.decided_on, appeal.received_on, "decided_on")
        grounds = _check_grounds(decision.granted, decision.grounds)
        if appeal.petition_granted is not None:
            raise Conflict("the petition was already decided")
        if decision.granted:
            _check_paid(session, plan, appeal, decision.decided_on)
        elif "security_not_posted" in grounds:
            _check_security_unposted(session, plan, appeal, decision.decided_on)
        appeal.petition_granted, appeal.petition_decided_on = decision.granted, decision.decided_on
        appeal.petition_reason = decision.reason
        appeal.petition_grounds = ",".join(grounds) if grounds else None
        appeal.factors_considered = decision.factors_considered
        session.flush()
        if decision.granted:
            # Subd. 9: "If the petition for hearing is accepted, the amount posted must be
            # returned"
            money.return_appeal_security(session, board, appeal, decision.decided_on, request_id)

    return _decide(db, board, appeal_id, decide)


def _decide(
    db: Database,
    board: Actor,
    appeal_id: str,
    decide: Callable[[Session, Appeal, Plan], None],
) -> AppealView:
    """Run a board decision on an appeal with its plan locked; answer the appeal as it stands.

    The appeal is read again once the plan is locked: a decision on it that committed while
    this one waited for the lock is then seen (two at once: the second is ``conflict``)."""
    policy.require_board(board, "decide appeals")
    with db.transaction() as session:
        plan_id = get_appeal(session, appeal_id).plan_id
        plan = plans.visible_plan(session, board, plan_id, lock=True)
        appeal = found(
            session.get(Appeal, appeal_id, populate_existing=True), f"no appeal {appeal_id}"
        )
        decide(session, appeal, plan)
        return view(session, appeal)


def _check_grounds(granted: bool, grounds: tuple[str, ...]) -> tuple[str, ...]:
    """The grounds of a denial, each once, in the statute's order; a grant has none."""
    unknown = [g for g in grounds if g not in DENIAL_GROUNDS]
    if unknown:
        raise ValidationFailed(
            "Subd. 9 names the only grounds for denying a petition",
            {"grounds": [f"one of {', '.join(DENIAL_GROUNDS)}"]},
        )
    if granted and grounds:
        raise ValidationFailed(
            "a granted petition has no grounds for denial", {"grounds": ["only for a denial"]}
        )
    if not granted and not grounds:
        raise ValidationFailed(
            "Subd. 9: a petition is denied only on the grounds it names",
            {"grounds": [f"required for a denial: one or more of {', '.join(DENIAL_GROUNDS)}"]},
        )
    return tuple(g for g in DENIAL_GROUNDS if g in grounds)


def _check_paid(session: Session, plan: Plan, appeal: Appeal, on: date) -> None:
    """A grant on ``on`` needs the filing fee, and any security the LGU required, received by
    then: a grant dated before the money arrived would stand on a payment not yet made."""
    ruleset = ruleset_by_id(appeal.ruleset)  # the fee its payment was checked against
    received_on = money.filing_fee_received_on(session, ruleset, appeal.id)
    fee = ruleset.appeal_filing_fee_cents
    if received_on is None:
        unpaid = f"the {dollars(fee)} filing fee has not been paid"
        ends = _window_closed_on(session, plan, appeal)
        if ends is not None:
            unpaid += (
                f": none mailed by {ends.isoformat()}, when the appeal window closed, is "
                "recorded, so the petition obtained no appeal (Subd. 9; a fee mailed by then is "
                "recorded when it arrives)"
            )
        raise InvalidFee(unpaid, fee_cents=fee)
    if received_on > on:
        raise InvalidFee(
            f"the {dollars(fee)} filing fee was received on {received_on.isoformat()}, after "
            f"{on.isoformat()}",
            fee_cents=fee,
        )
    required = plans.security_required_cents(session, plan, appeal.application_number)
    if required is not None:
        posted = money.appeal_security_posted_cents(session, appeal.id, on)
        if posted < required:
            raise SecurityRequired(
                f"Subd. 9: the LGU requires {dollars(required)} of appeal security; "
                f"{dollars(posted)} was posted by {on.isoformat()}",
                required_cents=required,
                posted_cents=posted,
            )


def _window_closed_on(session: Session, plan: Plan, appeal: Appeal) -> date | None:
    """The last day of the appeal window of the application ``appeal`` appeals, if it has closed
    by today (``None`` while it is open, or before a notice of decision opened it)."""
    c = plans.clocks(session, plan)
    facts = plans.appealed_facts(session, plan, appeal.application_number)
    ends = timeline.appeal_window_ends(c.ruleset, c.board, facts)
    return ends if ends is not None and clock.today() > ends else None


def _check_security_unposted(session: Session, plan: Plan, appeal: Appeal, on: date) -> None:
    """Subd. 9 lets the board deny a petition because "the petitioner has not posted a letter of
    credit, cashier's check, or cash if required by the local government unit": the ground holds
    only when the LGU required security and less than that was posted by the denial's day
    ``on``."""
    required = plans.security_required_cents(session, plan, appeal.application_number)
    if required is None:
        raise ValidationFailed(
            "Subd. 9: the LGU required no appeal security, so none is missing",
            {"grounds": ["security_not_posted: no security was required"]},
        )
    posted = money.appeal_security_posted_cents(session, appeal.id, on)
    if posted >= required:
        raise ValidationFailed(
            f"Subd. 9: the {dollars(required)} of appeal security the LGU requires was posted by "
            f"{on.isoformat()}",
            {"grounds": ["security_not_posted: the required security is posted"]},
        )


def decide_appeal(
    db: Database,
    board: Actor,
    appeal_id: str,
    outcome: str,
    decided_on: date,
    served_on: date | None,
    request_id: str | None,
) -> AppealView:
    """The board's decision on the merits: the plan upheld, or reversed (and when served)."""

    def decide(session: Session, appeal: Appeal, plan: Plan) -> None:
        granted_on = appeal.petition_decided_on
        if appeal.petition_granted is not True or granted_on is None:
            raise Conflict("only a granted petition is decided on its merits")
        if appeal.outcome is not None:
            raise Conflict("the appeal was already decided")
        _check_day(decided_on, granted_on, "decided_on")
        if served_on is not None:
            _check_day(served_on, decided_on, "served_on")
        if appeal.application_number != plan.application_number:
            decision = (outcome, decided_on, served_on)
            _decide_earlier(session, plan, appeal, decision, board, request_id)
            return
        before = plans.state(session, plan)
        appeal.outcome, appeal.decided_on, appeal.served_on = outcome, decided_on, served_on
        session.flush()
        if (
            outcome == "plan_reversed"
            and not before.reversed_on_appeal
            and before.outcome in withdrawals.APPROVALS
            and not before.revision_denied  # reversing a revision's denial withdraws nothing
        ):
            # a revision's approval reversed: the approval before it stands, with what was
            # withdrawn for it
            since = plans.revision_started_at(session, plan)
            # the reservations first, as a holder's void locks its reservation before the
            # balances: a void in flight ends before this one reads what is still pending
            held = _lock_reservations(session, plan.id)
            voiding = _pending_shares(session, held)
            pending_ids = [share.pending_transaction_id for v in voiding.values() for share in v]
            # the lots of the withdrawals reversed and of the shares voided, in one statement
            rows = withdrawals.reverse_for_plan(
                session, plan.id, board, request_id, since, voiding=pending_ids
            )
            if _takes_no_reservation(session, plan):
                _void_pending_reservations(session, held, voiding, rows, plan.id, board, request_id)

    return _decide(db, board, appeal_id, decide)


def _decide_earlier(
    session: Session,
    plan: Plan,
    appeal: Appeal,
    decision: tuple[str, date, date | None],
    board: Actor,
    request_id: str | None,
) -> None:
    """The decision on an appeal of an application a revision superseded (its petition mailed
    within that application's window, Subd. 9).  Reversing its approval reverses what was
    withdrawn under it, nothing withdrawn or reserved since for the applications that followed
    (their own decisions stand); the plan's standing approval is then the approval before it,
    if any (``plans.standing_row``).  The pending reservations are voided only when the board has
    then left no approval at all (``_board_left_no_approval``).  Reversing its denial withdraws
    nothing."""
    application = plans.earlier_application(session, plan, appeal.application_number)
    before = plans.outcome_now(application, plans.appeals_of(session, plan.id))
    appeal.outcome, appeal.decided_on, appeal.served_on = decision
    session.flush()
    if decision[0] == "plan_reversed" and before in withdrawals.APPROVALS:
        since, until = plans.withdrawn_under(session, plan, application)
        if not _board_left_no_approval(session, plan):
            withdrawals.reverse_for_plan(session, plan.id, board, request_id, since, until)
            return
        # locked in the order ``decide_appeal`` locks them (reservations, then every lot)
        held = _lock_reservations(session, plan.id)
        voiding = _pending_shares(session, held)
        pending_ids = [share.pending_transaction_id for v in voiding.values() for share in v]
        rows = withdrawals.reverse_for_plan(
            session, plan.id, board, request_id, since, until, voiding=pending_ids
        )
        _void_pending_reservations(session, held, voiding, rows, plan.id, board, request_id)


def _board_left_no_approval(session: Session, plan: Plan) -> bool:
    """After an earlier application's approval was reversed on appeal: whether nothing can take
    the plan's pending reservations any more, as when ``decide_appeal`` reverses the current
    application's approval and none is left.  No approval stands and the current
    application's own decision was reversed on appeal too: the board's decisions, both final.
    Not while the current application awaits its decision, nor after an LGU's denial of it,
    which may itself be appealed (Subd. 9): the reservations then stay, as on any denial."""
    denied = plans.state(session, plan).outcome in credit_needs.CLOSED_OUTCOMES
    return denied and timeline.reversed_on_appeal(plans.facts(session, plan))


def record_service(db: Database, board: Actor, appeal_id: str, served_on: date) -> AppealView:
    """Subd. 9: the decision "must be served by mail on the parties"; recorded once."""

    def serve(session: Session, appeal: Appeal, _plan: Plan) -> None:
        if appeal.outcome is None or appeal.decided_on is None:
            raise Conflict("the appeal has not been decided: there is no decision to serve")
        if appeal.served_on is not None:
            raise Conflict(
                f"the decision was already served on {appeal.served_on.isoformat()}",
                served_on=appeal.served_on.isoformat(),
            )
        _check_day(served_on, appeal.decided_on, "served_on")
        appeal.served_on = served_on
        session.flush()

    return _decide(db, board, appeal_id, serve)


def _takes_no_reservation(session: Session, plan: Plan) -> bool:
    """After a reversal of the current application's approval: whether no withdrawal will take
    the plan's pending reservations (``credit_needs.reservation_refusal``).  The plan is denied,
    or the approval a reversed revision applied to revise stands with its requirement met by
    the withdrawals left; while that approval stands with credits still to withdraw, they serve
    it and stay pending."""
    state = plans.state(session, plan)
    met = credit_needs.met_portions(session, plan.id)
    return credit_needs.reservation_refusal(plan, state, met) is not None


def _lock_reservations(session: Session, plan_id: str) -> list[reservations.Reservation]:
    """The plan's reservations, each row locked as ``reservations.void`` locks it, in one order:
    a holder's void of one of them either ends before they are read or waits for this
    decision, and then finds the reservation voided (``conflict``)."""
    held = reservations.plan_reservations(session, plan_id)
    for reservation in sorted(held, key=lambda r: r.id):
        reservations.lock(session, reservation.id)
    return held


def _pending_shares(
    session: Session, held: list[reservations.Reservation]
) -> dict[str, list[reservations.ReservationLot]]:
    """The shares of each of ``held`` (locked) still pending, by reservation id: what
    ``_void_pending_reservations`` may void, read before any balance row is locked, so that the
    lots of them all are locked at once (``withdrawals.reverse_for_plan``'s ``voiding``)."""
    held_by = reservations.shares_of(session, [reservation.id for reservation in held])
    status = reservations.statuses(session, held_by)
    return {rid: found for rid, found in held_by.items() if status[rid] == "pending"}


def _void_pending_reservations(
    session: Session,
    held: list[reservations.Reservation],
    voiding: dict[str, list[reservations.ReservationLot]],
    rows: dict[int, AccountRow],
    plan_id: str,
    actor: Actor,
    request_id: str | None,
) -> None:
    """The approval was reversed and no withdrawal will take the plan's pending reservations,
    so the credits still held for it (``held``, locked; ``voiding``, their shares pending before
    the lots were locked) go back to their holders' available balances, in ``held``'s order.
    ``rows``: the lots' balance rows this unit of work locked and has not written to since;
    each void takes them, and a lot it wrote to is read again by the next."""
    for reservation in held:
        found = voiding.get(reservation.id)
        if found is None or reservations.status_of(session, reservation) != "pending":
            continue  # posted, voided by its holder, or expired
        for share in found:
            voided = ledger.void_pending(
                session,
                share.pending_transaction_id,
                withdrawals.reversed_on_appeal(
                    f"void:{share.pending_transaction_id}", plan_id, actor, request_id
                ),
                kind="reservation_void",
                held=rows,
            )
            withdrawals.forget_written(rows, voided)


def _check_day(day: date, not_before: date, field: str) -> None:
    if day > clock.today():
        raise ValidationFailed("this date is in the future", {field: ["in the future"]})
    if day < not_before:
        raise ValidationFailed(
            "this date is too early", {field: [f"before {not_before.isoformat()}"]}
        )
