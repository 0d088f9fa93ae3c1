"""Replacement plans: the application, its statutory timeline, and the acts recorded on it.

Every deadline and the status are computed by ``bank.rules.timeline`` from the recorded facts
and today's date, with the LGU's calendar for the LGU's acts and the board's for acts of or
toward the board, so a plan past ``decision_due`` with no decision reads ``deemed_approved``
without any job.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from fractions import Fraction
from typing import Any

from sqlalchemy import ColumnElement, bindparam, func, select, update
from sqlalchemy.orm import Session

from bank import guarantees, keyset, parties, policy
from bank.access import Actor
from bank.errors import Conflict, NotFound, ValidationFailed
from bank.ids import new_id
from bank.money_tables import Payment, Security, SecurityDraw
from bank.party_tables import Lgu
from bank.plan_record_tables import PlanApplication, PlanExtension
from bank.plan_tables import Appeal, Plan, PlanRevision
from bank.rules import calendar, replacement_rules, timeline
from bank.rules.ruleset import Ruleset, ruleset_by_id
from bank.withdrawal_tables import Withdrawal
from bank.wording import dollars
from ledger import clock
from ledger.slices import grouped

METHODS = ("bank_credits", "project_specific", "monetary_payment")


@dataclass(frozen=True)
class PlanRequest:
    """``POST /plans``: the board names ``lgu_id``; an LGU's own plans are its (None)."""

    lgu_id: str | None
    applicant: str
    project: str
    received_on: date
    area_sqft: int
    wetland_type: str
    service_area: int
    county: str
    on_agricultural_land: bool
    replacement_ratio: str
    method: str
    replacement_outside_service_area: bool = False
    in_lieu_amount_due_cents: int | None = None
    appeal_security_required_cents: int | None = None
    watershed_district: str | None = None
    location: str | None = None
    security_required_cents: int | None = None
    peatland: bool = False
    external_refs: dict[str, str] = field(default_factory=dict)


def create_plan(session: Session, ruleset: Ruleset, request: PlanRequest) -> Plan:
    """Record a replacement plan application for ``request.lgu_id`` (named: see
    ``policy.plan_lgu_for``); its clocks start at ``received_on``."""
    if request.lgu_id is None:
        raise ValidationFailed("name the plan's LGU", {"lgu_id": ["required"]})
    parties.get_lgu(session, request.lgu_id, field="lgu_id")
    parties.check_service_area(ruleset, request.service_area)
    ratio = replacement_rules.parse_new_ratio(request.replacement_ratio)
    replacement_rules.check_ratio(ruleset, ratio)
    if request.method not in METHODS:
        raise ValidationFailed("unknown method", {"method": [f"one of {', '.join(METHODS)}"]})
    if request.method == "monetary_payment" and not request.in_lieu_amount_due_cents:
        raise ValidationFailed(
            "a monetary payment plan needs the amount due",
            {"in_lieu_amount_due_cents": ["required when method is monetary_payment"]},
        )
    guarantees.check_requirement(request.method, request.security_required_cents)
    if request.appeal_security_required_cents is not None:
        _check_appeal_security(
            ruleset, request.appeal_security_required_cents, "appeal_security_required_cents"
        )
    plan = Plan(
        id=new_id("plan"),
        lgu_id=request.lgu_id,
        applicant=request.applicant,
        project=request.project,
        received_on=request.received_on,
        first_received_on=request.received_on,
        impact_area_sqft=request.area_sqft,
        impact_wetland_type=request.wetland_type,
        impact_service_area=request.service_area,
        impact_county=request.county,
        on_agricultural_land=request.on_agricultural_land,
        impact_peatland=request.peatland,
        replacement_ratio=request.replacement_ratio.strip(),
        method=request.method,
        replacement_outside_service_area=request.replacement_outside_service_area,
        in_lieu_amount_due_cents=request.in_lieu_amount_due_cents,
        appeal_security_required_cents=request.appeal_security_required_cents,
        watershed_district=request.watershed_district,
        location=request.location,
        security_required_cents=request.security_required_cents,
        ruleset=ruleset.id,
        created_at=clock.utcnow(),
        version=0,
        external_refs=dict(request.external_refs),
    )
    session.add(plan)
    session.flush()
    return plan


# --- reading ----------------------------------------------------------------------------------


def visible_plan(session: Session, actor: Actor, plan_id: str, *, lock: bool = False) -> Plan:
    """The plan if the caller may see it (board, or its LGU); ``not_found`` otherwise.

    With ``lock``, concurrent changes to the plan serialize on its row (bumping its version).
    """
    if lock:
        session.execute(update(Plan).where(Plan.id == plan_id).values(version=Plan.version + 1))
    plan = session.get(Plan, plan_id, populate_existing=lock)
    if plan is None or not policy.sees_plan(actor, plan.lgu_id):
        raise NotFound(f"no plan {plan_id}")
    return plan


