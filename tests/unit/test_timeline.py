"""The replacement-plan timeline (docs/domain.md §4; Subd. 4, 6-9; Minn. Stat. 15.99, 645.15).

The worked Hollis Township and contested plans date by date, and every deadline one day before,
on and one day after it.  Every date here was checked with ``datetime`` (weekday and 645.15
roll-forward); dates are 2026.  The LGU keeps neither optional holiday (the default); the board
keeps the Friday after Thanksgiving.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from datetime import date

import pytest

from bank.errors import (
    AppealWindowClosed,
    BankError,
    CommentPeriodOpen,
    Conflict,
    DeadlinePassed,
    InvalidFee,
    NotEligible,
    ValidationFailed,
)
from bank.rules.calendar import board_calendar, lgu_calendar
from bank.rules.ruleset import SEED
from bank.rules.timeline import (
    AppealFacts,
    Deadlines,
    ExtensionFacts,
    PlanFacts,
    RecordedAct,
    appeal_decision_due,
    appeal_window_ends,
    check_application_notice,
    check_decision,
    check_decision_notice,
    check_extension,
    check_panel_act,
    check_petition,
    deadlines,
    grant_decision_due,
    judicial_review_ends,
    notice_late,
    noticed_by,
    obtained_no_appeal,
    outcome,
    relied_on_deemed_approval,
    reversed_on_appeal,
    status,
)

LGU = lgu_calendar(
    SEED, observes_indigenous_peoples_day=False, observes_friday_after_thanksgiving=False
)
BOARD = board_calendar(SEED)


def d(month: int, day: int) -> date:
    """A date in 2026."""
    return date(2026, month, day)


# the worked Hollis Township plan: 9,000 sq ft, received Monday 2026-06-08
HOLLIS = PlanFacts(received_on=d(6, 8), impact_area_sqft=9_000)
# the summary of the application (Subd. 6 (b)) mailed on its last day, Thursday 2026-06-18
HOLLIS_NOTICED = replace(HOLLIS, notice_mailed_on=d(6, 18))
HOLLIS_APPROVED = replace(
    HOLLIS_NOTICED,
    decision_outcome="approved",
    decided_on=d(7, 1),
    decision_notice_mailed_on=d(7, 2),
)

# the worked contested plan: a developer, 25,000 sq ft, received Wednesday 2026-06-17
CONTESTED = PlanFacts(received_on=d(6, 17), impact_area_sqft=25_000)
CONTESTED_NOTICED = replace(CONTESTED, notice_mailed_on=d(6, 22))
CONTESTED_EXTENDED = replace(CONTESTED_NOTICED, extensions=(ExtensionFacts(d(8, 10), 30),))
CONTESTED_DECIDED = replace(CONTESTED_EXTENDED, decision_outcome="approved", decided_on=d(9, 1))
CONTESTED_APPROVED = replace(CONTESTED_DECIDED, decision_notice_mailed_on=d(9, 4))
RESIDENTS_PETITION = AppealFacts(
    postmarked_on=d(9, 21),
    received_on=d(9, 24),
    petition_granted=None,
    petition_decided_on=None,
    outcome=None,
    decided_on=None,
    filing_fee_paid=True,
)
LAST_DAY_TO_PETITION = d(9, 21)
GRANTED = replace(RESIDENTS_PETITION, petition_granted=True, petition_decided_on=d(10, 6))


def deadlines_of(facts: PlanFacts) -> Deadlines:
    return deadlines(SEED, LGU, BOARD, facts)


def status_on(facts: PlanFacts, today: date) -> str:
    return status(SEED, LGU, BOARD, facts, today)


def outcome_on(facts: PlanFacts, today: date) -> str | None:
    return outcome(SEED, LGU, BOARD, facts, today)


def decide(facts: PlanFacts, decided_on: date, decision: str = "approved") -> None:
    check_decision(SEED, LGU, BOARD, facts, decision, decided_on, decided_on)


def extend(facts: PlanFacts, notified_on: date, days: int, *, agreed: bool = False) -> None:
    check_extension(SEED, LGU, BOARD, facts, ExtensionFacts(notified_on, days, agreed), notified_on)


def petition(
    facts: PlanFacts = CONTESTED_APPROVED,
    *,
    kind: str = "residents",
    residents: int | None = 100,
    postmarked_on: date = LAST_DAY_TO_PETITION,
    fee_cents: int = 20_000,
    security_cents: int | None = 50_000,
) -> None:
    check_petition(
        SEED,
        LGU,
        BOARD,
        facts,
        petitioner_kind=kind,
        resident_count=residents,
        postmarked_on=postmarked_on,
        filing_fee_cents=fee_cents,
        security_cents=security_cents,
    )


def with_appeal(facts: PlanFacts, appeal: AppealFacts) -> PlanFacts:
    return replace(facts, appeals=(appeal,))


@contextmanager
def refused(error: type[BankError], code: str) -> Iterator[None]:
    """``pytest.raises(error)`` that also checks the error's stable code."""
    with pytest.raises(error) as excinfo:
        yield
    assert excinfo.value.code == code


# --- story 2: a road project buys and uses credits ----------------------------------------------


def test_story_2_a_9000_sq_ft_plan_gets_a_summary_notice_due_thursday_2026_06_18() -> None:
    dl = deadlines_of(HOLLIS)
    assert dl.notice_kind == "summary"
    assert dl.notice_due == d(6, 18)


def test_story_2_a_9000_sq_ft_plan_has_no_comment_period_even_once_noticed() -> None:
    assert deadlines_of(HOLLIS).comment_period_ends is None
    assert deadlines_of(replace(HOLLIS, notice_mailed_on=d(6, 10))).comment_period_ends is None


def test_story_2_the_decision_is_due_60_days_later_on_friday_2026_08_07() -> None:
    assert deadlines_of(HOLLIS).decision_due == d(8, 7)


def test_story_2_an_approval_on_2026_07_01_needs_no_comment_period() -> None:
    decide(HOLLIS_NOTICED, d(7, 1))


def test_story_2_the_approval_waits_for_the_summary_notice_subd_6_b() -> None:
    with pytest.raises(CommentPeriodOpen) as refusal:
        decide(HOLLIS, d(7, 1))
    assert refusal.value.code == "comment_period_open"
    assert refusal.value.fields == {"deadline": "notice_due", "due": "2026-06-18"}
    assert "Subd. 6 (b)" in str(refusal.value)
    assert "record the notice of application" in str(refusal.value)


