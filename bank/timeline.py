"""The replacement-plan timeline (Subd. 4, 6–9; Minn. Stat. 15.99, 645.15; DOMAIN.md §4).  Pure.

Everything is computed from recorded facts and today's date: deadlines, the status and the
outcome, so a plan past its decision deadline reads ``deemed_approved`` without any job running.
Acts of the LGU (notices, the decision) count on the LGU's calendar; acts of or toward the board
(a petition, the board's decisions) on the board's.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from bank.calendar import Calendar
from bank.errors import (
    AppealWindowClosed,
    CommentPeriodOpen,
    Conflict,
    DeadlinePassed,
    InvalidFee,
    NotEligible,
    ValidationFailed,
)
from bank.replacement_rules import has_comment_period, notice_kind
from bank.ruleset import Ruleset

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


@dataclass(frozen=True)
class PlanFacts:
    """What has been recorded about a plan."""

    received_on: date
    impact_area_sqft: int
    notice_mailed_on: date | None = None
    extension_notified_on: date | None = None
    extension_days: int | None = None
    decision_outcome: str | None = None  # approved | denied
    decided_on: date | None = None
    decision_notice_mailed_on: date | None = None
    appeals: tuple[AppealFacts, ...] = ()


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
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    today: date | None = None,
) -> Deadlines:
    """Subd. 6 notice, Subd. 8 comment period, 15.99 decision, Subd. 7 notice, Subd. 9 window.

    Given ``today``, ``appeal_window_ends`` is null until the decision notice is mailed, except
    for a deemed approval (past ``decision_due`` undecided), whose window runs from
    ``decision_due`` (API.md: null until the decision notice is mailed).
    """
    window = appeal_window_ends(ruleset, lgu, board, facts)
    if (
        today is not None
        and facts.decision_notice_mailed_on is None
        and not _deemed(ruleset, lgu, facts, today)
    ):
        window = None
    return Deadlines(
        notice_kind=notice_kind(ruleset, facts.impact_area_sqft),
        notice_due=lgu.add_days(facts.received_on, ruleset.notice_days),
        comment_period_ends=comment_period_ends(ruleset, lgu, facts),
        decision_due=decision_due(ruleset, lgu, facts),
        decision_notice_due=(
            lgu.add_days(facts.decided_on, ruleset.decision_notice_days)
            if facts.decided_on
            else None
        ),
        appeal_window_ends=window,
    )


def comment_period_ends(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> date | None:
    """Subd. 8: 30 days from the notice (choice), none below 10,000 sq ft or before a notice."""
    if not has_comment_period(ruleset, facts.impact_area_sqft) or facts.notice_mailed_on is None:
        return None
    return lgu.add_days(facts.notice_mailed_on, ruleset.comment_period_days)


def decision_due(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts) -> date:
    """15.99 subd. 2: 60 days from receipt; an extension of d days makes it 60 + d."""
    days = ruleset.decision_days + (facts.extension_days or 0)
    return lgu.add_days(facts.received_on, days)


def appeal_window_ends(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts
) -> date | None:
    """Subd. 9: 15 days after the decision notice's postmark, on the board's calendar.

    A deemed approval has no decision to mail: its window runs from ``decision_due`` (choice),
    or from the postmark of a notice of it if the LGU mails one.
    """
    if facts.decision_notice_mailed_on is not None:
        return board.add_days(facts.decision_notice_mailed_on, ruleset.appeal_window_days)
    if facts.decided_on is None:
        return board.add_days(decision_due(ruleset, lgu, facts), ruleset.appeal_window_days)
    return None


def _deemed(ruleset: Ruleset, lgu: Calendar, facts: PlanFacts, today: date) -> bool:
    return facts.decided_on is None and today > decision_due(ruleset, lgu, facts)


def _decided_appeal(facts: PlanFacts) -> AppealFacts | None:
    for appeal in facts.appeals:
        if appeal.outcome is not None:
            return appeal
    return None


def reversed_on_appeal(facts: PlanFacts) -> bool:
    """Whether the board reversed the LGU's decision."""
    appeal = _decided_appeal(facts)
    return appeal is not None and appeal.outcome == "plan_reversed"


