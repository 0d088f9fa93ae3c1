"""The fields of the LGU's forms, named as the API's input schemas name them (``api/schemas``):
a new plan, the notices of Subd. 6 and 7, an extension, the panel's referral and determination,
the decision, a revision, a security and a withdrawal."""

from __future__ import annotations

from typing import Any

from api.web.forms import Field, Fieldset, Item
from bank.money_tables import SECURITY_KINDS
from bank.plan_panel import MEMBER_KINDS, QUESTIONS, RECOMMENDATIONS
from bank.plan_report import PlanReport
from bank.plans import METHODS

WETLAND_TYPES = (
    ("1", "Type 1: seasonally flooded basin"),
    ("2", "Type 2: wet meadow"),
    ("3", "Type 3: shallow marsh"),
    ("4", "Type 4: deep marsh"),
    ("5", "Type 5: shallow open water"),
    ("6", "Type 6: shrub swamp"),
    ("7", "Type 7: wooded swamp"),
    ("8", "Type 8: bog"),
)
RECIPIENT_ROLES = (
    ("tep_member", "Member of the technical evaluation panel"),
    ("dnr_commissioner", "Commissioner of natural resources"),
    ("watershed_district", "Managers of the watershed district"),
    ("applicant", "The applicant"),
    ("public_requester", "Member of the public who asked for a copy"),
)
#: blank rows a notice form offers beyond the people the plan names
SPARE_ROWS = 2