def of_plans(plan_id: Any, actor: Actor) -> list[ColumnElement[bool]]:
    """A row's plan (its ``plan_id`` column) is one the caller sees (board: all; an LGU: its
    own): the scope of a cursor into the listings of payments and securities."""
    if actor.is_board:
        return []
    return [plan_id.in_(select(Plan.id).where(Plan.lgu_id == actor.lgu_id))]


def list_plans(
    session: Session,
    actor: Actor,
    limit: int | None = None,
    where: Iterable[ColumnElement[bool]] = (),
    after: str | None = None,
) -> list[Plan]:
    """Every plan (board) or the LGU's own, oldest first, that meets every condition of
    ``where`` (``bank.listing_filters``): the first ``limit`` when given, and with ``after`` (a
    cursor's plan id) those listed after that plan (none when it is not listed: the API refuses
    such a cursor first, ``require_listed``; the pages show no plans there)."""
    scope = _listed_by(actor)
    query = select(Plan).where(*scope, *where)
    if after is not None:
        # the cursor's plan is found within what the caller sees, not within the filters: a
        # plan a revision moved out of a date filter still marks the place the page ended
        query = query.where(keyset.after(Plan.created_at, Plan.id, after, *scope))
    query = query.order_by(Plan.created_at, Plan.id).limit(limit)
    return list(session.execute(query).scalars())


def require_listed(session: Session, actor: Actor, plan_id: str) -> None:
    """``UnknownCursor`` unless ``plan_id`` (a cursor's) is a plan ``list_plans`` lists for the
    caller, whatever the filters: another LGU's plan, or none at all, marks no place in its
    list."""
    keyset.require_listed(session, Plan.id, plan_id, *_listed_by(actor))


def _listed_by(actor: Actor) -> list[ColumnElement[bool]]:
    """The plans the caller lists: every one (board) or its LGU's own (``policy.sees_plan``)."""
    return [] if actor.is_board else [Plan.lgu_id == actor.lgu_id]


# A plan's facts, read for its state wherever one is shown or checked (a reservation asks for
# its plan's outcome): built once, as built per call their cache keys cost SQLAlchemy more than
# the database spends on them.
_APPEALS = (
    select(Appeal)
    .where(Appeal.plan_id == bindparam("plan_id"))
    .order_by(Appeal.created_at, Appeal.id)
)
_EXTENSIONS = (
    select(PlanExtension)
    .where(
        PlanExtension.plan_id == bindparam("plan_id"),
        PlanExtension.application_number == bindparam("application_number"),
    )
    .order_by(PlanExtension.recorded_at, PlanExtension.id)
)


def appeals_of(session: Session, plan_id: str) -> list[Appeal]:
    """A plan's appeals, in order received."""
    return list(session.execute(_APPEALS, {"plan_id": plan_id}).scalars())


def fees_paid(session: Session, appeals: Iterable[Appeal]) -> frozenset[str]:
    """The ids of those of ``appeals`` with a live filing fee recorded (received, not reversed
    as booked in error): a petition without one obtains no appeal once its window closes
    (``timeline.obtained_no_appeal``).  No query for no appeals."""
    live = [Payment.kind == "appeal_filing_fee", Payment.status == "received"]
    found = grouped(session, Payment.appeal_id, [a.id for a in appeals], where=live)
    return frozenset(str(appeal_id) for appeal_id, rows in found.items() if rows)


def extensions_of(session: Session, plan: Plan) -> list[PlanExtension]:
    """The extensions of the plan's current application's decision deadline, in order sent."""
    params = {"plan_id": plan.id, "application_number": plan.application_number}
    return list(session.execute(_EXTENSIONS, params).scalars())


@dataclass(frozen=True)
class Clocks:
    """The ruleset a plan was decided under and the two calendars its deadlines use."""

    ruleset: Ruleset
    lgu: calendar.Calendar
    board: calendar.Calendar


def clocks(session: Session, plan: Plan) -> Clocks:
    """The plan's ruleset, its LGU's calendar and the board's (docs/domain.md §4)."""
    return clocks_of(plan, parties.get_lgu(session, plan.lgu_id))


