"""A plan's timeline as the plan page lists it: each step, its deadline, when it was done, and
whether that was in time.

Every date and ``late`` flag comes from ``bank.plan_report.report`` (what
``GET /api/v1/plans/{id}`` returns), read as a dict; this module only puts them in order and
names each state.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import date
from typing import Any

#: what a step's state means to a reader
STATE_LABELS = {
    "met": "Met",
    "late": "Late",
    "overdue": "Overdue",
    "open": "Due",
    "running": "Running",
    "ended": "Ended",
    "recorded": "Recorded",
    "deemed": "Passed: deemed approved",
    "none": "Does not apply",
    "pending": "Not yet",
}


@dataclass(frozen=True)
class Step:
    name: str
    rule: str
    due: date | None
    done_on: date | None
    state: str
    note: str = ""
    #: the notice mailed for the step, which the timeline links to its printable page
    notice_id: str | None = None

    @property
    def state_label(self) -> str:
        return STATE_LABELS[self.state]


def timeline(plan: dict[str, Any], today: date) -> list[Step]:
    """Every step of the plan's timeline, in the order they happen."""
    d = plan["deadlines"]
    notice, decision, decision_notice = plan["notice"], plan["decision"], plan["decision_notice"]
    steps = [
        Step("Application received", "Subd. 6", None, plan["received_on"], "recorded"),
        _mailed(
            _task(
                f"Notice of application ({plan['notice_kind'] or 'full'})",
                "Subd. 6",
                d["notice_due"],
                notice and notice["mailed_on"],
                notice and notice["late"],
                today,
            ),
            notice,
        ),
        _period("Public comment period ends", "Subd. 8", d["comment_period_ends"], today),
        *_panel_steps(plan),
        _decision(plan, today),
        _mailed(
            _task(
                "Notice of decision",
                "Subd. 7",
                d["decision_notice_due"],
                decision_notice and decision_notice["mailed_on"],
                decision_notice and decision_notice["late"],
                today,
                waits_for=decision is None,
            ),
            decision_notice,
        ),
        _appeal_window(plan, today),
    ]
    # every appeal, numbered as the appeals table numbers them: one of an earlier application
    # (a petition mailed in its window that reached the board after a revision counting as
    # new superseded it, Subd. 6 (c)) is marked as that application's
    current = plan.get("application_number", 1)
    for number, appeal in enumerate(plan["appeals"], 1):
        of = appeal.get("application_number", current)
        name = f"Appeal {number}" if of == current else f"Appeal {number} (of application {of})"
        steps += _appeal_steps(name, appeal, today)
    if plan["replacement_completed_on"]:
        steps.append(
            Step("Replacement completed", "Subd. 3", None, plan["replacement_completed_on"], "met")
        )
    return steps


def _mailed(step: Step, notice: dict[str, Any] | None) -> Step:
    """``step`` with the id of the notice it records as mailed, if the service kept it."""
    return replace(step, notice_id=notice.get("id")) if notice else step


def _task(
    name: str,
    rule: str,
    due: date | None,
    done_on: date | None,
    late: bool | None,
    today: date,
    *,
    waits_for: bool = False,
) -> Step:
    if done_on is not None:
        return Step(name, rule, due, done_on, "late" if late else "met")
    if due is None:
        return Step(name, rule, None, None, "pending" if waits_for else "none")
    return Step(name, rule, due, None, "overdue" if today > due else "open")


def _period(name: str, rule: str, ends: date | None, today: date) -> Step:
    if ends is None:
        return Step(name, rule, None, None, "none")
    return Step(name, rule, ends, None, "ended" if today > ends else "running")


def _appeal_window(plan: dict[str, Any], today: date) -> Step:
    """Subd. 9: 15 days after the postmark of the notice of decision.  It has ended on a final
    plan; on a decided plan (a deemed approval too) it has not started until a notice is mailed.
    """
    name, rule = "Appeal window ends", "Subd. 9"
    ends = plan["deadlines"]["appeal_window_ends"]
    if ends is None:
        if plan.get("outcome") is None:
            return Step(name, rule, None, None, "none")
        return Step(
            name, rule, None, None, "pending", "Opens when the notice of decision is mailed"
        )
    if plan.get("status") == "final" or today > ends:
        return Step(name, rule, ends, None, "ended")
    return Step(name, rule, ends, None, "running")