def test_story_2_the_decision_notice_is_due_saturday_07_11_rolled_to_monday_2026_07_13() -> None:
    assert deadlines_of(HOLLIS_APPROVED).decision_notice_due == d(7, 13)


def test_story_2_a_notice_postmarked_2026_07_02_opens_a_window_to_friday_2026_07_17() -> None:
    assert deadlines_of(HOLLIS_APPROVED).appeal_window_ends == d(7, 17)


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(6, 8), "received"), (d(7, 1), "approved"), (d(7, 16), "approved"), (d(7, 17), "approved")],
)
def test_story_2_the_approval_is_not_final_through_2026_07_17(today: date, expected: str) -> None:
    facts = HOLLIS if today < d(7, 1) else HOLLIS_APPROVED
    assert status_on(facts, today) == expected


def test_story_2_with_no_petition_by_2026_07_17_the_plan_is_final_on_2026_07_18() -> None:
    assert status_on(HOLLIS_APPROVED, d(7, 18)) == "final"
    assert outcome_on(HOLLIS_APPROVED, d(7, 18)) == "approved"
    assert reversed_on_appeal(HOLLIS_APPROVED) is False


# --- story 3: a contested plan, date by date ----------------------------------------------------


def test_story_3_a_25000_sq_ft_plan_gets_a_full_notice_due_saturday_06_27_rolled_to_06_29() -> None:
    dl = deadlines_of(CONTESTED)
    assert dl.notice_kind == "full"
    assert dl.notice_due == d(6, 29)


def test_story_3_the_comment_period_is_unknown_until_the_notice_is_mailed() -> None:
    assert deadlines_of(CONTESTED).comment_period_ends is None
    assert status_on(CONTESTED, d(6, 20)) == "received"


def test_story_3_a_notice_mailed_2026_06_22_runs_the_comment_period_to_wednesday_07_22() -> None:
    assert deadlines_of(CONTESTED_NOTICED).comment_period_ends == d(7, 22)
    assert status_on(CONTESTED_NOTICED, d(6, 22)) == "noticed"


@pytest.mark.parametrize("decided_on", [d(7, 21), d(7, 22)])
def test_story_3_a_decision_dated_2026_07_22_or_earlier_is_comment_period_open(
    decided_on: date,
) -> None:
    with refused(CommentPeriodOpen, "comment_period_open"):
        decide(CONTESTED_NOTICED, decided_on)


def test_story_3_a_decision_dated_2026_07_23_is_accepted() -> None:
    decide(CONTESTED_NOTICED, d(7, 23))


def test_story_3_the_decision_is_due_sunday_08_16_rolled_to_monday_2026_08_17() -> None:
    assert deadlines_of(CONTESTED_NOTICED).decision_due == d(8, 17)


def test_story_3_a_30_day_extension_sent_2026_08_10_is_accepted() -> None:
    extend(CONTESTED_NOTICED, d(8, 10), 30)


def test_story_3_after_the_30_day_extension_the_decision_is_due_tuesday_2026_09_15() -> None:
    assert deadlines_of(CONTESTED_EXTENDED).decision_due == d(9, 15)


def test_story_3_after_the_extension_the_plan_is_not_deemed_approved_on_2026_08_18() -> None:
    assert status_on(CONTESTED_EXTENDED, d(8, 18)) == "noticed"
    assert outcome_on(CONTESTED_EXTENDED, d(8, 18)) is None


def test_story_3_an_approval_on_2026_09_01_is_accepted() -> None:
    decide(CONTESTED_EXTENDED, d(9, 1))
    assert status_on(CONTESTED_DECIDED, d(9, 1)) == "approved"


def test_story_3_the_decision_notice_is_due_friday_2026_09_11() -> None:
    assert deadlines_of(CONTESTED_DECIDED).decision_notice_due == d(9, 11)


def test_story_3_a_notice_postmarked_friday_09_04_opens_a_window_to_saturday_09_19_rolled_to_09_21() -> (  # noqa: E501
    None
):
    check_decision_notice(SEED, LGU, BOARD, CONTESTED_DECIDED, d(9, 4), d(9, 4))
    assert deadlines_of(CONTESTED_APPROVED).appeal_window_ends == d(9, 21)


def test_story_3_a_petition_of_100_residents_postmarked_2026_09_21_with_200_dollars_is_timely() -> (
    None
):
    petition(postmarked_on=d(9, 21), residents=100, fee_cents=20_000, security_cents=50_000)


def test_story_3_the_petition_received_09_24_reopens_the_plan_to_appealed() -> None:
    assert status_on(with_appeal(CONTESTED_APPROVED, RESIDENTS_PETITION), d(9, 24)) == "appealed"


def test_story_3_the_grant_decision_is_due_saturday_10_24_rolled_to_monday_2026_10_26() -> None:
    assert grant_decision_due(BOARD, SEED, d(9, 24)) == d(10, 26)


def test_story_3_after_the_grant_on_10_06_the_plan_stays_appealed() -> None:
    assert status_on(with_appeal(CONTESTED_APPROVED, GRANTED), d(10, 6)) == "appealed"


def test_story_3_the_appeal_decision_is_due_60_days_after_receipt_monday_2026_11_23() -> None:
    # Subd. 9: "a decision made within 60 days of the appeal": 09-24 + 60, not the grant + 60
    assert appeal_decision_due(BOARD, SEED, d(9, 24)) == d(11, 23)


def test_story_3_the_reversal_on_2026_11_30_makes_the_plan_final_and_denied() -> None:
    reversed_ = replace(GRANTED, outcome="plan_reversed", decided_on=d(11, 30))
    facts = with_appeal(CONTESTED_APPROVED, reversed_)
    assert status_on(facts, d(11, 30)) == "final"
    assert outcome_on(facts, d(11, 30)) == "denied"
    assert reversed_on_appeal(facts) is True


# --- appeal outcomes ----------------------------------------------------------------------------


def test_an_upheld_approval_is_final_and_stays_approved() -> None:
    upheld = replace(GRANTED, outcome="plan_upheld", decided_on=d(11, 30))
    facts = with_appeal(CONTESTED_APPROVED, upheld)
    assert status_on(facts, d(11, 30)) == "final"
    assert outcome_on(facts, d(11, 30)) == "approved"
    assert reversed_on_appeal(facts) is False