def clocks_of(plan: Plan, lgu: Lgu) -> Clocks:
    """``clocks`` given the plan's LGU."""
    ruleset = ruleset_by_id(plan.ruleset)
    return Clocks(
        ruleset,
        calendar.lgu_calendar(
            ruleset,
            observes_indigenous_peoples_day=lgu.observes_indigenous_peoples_day,
            observes_friday_after_thanksgiving=lgu.observes_friday_after_thanksgiving,
        ),
        calendar.board_calendar(ruleset),
    )


def facts(session: Session, plan: Plan) -> timeline.PlanFacts:
    """The recorded facts of the plan's current application, from which the timeline is
    computed."""
    appeals = appeals_of(session, plan.id)
    return _facts_from(
        plan,
        extensions_of(session, plan),
        appeals,
        fees_paid(session, appeals),
        standing_approvals(session, [plan], {plan.id: appeals}).get(plan.id),
    )


def standing_approvals(
    session: Session, listed: Sequence[Plan], appeals: Mapping[str, list[Appeal]]
) -> dict[str, timeline.StandingApproval]:
    """Per plan of ``listed`` a revision superseded, the last of its earlier applications that
    is approved after every appeal of it (``standing_row``; by plan id; plans with one
    application need no query), given each plan's ``appeals``."""
    revised = [plan.id for plan in listed if plan.application_number > 1]
    found: dict[str, timeline.StandingApproval] = {}
    by_plan = grouped(session, PlanApplication.plan_id, revised, PlanApplication.number)
    for plan_id, rows in by_plan.items():
        of_plan = appeals.get(plan_id, [])
        row = standing_row(rows, of_plan)
        outcome = None if row is None else outcome_now(row, of_plan)
        if row is not None and outcome is not None:
            found[plan_id] = timeline.StandingApproval(outcome, row.impact_area_sqft)
    return found


#: the outcomes of an approval (the LGU's, or deemed)
APPROVED_OUTCOMES = frozenset({"approved", "deemed_approved"})


def outcome_now(application: PlanApplication, appeals: Iterable[Appeal]) -> str | None:
    """An earlier application's outcome after every appeal of it (of the plan's ``appeals``,
    those naming its number).  ``outcome`` is kept as it stood when a revision superseded it;
    a petition mailed within its window may reach the board after that (Subd. 9), and an appeal
    that reverses it reverses it for good (``timeline.application_outcome``)."""
    if application.outcome is None:
        return None  # undecided when superseded: nothing to appeal
    base = application.decision_outcome or "deemed_approved"
    if any(
        a.application_number == application.number and a.outcome == "plan_reversed" for a in appeals
    ):
        return "denied" if base in APPROVED_OUTCOMES else "approved"
    return base


def standing_row(
    applications: Sequence[PlanApplication], appeals: Iterable[Appeal]
) -> PlanApplication | None:
    """Of a plan's earlier ``applications`` (by number), the last approved after every appeal
    of it (``outcome_now``): the approval a revision applied to revise, which stands if the
    revision is denied; an appeal that reverses it makes the approval before it (if any) the
    one that stands."""
    appeals = list(appeals)
    approved = [a for a in applications if outcome_now(a, appeals) in APPROVED_OUTCOMES]
    return approved[-1] if approved else None


def earlier_applications(session: Session, plan: Plan) -> list[PlanApplication]:
    """The plan's earlier applications, by number (none for a first application)."""
    if plan.application_number == 1:
        return []
    return list(
        session.execute(
            select(PlanApplication)
            .where(PlanApplication.plan_id == plan.id)
            .order_by(PlanApplication.number)
        ).scalars()
    )


def earlier_application(session: Session, plan: Plan, number: int) -> PlanApplication:
    """The plan's earlier application ``number`` (an appeal names it: ``not_found`` else)."""
    row = session.execute(
        select(PlanApplication).where(
            PlanApplication.plan_id == plan.id, PlanApplication.number == number
        )
    ).scalar_one_or_none()
    if row is None:
        raise NotFound(f"no application {number} of plan {plan.id}")
    return row


def appealed_facts(session: Session, plan: Plan, application_number: int) -> timeline.PlanFacts:
    """The facts of the application an appeal appeals: the current one's, or an earlier one's
    as it stood when superseded (``application_facts``)."""
    if application_number == plan.application_number:
        return facts(session, plan)
    return application_facts(session, plan, earlier_application(session, plan, application_number))


def security_required_cents(session: Session, plan: Plan, application_number: int) -> int | None:
    """Subd. 9: the security the LGU requires of a petitioner on the plan's application
    ``application_number`` (``security_required_of``)."""
    earlier = (
        []
        if application_number == plan.application_number
        else [earlier_application(session, plan, application_number)]
    )
    return security_required_of(plan, earlier, application_number)


