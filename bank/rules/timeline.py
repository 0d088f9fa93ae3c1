"""The replacement-plan timeline (Subd. 4, 6–9; Minn. Stat. 15.99, 645.15; docs/domain.md §4).

Pure: everything is computed from recorded facts and today's date: deadlines, the status and the
outcome, so a plan past its decision deadline reads ``deemed_approved`` without any job running.
Acts of the LGU (notices, the decision) count on the LGU's calendar; acts of or toward the board
(a petition, the board's decisions) on the board's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, timedelta

from bank.errors import (
    AppealWindowClosed,
    CommentPeriodOpen,
    Conflict,
    DeadlinePassed,
    InvalidFee,
    NotEligible,
    ValidationFailed,
)
from bank.rules.calendar import Calendar
from bank.rules.replacement_rules import has_comment_period, notice_kind
from bank.rules.ruleset import Ruleset
from bank.wording import dollars

PETITIONER_KINDS = ("owner", "notice_recipient", "residents")


@dataclass(frozen=True)
class AppealFacts:
    """A petition and the board's decisions on it."""

    postmarked_on: date
    received_on: date
    petition_granted: bool | None
    petition_decided_on: date | None
    outcome: str | None  # plan_upheld | plan_reversed
    decided_on: date | None
    #: a live filing fee is recorded for it; one is booked only when mailed within the appeal
    #: window (``check_mailed_in_window``), so with it the petitioner "obtained" an appeal
    #: (Subd. 9) unless the window is still open
    filing_fee_paid: bool


@dataclass(frozen=True)
class ExtensionFacts:
    """An extension of the decision deadline: the LGU's own (15.99 subd. 3 (f)) or one the
    applicant agreed to or asked for (g)."""

    notified_on: date
    days: int
    applicant_agreed: bool = False


@dataclass(frozen=True)
class PlanFacts:
    """What has been recorded about a plan's current application."""

    received_on: date
    impact_area_sqft: int
    notice_mailed_on: date | None = None
    extensions: tuple[ExtensionFacts, ...] = ()
    decision_outcome: str | None = None  # approved | denied
    decided_on: date | None = None
    #: the governing body's resolution carrying the decision (Subd. 1 (b)), adopted on or before
    #: ``decided_on``: its adoption is the approval or denial Subd. 7 counts from
    resolution_adopted_on: date | None = None
    decision_notice_mailed_on: date | None = None
    appeals: tuple[AppealFacts, ...] = ()
    #: a revision counting as new (Subd. 6 (c)) of an approved plan: the approval it applies to
    #: revise (its outcome and impact area), which stands if the revision is denied
    standing_approval: StandingApproval | None = None
    #: the appeals of the applications a revision superseded: a petition mailed within an earlier
    #: application's window may reach the board after the revision was recorded (Subd. 9), and
    #: while it awaits the board the plan is ``appealed``
    earlier_appeals: tuple[AppealFacts, ...] = ()


@dataclass(frozen=True)
class StandingApproval:
    """The approval a revised application applies to revise: the last earlier application
    approved, after every appeal of it (one its window let in after it was superseded too)."""

    outcome: str  # approved | deemed_approved
    impact_area_sqft: int


@dataclass(frozen=True)
class RecordedAct:
    """An act recorded under a plan's current application, outside its timeline facts, that
    stands on the application being approved: a withdrawal of credits for it (reversed on appeal
    or not), a draw on its security, a revision of the approved plan.  ``what`` names it as a
    refusal does; ``on`` is its day (a withdrawal's, the draw's, the revision's receipt)."""

    what: str
    on: date


@dataclass(frozen=True)
class Deadlines:
    """Every deadline of a plan; ``None`` where it does not (yet) apply."""

    notice_kind: str
    notice_due: date
    comment_period_ends: date | None
    decision_due: date
    decision_notice_due: date | None
    appeal_window_ends: date | None