def test_a_reversed_denial_becomes_an_approval() -> None:
    denied = replace(CONTESTED_APPROVED, decision_outcome="denied")
    reversed_ = replace(GRANTED, outcome="plan_reversed", decided_on=d(11, 30))
    facts = with_appeal(denied, reversed_)
    assert outcome_on(facts, d(11, 30)) == "approved"
    assert reversed_on_appeal(facts) is True


def test_a_reversed_deemed_approval_becomes_a_denial() -> None:
    appeal = replace(
        RESIDENTS_PETITION,
        postmarked_on=d(8, 20),
        received_on=d(8, 21),
        petition_granted=True,
        petition_decided_on=d(8, 28),
        outcome="plan_reversed",
        decided_on=d(9, 30),
    )
    facts = with_appeal(HOLLIS, appeal)
    assert outcome_on(facts, d(9, 30)) == "denied"
    # no notice of the deemed approval was mailed: others may still appeal, so not final
    assert status_on(facts, d(9, 30)) == "denied"
    noticed = replace(facts, decision_notice_mailed_on=d(8, 12))
    assert status_on(noticed, d(9, 30)) == "final"


def test_a_petition_denied_after_the_window_leaves_the_decision_final() -> None:
    denied_petition = replace(
        RESIDENTS_PETITION, petition_granted=False, petition_decided_on=d(10, 6)
    )
    facts = with_appeal(CONTESTED_APPROVED, denied_petition)
    assert status_on(facts, d(10, 6)) == "final"
    assert outcome_on(facts, d(10, 6)) == "approved"


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(9, 7), "approved"), (d(9, 21), "approved"), (d(9, 22), "final")],
)
def test_a_petition_denied_on_day_3_leaves_the_plan_approved_until_the_window_closes_09_21(
    today: date, expected: str
) -> None:
    # notice postmarked Friday 09-04; a petition received and denied on Monday 09-07 (day 3):
    # others entitled may still petition through 09-21, so the approval is not final before
    early = replace(
        RESIDENTS_PETITION,
        postmarked_on=d(9, 5),
        received_on=d(9, 7),
        petition_granted=False,
        petition_decided_on=d(9, 7),
    )
    facts = with_appeal(CONTESTED_APPROVED, early)
    assert status_on(facts, today) == expected
    assert outcome_on(facts, today) == "approved"
    # a second petition postmarked on the window's last day is still timely
    petition(facts, postmarked_on=d(9, 21))


def test_a_granted_appeal_decided_inside_the_window_is_not_final_before_it_closes() -> None:
    quick = replace(
        RESIDENTS_PETITION,
        postmarked_on=d(9, 5),
        received_on=d(9, 8),
        petition_granted=True,
        petition_decided_on=d(9, 9),
        outcome="plan_upheld",
        decided_on=d(9, 14),
    )
    hearing = with_appeal(CONTESTED_APPROVED, replace(quick, outcome=None, decided_on=None))
    assert status_on(hearing, d(9, 10)) == "appealed"
    facts = with_appeal(CONTESTED_APPROVED, quick)
    assert status_on(facts, d(9, 14)) == "approved"
    assert status_on(facts, d(9, 22)) == "final"


# --- several petitions: each decided on its own, any reversal wins ------------------------------


UPHELD = replace(GRANTED, outcome="plan_upheld", decided_on=d(11, 2))
REVERSED = replace(GRANTED, outcome="plan_reversed", decided_on=d(11, 9))


@pytest.mark.parametrize("order", [(UPHELD, REVERSED), (REVERSED, UPHELD)])
def test_one_appeal_upheld_and_another_reversed_reverses_the_approval_in_either_order(
    order: tuple[AppealFacts, AppealFacts],
) -> None:
    facts = replace(CONTESTED_APPROVED, appeals=order)
    assert reversed_on_appeal(facts) is True
    assert outcome_on(facts, d(11, 9)) == "denied"
    assert status_on(facts, d(11, 9)) == "final"


def test_two_reversals_reverse_the_decision_once() -> None:
    facts = replace(CONTESTED_APPROVED, appeals=(REVERSED, REVERSED))
    assert outcome_on(facts, d(11, 9)) == "denied"


def test_while_any_petition_awaits_the_board_the_plan_is_appealed() -> None:
    waiting = replace(RESIDENTS_PETITION, received_on=d(9, 25))
    facts = replace(CONTESTED_APPROVED, appeals=(UPHELD, waiting))
    assert status_on(facts, d(11, 2)) == "appealed"
    granted = replace(waiting, petition_granted=True, petition_decided_on=d(10, 9))
    facts = replace(CONTESTED_APPROVED, appeals=(UPHELD, granted))
    assert status_on(facts, d(11, 2)) == "appealed"


def test_an_appeal_of_a_superseded_application_awaiting_the_board_makes_the_plan_appealed() -> None:
    """Subd. 6 (c), 9: a revision (here undecided, or approved and final) superseded the
    application a timely petition appeals; while that petition awaits the board the plan is
    appealed, and once it is decided the revision's own status shows again."""
    revision = PlanFacts(received_on=d(9, 22), impact_area_sqft=9_900)
    waiting = replace(revision, earlier_appeals=(RESIDENTS_PETITION,))
    assert (status_on(revision, d(9, 24)), status_on(waiting, d(9, 24))) == ("received", "appealed")
    assert outcome_on(waiting, d(9, 24)) is None
    approved = replace(
        revision,
        decision_outcome="approved",
        decided_on=d(9, 22),
        decision_notice_mailed_on=d(9, 23),
    )
    assert status_on(replace(approved, earlier_appeals=(RESIDENTS_PETITION,)), d(10, 20)) == (
        "appealed"
    )
    assert status_on(replace(approved, earlier_appeals=(UPHELD,)), d(10, 20)) == "final"