def security_required_of(
    plan: Plan, earlier: Iterable[PlanApplication], application_number: int
) -> int | None:
    """The security required of a petitioner on application ``application_number``, given
    (some of) the plan's ``earlier`` applications: the current application's as set now, an
    earlier one's as it stood when a revision superseded it (a petition mailed within its window
    may arrive later, and the LGU may require another amount of the new application)."""
    if application_number == plan.application_number:
        return plan.appeal_security_required_cents
    for application in earlier:
        if application.number == application_number:
            return application.appeal_security_required_cents
    raise NotFound(f"no application {application_number} of plan {plan.id}")


def standing_application(session: Session, plan: Plan) -> PlanApplication | None:
    """The approval a revision applied to revise, which stands if the revision is denied
    (``standing_row``)."""
    if plan.application_number == 1:
        return None
    return standing_row(earlier_applications(session, plan), appeals_of(session, plan.id))


def revision_started_at(session: Session, plan: Plan) -> datetime | None:
    """When the revision that superseded the standing approval (``standing_application``) was
    recorded: what was withdrawn before is that approval's (``None`` when no earlier
    application was approved)."""
    standing = standing_application(session, plan)
    if standing is None:
        return None
    revision = session.get(PlanRevision, standing.revision_id)
    return revision.recorded_at if revision is not None else None


def application_at(session: Session, plan: Plan, at: datetime) -> int:
    """The number of the plan's application that was current at ``at``: one more than the
    revisions counting as new recorded by then (Subd. 6 (c))."""
    superseded = session.execute(
        select(func.count())
        .select_from(PlanRevision)
        .where(
            PlanRevision.plan_id == plan.id,
            PlanRevision.counts_as_new_application.is_(True),
            PlanRevision.recorded_at <= at,
        )
    ).scalar_one()
    return 1 + int(superseded)


def appealed_application(
    session: Session, plan: Plan, postmarked_on: date
) -> PlanApplication | None:
    """The earlier application a petition postmarked ``postmarked_on`` appeals when the plan's
    current application had nothing to appeal by then (``timeline.noticed_by``): the last whose
    notice of decision was mailed on or before the postmark (``None`` if none was).

    Subd. 9 counts the 15 days from the notice's postmark to the petition's mailing, so a
    petition mailed within an application's window may reach the board after a revision
    counting as new superseded that application (Subd. 6 (c)); one mailed after that window
    is then ``appeal_window_closed``, as it would have been before the revision.

    The windows of a plan's applications cannot overlap today: a revision counting as new
    supersedes a decided application only after its window closed (``plan_revisions``: it is
    received no earlier than the day after; an undecided application has no notice of
    decision), and a later application's notice follows its own receipt.  So the last notice
    mailed on or before the postmark is the only one whose window may hold it; were windows ever
    to overlap, the later application, whose notice the petitioner was sent last, is taken.
    """
    noticed = [
        a
        for a in earlier_applications(session, plan)
        if a.decision_notice_mailed_on is not None and a.decision_notice_mailed_on <= postmarked_on
    ]
    return noticed[-1] if noticed else None


def application_facts(
    session: Session, plan: Plan, application: PlanApplication
) -> timeline.PlanFacts:
    """The facts of an earlier application as it stood when superseded, with its own extensions
    and every appeal of it (a petition is checked against them: ``appealed_application``)."""
    extensions = session.execute(
        select(PlanExtension)
        .where(
            PlanExtension.plan_id == plan.id,
            PlanExtension.application_number == application.number,
        )
        .order_by(PlanExtension.recorded_at, PlanExtension.id)
    ).scalars()
    appeals = appeals_of(session, plan.id)
    paid = fees_paid(session, appeals)
    return _record_facts(application, application.number, extensions, appeals, paid)


def withdrawn_under(
    session: Session, plan: Plan, application: PlanApplication
) -> tuple[datetime | None, datetime]:
    """When what was withdrawn under an earlier application's approval was recorded: from the
    revision that made it the plan's application (``None`` for the first application) to the
    revision that superseded it.  Withdrawals before are an earlier approval's; withdrawals
    since are the applications' that followed."""
    until = session.get(PlanRevision, application.revision_id)
    if until is None:  # a foreign key: the revision that superseded it exists
        raise NotFound(f"no revision {application.revision_id}")
    since = None
    if application.number > 1:
        previous = earlier_application(session, plan, application.number - 1)
        started = session.get(PlanRevision, previous.revision_id)
        since = started.recorded_at if started is not None else None
    return since, until.recorded_at


