"""A plan as its LGU and the board read it: every deadline, the status, the credits required,
its reservations, withdrawals and appeals, and whether the impact may proceed (Subd. 3)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from sqlalchemy.orm import Session

from bank import (
    appeal_views,
    guarantees,
    notices,
    plan_panel,
    plan_rows,
    plans,
    reservations,
    withdrawals,
)
from bank.plan_decisions import PlanDecision, decision_with
from bank.plan_extensions import Extension
from bank.plan_panel import PanelView
from bank.plan_revisions import ApplicationView, application_view
from bank.plan_rows import PlanRows
from bank.plan_tables import Plan
from bank.rules import timeline
from bank.wording import dollars, sqft


@dataclass(frozen=True)
class Blocker:
    """A reason the impact may not begin yet."""

    code: str
    detail: str


@dataclass(frozen=True)
class Impact:
    """The wetland impact the plan replaces."""

    area_sqft: int
    wetland_type: str
    service_area: int
    county: str
    on_agricultural_land: bool
    peatland: bool


@dataclass(frozen=True)
class PlanReport:
    """Everything ``GET /plans/{id}`` shows, fully loaded: no part of it reads the database
    after the unit of work that built it."""

    id: str
    lgu_id: str
    applicant: str
    project: str
    received_on: date
    first_received_on: date
    impact: Impact
    replacement_ratio: str
    method: str
    replacement_outside_service_area: bool
    in_lieu_amount_due_cents: int | None
    appeal_security_required_cents: int | None
    watershed_district: str | None
    location: str | None
    security_required_cents: int | None
    ruleset: str
    status: str
    outcome: str | None
    reversed_on_appeal: bool
    #: the current application, a revision of an approved plan, was denied: the approval before
    #: it stands (``outcome``, and ``impact`` with its area), Subd. 6 (c)
    revision_denied: bool
    notice_kind: str
    #: every deadline (its ``notice_kind`` is shown once, above)
    deadlines: timeline.Deadlines
    notice: notices.NoticeView | None
    #: the application the dates belong to: 1, plus one per revision counting as new
    application_number: int
    extensions: list[Extension]
    tep: PanelView | None
    decision: PlanDecision | None
    decision_notice: notices.NoticeView | None
    copy_requests: list[notices.CopyAsked]
    replacement_completed_on: date | None
    required_credit_sqft: int
    required_unrestricted_sqft: int
    reservations: list[reservations.ReservationView]
    withdrawals: list[withdrawals.WithdrawalView]
    appeals: list[appeal_views.AppealView]
    applications: list[ApplicationView]
    impact_may_proceed: bool
    impact_blockers: list[Blocker]
    external_refs: dict[str, str]


def impact_blockers(plan: Plan, rows: PlanRows, required_sqft: int) -> list[Blocker]:
    """Every reason the impact may not begin yet (docs/domain.md §5); empty means it may proceed.

    Subd. 3: replacement must be completed before or with the impact, or guaranteed by an
    irrevocable letter of credit or other security; and nothing proceeds before the decision is
    final after an approval.
    """
    state = rows.states[plan.id]
    blockers: list[Blocker] = []
    if state.reversed_on_appeal and state.outcome not in withdrawals.APPROVALS:
        blockers.append(
            _blocker(
                "reversed_on_appeal",
                "Subd. 9: the board reversed the approval on appeal; the impact may not proceed",
            )
        )
    elif state.outcome not in withdrawals.APPROVALS:
        blockers.append(
            _blocker(
                "not_approved",
                _revised(plan, f"the plan is {state.outcome or 'not yet decided'}"),
            )
        )
    elif state.status != "final":
        blockers.append(
            _blocker("decision_not_final", _revised(plan, f"the plan is {state.status}, not final"))
        )
    blockers += _replacement_blockers(plan, rows, required_sqft)
    return blockers


def _revised(plan: Plan, detail: str) -> str:
    """A blocker's detail, naming the revised application it waits for (Subd. 6 (c))."""
    if plan.application_number == 1:
        return detail
    return (
        f"Subd. 6 (c): the revision received {plan.received_on.isoformat()} is a new "
        f"application (number {plan.application_number}), and it waits for its own decision "
        f"to be final; {detail}"
    )


def _replacement_blockers(plan: Plan, rows: PlanRows, required_sqft: int) -> list[Blocker]:
    if plan.method == "bank_credits":
        withdrawn = sum(
            w.withdrawn_sqft
            for w in rows.withdrawals[plan.id]
            if w.reversal_transaction_id is None  # not reversed by an appeal
        )
        if withdrawn < required_sqft:
            return [
                _blocker(
                    "credits_not_withdrawn",
                    f"{withdrawn:,} of {sqft(required_sqft)} of credits withdrawn",
                )
            ]
        return []
    if plan.method == "monetary_payment":
        if not plan.on_agricultural_land:
            return [
                _blocker(
                    "not_agricultural_land",
                    "Subd. 1: monetary payment is only for wetlands on agricultural land",
                )
            ]
        due = plan.in_lieu_amount_due_cents or 0
        paid = rows.in_lieu_received_cents.get(plan.id, 0)
        if paid < due:
            return [_blocker("in_lieu_payment_due", f"{dollars(paid)} of {dollars(due)} received")]
        return []
    if plan.replacement_completed_on is not None:
        return []
    shortfall = guarantees.shortfall_of(plan, rows.guaranteed_cents.get(plan.id, 0))
    if shortfall is not None:
        return [
            _blocker(
                "replacement_not_guaranteed",
                f"the replacement is not recorded complete; {shortfall}",
            )
        ]
    return []