def test_a_petition_without_its_fee_holds_the_plan_only_while_the_window_is_open() -> None:
    """Subd. 9: appeal is obtained by mailing the petition and the fee within 15 days (the
    window to Monday 09-21).  Unpaid, the petition holds the plan appealed through 09-21, when
    the fee may still be mailed; from 09-22 it obtained no appeal and the approval is final.
    Paid, or of a superseded application (whose window closed before the revision), as ever."""
    unpaid = replace(RESIDENTS_PETITION, received_on=d(9, 21), filing_fee_paid=False)
    facts = with_appeal(CONTESTED_APPROVED, unpaid)
    assert [status_on(facts, day) for day in (d(9, 21), d(9, 22))] == ["appealed", "final"]
    assert not obtained_no_appeal(unpaid, window_closed=False)
    assert obtained_no_appeal(unpaid, window_closed=True)
    paid = replace(unpaid, filing_fee_paid=True)
    assert status_on(with_appeal(CONTESTED_APPROVED, paid), d(9, 22)) == "appealed"
    # a denied petition reads as denied, whatever its fee
    denied = replace(unpaid, petition_granted=False, petition_decided_on=d(9, 21))
    assert not obtained_no_appeal(denied, window_closed=True)
    revision = PlanFacts(received_on=d(9, 22), impact_area_sqft=9_900)
    assert status_on(replace(revision, earlier_appeals=(unpaid,)), d(9, 24)) == "received"
    assert status_on(replace(revision, earlier_appeals=(paid,)), d(9, 24)) == "appealed"


def test_an_application_is_appealed_by_a_petition_mailed_on_or_after_its_notice() -> None:
    """``noticed_by``: from the notice's postmark on; a deemed approval without a notice once
    decision_due has passed (Hollis: 60 days from 06-08 is 08-07); nothing before a decision."""
    assert noticed_by(SEED, LGU, CONTESTED_APPROVED, d(9, 4))
    assert not noticed_by(SEED, LGU, CONTESTED_APPROVED, d(9, 3))
    assert not noticed_by(SEED, LGU, CONTESTED_DECIDED, d(9, 30))
    assert noticed_by(SEED, LGU, HOLLIS, d(8, 8))
    assert not noticed_by(SEED, LGU, HOLLIS, d(8, 7))


def test_a_denial_not_appealed_is_final_with_outcome_denied_the_day_after_the_window() -> None:
    denied = replace(CONTESTED_APPROVED, decision_outcome="denied")
    assert status_on(denied, d(9, 21)) == "denied"
    assert status_on(denied, d(9, 22)) == "final"
    assert outcome_on(denied, d(9, 22)) == "denied"


# --- Subd. 6 notice: one day before, on and after notice_due ------------------------------------


@pytest.mark.parametrize(
    ("facts", "mailed_on", "late"),
    [
        (HOLLIS, d(6, 17), False),
        (HOLLIS, d(6, 18), False),
        (HOLLIS, d(6, 19), True),
        (CONTESTED, d(6, 28), False),
        (CONTESTED, d(6, 29), False),
        (CONTESTED, d(6, 30), True),
    ],
)
def test_a_notice_is_late_only_when_mailed_after_notice_due(
    facts: PlanFacts, mailed_on: date, late: bool
) -> None:
    assert notice_late(SEED, LGU, facts, mailed_on) is late


# --- Subd. 6 (b), Subd. 8: 9,999 against 10,000 sq ft ------------------------------------------


def test_9999_sq_ft_gets_a_summary_notice_and_no_comment_period() -> None:
    facts = replace(CONTESTED_NOTICED, impact_area_sqft=9_999)
    dl = deadlines_of(facts)
    assert dl.notice_kind == "summary"
    assert dl.comment_period_ends is None


def test_10000_sq_ft_gets_a_full_notice_and_a_comment_period_to_07_22() -> None:
    facts = replace(CONTESTED_NOTICED, impact_area_sqft=10_000)
    dl = deadlines_of(facts)
    assert dl.notice_kind == "full"
    assert dl.comment_period_ends == d(7, 22)


def test_9999_sq_ft_may_be_decided_inside_what_would_be_a_comment_period() -> None:
    decide(replace(CONTESTED_NOTICED, impact_area_sqft=9_999), d(6, 23))


def test_9999_sq_ft_with_no_notice_mailed_cannot_be_decided_comment_period_open() -> None:
    with refused(CommentPeriodOpen, "comment_period_open"):
        decide(replace(CONTESTED, impact_area_sqft=9_999), d(7, 1))


@pytest.mark.parametrize("mailed_on", [d(6, 17), d(6, 29), d(6, 30), d(7, 2)])
def test_9999_sq_ft_is_decided_once_its_summary_is_mailed_in_time_or_late(mailed_on: date) -> None:
    # due Monday 06-29 (06-27 a Saturday); a late one counts too, and Subd. 6 (b) sets no order
    # between the summary and a decision made within its ten days
    decide(replace(CONTESTED, impact_area_sqft=9_999, notice_mailed_on=mailed_on), d(7, 1))


def test_a_small_plan_deemed_approved_takes_its_summary_then_a_decision_made_in_time() -> None:
    """Hollis is due Friday 2026-08-07 and deemed approved from 08-08: a decision dated 08-07 and
    recorded 08-10 waits for the summary, which, mailed by 08-07, is still recorded; one dated
    08-08 is late whatever was mailed."""
    today = d(8, 10)
    assert status_on(HOLLIS, today) == "deemed_approved"
    with refused(CommentPeriodOpen, "comment_period_open"):
        check_decision(SEED, LGU, BOARD, HOLLIS, "denied", d(8, 7), today)
    with refused(DeadlinePassed, "deadline_passed"):
        check_decision(SEED, LGU, BOARD, HOLLIS, "denied", d(8, 8), today)
    check_application_notice(SEED, LGU, HOLLIS, d(8, 7), today)
    with refused(DeadlinePassed, "deadline_passed"):
        check_application_notice(SEED, LGU, HOLLIS, d(8, 8), today)
    noticed = replace(HOLLIS, notice_mailed_on=d(8, 7))
    assert notice_late(SEED, LGU, HOLLIS, d(8, 7))
    assert status_on(noticed, today) == "deemed_approved"
    check_decision(SEED, LGU, BOARD, noticed, "denied", d(8, 7), today)


def test_10000_sq_ft_with_no_notice_mailed_cannot_be_decided_comment_period_open() -> None:
    with refused(CommentPeriodOpen, "comment_period_open"):
        decide(replace(CONTESTED, impact_area_sqft=10_000), d(8, 1))


# --- decision_due: one day before, on and after -------------------------------------------------


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(8, 16), "noticed"), (d(8, 17), "noticed"), (d(8, 18), "deemed_approved")],
)
def test_an_undecided_plan_is_deemed_approved_the_day_after_decision_due_08_17(
    today: date, expected: str
) -> None:
    assert status_on(CONTESTED_NOTICED, today) == expected


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(8, 16), None), (d(8, 17), None), (d(8, 18), "deemed_approved")],
)
def test_the_outcome_is_deemed_approved_from_the_day_after_decision_due(
    today: date, expected: str | None
) -> None:
    assert outcome_on(CONTESTED_NOTICED, today) == expected