def _facts_from(
    plan: Plan,
    extensions: Iterable[PlanExtension],
    appeals: Iterable[Appeal],
    paid: Collection[str],
    standing: timeline.StandingApproval | None = None,
) -> timeline.PlanFacts:
    """``plan``'s facts given its extensions and appeals (of any application: those of an
    application a revision superseded are its ``earlier_appeals``), those of the appeals with
    their filing fee paid (``fees_paid``) and the approval a revision applies to revise
    (``standing_approvals``)."""
    return _record_facts(plan, plan.application_number, extensions, appeals, paid, standing)


def _record_facts(
    record: Plan | PlanApplication,
    number: int,
    extensions: Iterable[PlanExtension],
    appeals: Iterable[Appeal],
    paid: Collection[str],
    standing: timeline.StandingApproval | None = None,
) -> timeline.PlanFacts:
    """The facts of application ``number``, from its record (the plan's current application,
    or an earlier one as it stood when superseded) and its own extensions and appeals (those of
    the applications before it are its ``earlier_appeals``; ``paid``: the ids of the appeals
    with their filing fee paid, ``fees_paid``)."""
    appeals = list(appeals)
    return timeline.PlanFacts(
        received_on=record.received_on,
        impact_area_sqft=record.impact_area_sqft,
        notice_mailed_on=record.notice_mailed_on,
        extensions=tuple(
            timeline.ExtensionFacts(e.notified_on, e.days, e.applicant_agreed)
            for e in extensions
            if e.application_number == number
        ),
        decision_outcome=record.decision_outcome,
        decided_on=record.decided_on,
        resolution_adopted_on=record.decision_resolution_adopted_on,
        decision_notice_mailed_on=record.decision_notice_mailed_on,
        appeals=tuple(appeal_facts(a, paid) for a in appeals if a.application_number == number),
        standing_approval=standing,
        earlier_appeals=tuple(
            appeal_facts(a, paid) for a in appeals if a.application_number < number
        ),
    )


def approval_acts(session: Session, plan: Plan) -> list[timeline.RecordedAct]:
    """The acts recorded under the plan's current application that stand on its approval, for
    ``timeline.relied_on_deemed_approval``: its withdrawals (reversed on appeal or not), the
    draws on its securities and its revisions that do not count as new, each with its day.
    Those recorded before a revision counting as new made the application the plan's stood on
    an earlier application's approval."""
    since = application_started_at(session, plan)
    withdrawn = select(Withdrawal).where(Withdrawal.plan_id == plan.id)
    drawn = (
        select(SecurityDraw)
        .join(Security, Security.id == SecurityDraw.security_id)
        .where(Security.plan_id == plan.id)
    )
    revised = select(PlanRevision).where(
        PlanRevision.plan_id == plan.id, PlanRevision.counts_as_new_application.is_(False)
    )
    if since is not None:
        withdrawn = withdrawn.where(Withdrawal.created_at >= since)
        drawn = drawn.where(SecurityDraw.recorded_at >= since)
        revised = revised.where(PlanRevision.recorded_at >= since)
    acts = [
        timeline.RecordedAct(
            f"withdrawal {w.id}" + (" (reversed on appeal)" if w.reversal_transaction_id else ""),
            clock.business_date(w.created_at),
        )
        for w in session.execute(withdrawn.order_by(Withdrawal.created_at, Withdrawal.id)).scalars()
    ]
    acts += [
        timeline.RecordedAct(f"draw {d.id} on security {d.security_id}", d.drawn_on)
        for d in session.execute(
            drawn.order_by(SecurityDraw.recorded_at, SecurityDraw.id)
        ).scalars()
    ]
    acts += [
        timeline.RecordedAct(f"revision {r.id} received {r.received_on.isoformat()}", r.received_on)
        for r in session.execute(
            revised.order_by(PlanRevision.recorded_at, PlanRevision.id)
        ).scalars()
    ]
    return acts


def application_started_at(session: Session, plan: Plan) -> datetime | None:
    """When the revision counting as new that made the plan's current application its own was
    recorded (``None`` for a first application)."""
    if plan.application_number == 1:
        return None
    previous = earlier_application(session, plan, plan.application_number - 1)
    revision = session.get(PlanRevision, previous.revision_id)
    return revision.recorded_at if revision is not None else None


def appeal_facts(appeal: Appeal, paid: Collection[str]) -> timeline.AppealFacts:
    """An appeal's recorded facts (``paid``: the ids of the appeals with their filing fee paid,
    ``fees_paid``)."""
    return timeline.AppealFacts(
        postmarked_on=appeal.postmarked_on,
        received_on=appeal.received_on,
        petition_granted=appeal.petition_granted,
        petition_decided_on=appeal.petition_decided_on,
        outcome=appeal.outcome,
        decided_on=appeal.decided_on,
        filing_fee_paid=appeal.id in paid,
    )