def deadlines(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date | None = None
) -> Deadlines:
    """Subd. 6 notice, Subd. 8 comment period, 15.99 decision, Subd. 7 notice, Subd. 9 window,
    as of ``today`` (which only says whether an undecided plan is deemed approved yet).

    Subd. 7's notice is due "within ten days of the approval or denial": of the decision (the
    adoption of its resolution where one carries it, ``made_on``), or of a deemed approval's
    last day to decide (``decision_due``), once the plan is deemed approved (or its notice of
    that was mailed).  ``appeal_window_ends`` is null until a notice of the
    decision is mailed (Subd. 9 runs the window from the postmark of the Subd. 7 mailing), for a
    deemed approval too.
    """
    due = decision_due(ruleset, lgu, facts)
    decided_or_deemed = made_on(facts) or (
        due
        if facts.decision_notice_mailed_on is not None
        or (today is not None and _deemed(ruleset, lgu, facts, today))
        else None
    )
    return Deadlines(
        notice_kind=notice_kind(ruleset, facts.impact_area_sqft),
        notice_due=lgu.add_days(facts.received_on, ruleset.notice_days),
        comment_period_ends=comment_period_ends(ruleset, lgu, facts),
        decision_due=due,
        decision_notice_due=(
            lgu.add_days(decided_or_deemed, ruleset.decision_notice_days)
            if decided_or_deemed
            else None
        ),
        appeal_window_ends=appeal_window_ends(ruleset, board, facts),
    )


def made_on(facts: PlanFacts) -> date | None:
    """The day the LGU approved or denied the plan: its resolution's adoption where a
    resolution carries the decision (Subd. 1 (b): the plan is approved by the resolution), else
    the decision's ``decided_on``; ``None`` while undecided."""
    if facts.decided_on is None:
        return None
    return facts.resolution_adopted_on or facts.decided_on