@pytest.mark.parametrize("decided_on", [d(8, 16), d(8, 17)])
def test_a_decision_dated_on_or_before_decision_due_08_17_is_accepted(decided_on: date) -> None:
    decide(CONTESTED_NOTICED, decided_on)


def test_a_decision_dated_on_decision_due_is_accepted_even_when_recorded_later() -> None:
    check_decision(SEED, LGU, BOARD, CONTESTED_NOTICED, "denied", d(8, 17), d(8, 25))


def test_a_decision_dated_the_day_after_decision_due_08_18_is_deadline_passed() -> None:
    with refused(DeadlinePassed, "deadline_passed"):
        decide(CONTESTED_NOTICED, d(8, 18))


@pytest.mark.parametrize(
    ("decided_on", "accepted"), [(d(9, 14), True), (d(9, 15), True), (d(9, 16), False)]
)
def test_after_the_extension_a_decision_is_accepted_through_09_15(
    decided_on: date, accepted: bool
) -> None:
    if accepted:
        decide(CONTESTED_EXTENDED, decided_on)
    else:
        with refused(DeadlinePassed, "deadline_passed"):
            decide(CONTESTED_EXTENDED, decided_on)


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(9, 14), "noticed"), (d(9, 15), "noticed"), (d(9, 16), "deemed_approved")],
)
def test_after_the_extension_the_plan_is_deemed_approved_from_09_16(
    today: date, expected: str
) -> None:
    assert status_on(CONTESTED_EXTENDED, today) == expected


def test_a_late_decision_on_a_deemed_approval_is_deadline_passed_not_conflict() -> None:
    with refused(DeadlinePassed, "deadline_passed"):
        check_decision(SEED, LGU, BOARD, CONTESTED_NOTICED, "denied", d(8, 20), d(8, 20))


# the contested plan deemed approved from 08-18, and what may rely on that approval
DEEMED_NOTICED = replace(CONTESTED_NOTICED, decision_notice_mailed_on=d(8, 20))
DEEMED_PETITIONED = replace(
    CONTESTED_NOTICED, appeals=(replace(RESIDENTS_PETITION, postmarked_on=d(8, 19)),)
)
WITHDRAWN = RecordedAct("withdrawal wd_1", d(8, 19))


@pytest.mark.parametrize(
    ("facts", "acts", "relied"),
    [
        (CONTESTED_NOTICED, (), []),
        (DEEMED_NOTICED, (), ["the notice of decision mailed 2026-08-20"]),
        (DEEMED_PETITIONED, (), ["the petition postmarked 2026-08-19"]),
        (CONTESTED_NOTICED, (WITHDRAWN,), ["withdrawal wd_1"]),
        # an act dated by decision_due stood on no approval of this application
        (CONTESTED_NOTICED, (RecordedAct("revision rev_1 received 2026-08-17", d(8, 17)),), []),
        (CONTESTED_DECIDED, (WITHDRAWN,), []),  # decided: nothing was deemed
    ],
)
def test_what_relied_on_a_deemed_approval(
    facts: PlanFacts, acts: tuple[RecordedAct, ...], relied: list[str]
) -> None:
    assert relied_on_deemed_approval(SEED, LGU, facts, acts) == relied


@pytest.mark.parametrize(
    ("facts", "acts", "accepted"),
    [
        (CONTESTED_NOTICED, (), True),
        (DEEMED_NOTICED, (), False),
        (DEEMED_PETITIONED, (), False),
        (CONTESTED_NOTICED, (WITHDRAWN,), False),
    ],
)
def test_a_late_recorded_act_dated_by_decision_due_stands_only_while_nothing_relied(
    facts: PlanFacts, acts: tuple[RecordedAct, ...], accepted: bool
) -> None:
    """A decision dated 08-17, an extension sent 08-17, a notice of application mailed 08-17
    (of the plan before its notice) and a panel referral and inspection of 08-17, each recorded
    on 08-25."""
    agreed = ExtensionFacts(d(8, 17), 30, applicant_agreed=True)
    unnoticed = replace(facts, notice_mailed_on=None)
    checks = [
        lambda: check_decision(SEED, LGU, BOARD, facts, "denied", d(8, 17), d(8, 25), acts),
        lambda: check_extension(SEED, LGU, BOARD, facts, agreed, d(8, 25), acts),
        lambda: check_application_notice(SEED, LGU, unnoticed, d(8, 17), d(8, 25), acts),
        lambda: check_panel_act(SEED, LGU, facts, d(8, 17), "a referral", d(8, 25), acts),
    ]
    for check in checks:
        if accepted:
            check()
        else:
            with refused(Conflict, "conflict"):
                check()


def test_a_notice_of_application_mailed_after_decision_due_is_deadline_passed() -> None:
    check_application_notice(SEED, LGU, CONTESTED, d(8, 17), d(8, 18))
    with refused(DeadlinePassed, "deadline_passed"):
        check_application_notice(SEED, LGU, CONTESTED, d(8, 18), d(8, 18))
    with refused(Conflict, "conflict"):
        check_application_notice(SEED, LGU, CONTESTED_DECIDED, d(8, 17), d(9, 2))


def test_the_panels_part_comes_by_decision_due_and_before_the_decision() -> None:
    check_panel_act(SEED, LGU, CONTESTED, d(8, 17), "a referral", d(8, 18))
    with refused(DeadlinePassed, "deadline_passed"):
        check_panel_act(SEED, LGU, CONTESTED, d(8, 18), "a referral", d(8, 18))
    with refused(Conflict, "conflict"):
        check_panel_act(SEED, LGU, CONTESTED_DECIDED, d(8, 17), "a referral", d(9, 2))


def test_deciding_twice_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        decide(CONTESTED_DECIDED, d(9, 2), "denied")


def test_a_decision_dated_before_receipt_is_a_validation_error() -> None:
    with refused(ValidationFailed, "validation_error"):
        decide(replace(CONTESTED, impact_area_sqft=9_000), d(6, 16))