def current_outcome(session: Session, plan_id: str) -> str | None:
    """The plan's outcome today (approved, deemed_approved, denied or None); None if no plan."""
    plan = session.get(Plan, plan_id)
    if plan is None:
        return None
    return state(session, plan).outcome


def decision_made_on(record: Plan | PlanApplication) -> date | None:
    """The day an application was approved or denied: its resolution's adoption where one
    carries the decision (Subd. 1 (b): the resolution is the decision), else ``decided_on``;
    ``None`` while undecided (``timeline.made_on`` for the facts)."""
    if record.decided_on is None:
        return None
    return record.decision_resolution_adopted_on or record.decided_on


def approved_since(session: Session, plan: Plan) -> date | None:
    """The day the approval the plan's outcome stands on took effect: its decision's day
    (``decision_made_on``), or the day it was deemed approved (``deemed_approved_on``); the
    standing approval's after a denied revision (Subd. 6 (c)).  ``None`` when the plan is not
    approved."""
    now = state(session, plan)
    if now.outcome not in APPROVED_OUTCOMES:
        return None
    if not now.revision_denied:
        return decision_made_on(plan) or deemed_approved_on(session, plan)
    standing = standing_application(session, plan)
    if standing is None:  # a denied revision stands on an earlier approval
        raise NotFound(f"no standing approval of plan {plan.id}")
    return decision_made_on(standing) or deemed_approved_on(session, plan, standing)


def deemed_approved_on(
    session: Session, plan: Plan, application: PlanApplication | None = None
) -> date:
    """Minn. Stat. 15.99 subd. 2: the day the plan's current application, or its earlier
    ``application`` (as it stood when superseded), is approved if not decided by its deadline
    (``timeline.deemed_approved_on``)."""
    c = clocks(session, plan)
    f = (
        facts(session, plan)
        if application is None
        else application_facts(session, plan, application)
    )
    return timeline.deemed_approved_on(c.ruleset, c.lgu, f)


_PLAN_FOR_SHARE = select(Plan).where(Plan.id == bindparam("id")).with_for_update(read=True)


def held_for_share(session: Session, plan_id: str) -> Plan | None:
    """The plan, its row locked FOR SHARE until the unit of work ends, for an act that draws on
    its state (a reservation for the plan, a draw on its security).  A decision on the plan (an
    appeal reversing it, say) or a withdrawal for it locks the row to change it: it then waits
    for the act to commit, or the act waits for it and sees what it wrote.  Acts of this kind do
    not wait for each other (shared locks).  The plan stays in the session; None if none."""
    return session.execute(_PLAN_FOR_SHARE, {"id": plan_id}).scalar_one_or_none()


def outcome_held(session: Session, plan_id: str) -> str | None:
    """``current_outcome``, the plan's row held as ``held_for_share`` holds it."""
    if held_for_share(session, plan_id) is None:
        return None
    return current_outcome(session, plan_id)


@dataclass(frozen=True)
class PlanState:
    """Status, outcome and deadlines as of today."""

    status: str
    outcome: str | None
    reversed_on_appeal: bool
    deadlines: timeline.Deadlines
    #: a revision of an approved plan, denied: the approval before it stands (Subd. 6 (c))
    revision_denied: bool
    #: the impact area the outcome is for (the standing approval's after a denied revision)
    area_sqft: int


def state(session: Session, plan: Plan, today: date | None = None) -> PlanState:
    """Compute the plan's status and deadlines from its facts and ``today``."""
    return _state_from(clocks(session, plan), facts(session, plan), today or clock.today())


def states(
    session: Session, listed: Sequence[Plan], today: date, found: ListingFacts | None = None
) -> dict[str, PlanState]:
    """``state`` of each plan of a listing, by plan id, with one query for their LGUs, one for
    their extensions and one for their appeals per ``SLICE`` plans (not three per plan), and
    one for the earlier applications of those a revision superseded (``found``: read already)."""
    found = found or listing_facts(session, listed)
    return {
        plan.id: state_with(
            plan,
            found.lgus[plan.lgu_id],
            found.extensions[plan.id],
            found.appeals[plan.id],
            found.paid,
            today,
            found.standing.get(plan.id),
        )
        for plan in listed
    }


