"""Schemas of a plan's record beyond its dates: the decision's resolution, reasons and peatland
record, the technical evaluation panel, extensions, and earlier applications (issue 24)."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.schemas.common import EventDate, Name, Quantity, Reason, StrictInteger
from bank.plan_panel import MEMBER_KINDS, QUESTIONS, RECOMMENDATIONS


class ResolutionIn(Schema):
    #: Subd. 1 (b): the governing body's resolution, as the LGU numbers it
    number = fields.String(required=True, validate=validate.Length(min=1, max=100))
    #: on or before the decision's ``decided_on``
    adopted_on = EventDate(required=True)


class PeatlandDecisionIn(Schema):
    #: Subd. 1 (a): the impact on carbon balance was considered
    carbon_balance_considered = fields.Boolean(required=True)
    #: the trees or shrubs the replacement plants
    trees_or_shrubs = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=2000)
    )


class ResolutionOut(Schema):
    number = fields.String()
    adopted_on = fields.Date()


class PeatlandDecisionOut(Schema):
    carbon_balance_considered = fields.Boolean()
    trees_or_shrubs = fields.String(allow_none=True)


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
    determination = fields.String(required=True, validate=validate.Length(min=1, max=8000))
    recommendation = fields.String(
        load_default=None, allow_none=True, validate=validate.OneOf(RECOMMENDATIONS)
    )


class PanelMemberOut(Schema):
    name = fields.String()
    represents = fields.String()


class DeterminationOut(Schema):
    inspected_on = fields.Date()
    members = fields.List(fields.Nested(PanelMemberOut))
    determination = fields.String()
    recommendation = fields.String(allow_none=True)


class PanelOut(Schema):
    application_number = fields.Integer()
    referred_on = fields.Date()
    questions = fields.List(fields.String())
    determination = fields.Nested(DeterminationOut, allow_none=True)


class EarlierDecisionOut(Schema):
    """A decision and its record (``bank.plan_decisions.Decision``)."""

    outcome = fields.String()
    decided_on = fields.Date()
    resolution = fields.Nested(ResolutionOut, allow_none=True)
    reasons = fields.String(allow_none=True)
    tep_recommendation = fields.String(allow_none=True)
    peatland = fields.Nested(PeatlandDecisionOut, allow_none=True)


class PlanDecisionOut(EarlierDecisionOut):
    """The current application's decision, with the panel's determination it includes."""

    tep_determination = fields.Nested(DeterminationOut, allow_none=True)


class ApplicationOut(Schema):
    """An earlier application a revision counting as new superseded (Subd. 6 (c))."""

    number = fields.Integer()
    received_on = fields.Date()
    area_sqft = fields.Integer()
    notice_mailed_on = fields.Date(allow_none=True)
    outcome = fields.String(allow_none=True)
    decision = fields.Nested(EarlierDecisionOut, allow_none=True)
    decision_notice_mailed_on = fields.Date(allow_none=True)
    superseded_on = fields.Date()
    revision_id = fields.String()


class PlanExtensionOut(Schema):
    notified_on = fields.Date()
    days = fields.Integer()
    reason = fields.String()
    applicant_agreed = fields.Boolean()


class ExtensionIn(Schema):
    notified_on = EventDate(required=True)
    days = StrictInteger(required=True)
    reason = Reason()
    #: 15.99 subd. 3 (g): with the applicant's written approval or at its request
    applicant_agreed = fields.Boolean(load_default=False)


class ExtensionOut(PlanExtensionOut):
    """An extension as recorded, with the decision deadline it sets."""

    decision_due = fields.Date()


class DecisionIn(Schema):
    outcome = fields.String(required=True, validate=validate.OneOf(["approved", "denied"]))
    decided_on = EventDate(required=True)
    tep_recommendation = fields.String(load_default=None, validate=validate.Length(max=4000))
    #: Subd. 1 (b): required for an approval
    resolution = fields.Nested(ResolutionIn, load_default=None)
    #: Minn. Stat. 15.99 subd. 2: required for a denial
    reasons = fields.String(load_default=None, validate=validate.Length(min=1, max=8000))
    #: Subd. 1 (a): required to approve a plan for peatland
    peatland = fields.Nested(PeatlandDecisionIn, load_default=None)


class RevisionIn(Schema):
    area_sqft = Quantity(required=True)
    displacement_ft = StrictInteger(minimum=0, required=True)
    received_on = EventDate(required=True)


class RevisionOut(Schema):
    id = fields.String()
    counts_as_new_application = fields.Boolean()
    area_sqft = fields.Integer()
    previous_area_sqft = fields.Integer()
    displacement_ft = fields.Integer()
    received_on = fields.Date()
    plan_received_on = fields.Date()
    application_number = fields.Integer()