def _choices(values: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((v, v.replace("_", " ").capitalize()) for v in values)


def new_plan(board: bool) -> tuple[Item, ...]:
    """``PlanIn``; the board names the plan's LGU, an LGU records its own."""
    lgu = (Field("lgu_id", "LGU id (lgu_…)", required=True),) if board else ()
    return (
        *lgu,
        Field("applicant", "Applicant", required=True),
        Field("project", "Project", required=True),
        Field("location", "Location of the impact", "textarea", required=True),
        Field("received_on", "Application received", "date", required=True),
        Fieldset(
            "The wetland impact",
            (
                Field("impact.area_sqft", "Area (sq ft)", "number", required=True),
                Field("impact.wetland_type", "Wetland type", "select", True, WETLAND_TYPES),
                Field("impact.service_area", "Bank service area", "number", required=True),
                Field("impact.county", "County", required=True),
                Field("impact.on_agricultural_land", "On agricultural land", "checkbox"),
                Field("impact.peatland", "On peatland (Subd. 1 (a))", "checkbox"),
            ),
        ),
        Fieldset(
            "Replacement",
            (
                Field("replacement_ratio", "Replacement ratio", required=True, hint="Such as 2"),
                Field("method", "Method", "select", True, _choices(METHODS)),
                Field("replacement_outside_service_area", "Outside the service area", "checkbox"),
                Field("in_lieu_amount_due_cents", "In-lieu payment due ($)", "money"),
                Field("security_required_cents", "Security required ($)", "money"),
                Field("appeal_security_required_cents", "Appeal security ($)", "money"),
                Field("watershed_district", "Watershed district, if one exists"),
            ),
        ),
    )


def notice(plan: PlanReport, decision: bool) -> tuple[tuple[Item, ...], dict[str, Any]]:
    """``NoticeIn``: one row per person the statute names and each member of the public who
    asked, with spare rows; and what the plan already says of them."""
    roles = ["tep_member"] * 3 + ["dnr_commissioner"]
    if plan.watershed_district:
        roles.append("watershed_district")
    if decision:
        roles.append("applicant")
    values: dict[str, Any] = {f"recipients.{i}.role": role for i, role in enumerate(roles)}
    names = {"applicant": plan.applicant, "watershed_district": plan.watershed_district}
    # the panel's members, once its determination names them (the notices must name them so)
    determination = plan.tep.determination if plan.tep else None
    panel = iter(member.name for member in determination.members) if determination else iter(())
    for i, role in enumerate(roles):
        name = next(panel, "") if role == "tep_member" else names.get(role)
        values[f"recipients.{i}.name"] = name or ""
    for asked in plan.copy_requests:
        i = len(roles)
        roles.append("public_requester")
        values.update(
            {
                f"recipients.{i}.role": "public_requester",
                f"recipients.{i}.name": asked.name,
                f"recipients.{i}.address": asked.address,
            }
        )
    rows = [_recipient(i) for i in range(len(roles) + SPARE_ROWS)]
    return (Field("mailed_on", "Mailed on", "date", required=True), *rows), values


def _recipient(i: int) -> Fieldset:
    return Fieldset(
        f"Recipient {i + 1}",
        (
            Field(f"recipients.{i}.name", "Name"),
            Field(f"recipients.{i}.address", "Mailing address"),
            Field(
                f"recipients.{i}.role",
                "Why the notice goes to them",
                "select",
                False,
                RECIPIENT_ROLES,
            ),
        ),
        hint="Leave the name and address blank to skip this row.",
    )


EXTENSION: tuple[Item, ...] = (
    Field("notified_on", "Applicant notified on", "date", required=True),
    Field("days", "Days added", "number", required=True),
    Field("reason", "Reason", "textarea", required=True),
    Field(
        "applicant_agreed",
        "The applicant agreed in writing or asked for it (Minn. Stat. 15.99 subd. 3 (g))",
        "checkbox",
    ),
)

PANEL_REFERRAL: tuple[Item, ...] = (
    Field("referred_on", "Referred on", "date", required=True),
    Field("questions", "Questions for the panel", "checkboxes", True, _choices(QUESTIONS)),
)

_MEMBERS = {"board": "the board", "swcd": "the SWCD", "lgu": "the LGU"}


def panel_determination() -> tuple[tuple[Item, ...], dict[str, Any]]:
    """``TepDeterminationIn``: the three members, one of each kind."""
    rows = tuple(
        Fieldset(
            f"Member for {_MEMBERS[kind]}",
            (
                Field(f"members.{i}.name", "Name", required=True),
                Field(
                    f"members.{i}.represents", "Represents", "select", True, _choices(MEMBER_KINDS)
                ),
            ),
        )
        for i, kind in enumerate(MEMBER_KINDS)
    )
    values: dict[str, Any] = {f"members.{i}.represents": k for i, k in enumerate(MEMBER_KINDS)}
    items: tuple[Item, ...] = (
        Field("inspected_on", "On-site inspection on", "date", required=True),
        *rows,
        Field("determination", "Determination", "textarea", required=True),
        Field("recommendation", "Recommendation", "select", False, _choices(RECOMMENDATIONS)),
    )
    return items, values


def decision(plan: PlanReport) -> tuple[Item, ...]:
    """``DecisionIn``: a resolution for an approval, reasons for a denial, and the peatland
    record when the impact is on peatland."""
    peatland = (
        Fieldset(
            "Peatland (Subd. 1 (a))",
            (
                Field(
                    "peatland.carbon_balance_considered", "Carbon balance considered", "checkbox"
                ),
                Field("peatland.trees_or_shrubs", "Trees or shrubs planted"),
            ),
        ),
    )
    return (
        Field(
            "outcome", "Decision", "select", True, (("approved", "Approved"), ("denied", "Denied"))
        ),
        Field("decided_on", "Decided on", "date", required=True),
        Fieldset(
            "Resolution of the governing body (Subd. 1 (b))",
            (
                Field("resolution.number", "Resolution number"),
                Field("resolution.adopted_on", "Adopted on", "date"),
            ),
            hint="Required for an approval.",
        ),
        Field(
            "reasons",
            "Reasons (Minn. Stat. 15.99 subd. 2)",
            "textarea",
            hint="Required for a denial.",
        ),
        Field("tep_recommendation", "The panel's recommendation, as recorded"),
        *(peatland if plan.impact.peatland else ()),
    )


REVISION: tuple[Item, ...] = (
    Field("area_sqft", "Revised impact area (sq ft)", "number", required=True),
    Field(
        "displacement_ft",
        "Displacement of the impact (ft)",
        "number",
        required=True,
        hint="From the area of the application as last received as new (after a denied "
        "revision, the approval that stands), not from the last revision: more than 500 ft "
        "makes it a new application (Subd. 6 (c)(2)).",
    ),
    Field("received_on", "Revision received on", "date", required=True),
)

SECURITY: tuple[Item, ...] = (
    Field("kind", "Kind", "select", True, _choices(SECURITY_KINDS)),
    Field("issuer", "Issuer", required=True),
    Field("amount_cents", "Amount ($)", "money", required=True),
    Field("irrevocable", "Irrevocable", "checkbox"),
    Field("issued_on", "Issued on", "date", required=True),
    Field("expires_on", "Expires on", "date", required=True),
)


def security(plan: PlanReport) -> tuple[tuple[Item, ...], dict[str, Any]]:
    """``SecurityIn``: the amount filled in with the security the LGU requires of the plan
    (Subd. 3), if it stated one."""
    required = plan.security_required_cents
    return SECURITY, ({} if required is None else {"amount_cents": required})


def withdrawal(plan: PlanReport) -> tuple[tuple[Item, ...], dict[str, Any]]:
    """``WithdrawalIn``: the plan's pending reservations, all chosen to begin with."""
    pending = [r for r in plan.reservations if r.status == "pending"]
    choices = tuple(
        (
            r.id,
            f"{r.id}: {r.amount_sqft:,} sq ft of {r.credit_class.code} from {r.account_id}",
        )
        for r in pending
    )
    field = Field("reservation_ids", "Reservations to withdraw", "checkboxes", True, choices)
    return (field,), {"reservation_ids": [r.id for r in pending]}