@dataclass(frozen=True)
class ListingFacts:
    """What a listing's plan states are computed from, read for the whole listing at once."""

    lgus: dict[str, Lgu]
    extensions: Mapping[str, list[PlanExtension]]
    appeals: Mapping[str, list[Appeal]]
    #: the ids of the appeals with their filing fee paid (``fees_paid``)
    paid: frozenset[str]
    standing: dict[str, timeline.StandingApproval]


def listing_facts(session: Session, listed: Sequence[Plan]) -> ListingFacts:
    """The LGUs of a listing's plans (by id), each plan's extensions and appeals (by plan id,
    in the order recorded), the appeals with their filing fee paid (``fees_paid``) and each
    plan's standing approval (``standing_approvals``)."""
    lgu_ids = sorted({plan.lgu_id for plan in listed})
    lgus = {lgu_id: rows[0] for lgu_id, rows in grouped(session, Lgu.id, lgu_ids).items()}
    ids = [plan.id for plan in listed]
    extensions = grouped(
        session, PlanExtension.plan_id, ids, PlanExtension.recorded_at, PlanExtension.id
    )
    appeals = grouped(session, Appeal.plan_id, ids, Appeal.created_at, Appeal.id)
    paid = fees_paid(session, [appeal for found in appeals.values() for appeal in found])
    standing = standing_approvals(session, listed, appeals)
    return ListingFacts(lgus, extensions, appeals, paid, standing)


def earlier_application_states(
    session: Session, listed: Sequence[Plan], found: ListingFacts | None = None
) -> dict[str, list[tuple[PlanApplication, PlanState]]]:
    """Per plan of ``listed`` a revision superseded, each earlier application with its state
    as of the day it was superseded (its own dates, extensions and appeals), by plan id
    (``found``: ``listing_facts`` of ``listed``, read already)."""
    revised = [plan for plan in listed if plan.application_number > 1]
    if not revised:
        return {}
    found = found or listing_facts(session, revised)
    earlier = grouped(
        session, PlanApplication.plan_id, [plan.id for plan in revised], PlanApplication.number
    )
    states: dict[str, list[tuple[PlanApplication, PlanState]]] = {}
    for plan in revised:
        c = clocks_of(plan, found.lgus[plan.lgu_id])
        for application in earlier.get(plan.id, []):
            facts = _record_facts(
                application,
                application.number,
                found.extensions[plan.id],
                found.appeals[plan.id],
                found.paid,
            )
            state = _state_from(c, facts, application.superseded_on)
            states.setdefault(plan.id, []).append((application, state))
    return states


def state_with(
    plan: Plan,
    lgu: Lgu,
    extensions: Iterable[PlanExtension],
    appeals: Iterable[Appeal],
    paid: Collection[str],
    today: date,
    standing: timeline.StandingApproval | None = None,
) -> PlanState:
    """``state`` from rows already read: the plan's LGU, extensions, appeals, the ids of those
    with their filing fee paid (``fees_paid``) and standing approval."""
    return _state_from(
        clocks_of(plan, lgu), _facts_from(plan, extensions, appeals, paid, standing), today
    )


def appeal_window_closed(
    plan: Plan, state: PlanState, application_number: int, today: date
) -> bool:
    """Whether the appeal window of the plan's application ``application_number`` had closed by
    ``today`` (``state``: the plan's as of then): the current application's after
    ``appeal_window_ends`` (none closes before a notice of decision is mailed); an earlier one's
    before the revision that superseded it, as ``timeline.status`` holds (a revision counting as
    new waits until the approval it supersedes is final)."""
    if application_number != plan.application_number:
        return True
    ends = state.deadlines.appeal_window_ends
    return ends is not None and today > ends


def _state_from(c: Clocks, f: timeline.PlanFacts, day: date) -> PlanState:
    return PlanState(
        status=timeline.status(c.ruleset, c.lgu, c.board, f, day),
        outcome=timeline.outcome(c.ruleset, c.lgu, c.board, f, day),
        reversed_on_appeal=timeline.reversed_on_appeal(f),
        deadlines=timeline.deadlines(c.ruleset, c.lgu, c.board, f, day),
        revision_denied=timeline.revision_denied(c.ruleset, c.lgu, c.board, f, day),
        area_sqft=timeline.area_in_force(c.ruleset, c.lgu, c.board, f, day),
    )


def required_credits(plan: Plan, area_sqft: int | None = None) -> tuple[int, int]:
    """(required credit sq ft, of which unrestricted): ``ceil(A × r)`` and ``A`` (docs/domain.md
    §3), for the plan's impact area or ``area_sqft`` (the area in force:
    ``PlanState.area_sqft``)."""
    ratio: Fraction = replacement_rules.parse_ratio(plan.replacement_ratio)
    area = plan.impact_area_sqft if area_sqft is None else area_sqft
    return (
        replacement_rules.required_credit_sqft(area, ratio),
        replacement_rules.required_unrestricted_sqft(area),
    )