def _panel_steps(plan: dict[str, Any]) -> list[Step]:
    """Subd. 2: the questions referred to the technical evaluation panel and its determination
    after an on-site inspection, which the decision waits for."""
    panel = plan.get("tep")
    if not panel:
        return []
    questions = ", ".join(q.replace("_", " ") for q in panel["questions"])
    referred = Step(
        "Questions referred to the technical evaluation panel",
        "Subd. 2",
        None,
        panel["referred_on"],
        "recorded",
        f"Questions of {questions}",
    )
    name = "Panel's determination after its on-site inspection"
    determination = panel["determination"]
    if determination is None:
        return [referred, Step(name, "Subd. 2", None, None, "pending", "The decision waits for it")]
    note = determination["determination"]
    if determination["recommendation"]:
        note += f" (recommends: {determination['recommendation']})"
    return [referred, Step(name, "Subd. 2", None, determination["inspected_on"], "met", note)]


def _extensions_note(plan: dict[str, Any]) -> str:
    """Minn. Stat. 15.99 subd. 3 (f), (g): each extension of the decision deadline."""
    return "; ".join(
        f"Extended {e['days']} days on {e['notified_on']}"
        f"{' with the applicant’s agreement' if e['applicant_agreed'] else ''}: {e['reason']}"
        for e in plan.get("extensions", [])
    )


def _decision(plan: dict[str, Any], today: date) -> Step:
    due = plan["deadlines"]["decision_due"]
    note = _extensions_note(plan)
    name, rule = "Decision (60-day rule)", "Subd. 4; Minn. Stat. 15.99"
    decision = plan["decision"]
    if decision is not None:
        # a decision dated after the deadline is refused (deadline_passed): a recorded one is met
        note = "; ".join(filter(None, [_decision_note(decision), note]))
        # made on its resolution's day where one carries it (Subd. 1 (b)), however much later
        # it was recorded as decided
        resolution = decision.get("resolution")
        made = resolution["adopted_on"] if resolution else decision["decided_on"]
        return Step(name, rule, due, made, "met", note)
    if today > due:
        return Step(name, rule, due, None, "deemed", note)
    return Step(name, rule, due, None, "open", note)


def _decision_note(decision: dict[str, Any]) -> str:
    """The outcome with its record: the resolution (Subd. 1 (b)) or the reasons (15.99)."""
    note = str(decision["outcome"]).capitalize()
    resolution = decision.get("resolution")
    if resolution:
        note += f" by resolution {resolution['number']} adopted {resolution['adopted_on']}"
        if resolution["adopted_on"] != decision["decided_on"]:
            note += f", recorded as decided {decision['decided_on']}"
    if decision.get("reasons"):
        note += f": {decision['reasons']}"
    return note


def _appeal_steps(name: str, appeal: dict[str, Any], today: date) -> list[Step]:
    petition, decision = appeal["petition"], appeal["decision"]
    steps = [
        Step(
            f"{name}: petition received",
            "Subd. 9",
            None,
            appeal["received_on"],
            "recorded",
        ),
        _task(
            f"{name}: board decides whether to grant",
            "Subd. 9",
            appeal["grant_decision_due"],
            petition and petition["decided_on"],
            petition and petition["late"],
            today,
        ),
    ]
    if appeal["decision_due"] is not None or decision is not None:
        steps.append(
            _task(
                f"{name}: board decides the appeal",
                "Subd. 9",
                appeal["decision_due"],
                decision and decision["decided_on"],
                decision and decision["late"],
                today,
            )
        )
    if decision is not None:
        steps += _service_steps(name, appeal, today)
    return steps


def _service_steps(name: str, appeal: dict[str, Any], today: date) -> list[Step]:
    """Subd. 9: the decision is served by mail; judicial review (Minn. Stat. 14.63) is
    petitioned within 30 days after service."""
    served_on = appeal.get("served_on")
    served = f"{name}: decision served on the parties"
    if served_on is None:
        return [Step(served, "Subd. 9", None, None, "pending")]
    return [
        Step(served, "Subd. 9", None, served_on, "recorded"),
        _period(
            f"{name}: judicial review period ends",
            "Minn. Stat. 14.63",
            appeal.get("judicial_review_ends"),
            today,
        ),
    ]