def _blocker(code: str, detail: str) -> Blocker:
    return Blocker(code, detail)


def report(session: Session, plan: Plan, today: date | None = None) -> PlanReport:
    """Everything ``GET /plans/{id}`` shows, as of ``today``."""
    return report_with_rows(session, plan, today)[0]


def report_with_rows(
    session: Session, plan: Plan, today: date | None = None
) -> tuple[PlanReport, PlanRows]:
    """``report`` of ``plan`` with the rows it was built from (``bank.plan_rows``), for a
    caller that shows more of them than the report does (the plan page, its notices)."""
    rows = plan_rows.read(session, [plan], today)
    return _report(plan, rows), rows


def reports(
    session: Session, listed: Sequence[Plan], today: date | None = None
) -> list[PlanReport]:
    """``report`` of each of ``listed``, in order, their records read for all of them at once
    (``bank.plan_rows``)."""
    rows = plan_rows.read(session, listed, today)
    return [_report(plan, rows) for plan in listed]


def _report(plan: Plan, rows: PlanRows) -> PlanReport:
    state = rows.states[plan.id]
    required, unrestricted = plans.required_credits(plan, state.area_sqft)
    blockers = impact_blockers(plan, rows, required)
    return PlanReport(
        id=plan.id,
        lgu_id=plan.lgu_id,
        applicant=plan.applicant,
        project=plan.project,
        received_on=plan.received_on,
        first_received_on=plan.first_received_on,
        impact=Impact(
            area_sqft=state.area_sqft,
            wetland_type=plan.impact_wetland_type,
            service_area=plan.impact_service_area,
            county=plan.impact_county,
            on_agricultural_land=plan.on_agricultural_land,
            peatland=plan.impact_peatland,
        ),
        replacement_ratio=plan.replacement_ratio,
        method=plan.method,
        replacement_outside_service_area=plan.replacement_outside_service_area,
        in_lieu_amount_due_cents=plan.in_lieu_amount_due_cents,
        appeal_security_required_cents=plan.appeal_security_required_cents,
        watershed_district=plan.watershed_district,
        location=plan.location,
        security_required_cents=plan.security_required_cents,
        ruleset=plan.ruleset,
        status=state.status,
        outcome=state.outcome,
        reversed_on_appeal=state.reversed_on_appeal,
        revision_denied=state.revision_denied,
        notice_kind=state.deadlines.notice_kind,
        deadlines=state.deadlines,
        **_notices(plan, rows, state),
        **_record(plan, rows),
        replacement_completed_on=plan.replacement_completed_on,
        required_credit_sqft=required,
        required_unrestricted_sqft=unrestricted,
        reservations=rows.reservations[plan.id],
        withdrawals=rows.withdrawals[plan.id],
        appeals=[
            appeal_views.view_with(
                a,
                plan,
                rows.clocks[plan.id],
                plans.security_required_of(plan, rows.applications[plan.id], a.application_number),
                rows.appeal_payments[a.id],
                plans.appeal_window_closed(plan, state, a.application_number, rows.today),
            )
            for a in rows.appeals[plan.id]
        ],
        impact_may_proceed=not blockers,
        impact_blockers=blockers,
        external_refs=plan.external_refs or {},
    )


def _notices(plan: Plan, rows: PlanRows, state: plans.PlanState) -> dict[str, Any]:
    """The Subd. 6 and 7 notices as mailed, and the members of the public who asked for them
    with the copies they are owed (``notices.owed_copies``: of any application's notices) and
    those mailed to them since."""
    application = _notice(plan.notice_mailed_on, state.deadlines.notice_due)
    decision = _notice(plan.decision_notice_mailed_on, state.deadlines.decision_notice_due)
    shown = {
        "application": _as_mailed(plan, rows, "application", application),
        "decision": _as_mailed(plan, rows, "decision", decision),
    }
    # every notice as mailed (an earlier application's too), for the copies a request
    # registered after them is owed
    requests = rows.copy_requests[plan.id]
    return {
        "notice": shown["application"],
        "decision_notice": shown["decision"],
        "copy_requests": notices.copies_owed(rows.mailed[plan.id], requests, rows.copies_mailed),
    }


def _notice(mailed_on: date | None, due: date | None) -> dict[str, Any] | None:
    if mailed_on is None:
        return None
    return {"mailed_on": mailed_on, "due": due, "late": due is not None and mailed_on > due}


def _as_mailed(
    plan: Plan, rows: PlanRows, notice: str, shown: dict[str, Any] | None
) -> notices.NoticeView | None:
    """The notice as the plan shows it, with its kind and recipients if the notice mailed last
    is the one the plan records (None for a notice recorded before the service stored them)."""
    if shown is None:
        return None
    return notices.mailed_view(shown, notices.latest_of(rows.mailed[plan.id], notice))


def _record(plan: Plan, rows: PlanRows) -> dict[str, Any]:
    """The current application's number, extensions, panel and decision, and the earlier
    applications revisions superseded (Subd. 6 (c))."""
    current = plan.application_number
    panel = rows.panels.get((plan.id, current))
    return {
        "application_number": current,
        "extensions": [
            Extension(e.notified_on, e.days, e.reason, e.applicant_agreed)
            for e in rows.extensions[plan.id]
            if e.application_number == current
        ],
        "tep": None if panel is None else plan_panel.view(panel),
        "decision": decision_with(plan, panel),
        "applications": [
            application_view(row, rows.appeals[plan.id]) for row in rows.applications[plan.id]
        ],
    }