def test_a_decision_other_than_approved_or_denied_is_a_validation_error() -> None:
    with refused(ValidationFailed, "validation_error"):
        decide(CONTESTED_NOTICED, d(8, 1), "deemed_approved")


@pytest.mark.parametrize(
    ("today", "due"),
    [(d(8, 17), None), (d(8, 18), d(8, 27)), (d(11, 2), d(8, 27))],
    ids=["the-last-day-to-decide", "deemed-approved", "months-later"],
)
def test_a_deemed_approvals_notice_is_due_ten_days_after_the_last_day_to_decide(
    today: date, due: date | None
) -> None:
    # decision due Monday 2026-08-17; deemed approved from 08-18; the notice due Thursday 08-27
    assert deadlines(SEED, LGU, BOARD, CONTESTED_NOTICED, today).decision_notice_due == due


def test_a_mailed_notice_of_a_deemed_approval_has_its_due_date_whatever_the_day() -> None:
    mailed = replace(CONTESTED_NOTICED, decision_notice_mailed_on=d(8, 28))
    assert deadlines_of(mailed).decision_notice_due == d(8, 27)


# --- the 15.99 extension ------------------------------------------------------------------------


def test_an_extension_of_60_days_is_accepted_and_moves_decision_due_to_10_15() -> None:
    extend(CONTESTED_NOTICED, d(8, 10), 60)
    facts = replace(CONTESTED_NOTICED, extensions=(ExtensionFacts(d(8, 10), 60),))
    assert deadlines_of(facts).decision_due == d(10, 15)


@pytest.mark.parametrize("days", [61, 0, -1])
def test_an_extension_of_61_days_or_of_none_is_a_validation_error(days: int) -> None:
    with refused(ValidationFailed, "validation_error"):
        extend(CONTESTED_NOTICED, d(8, 10), days)


def test_an_extension_of_1_day_is_accepted() -> None:
    extend(CONTESTED_NOTICED, d(8, 10), 1)


def test_a_second_extension_of_the_lgus_own_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        extend(CONTESTED_EXTENDED, d(8, 20), 10)


# 15.99 subd. 3 (g): further or longer extensions with the applicant's written approval


@pytest.mark.parametrize(("agreed", "accepted"), [(False, False), (True, True)])
def test_an_extension_of_61_days_needs_the_applicants_agreement(
    agreed: bool, accepted: bool
) -> None:
    if not accepted:
        with refused(ValidationFailed, "validation_error"):
            extend(CONTESTED_NOTICED, d(8, 10), 61, agreed=agreed)
        return
    extend(CONTESTED_NOTICED, d(8, 10), 61, agreed=agreed)
    facts = replace(CONTESTED_NOTICED, extensions=(ExtensionFacts(d(8, 10), 61, True),))
    # 2026-06-17 + 60 + 61 = Friday 2026-10-16
    assert deadlines_of(facts).decision_due == d(10, 16)


def test_a_further_extension_the_applicant_agreed_to_follows_the_lgus_own() -> None:
    # after the LGU's 30 days the decision is due Tuesday 09-15; sent that day, 20 more days
    extend(CONTESTED_EXTENDED, d(9, 15), 20, agreed=True)
    facts = replace(
        CONTESTED_EXTENDED,
        extensions=(*CONTESTED_EXTENDED.extensions, ExtensionFacts(d(9, 15), 20, True)),
    )
    assert deadlines_of(facts).decision_due == d(10, 5)  # 2026-06-17 + 110, a Monday


def test_an_agreed_extension_is_sent_before_the_decision_due_as_it_then_stands() -> None:
    with refused(DeadlinePassed, "deadline_passed"):
        extend(CONTESTED_EXTENDED, d(9, 16), 20, agreed=True)


def test_the_lgus_own_extension_may_follow_one_the_applicant_agreed_to() -> None:
    agreed_first = replace(CONTESTED_NOTICED, extensions=(ExtensionFacts(d(8, 10), 10, True),))
    extend(agreed_first, d(8, 14), 60)


@pytest.mark.parametrize(
    ("sent", "accepted"),
    [(d(8, 17), True), (d(8, 18), False), (d(8, 27), False)],
    ids=["last-day-of-the-first-60", "the-day-after", "the-day-the-agreed-deadline-ends"],
)
def test_the_lgus_own_extension_is_sent_before_the_first_60_days_end(
    sent: date, accepted: bool
) -> None:
    """15.99 subd. 3 (f): "before the end of the initial time limit". The first 60 days from
    2026-06-17 end Sunday 08-16, rolled to Monday 08-17; the applicant's 10 more days since
    (due 08-27) do not give the LGU's own extension more time."""
    agreed_first = replace(CONTESTED_NOTICED, extensions=(ExtensionFacts(d(8, 10), 10, True),))
    if accepted:
        extend(agreed_first, sent, 60)
        return
    with pytest.raises(DeadlinePassed) as caught:
        extend(agreed_first, sent, 60)
    assert caught.value.code == "deadline_passed"
    assert caught.value.fields == {"deadline": "initial_decision_due", "due": "2026-08-17"}


def test_extensions_add_up_to_one_period_counted_from_receipt() -> None:
    # 60 + 30 + 30 days from 2026-06-17 is Thursday 10-15; rolling the first deadline (Sunday
    # 08-16) forward before adding the extensions would have given Friday 10-16
    twice = replace(
        CONTESTED_NOTICED,
        extensions=(ExtensionFacts(d(8, 10), 30), ExtensionFacts(d(8, 12), 30, True)),
    )
    assert deadlines_of(twice).decision_due == d(10, 15)


@pytest.mark.parametrize("days", [0, 3_651])
def test_an_agreed_extension_is_of_a_day_or_more_and_all_add_up_to_ten_years_at_most(
    days: int,
) -> None:
    with refused(ValidationFailed, "validation_error"):
        extend(CONTESTED_NOTICED, d(8, 10), days, agreed=True)
    extend(CONTESTED_NOTICED, d(8, 10), 3_650, agreed=True)


@pytest.mark.parametrize("notified_on", [d(8, 16), d(8, 17)])
def test_an_extension_sent_on_or_before_decision_due_08_17_is_accepted(notified_on: date) -> None:
    extend(CONTESTED_NOTICED, notified_on, 30)


def test_an_extension_sent_the_day_after_decision_due_08_18_is_deadline_passed() -> None:
    with refused(DeadlinePassed, "deadline_passed"):
        extend(CONTESTED_NOTICED, d(8, 18), 30)


