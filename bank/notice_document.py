"""A notice as the document that is mailed: what Subd. 6 and 7 require it to say.

The notice of application identifies the applicant and the location and scope of the project,
the impact, and the public comment period (Subd. 6, 8); the notice of decision adds the decision
and how and by when to appeal it (Subd. 7, 9).  The same document is printed as HTML and as PDF
(``api.views.notices``), so both say the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any

from sqlalchemy.orm import Session

from bank import notices, parties, plan_report, replacement_rules
from bank.notice_tables import PlanNotice
from bank.plan_tables import Plan
from bank.ruleset import Ruleset, ruleset_by_id

BOARD = "Board of Water and Soil Resources"
ROLE_LABELS = {
    "tep_member": "Technical evaluation panel",
    "watershed_district": "Watershed district managers",
    "dnr_commissioner": "Commissioner of natural resources",
    "applicant": "Applicant",
    "public_requester": "Member of the public who asked for a copy",
}
WETLAND_TYPES = {
    "1": "seasonally flooded basin",
    "2": "wet meadow",
    "3": "shallow marsh",
    "4": "deep marsh",
    "5": "shallow open water",
    "6": "shrub swamp",
    "7": "wooded swamp",
    "8": "bog",
}


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class NoticeDocument:
    title: str
    statute: str
    lgu_name: str
    mailed_on: str
    sections: tuple[Section, ...]
    recipients: tuple[dict[str, str], ...] = field(default=())


def long_date(day: date | None) -> str:
    """``2026-06-18`` → ``June 18, 2026``."""
    return f"{day:%B} {day.day}, {day.year}" if day else "not set"


def dollars(cents: int) -> str:
    whole, rest = divmod(cents, 100)
    return f"${whole:,}" if rest == 0 else f"${whole:,}.{rest:02d}"


def build(session: Session, plan: Plan, row: PlanNotice) -> NoticeDocument:
    """The document of a notice as mailed."""
    body = plan_report.plan_dict(session, plan)
    lgu = parties.get_lgu(session, plan.lgu_id).name
    ruleset = ruleset_by_id(plan.ruleset)
    sections = [_applicant(body), _project(body), _impact(ruleset, body)]
    if row.notice == "application":
        title = "Notice of application for a wetland replacement plan"
        statute = f"Minn. Stat. 103G.2242, Subd. 6 ({row.kind} notice)"
        sections += [_comment_period(ruleset, body, lgu, row), _decision_due(body, lgu)]
    else:
        title = "Notice of decision on a wetland replacement plan"
        statute = "Minn. Stat. 103G.2242, Subd. 7 (summary of the decision)"
        sections += [_decision(body), _appeal(ruleset, body, lgu)]
    return NoticeDocument(
        title=title,
        statute=statute,
        lgu_name=lgu,
        mailed_on=long_date(row.mailed_on),
        sections=tuple(sections),
        recipients=tuple(
            {**r, "role_label": ROLE_LABELS[r["role"]]}
            for r in notices.recipients_of(session, row.id)
        ),
    )


def _applicant(body: dict[str, Any]) -> Section:
    return Section("Applicant", (body["applicant"],))


def _project(body: dict[str, Any]) -> Section:
    impact = body["impact"]
    lines = [
        f"Project: {body['project']}",
        f"Location: {body.get('location') or 'not recorded'}",
        f"County: {impact['county']}; bank service area {impact['service_area']}",
    ]
    if body.get("watershed_district"):
        lines.append(f"Watershed district: {body['watershed_district']}")
    return Section("Location and scope of the project", tuple(lines))


def _impact(ruleset: Ruleset, body: dict[str, Any]) -> Section:
    impact = body["impact"]
    area = impact["area_sqft"]
    kind = impact["wetland_type"]
    method = body["method"].replace("_", " ")
    return Section(
        "The impact",
        (
            f"{area:,} square feet ({area / ruleset.sqft_per_acre:,.2f} acres) of wetland of "
            f"type {kind} ({WETLAND_TYPES.get(kind, 'unknown')}) to be drained or filled.",
            f"Replacement: {method} at a ratio of {body['replacement_ratio']}:1, "
            f"{body['required_credit_sqft']:,} square feet of replacement required.",
        ),
    )


def _comment_period(ruleset: Ruleset, body: dict[str, Any], lgu: str, row: PlanNotice) -> Section:
    if not replacement_rules.has_comment_period(ruleset, body["impact"]["area_sqft"]):
        text = (
            f"The impact is under {ruleset.small_impact_threshold_sqft:,} square feet: Subd. 8 "
            "sets no public comment period before the decision."
        )
    else:
        ends = body["deadlines"]["comment_period_ends"]
        text = (
            f"Anyone may comment on the application to {lgu} for "
            f"{ruleset.comment_period_days} days: until {long_date(ends)} (Subd. 8)."
        )
    return Section("Public comment", (text,))


def _decision_due(body: dict[str, Any], lgu: str) -> Section:
    due = body["deadlines"]["decision_due"]
    return Section(
        "Decision",
        (
            f"{lgu} must approve or deny the application by {long_date(due)} "
            "(Minn. Stat. 15.99); a notice of its decision will be mailed to everyone this "
            "notice was mailed to.",
        ),
    )


def _decision(body: dict[str, Any]) -> Section:
    decision = body.get("decision")
    if decision is None:
        due = body["deadlines"]["decision_due"]
        return Section(
            "Decision",
            (
                "Deemed approved: no decision was made by "
                f"{long_date(due)}, the deadline of Minn. Stat. 15.99.",
            ),
        )
    lines = [f"{decision['outcome'].capitalize()} on {long_date(decision['decided_on'])}."]
    resolution = decision.get("resolution")
    if resolution:
        lines.append(
            f"Resolution {resolution['number']}, adopted {long_date(resolution['adopted_on'])}."
        )
    if decision.get("reasons"):
        lines.append(f"Reasons: {decision['reasons']}")
    if decision.get("tep_recommendation"):
        lines.append(f"Technical evaluation panel: {decision['tep_recommendation']}")
    return Section("Decision", tuple(lines))


def _appeal(ruleset: Ruleset, body: dict[str, Any], lgu: str) -> Section:
    ends = body["deadlines"]["appeal_window_ends"]
    lines = [
        f"This decision may be appealed to the {BOARD} by mailing a petition and a filing fee "
        f"of {dollars(ruleset.appeal_filing_fee_cents)} to the board within "
        f"{ruleset.appeal_window_days} days after the postmarked date of this notice: by "
        f"{long_date(ends)} (Subd. 9).",
        "The wetland owner, anyone this notice was mailed to, or "
        f"{ruleset.min_resident_petitioners} residents of the county in which a majority of "
        "the wetland is located may appeal.",
        f"If no appeal is sought within {ruleset.appeal_window_days} days, the decision "
        "becomes final.",
    ]
    required = body.get("appeal_security_required_cents")
    if required:
        lines.append(
            f"{lgu} requires the petitioner to post a letter of credit, cashier's check or cash "
            f"of {dollars(required)}."
        )
    return Section("How and by when to appeal", tuple(lines))
