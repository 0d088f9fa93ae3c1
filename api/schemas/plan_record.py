"""Schemas of a plan's record beyond its dates: the decision's resolution, reasons and peatland
record, the technical evaluation panel, extensions, and earlier applications (docs/domain.md §4)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.common import EventDate, Name, Quantity, Reason, StrictInteger, text_of
from api.schemas.replies import reply_schema
from bank.plan_decisions import Decision, PeatlandRecord, PlanDecision, Resolution
from bank.plan_extensions import Extension, ExtensionView
from bank.plan_panel import (
    MEMBER_KINDS,
    QUESTIONS,
    RECOMMENDATIONS,
    Determination,
    PanelMember,
    PanelView,
)
from bank.plan_revisions import ApplicationView, RevisionView


class ResolutionIn(Schema):
    #: Subd. 1 (b): the governing body's resolution, as the LGU numbers it
    number = fields.String(required=True, validate=text_of(100))
    #: the day of the approval (the resolution is it): on or before the decision's
    #: ``decided_on``, and held, as it is, after the Subd. 8 comment period and the panel's
    #: inspection
    adopted_on = EventDate(required=True)


class PeatlandDecisionIn(Schema):
    #: Subd. 1 (a): the impact on carbon balance was considered
    carbon_balance_considered = fields.Boolean(required=True)
    #: the trees or shrubs the replacement plants
    trees_or_shrubs = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=2000)
    )


ResolutionOut = reply_schema(Resolution, "ResolutionOut")
PeatlandDecisionOut = reply_schema(PeatlandRecord, "PeatlandDecisionOut")


class TepReferralIn(Schema):
    referred_on = EventDate(required=True)
    questions = fields.List(
        fields.String(validate=validate.OneOf(QUESTIONS)),
        required=True,
        validate=validate.Length(min=1, max=len(QUESTIONS)),
    )


class PanelMemberIn(Schema):
    name = Name(required=True)
    represents = fields.String(required=True, validate=validate.OneOf(MEMBER_KINDS))


class TepDeterminationIn(Schema):
    inspected_on = EventDate(required=True)
    #: exactly one member of each kind (checked with a message that names them)
    members = fields.List(
        fields.Nested(PanelMemberIn), required=True, validate=validate.Length(max=10)
    )
    determination = fields.String(required=True, validate=text_of(8000))
    recommendation = fields.String(
        load_default=None, allow_none=True, validate=validate.OneOf(RECOMMENDATIONS)
    )


PanelMemberOut = reply_schema(PanelMember, "PanelMemberOut")
DeterminationOut = reply_schema(Determination, "DeterminationOut")
PanelOut = reply_schema(PanelView, "PanelOut")
# a decision's outcome is stored with its date, so a decision (dated) always has one, though
# the column it is read from may be null
EarlierDecisionOut = reply_schema(Decision, "EarlierDecisionOut", outcome=fields.String())
PlanDecisionOut = reply_schema(PlanDecision, "PlanDecisionOut", outcome=fields.String())
ApplicationOut = reply_schema(ApplicationView, "ApplicationOut")
PlanExtensionOut = reply_schema(Extension, "PlanExtensionOut")


class ExtensionIn(Schema):
    notified_on = EventDate(required=True)
    days = StrictInteger(required=True)
    reason = Reason()
    #: 15.99 subd. 3 (g): with the applicant's written approval or at its request
    applicant_agreed = fields.Boolean(load_default=False)


ExtensionOut = reply_schema(ExtensionView, "ExtensionOut")


class DecisionIn(Schema):
    outcome = fields.String(required=True, validate=validate.OneOf(["approved", "denied"]))
    decided_on = EventDate(required=True)
    tep_recommendation = fields.String(load_default=None, validate=validate.Length(max=4000))
    #: Subd. 1 (b): required for an approval
    resolution = fields.Nested(ResolutionIn, load_default=None)
    #: Minn. Stat. 15.99 subd. 2: required for a denial
    reasons = fields.String(load_default=None, validate=text_of(8000))
    #: Subd. 1 (a): required to approve a plan for peatland
    peatland = fields.Nested(PeatlandDecisionIn, load_default=None)


#: Subd. 6 (c)(2): "located more than 500 feet from the area to be drained or filled under the
#: original replacement plan", read from the same application the area is compared with
DISPLACEMENT = (
    "Feet between the revised area to be drained or filled and the area of the application as "
    "last received as new (after a denied revision, of the approval that stands): the same "
    "baseline the revised area is compared with, never the last revision that did not count as "
    "new, so that moves of 500 feet or less each cannot add up unnoticed. More than 500 feet "
    "makes the revision a new application (Subd. 6 (c)(2)). The service records the distance "
    "as given: it holds no map to measure it."
)


class RevisionIn(Schema):
    area_sqft = Quantity(required=True)
    displacement_ft = StrictInteger(
        minimum=0, required=True, metadata={"description": DISPLACEMENT}
    )
    received_on = EventDate(required=True)


RevisionOut = reply_schema(
    RevisionView,
    "RevisionOut",
    displacement_ft=fields.Integer(metadata={"description": DISPLACEMENT}),
)