def test_an_extension_after_a_decision_is_a_conflict() -> None:
    decided = replace(CONTESTED_NOTICED, decision_outcome="denied", decided_on=d(8, 1))
    with refused(Conflict, "conflict"):
        extend(decided, d(8, 5), 30)


# --- Subd. 7 notice of decision -----------------------------------------------------------------


def test_the_decision_notice_due_is_null_before_a_decision() -> None:
    assert deadlines_of(CONTESTED_EXTENDED).decision_notice_due is None


def test_a_decision_notice_before_any_decision_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        check_decision_notice(SEED, LGU, BOARD, CONTESTED_EXTENDED, d(9, 1), d(9, 1))


def test_a_decision_notice_mailed_before_the_decision_is_a_validation_error() -> None:
    with refused(ValidationFailed, "validation_error"):
        check_decision_notice(SEED, LGU, BOARD, CONTESTED_DECIDED, d(8, 31), d(9, 4))


def test_a_decision_notice_mailed_the_day_of_the_decision_is_accepted() -> None:
    check_decision_notice(SEED, LGU, BOARD, CONTESTED_DECIDED, d(9, 1), d(9, 1))


# the governing body adopted its resolution on Monday 08-24 and the decision was recorded as
# made on 09-01: the resolution is the approval (Subd. 1 (b)), so Subd. 7's ten days run from it
ADOPTED_EARLIER = replace(CONTESTED_DECIDED, resolution_adopted_on=d(8, 24))


def test_the_decision_notice_is_due_ten_days_after_the_resolution_adopting_it() -> None:
    assert deadlines_of(ADOPTED_EARLIER).decision_notice_due == d(9, 3)
    assert deadlines_of(
        replace(CONTESTED_DECIDED, resolution_adopted_on=d(9, 1))
    ).decision_notice_due == d(9, 11)


def test_a_decision_notice_mailed_after_the_resolution_before_decided_on_is_accepted() -> None:
    check_decision_notice(SEED, LGU, BOARD, ADOPTED_EARLIER, d(8, 24), d(9, 4))
    with refused(ValidationFailed, "validation_error"):
        check_decision_notice(SEED, LGU, BOARD, ADOPTED_EARLIER, d(8, 23), d(9, 4))


def test_a_decision_made_by_a_resolution_adopted_by_decision_due_is_in_time() -> None:
    # decision due Tuesday 09-15; the resolution adopted that day, the decision recorded as made
    # on 09-17: in time (15.99), the plan's deemed approval relied on by nothing
    check_decision(
        SEED, LGU, BOARD, CONTESTED_EXTENDED, "denied", d(9, 17), d(9, 17), adopted_on=d(9, 15)
    )
    with refused(DeadlinePassed, "deadline_passed"):
        check_decision(
            SEED, LGU, BOARD, CONTESTED_EXTENDED, "denied", d(9, 17), d(9, 17), adopted_on=d(9, 16)
        )
    with refused(DeadlinePassed, "deadline_passed"):
        check_decision(SEED, LGU, BOARD, CONTESTED_EXTENDED, "denied", d(9, 17), d(9, 17))


def test_the_appeal_window_is_null_until_the_decision_notice_is_mailed() -> None:
    assert deadlines_of(CONTESTED_DECIDED).appeal_window_ends is None
    assert status_on(CONTESTED_DECIDED, d(12, 31)) == "approved"


# --- appeal_window_ends: one day before, on and after -------------------------------------------


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(9, 20), "approved"), (d(9, 21), "approved"), (d(9, 22), "final")],
)
def test_story_3_without_a_petition_the_approval_is_final_the_day_after_09_21(
    today: date, expected: str
) -> None:
    assert status_on(CONTESTED_APPROVED, today) == expected


@pytest.mark.parametrize("postmarked_on", [d(9, 20), d(9, 21)])
def test_a_petition_postmarked_on_or_before_the_last_day_09_21_is_timely(
    postmarked_on: date,
) -> None:
    petition(postmarked_on=postmarked_on)


def test_a_petition_postmarked_the_day_after_09_22_is_appeal_window_closed() -> None:
    with refused(AppealWindowClosed, "appeal_window_closed"):
        petition(postmarked_on=d(9, 22))


def test_a_timely_petition_received_after_the_window_reopens_a_final_plan_to_appealed() -> None:
    assert status_on(CONTESTED_APPROVED, d(9, 24)) == "final"
    assert status_on(with_appeal(CONTESTED_APPROVED, RESIDENTS_PETITION), d(9, 24)) == "appealed"


def test_the_appeal_window_runs_on_the_board_calendar_past_the_friday_after_thanksgiving() -> None:
    # 2026-11-12 + 15 days = Friday 2026-11-27: an LGU working day, a board holiday
    facts = PlanFacts(
        received_on=d(10, 1),
        impact_area_sqft=9_000,
        decision_outcome="approved",
        decided_on=d(11, 10),
        decision_notice_mailed_on=d(11, 12),
    )
    assert deadlines_of(facts).appeal_window_ends == d(11, 30)


def test_an_lgu_keeping_indigenous_peoples_day_rolls_its_decision_due_to_10_13() -> None:
    # 2026-08-13 + 60 days = Monday 2026-10-12, the second Monday of October
    keeps = lgu_calendar(
        SEED, observes_indigenous_peoples_day=True, observes_friday_after_thanksgiving=False
    )
    facts = PlanFacts(received_on=d(8, 13), impact_area_sqft=9_000)
    assert deadlines(SEED, LGU, BOARD, facts).decision_due == d(10, 12)
    assert deadlines(SEED, keeps, BOARD, facts).decision_due == d(10, 13)


# --- a deemed approval: no window until a notice of it is mailed ------------------------------


@pytest.mark.parametrize("today", [d(8, 8), d(8, 24), d(11, 5)])
def test_a_deemed_approval_without_a_notice_has_no_window_and_is_never_final(today: date) -> None:
    # decision due Friday 08-07; 11-05 is 90 days later: still deemed_approved, not final
    assert appeal_window_ends(SEED, BOARD, HOLLIS) is None
    assert deadlines_of(HOLLIS).appeal_window_ends is None
    assert status_on(HOLLIS, today) == "deemed_approved"
    assert outcome_on(HOLLIS, today) == "deemed_approved"