def comment_period_ends(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> date | None:
    """Subd. 8: 30 days from the notice (choice), none below 10,000 sq ft or before a notice."""
    if not has_comment_period(ruleset, facts.impact_area_sqft) or facts.notice_mailed_on is None:
        return None
    return lgu.add_days(facts.notice_mailed_on, ruleset.comment_period_days)


def decision_due(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> date:
    """15.99 subd. 2: 60 days from receipt; extensions of d1, d2, ... days make it one period
    of 60 + d1 + d2 + ... days, counted like any other (645.15)."""
    days = ruleset.decision_days + sum(extension.days for extension in facts.extensions)
    return lgu.add_days(facts.received_on, days)


def appeal_window_ends(ruleset: Ruleset, board: Calendar, facts: PlanFacts) -> date | None:
    """Subd. 9: 15 days after the postmark of the Subd. 7 notice of decision, board calendar.

    Approvals, denials and deemed approvals alike: with no notice mailed, everyone entitled to
    it may still petition, so there is no window that could close (null).
    """
    if facts.decision_notice_mailed_on is None:
        return None
    return board.add_days(facts.decision_notice_mailed_on, ruleset.appeal_window_days)


def deemed_approved_on(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> date:
    """15.99 subd. 2: "Failure of an agency to deny a request within 60 days is approval of the
    request": an application not decided by ``decision_due`` is approved the next day."""
    return decision_due(ruleset, lgu, facts) + timedelta(days=1)


def _deemed(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, today: date) -> bool:
    return facts.decided_on is None and today >= deemed_approved_on(ruleset, lgu, facts)


def reversed_on_appeal(facts: PlanFacts) -> bool:
    """Whether any appeal reversed the LGU's decision (whatever the other appeals decided)."""
    return any(appeal.outcome == "plan_reversed" for appeal in facts.appeals)


def obtained_no_appeal(appeal: AppealFacts, window_closed: bool) -> bool:
    """Subd. 9: appeal "may be obtained by mailing a petition and payment of a filing fee of
    $200 ... within 15 days"; "If appeal is not sought within 15 days, the decision becomes
    final."  A petition undecided with no fee recorded once its window closed (``window_closed``)
    obtained no appeal: it holds nothing, and the decision is final as if none were filed.  While
    the window is open the fee may still be mailed.  A fee mailed within it that reaches the board
    later is booked all the same (its postmark counts), and the petition then awaits the board
    again, as a petition mailed in time that arrives late reopens the plan.  A grant needs the
    fee, and a denied petition awaits nothing, so only an undecided petition is affected."""
    return window_closed and appeal.petition_granted is None and not appeal.filing_fee_paid


def awaits_the_board(appeal: AppealFacts, window_closed: bool) -> bool:
    """A petition awaiting its grant decision, or a granted appeal awaiting its decision; not a
    petition that obtained no appeal (``obtained_no_appeal``: ``window_closed`` says whether the
    window of the application it appeals has closed)."""
    if obtained_no_appeal(appeal, window_closed):
        return False
    return appeal.petition_granted is None or (
        appeal.petition_granted is True and appeal.outcome is None
    )


def outcome(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date
) -> str | None:
    """approved, deemed_approved or denied (after any reversal on appeal), or None undecided.

    A revision of an approved plan that is denied (by the LGU, or reversed on appeal) leaves
    the approval it applied to revise standing: the plan's outcome is that approval's.
    """
    own = application_outcome(ruleset, lgu, board, facts, today)
    if own == "denied" and facts.standing_approval is not None:
        return facts.standing_approval.outcome
    return own


def revision_denied(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date
) -> bool:
    """Whether the current application is a revision of an approved plan, denied: the plan
    stands as approved before it (``StandingApproval``)."""
    own = application_outcome(ruleset, lgu, board, facts, today)
    return own == "denied" and facts.standing_approval is not None


def area_in_force(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date
) -> int:
    """The impact area the plan's outcome is for: the standing approval's after a denied
    revision, else the current application's."""
    if revision_denied(ruleset, lgu, board, facts, today):
        assert facts.standing_approval is not None
        return facts.standing_approval.impact_area_sqft
    return facts.impact_area_sqft


def application_outcome(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date
) -> str | None:
    """The current application's own outcome: ``outcome`` without a standing approval."""
    if facts.decision_outcome is not None:
        base: str | None = facts.decision_outcome
    elif _deemed(ruleset, lgu, facts, today):
        base = "deemed_approved"
    else:
        return None
    if reversed_on_appeal(facts):
        return "denied" if base in ("approved", "deemed_approved") else "approved"
    return base


def status(ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date) -> str:
    """received → noticed → approved | denied | deemed_approved → appealed → final.

    Subd. 9: ``final`` only once the appeal window has closed and nothing awaits the board (no
    petition awaiting its grant decision, no granted appeal awaiting its decision; a petition
    whose window closed without its filing fee obtained no appeal: ``obtained_no_appeal``).  A
    denied petition does not shorten the window: others entitled may still petition until it
    closes.  An appeal of an application a revision superseded that awaits the board makes the
    plan ``appealed`` too, the revision undecided or not: what it appeals may stand on its
    outcome.
    """
    decided = outcome(ruleset, lgu, board, facts, today)
    # the window of an application a revision superseded closed before the revision: one
    # counting as new waits until the approval it supersedes is final (``plan_revisions``)
    if any(awaits_the_board(appeal, True) for appeal in facts.earlier_appeals):
        return "appealed"
    if decided is None:
        return "noticed" if facts.notice_mailed_on is not None else "received"
    window = appeal_window_ends(ruleset, board, facts)
    closed = window is not None and today > window
    if any(awaits_the_board(appeal, closed) for appeal in facts.appeals):
        return "appealed"
    if revision_denied(ruleset, lgu, board, facts, today):
        return "final"  # the standing approval was final before it was applied to be revised
    if closed:
        return "final"
    return decided


# --- checks of the acts recorded on a plan -----------------------------------------------------


def check_decision(
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    decision: str,
    decided_on: date,
    today: date,
    acts: Sequence[RecordedAct] = (),
    adopted_on: date | None = None,
) -> None:
    """Subd. 4, 6 and 8: refuse a decision after its deadline, twice, inside the comment period,
    or, below 10,000 sq ft, before the summary of the application (its notice) is recorded.

    The decision is in time (Minn. Stat. 15.99) when it was made by ``decision_due``: the day
    its resolution was ``adopted_on`` where one carries it (Subd. 1 (b): the resolution is the
    approval), else ``decided_on``.  A decision made on or before ``decision_due`` may be
    recorded after it (the LGU decided in time; the record came later) only while nothing relied
    on the deemed approval the plan has had since (``relied_on_deemed_approval``, of the facts
    and ``acts``): ``conflict`` after.
    """
    if decision not in ("approved", "denied"):
        raise ValidationFailed("a decision approves or denies", {"outcome": ["unknown"]})
    if decided_on < facts.received_on:
        raise ValidationFailed("decided before it was received", {"decided_on": ["too early"]})
    _check_by_decision_due(
        ruleset,
        lgu,
        facts,
        adopted_on or decided_on,
        "15.99: the decision was due by {}; the plan is deemed approved",
    )
    if facts.decided_on is not None:
        raise Conflict("the plan was already decided")
    _check_deemed_approval_unrelied(ruleset, lgu, facts, today, acts, "a decision dated by {}")
    if has_comment_period(ruleset, facts.impact_area_sqft):
        _check_comment_period_over(ruleset, lgu, facts, decided_on)
    else:
        _check_summary_mailed(ruleset, lgu, facts)


def _check_by_decision_due(
    ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, day: date, refusal: str
) -> None:
    """Refuse (``deadline_passed``) an act on ``day`` after ``decision_due``; ``refusal`` says
    what was late, with ``{}`` for the deadline."""
    due = decision_due(ruleset, lgu, facts)
    if day > due:
        raise DeadlinePassed(
            refusal.format(due.isoformat()), deadline="decision_due", due=due.isoformat()
        )


def _check_comment_period_over(
    ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, decided_on: date
) -> None:
    """Subd. 8: a plan with a comment period is decided only after it ends."""
    ends = comment_period_ends(ruleset, lgu, facts)
    if ends is None:
        raise CommentPeriodOpen(
            "Subd. 8: no notice has been mailed, so the 30-day comment period has not run",
            deadline="comment_period_ends",
        )
    if decided_on <= ends:
        raise CommentPeriodOpen(
            f"Subd. 8: the comment period runs to {ends.isoformat()}",
            deadline="comment_period_ends",
            ends=ends.isoformat(),
        )


def check_decision_keeps(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, area_sqft: int) -> None:
    """Subd. 8, after the LGU's decision: a revision that does not count as a new application
    (Subd. 6 (c)) changes the decided application's area in place and keeps its decision, so
    it may not take the area where that decision could not have been made on its day
    (``made_on``): to the small-impact threshold or above, the day must be after the comment
    period (``check_decision``), or the approval would stand for an impact the public never
    had its 30 days on before it.  Below the threshold a decision needs only the notice of
    application, which it had.  A deemed approval is no decision of the LGU's, and no rule of
    the area held it back: nothing to check."""
    made = made_on(facts)
    if made is None or not has_comment_period(ruleset, area_sqft):
        return
    ends = comment_period_ends(ruleset, lgu, replace(facts, impact_area_sqft=area_sqft))
    if ends is not None and made > ends:
        return
    threshold = f"{ruleset.small_impact_threshold_sqft:,} sq ft"
    why = (
        f"no notice of application was mailed before it, so no {ruleset.comment_period_days}-day "
        "comment period ran"
        if ends is None
        else f"the {ruleset.comment_period_days}-day comment period would run to {ends.isoformat()}"
    )
    fields: dict[str, str] = {} if ends is None else {"ends": ends.isoformat()}
    raise CommentPeriodOpen(
        f"Subd. 8: at {area_sqft:,} sq ft the plan's decision, made {made.isoformat()}, would "
        f"stand for an impact of {threshold} or more although {why}; a revision that does not "
        "count as a new application keeps that decision, so it stays below "
        f"{threshold}: only one counting as new (Subd. 6 (c)), with its own notice, comment "
        "period and decision, takes the plan there",
        deadline="comment_period_ends",
        errors={"area_sqft": [f"{threshold} or more, decided {made.isoformat()}"]},
        **fields,
    )


def _check_summary_mailed(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> None:
    """Subd. 6 (b): a plan below 10,000 sq ft has no comment period, but the summary of its
    application is mailed all the same (to the panel, the public who asked and the DNR
    commissioner); once the plan is decided its notice of application can no longer be
    recorded (``check_application_notice``), so the decision waits for it."""
    if facts.notice_mailed_on is None:
        due = lgu.add_days(facts.received_on, ruleset.notice_days)
        last = decision_due(ruleset, lgu, facts)
        raise CommentPeriodOpen(
            "Subd. 6 (b): the summary of the application is mailed to the technical evaluation "
            "panel, the members of the public who asked for a copy and the DNR commissioner, "
            f"and none is recorded: record the notice of application (due {due.isoformat()}; "
            f"one mailed later, by {last.isoformat()}, is accepted as late), then the decision",
            deadline="notice_due",
            due=due.isoformat(),
        )


def check_extension(
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    extension: ExtensionFacts,
    today: date,
    acts: Sequence[RecordedAct] = (),
) -> None:
    """15.99 subd. 3 (f): the LGU's one extension of at most 60 days, sent "before the end of the
    initial time limit" (the first 60 days, whatever the applicant agreed to since); (g): any
    further or longer one with the applicant's written approval or at its request, sent before
    the decision deadline as it then stands.  One sent in time and recorded after the plan was
    deemed approved would take the approval back: accepted only while nothing relied on it
    (``check_decision``)."""
    days, notified_on = extension.days, extension.notified_on
    if days < 1:
        raise ValidationFailed("an extension is of 1 day or more", {"days": ["out of range"]})
    if not extension.applicant_agreed:
        if days > ruleset.max_extension_days:
            raise ValidationFailed(
                f"15.99 subd. 3 (f): the LGU's own extension is 1 to "
                f"{ruleset.max_extension_days} days; a longer one needs the applicant's "
                "agreement (g)",
                {"days": [f"1 to {ruleset.max_extension_days} without applicant_agreed"]},
            )
        if any(not earlier.applicant_agreed for earlier in facts.extensions):
            raise Conflict(
                "15.99 subd. 3 (f) allows the LGU one extension; a further one needs the "
                "applicant's written approval or request (g)"
            )
    total = days + sum(earlier.days for earlier in facts.extensions)
    if total > ruleset.max_total_extension_days:
        raise ValidationFailed(
            f"the extensions of a plan add up to at most {ruleset.max_total_extension_days} days",
            {"days": [f"{total} days in all"]},
        )
    if facts.decided_on is not None:
        raise Conflict("the plan was already decided")
    if not extension.applicant_agreed:
        initial = lgu.add_days(facts.received_on, ruleset.decision_days)
        if notified_on > initial:
            raise DeadlinePassed(
                "15.99 subd. 3 (f): the LGU's own extension is sent before the end of the "
                f"initial {ruleset.decision_days} days, {initial.isoformat()}",
                deadline="initial_decision_due",
                due=initial.isoformat(),
            )
    _check_by_decision_due(ruleset, lgu, facts, notified_on, "the extension had to be sent by {}")
    _check_deemed_approval_unrelied(ruleset, lgu, facts, today, acts, "an extension sent by {}")


def check_application_notice(
    ruleset: Ruleset,
    lgu: Calendar,
    facts: PlanFacts,
    mailed_on: date,
    today: date,
    acts: Sequence[RecordedAct] = (),
) -> None:
    """Subd. 6: a notice of application, late or not, comes before the plan is decided.

    After a decision, ``conflict``.  An undecided plan is deemed approved after
    ``decision_due``: a notice mailed after it invites comments on a plan already approved
    (``deadline_passed``); one mailed by then and recorded later is accepted only while nothing
    relied on the deemed approval (``check_decision``).
    """
    if facts.decided_on is not None:
        raise Conflict("the plan has been decided: its application notice can no longer change")
    _check_by_decision_due(
        ruleset,
        lgu,
        facts,
        mailed_on,
        "Subd. 6, 15.99: the notice of application had to be mailed by {}; the plan is deemed "
        "approved",
    )
    _check_deemed_approval_unrelied(
        ruleset, lgu, facts, today, acts, "a notice of application mailed by {}"
    )


def check_panel_act(
    ruleset: Ruleset,
    lgu: Calendar,
    facts: PlanFacts,
    day: date,
    act: str,
    today: date,
    acts: Sequence[RecordedAct] = (),
) -> None:
    """Subd. 2: the panel's part (a referral of questions on ``day``, a determination after an
    inspection on ``day``; ``act`` names it) comes before the decision, which includes it.

    After a decision, ``conflict``.  An undecided plan is deemed approved after
    ``decision_due``: a referral or an inspection after it comes too late for any decision
    (``deadline_passed``); one by then recorded later, so that the decision the LGU made in time
    can be recorded with the determination it includes, is accepted only while nothing relied
    on the deemed approval (``check_decision``).
    """
    if facts.decided_on is not None:
        raise Conflict("the plan was decided: the panel's part came before the decision")
    _check_by_decision_due(
        ruleset,
        lgu,
        facts,
        day,
        f"Subd. 2, 15.99: {act} had to come by {{}}, the last day to decide; the plan is deemed "
        "approved",
    )
    _check_deemed_approval_unrelied(ruleset, lgu, facts, today, acts, f"{act} by {{}}")


def relied_on_deemed_approval(
    ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, acts: Sequence[RecordedAct] = ()
) -> list[str]:
    """What relied on the deemed approval of an undecided application, as a refusal names it:
    the notice of decision mailed of it (Subd. 7), every petition on it (Subd. 9, whatever the
    board did with it), and each of ``acts`` dated after ``decision_due`` (a withdrawal reversed
    on appeal too: the ledger keeps both transactions).  Empty for a decided application, and
    for one nothing relied on yet (a pending reservation does not: credits are reserved for an
    undecided plan too)."""
    if facts.decided_on is not None:
        return []
    due = decision_due(ruleset, lgu, facts)
    relied = []
    if facts.decision_notice_mailed_on is not None:
        relied.append(
            f"the notice of decision mailed {facts.decision_notice_mailed_on.isoformat()}"
        )
    relied += [f"the petition postmarked {a.postmarked_on.isoformat()}" for a in facts.appeals]
    relied += [act.what for act in acts if act.on > due]
    return relied


def _check_deemed_approval_unrelied(
    ruleset: Ruleset,
    lgu: Calendar,
    facts: PlanFacts,
    today: date,
    acts: Sequence[RecordedAct],
    act: str,
) -> None:
    """Refuse (``conflict``) an act dated on or before ``decision_due`` (``act`` says which, with
    ``{}`` for the deadline) that would take back the plan's deemed approval, once anything
    relied on the approval: a notice of it was mailed, a petition filed, credits withdrawn, a
    security drawn on, the plan revised."""
    if not _deemed(ruleset, lgu, facts, today):
        return
    relied = relied_on_deemed_approval(ruleset, lgu, facts, acts)
    if relied:
        due = decision_due(ruleset, lgu, facts)
        raise Conflict(
            f"15.99: the plan is deemed approved (no decision by {due.isoformat()}), and "
            f"{'; '.join(relied)} relied on the approval: {act.format(due.isoformat())} can no "
            "longer be recorded",
            decision_due=due.isoformat(),
            relied_on=relied,
        )


def check_decision_notice(
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    mailed_on: date,
    today: date,
) -> None:
    """Subd. 7: a notice of a decision, so there must be one (a deemed approval counts)."""
    if facts.decided_on is None:
        if not _deemed(ruleset, lgu, facts, today):
            raise Conflict("there is no decision to give notice of yet")
        due = decision_due(ruleset, lgu, facts)
        if mailed_on <= due:
            # the plan was deemed approved only after decision_due: a notice of it dated
            # earlier would open (and close) its appeal window before the approval existed
            raise ValidationFailed(
                f"the plan was deemed approved after {due.isoformat()}",
                {"mailed_on": [f"on or before decision_due {due.isoformat()}"]},
            )
        return
    made = made_on(facts)
    if made is not None and mailed_on < made:
        raise ValidationFailed("mailed before the decision", {"mailed_on": ["too early"]})


def notice_late(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, mailed_on: date) -> bool:
    """A Subd. 6 notice mailed after its due date (recorded, never refused)."""
    return mailed_on > lgu.add_days(facts.received_on, ruleset.notice_days)


def check_petition(
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    *,
    petitioner_kind: str,
    resident_count: int | None,
    postmarked_on: date,
    filing_fee_cents: int,
    security_cents: int | None,
) -> None:
    """Subd. 9: who may petition, within 15 days of the notice's postmark, $200, security ≤ $500.

    Before a decision, or after an approval or denial whose notice has not been mailed, there
    is nothing to appeal yet (``conflict``).  A deemed approval has no decision to mail: until
    a notice of it is mailed, a petition postmarked after ``decision_due`` is accepted.
    """
    if petitioner_kind not in PETITIONER_KINDS:
        raise ValidationFailed("unknown petitioner", {"petitioner_kind": ["unknown"]})
    mailed_on = facts.decision_notice_mailed_on
    if mailed_on is None:
        due = decision_due(ruleset, lgu, facts)
        if facts.decided_on is not None or postmarked_on <= due:
            raise Conflict("a petition comes after the notice of decision")
    else:
        if postmarked_on < mailed_on:
            raise ValidationFailed(
                "Subd. 9: a petition appeals a decision whose notice was mailed "
                f"on {mailed_on.isoformat()}",
                {"postmarked_on": [f"before the notice of decision {mailed_on.isoformat()}"]},
            )
        check_mailed_in_window(ruleset, board, facts, postmarked_on, "the petition")
    if filing_fee_cents != ruleset.appeal_filing_fee_cents:
        raise InvalidFee(
            f"Subd. 9: the filing fee is {dollars(ruleset.appeal_filing_fee_cents)}",
            fee_cents=ruleset.appeal_filing_fee_cents,
            amount_cents=filing_fee_cents,
        )
    if security_cents is not None and security_cents > ruleset.appeal_security_max_cents:
        raise InvalidFee(
            f"Subd. 9: security may not exceed {dollars(ruleset.appeal_security_max_cents)}",
            max_cents=ruleset.appeal_security_max_cents,
            amount_cents=security_cents,
        )
    if petitioner_kind == "residents" and (resident_count or 0) < ruleset.min_resident_petitioners:
        raise NotEligible(
            f"Subd. 9: {ruleset.min_resident_petitioners} county residents may petition",
            resident_count=resident_count,
        )


def check_mailed_in_window(
    ruleset: Ruleset, board: Calendar, facts: PlanFacts, postmarked_on: date, what: str
) -> None:
    """Subd. 9: "a petition and payment of a filing fee" are mailed within the appeal window
    (``appeal_window_ends``); ``what`` (the petition, or its filing fee) postmarked after it is
    refused (``appeal_window_closed``).  With no notice of decision mailed no window has begun,
    so none has closed."""
    window = appeal_window_ends(ruleset, board, facts)
    if window is not None and postmarked_on > window:
        raise AppealWindowClosed(
            f"Subd. 9: {what} had to be mailed by {window.isoformat()}",
            deadline="appeal_window_ends",
            ends=window.isoformat(),
        )


def noticed_by(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, postmarked_on: date) -> bool:
    """Whether a petition postmarked ``postmarked_on`` may appeal this application's decision:
    its notice was mailed on or before the postmark, or, a deemed approval with no notice, the
    postmark is after ``decision_due`` (``check_petition`` refuses any other postmark as coming
    before the notice: ``conflict`` or ``validation_error``)."""
    mailed_on = facts.decision_notice_mailed_on
    if mailed_on is not None:
        return postmarked_on >= mailed_on
    return facts.decided_on is None and postmarked_on > decision_due(ruleset, lgu, facts)


def grant_decision_due(board: Calendar, ruleset: Ruleset, received_on: date) -> date:
    """Subd. 9: the board decides whether to grant within 30 days of receiving the petition."""
    return board.add_days(received_on, ruleset.grant_decision_days)


def appeal_decision_due(board: Calendar, ruleset: Ruleset, received_on: date) -> date:
    """Subd. 9: "a decision made within 60 days of the appeal", from the petition's receipt."""
    return board.add_days(received_on, ruleset.appeal_decision_days)


def judicial_review_ends(board: Calendar, ruleset: Ruleset, served_on: date) -> date:
    """Minn. Stat. 14.63: review is petitioned within 30 days after the decision is served,
    counted like every period here (645.15), on the board's calendar."""
    return board.add_days(served_on, ruleset.judicial_review_days)