def outcome(
    ruleset: Ruleset, lgu: Calendar, board: Calendar, facts: PlanFacts, today: date
) -> str | None:
    """approved, deemed_approved or denied (after any reversal on appeal), or None undecided."""
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
    """received → noticed → approved | denied | deemed_approved → appealed → final."""
    decided = outcome(ruleset, lgu, board, facts, today)
    if decided is None:
        return "noticed" if facts.notice_mailed_on is not None else "received"
    if _decided_appeal(facts) is not None:
        return "final"
    open_appeals = [a for a in facts.appeals if a.petition_granted is not False]
    if open_appeals:
        return "appealed"
    if facts.appeals:  # every petition denied: the decision is final
        return "final"
    window = appeal_window_ends(ruleset, lgu, board, facts)
    if window is not None and today > window:
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
) -> None:
    """Subd. 4 and 8: refuse a decision after its deadline, twice, or inside the comment period."""
    if decision not in ("approved", "denied"):
        raise ValidationFailed("a decision approves or denies", {"outcome": ["unknown"]})
    if decided_on < facts.received_on:
        raise ValidationFailed("decided before it was received", {"decided_on": ["too early"]})
    due = decision_due(ruleset, lgu, facts)
    if decided_on > due:
        raise DeadlinePassed(
            f"15.99: the decision was due by {due.isoformat()}; the plan is deemed approved",
            deadline="decision_due",
            due=due.isoformat(),
        )
    if facts.decided_on is not None:
        raise Conflict("the plan was already decided")
    if has_comment_period(ruleset, facts.impact_area_sqft):
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


def check_extension(
    ruleset: Ruleset,
    lgu: Calendar,
    board: Calendar,
    facts: PlanFacts,
    notified_on: date,
    days: int,
) -> None:
    """15.99 subd. 3 (f): one extension, of at most 60 days, by notice before the deadline."""
    if not 1 <= days <= ruleset.max_extension_days:
        raise ValidationFailed(
            f"an extension is 1 to {ruleset.max_extension_days} days", {"days": ["out of range"]}
        )
    if facts.extension_notified_on is not None:
        raise Conflict("15.99 allows one extension only")
    if facts.decided_on is not None:
        raise Conflict("the plan was already decided")
    due = decision_due(ruleset, lgu, facts)
    if notified_on > due:
        raise DeadlinePassed(
            f"the extension had to be sent by {due.isoformat()}",
            deadline="decision_due",
            due=due.isoformat(),
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
    if mailed_on < facts.decided_on:
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
    today: date | None = None,
) -> None:
    """Subd. 9: who may petition, within 15 days of the notice's postmark, $200, security ≤ $500."""
    if petitioner_kind not in PETITIONER_KINDS:
        raise ValidationFailed("unknown petitioner", {"petitioner_kind": ["unknown"]})
    window = appeal_window_ends(ruleset, lgu, board, facts)
    deemed = facts.decided_on is None and postmarked_on > decision_due(ruleset, lgu, facts)
    if facts.decision_notice_mailed_on is None and not (facts.decided_on is None and deemed):
        raise Conflict("a petition comes after the notice of decision")
    assert window is not None
    if postmarked_on > window:
        raise AppealWindowClosed(
            f"Subd. 9: the petition had to be mailed by {window.isoformat()}",
            deadline="appeal_window_ends",
            ends=window.isoformat(),
        )
    if filing_fee_cents != ruleset.appeal_filing_fee_cents:
        raise InvalidFee(
            f"Subd. 9: the filing fee is {ruleset.appeal_filing_fee_cents} cents",
            fee_cents=ruleset.appeal_filing_fee_cents,
            amount_cents=filing_fee_cents,
        )
    if security_cents is not None and security_cents > ruleset.appeal_security_max_cents:
        raise InvalidFee(
            f"Subd. 9: security may not exceed {ruleset.appeal_security_max_cents} cents",
            max_cents=ruleset.appeal_security_max_cents,
            amount_cents=security_cents,
        )
    if petitioner_kind == "residents" and (resident_count or 0) < ruleset.min_resident_petitioners:
        raise NotEligible(
            f"Subd. 9: {ruleset.min_resident_petitioners} county residents may petition",
            resident_count=resident_count,
        )


def grant_decision_due(board: Calendar, ruleset: Ruleset, received_on: date) -> date:
    """Subd. 9: the board decides whether to grant within 30 days of receiving the petition."""
    return board.add_days(received_on, ruleset.grant_decision_days)


def appeal_decision_due(board: Calendar, ruleset: Ruleset, granted_on: date) -> date:
    """Subd. 9: decided within 60 days of the appeal (choice: counted from the grant)."""
    return board.add_days(granted_on, ruleset.appeal_decision_days)