@pytest.mark.parametrize(
    ("today", "expected"),
    [(d(8, 7), "received"), (d(8, 8), "deemed_approved"), (d(8, 25), "deemed_approved")],
)
def test_a_plan_is_deemed_approved_the_day_after_decision_due_08_07(
    today: date, expected: str
) -> None:
    assert status_on(HOLLIS, today) == expected


@pytest.mark.parametrize("postmarked_on", [d(8, 8), d(8, 24), d(11, 5)])
def test_a_petition_against_a_deemed_approval_without_a_notice_is_timely_after_08_07(
    postmarked_on: date,
) -> None:
    petition(HOLLIS, kind="owner", residents=None, postmarked_on=postmarked_on)


def test_a_petition_postmarked_on_decision_due_before_any_deemed_approval_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        petition(HOLLIS, kind="owner", residents=None, postmarked_on=d(8, 7))


def test_a_notice_of_a_deemed_approval_is_accepted_once_the_plan_is_deemed_approved() -> None:
    check_decision_notice(SEED, LGU, BOARD, HOLLIS, d(8, 12), d(8, 12))


def test_a_notice_of_a_deemed_approval_on_decision_due_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        check_decision_notice(SEED, LGU, BOARD, HOLLIS, d(8, 7), d(8, 7))


def test_a_notice_of_a_deemed_approval_postmarked_08_12_opens_a_window_to_08_27() -> None:
    facts = replace(HOLLIS, decision_notice_mailed_on=d(8, 12))
    assert deadlines_of(facts).appeal_window_ends == d(8, 27)
    assert status_on(facts, d(8, 27)) == "deemed_approved"
    assert status_on(facts, d(8, 28)) == "final"
    petition(facts, kind="owner", residents=None, postmarked_on=d(8, 27))
    with refused(AppealWindowClosed, "appeal_window_closed"):
        petition(facts, kind="owner", residents=None, postmarked_on=d(8, 28))


def test_a_notice_of_a_deemed_approval_dated_on_or_before_decision_due_is_a_validation_error() -> (
    None
):
    with refused(ValidationFailed, "validation_error"):
        check_decision_notice(SEED, LGU, BOARD, HOLLIS, d(8, 7), d(8, 10))


# --- who may petition, and what it costs (Subd. 9) ----------------------------------------------


def test_a_petition_before_the_decision_notice_is_a_conflict() -> None:
    with refused(Conflict, "conflict"):
        petition(CONTESTED_DECIDED, postmarked_on=d(9, 3))
    with refused(Conflict, "conflict"):
        petition(replace(CONTESTED_DECIDED, decision_outcome="denied"), postmarked_on=d(9, 3))


def test_a_petition_postmarked_before_the_notice_09_04_is_a_validation_error() -> None:
    with refused(ValidationFailed, "validation_error"):
        petition(postmarked_on=d(9, 3))
    petition(postmarked_on=d(9, 4))


@pytest.mark.parametrize("fee_cents", [19_999, 20_001, 0])
def test_a_filing_fee_other_than_20000_cents_is_invalid_fee(fee_cents: int) -> None:
    with refused(InvalidFee, "invalid_fee"):
        petition(fee_cents=fee_cents)


def test_a_filing_fee_of_20000_cents_is_accepted() -> None:
    petition(fee_cents=20_000)


@pytest.mark.parametrize("security_cents", [None, 0, 49_999, 50_000])
def test_a_security_of_at_most_50000_cents_is_accepted(security_cents: int | None) -> None:
    petition(security_cents=security_cents)


def test_a_security_of_50001_cents_is_invalid_fee() -> None:
    with refused(InvalidFee, "invalid_fee"):
        petition(security_cents=50_001)


def test_99_county_residents_are_not_eligible_to_petition() -> None:
    with refused(NotEligible, "not_eligible"):
        petition(residents=99)


def test_residents_without_a_count_are_not_eligible_to_petition() -> None:
    with refused(NotEligible, "not_eligible"):
        petition(residents=None)


@pytest.mark.parametrize("residents", [100, 101])
def test_100_or_more_county_residents_may_petition(residents: int) -> None:
    petition(residents=residents)


@pytest.mark.parametrize("kind", ["owner", "notice_recipient"])
def test_the_owner_and_anyone_owed_the_decision_notice_may_petition_alone(kind: str) -> None:
    petition(kind=kind, residents=None)


def test_an_unknown_petitioner_kind_is_a_validation_error() -> None:
    with refused(ValidationFailed, "validation_error"):
        petition(kind="neighbour", residents=None)


# --- the board's deadlines (Subd. 9, board calendar) --------------------------------------------


@pytest.mark.parametrize(
    ("received_on", "due"),
    [(d(9, 23), d(10, 23)), (d(9, 24), d(10, 26)), (d(9, 25), d(10, 26))],
)
def test_the_grant_decision_is_due_30_days_after_receipt_rolled_past_the_weekend(
    received_on: date, due: date
) -> None:
    # 09-23 + 30 = Friday 10-23; 09-24 + 30 = Saturday 10-24; 09-25 + 30 = Sunday 10-25
    assert grant_decision_due(BOARD, SEED, received_on) == due


@pytest.mark.parametrize(
    ("received_on", "due"),
    [(d(9, 25), d(11, 24)), (d(9, 26), d(11, 25)), (d(9, 27), d(11, 30))],
)
def test_the_appeal_decision_is_due_60_days_after_receipt_rolled_past_thanksgiving(
    received_on: date, due: date
) -> None:
    # 09-25 + 60 = Tuesday 11-24; 09-26 + 60 = Wednesday 11-25; 09-27 + 60 = Thursday 11-26,
    # Thanksgiving, then the Friday after (a board holiday) and the weekend: Monday 11-30
    assert appeal_decision_due(BOARD, SEED, received_on) == due


@pytest.mark.parametrize(
    ("served_on", "ends"),
    [
        (d(10, 9), d(11, 9)),  # 10-09 + 30 = Sunday 11-08 → Monday 11-09
        (d(10, 12), d(11, 12)),  # 10-12 + 30 = Wednesday 11-11, Veterans Day → 11-12
        (d(10, 27), d(11, 30)),  # Thanksgiving 11-26, the board's Friday 11-27, the weekend
    ],
)
def test_judicial_review_ends_30_days_after_service_rolled_past_holidays(
    served_on: date, ends: date
) -> None:
    assert judicial_review_ends(BOARD, SEED, served_on) == ends
