"""The pages' pure parts: the bar chart's geometry, a plan's timeline states, number formats."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

from api.web import chart, filters, plan_view

# --- the bar chart -------------------------------------------------------------------------------


def test_bars_are_in_proportion_to_their_values_and_the_largest_fills_the_plot() -> None:
    drawn = chart.bar_chart([("1", "Area 1", 30_000), ("5", "Area 5", 120_000), ("7", "Area 7", 0)])
    widths = {bar.key: bar.width for bar in drawn.bars}
    assert widths == {"1": chart.PLOT_WIDTH / 4, "5": chart.PLOT_WIDTH, "7": 0}
    # stacked top to bottom without overlapping, and all inside the picture
    tops = [bar.y for bar in drawn.bars]
    assert tops == sorted(tops)
    assert all(
        b.y - a.y >= chart.BAR_HEIGHT for a, b in zip(drawn.bars, drawn.bars[1:], strict=False)
    )
    assert drawn.bars[-1].y + chart.BAR_HEIGHT <= drawn.height
    assert all(bar.value_x + 8 * len(f"{bar.value:,}") <= chart.WIDTH for bar in drawn.bars)


def test_a_chart_of_nothing_has_no_bars_and_no_division_by_zero() -> None:
    assert chart.bar_chart([]).bars == []
    zeros = chart.bar_chart([("1", "Area 1", 0), ("2", "Area 2", 0)])
    assert [bar.width for bar in zeros.bars] == [0, 0]


# --- formats -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "shown"), [(0, "$0.00"), (5, "$0.05"), (20_000, "$200.00"), (-123_456, "-$1,234.56")]
)
def test_cents_are_shown_as_dollars(value: int, shown: str) -> None:
    assert filters.cents(value) == shown


def test_square_feet_acres_and_times() -> None:
    assert filters.sqft(1_234_567) == "1,234,567"
    assert filters.acres(43_560) == "1.00"
    assert filters.acres(21_780) == "0.50"
    # recorded instants are shown on Minnesota's clock (CDT in June)
    assert filters.moment(datetime(2026, 6, 8, 17, 30, tzinfo=UTC)) == "2026-06-08 12:30 CDT"
    assert filters.day(None) == "—"


# --- a plan's timeline ---------------------------------------------------------------------------

DUE = date(2026, 8, 7)


def plan(**changes: Any) -> dict[str, Any]:
    """A plan body as ``GET /plans/{id}`` returns it, received and noticed, not yet decided."""
    body: dict[str, Any] = {
        "received_on": date(2026, 6, 8),
        "notice_kind": "full",
        "deadlines": {
            "notice_due": date(2026, 6, 18),
            "comment_period_ends": date(2026, 7, 6),
            "decision_due": DUE,
            "decision_notice_due": None,
            "appeal_window_ends": None,
        },
        "notice": {"mailed_on": date(2026, 6, 19), "due": date(2026, 6, 18), "late": True},
        "application_number": 1,
        "extensions": [],
        "tep": None,
        "decision": None,
        "decision_notice": None,
        "appeals": [],
        "replacement_completed_on": None,
    }
    body.update(changes)
    return body


def states(steps: list[plan_view.Step]) -> dict[str, str]:
    return {step.name: step.state for step in steps}


def test_an_undecided_plan_is_due_on_its_deadline_and_deemed_approved_the_day_after() -> None:
    on_the_day = states(plan_view.timeline(plan(), DUE))
    day_after = states(plan_view.timeline(plan(), date(2026, 8, 8)))
    assert on_the_day["Decision (60-day rule)"] == "open"
    assert day_after["Decision (60-day rule)"] == "deemed"
    # a notice mailed the day after it was due is late; the comment period has ended
    assert on_the_day["Notice of application (full)"] == "late"
    assert on_the_day["Public comment period ends"] == "ended"
    # nothing to notify until there is a decision
    assert on_the_day["Notice of decision"] == "pending"


def test_a_comment_period_runs_through_its_last_day() -> None:
    last_day = states(plan_view.timeline(plan(), date(2026, 7, 6)))
    after = states(plan_view.timeline(plan(), date(2026, 7, 7)))
    assert last_day["Public comment period ends"] == "running"
    assert after["Public comment period ends"] == "ended"


def test_a_decision_notice_is_overdue_the_day_after_its_deadline() -> None:
    decided = plan(
        decision={
            "outcome": "approved",
            "decided_on": date(2026, 7, 20),
            "resolution": {"number": "2026-31", "adopted_on": date(2026, 7, 20)},
            "reasons": None,
            "tep_recommendation": None,
        },
        deadlines={
            **plan()["deadlines"],
            "decision_notice_due": date(2026, 7, 30),
            "appeal_window_ends": date(2026, 8, 14),
        },
    )
    due_day = states(plan_view.timeline(decided, date(2026, 7, 30)))
    after = states(plan_view.timeline(decided, date(2026, 7, 31)))
    assert due_day["Decision (60-day rule)"] == "met"
    assert due_day["Notice of decision"] == "open"
    assert after["Notice of decision"] == "overdue"
    assert after["Appeal window ends"] == "running"


def test_appeals_add_their_own_deadlines() -> None:
    appeal = {
        "received_on": date(2026, 8, 10),
        "grant_decision_due": date(2026, 9, 9),
        "petition": {"granted": True, "decided_on": date(2026, 9, 10), "reason": "", "late": True},
        "decision_due": date(2026, 11, 9),
        "decision": None,
    }
    steps = plan_view.timeline(plan(appeals=[appeal]), date(2026, 11, 10))
    shown = states(steps)
    assert shown["Appeal 1: petition received"] == "recorded"
    assert shown["Appeal 1: board decides whether to grant"] == "late"
    assert shown["Appeal 1: board decides the appeal"] == "overdue"
    assert [s.state_label for s in steps if s.name.startswith("Appeal 1")] == [
        "Recorded",
        "Late",
        "Overdue",
    ]


# --- the plan's record: the panel, extensions, the resolution, earlier applications' appeals --


PANEL = {
    "application_number": 1,
    "referred_on": date(2026, 6, 20),
    "questions": ["public_value", "size"],
    "determination": None,
}


def test_a_referral_to_the_panel_shows_its_determination_as_awaited_then_met() -> None:
    referred = {s.name: s for s in plan_view.timeline(plan(tep=PANEL), DUE)}
    assert referred["Questions referred to the technical evaluation panel"].state == "recorded"
    assert (
        "public value, size"
        in referred["Questions referred to the technical evaluation panel"].note
    )
    awaited = referred["Panel's determination after its on-site inspection"]
    assert (awaited.state, awaited.note) == ("pending", "The decision waits for it")
    determination = {
        "inspected_on": date(2026, 6, 30),
        "members": [],
        "determination": "a type 2 wet meadow of 25,000 sq ft",
        "recommendation": "approve",
    }
    steps = {
        s.name: s
        for s in plan_view.timeline(plan(tep={**PANEL, "determination": determination}), DUE)
    }
    determined = steps["Panel's determination after its on-site inspection"]
    assert (determined.state, determined.done_on) == ("met", date(2026, 6, 30))
    assert determined.note == "a type 2 wet meadow of 25,000 sq ft (recommends: approve)"


def test_the_decision_step_names_its_resolution_or_reasons_and_every_extension() -> None:
    extensions = [
        {
            "notified_on": date(2026, 8, 1),
            "days": 60,
            "reason": "the TEP",
            "applicant_agreed": False,
        },
        {"notified_on": date(2026, 9, 1), "days": 90, "reason": "asked", "applicant_agreed": True},
    ]
    approved = {
        "outcome": "approved",
        "decided_on": date(2026, 7, 20),
        "resolution": {"number": "2026-31", "adopted_on": date(2026, 7, 14)},
        "reasons": None,
    }
    step = states_with_notes(plan(decision=approved, extensions=extensions))
    assert step.startswith(
        "Approved by resolution 2026-31 adopted 2026-07-14, recorded as decided 2026-07-20; "
        "Extended 60 days"
    )
    assert "Extended 90 days on 2026-09-01 with the applicant’s agreement: asked" in step
    denied = {**approved, "outcome": "denied", "resolution": None, "reasons": "no replacement"}
    assert states_with_notes(plan(decision=denied)) == "Denied: no replacement"


def states_with_notes(body: dict[str, Any]) -> str:
    return next(s.note for s in plan_view.timeline(body, DUE) if s.name == "Decision (60-day rule)")


def test_the_timeline_marks_the_appeals_of_an_earlier_application_as_its() -> None:
    appeal = {
        "application_number": 1,
        "received_on": date(2026, 8, 10),
        "grant_decision_due": date(2026, 9, 9),
        "petition": None,
        "decision_due": None,
        "decision": None,
    }
    first = plan(appeals=[appeal])
    revised = plan(appeals=[appeal], application_number=2)
    assert "Appeal 1: petition received" in [s.name for s in plan_view.timeline(first, DUE)]
    names = [s.name for s in plan_view.timeline(revised, DUE)]
    assert "Appeal 1 (of application 1): petition received" in names
    assert not any(name.startswith("Appeal 1:") for name in names)


def test_a_decision_by_resolution_is_done_on_the_resolutions_day() -> None:
    """The resolution is the decision (Subd. 1 (b)): the timeline's decision is done the day it
    was adopted, on time, however much later it was recorded as decided."""
    decided = plan(
        decision={
            "outcome": "approved",
            "decided_on": date(2026, 8, 10),
            "resolution": {"number": "R-9", "adopted_on": date(2026, 8, 7)},
            "reasons": None,
        }
    )
    (step,) = [
        s for s in plan_view.timeline(decided, date(2026, 8, 11)) if s.rule.endswith("15.99")
    ]
    assert (step.due, step.done_on, step.state) == (DUE, date(2026, 8, 7), "met")
    assert "recorded as decided 2026-08-10" in step.note


def test_a_certificate_dates_the_decision_by_its_resolution() -> None:
    from api.web.documents import decision_words
    from bank.documents import CertifiedDecision

    made = CertifiedDecision(
        status="final",
        outcome="approved",
        decided_on=date(2026, 11, 10),
        resolution_number="R-1",
        resolution_adopted_on=date(2026, 10, 30),
        rulings=(),
        outcome_now="approved",
    )
    assert decision_words(made) == (
        "Approved 2026-10-30 by resolution R-1 (recorded as decided 2026-11-10); the plan is final"
    )
