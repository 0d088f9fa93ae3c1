"""The CSV exports of the plans, payments and securities listings and of a plan's notices
(``?format=csv`` or ``Accept: text/csv``): one line per record the filters keep,
``external_refs`` (and a notice's ``recipients``) as a JSON cell."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from bank.plan_report import PlanReport

PLAN_FIELDS = [
    "id",
    "lgu_id",
    "applicant",
    "project",
    "received_on",
    "first_received_on",
    "status",
    "outcome",
    "method",
    "impact_area_sqft",
    "impact_wetland_type",
    "impact_service_area",
    "impact_county",
    "replacement_ratio",
    "required_credit_sqft",
    "ruleset",
    "external_refs",
]
PAYMENT_FIELDS = [
    "id",
    "kind",
    "amount_cents",
    "payer",
    "received_on",
    "postmarked_on",
    "plan_id",
    "appeal_id",
    "status",
    "transaction_id",
    "compensation_transaction_id",
    "reversal_reason",
    "ruleset",
    "created_at",
    "external_refs",
]
#: ``GET /plans/{id}/notices``: ``recipients`` a JSON list of ``{name, address, role,
#: role_label}``
NOTICE_FIELDS = [
    "id",
    "notice",
    "kind",
    "application_number",
    "mailed_on",
    "current",
    "document_kept",
    "recipients",
]
SECURITY_FIELDS = [
    "id",
    "plan_id",
    "kind",
    "issuer",
    "amount_cents",
    "irrevocable",
    "issued_on",
    "expires_on",
    "status",
    "released_on",
    "drawn_on",
    "drawn_cents",
    "undrawn_cents",
    "transaction_id",
    "external_refs",
]


def plan_row(plan: PlanReport) -> dict[str, Any]:
    """A plan as ``GET /plans/{id}`` shows it, flattened to ``PLAN_FIELDS``."""
    impact = {f"impact_{name}": value for name, value in asdict(plan.impact).items()}
    return {**vars(plan), **impact}


def notice_row(item: Any) -> dict[str, Any]:
    """A notice as ``GET /plans/{id}/notices`` lists it (a ``NoticeItem``), flattened to
    ``NOTICE_FIELDS``: its recipients a JSON list."""
    row = asdict(item)
    row["recipients"] = list(row["recipients"])
    return row