# --- the LGU's acts ---------------------------------------------------------------------------


def _check_not_future(day: date, field: str) -> None:
    if day > clock.today():
        raise ValidationFailed("this date is in the future", {field: ["in the future"]})


def _check_not_before_receipt(plan: Plan, day: date, field: str) -> None:
    if day < plan.received_on:
        raise ValidationFailed(
            "this date is before the application was received",
            {field: [f"before received_on {plan.received_on.isoformat()}"]},
        )


def record_notice(session: Session, plan: Plan, mailed_on: date) -> dict[str, Any]:
    """Subd. 6 notice of application: recorded even when late, and flagged ``late``, while the
    plan is undecided (``timeline.check_application_notice``)."""
    check_notice(session, plan, mailed_on)
    plan.notice_mailed_on = mailed_on
    session.flush()
    due = state(session, plan).deadlines.notice_due
    return {"mailed_on": mailed_on, "due": due, "late": mailed_on > due}


def check_notice(session: Session, plan: Plan, mailed_on: date) -> None:
    """Refuse a notice of application mailed on ``mailed_on`` as ``record_notice`` would."""
    _check_not_future(mailed_on, "mailed_on")
    _check_not_before_receipt(plan, mailed_on, "mailed_on")
    c = clocks(session, plan)
    timeline.check_application_notice(
        c.ruleset,
        c.lgu,
        facts(session, plan),
        mailed_on,
        clock.today(),
        approval_acts(session, plan),
    )
    if plan.notice_mailed_on is not None:
        raise Conflict("the notice of this application was already recorded")


def record_decision_notice(session: Session, plan: Plan, mailed_on: date) -> dict[str, Any]:
    """Subd. 7 notice of decision: opens the 15-day appeal window; late ones are flagged."""
    check_decision_notice(session, plan, mailed_on)
    plan.decision_notice_mailed_on = mailed_on
    session.flush()
    due = state(session, plan).deadlines.decision_notice_due
    return {"mailed_on": mailed_on, "due": due, "late": due is not None and mailed_on > due}


def check_decision_notice(session: Session, plan: Plan, mailed_on: date) -> None:
    """Refuse a notice of decision mailed on ``mailed_on`` as ``record_decision_notice`` would."""
    _check_not_future(mailed_on, "mailed_on")
    if plan.decision_notice_mailed_on is not None:
        raise Conflict("the notice of decision was already recorded")
    c = clocks(session, plan)
    timeline.check_decision_notice(
        c.ruleset, c.lgu, c.board, facts(session, plan), mailed_on, clock.today()
    )


def record_replacement_completed(session: Session, plan: Plan, completed_on: date) -> None:
    """Subd. 3: project-specific replacement recorded complete."""
    _check_not_future(completed_on, "completed_on")
    if plan.method != "project_specific":
        raise Conflict("only a project-specific replacement is completed this way")
    if plan.replacement_completed_on is not None:
        raise Conflict("the replacement was already recorded complete")
    plan.replacement_completed_on = completed_on
    session.flush()


def _check_appeal_security(ruleset: Ruleset, amount_cents: int, field: str) -> None:
    """Subd. 9: "in an amount not to exceed $500"."""
    if not 1 <= amount_cents <= ruleset.appeal_security_max_cents:
        raise ValidationFailed(
            f"Subd. 9: appeal security is {dollars(1)} to "
            f"{dollars(ruleset.appeal_security_max_cents)}",
            {field: [f"{dollars(1)} to {dollars(ruleset.appeal_security_max_cents)}"]},
        )


def require_appeal_security(session: Session, plan: Plan, amount_cents: int) -> None:
    """Subd. 9: the LGU may require a petitioner to post security; it says so before the
    current application's notice of decision is mailed, and before anyone petitions on it (a
    requirement added afterwards would change the terms a petitioner relied on, or of a
    petition filed)."""
    _check_appeal_security(ruleset_by_id(plan.ruleset), amount_cents, "amount_cents")
    if plan.decision_notice_mailed_on is not None:
        raise Conflict(
            "the notice of decision was mailed "
            f"{plan.decision_notice_mailed_on.isoformat()}: the appeal security can no longer "
            "change for this application"
        )
    if any(a.application_number == plan.application_number for a in appeals_of(session, plan.id)):
        raise Conflict("a petition was filed: the appeal security can no longer change")
    plan.appeal_security_required_cents = amount_cents
    session.flush()
