"""Schemas of API.md "Replacement plans", "Appeals", "Money and security instruments"."""

from __future__ import annotations

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from api.schemas.common import (
    WETLAND_TYPES,
    Address,
    County,
    CreditClassOut,
    EventDate,
    IsoDate,
    Name,
    Quantity,
    Ratio,
    Reason,
    RecordId,
    ServiceArea,
    StrictInteger,
    Timestamp,
    page_schema,
)
from api.schemas.filters import ExternalRefFilter, external_refs_in, external_refs_out
from api.schemas.notices import CopyRequestOut, DrawOut, RecipientOut
from api.schemas.plan_record import ApplicationOut, PanelOut, PlanDecisionOut, PlanExtensionOut
from bank.appeals import DENIAL_GROUNDS, PETITIONER_KINDS
from bank.money_tables import PAYMENT_KINDS, SECURITY_KINDS
from bank.plans import METHODS


class ImpactIn(Schema):
    area_sqft = Quantity(required=True)
    wetland_type = fields.String(required=True, validate=validate.OneOf(WETLAND_TYPES))
    service_area = ServiceArea(required=True)
    county = County(required=True)
    on_agricultural_land = fields.Boolean(load_default=False)
    #: Subd. 1 (a): an approval for peatland records the carbon balance and the planting
    peatland = fields.Boolean(load_default=False)


class PlanIn(Schema):
    lgu_id = RecordId(load_default=None)
    applicant = Name(required=True)
    project = Name(required=True)
    received_on = EventDate(required=True)
    impact = fields.Nested(ImpactIn, required=True)
    replacement_ratio = Ratio(required=True)
    method = fields.String(required=True, validate=validate.OneOf(METHODS))
    replacement_outside_service_area = fields.Boolean(load_default=False)
    in_lieu_amount_due_cents = Quantity(load_default=None, allow_none=True)
    #: Subd. 9: security the LGU requires of a petitioner, 1..50,000 cents (the ruleset's cap)
    appeal_security_required_cents = Quantity(load_default=None, allow_none=True)
    #: Subd. 6 and 7: the watershed district whose managers are mailed, if one exists
    watershed_district = Name(load_default=None, allow_none=True)
    #: where the impact is (the public's copy identifies it, Subd. 6 (a))
    location = fields.String(required=True, validate=validate.Length(min=1, max=1000))
    #: Subd. 3: the security the LGU requires of a project-specific replacement (required then)
    security_required_cents = Quantity(load_default=None, allow_none=True)
    external_refs = external_refs_in()


class DeadlinesOut(Schema):
    notice_due = fields.Date()
    comment_period_ends = fields.Date(allow_none=True)
    decision_due = fields.Date()
    decision_notice_due = fields.Date(allow_none=True)
    appeal_window_ends = fields.Date(allow_none=True)


class NoticeOut(Schema):
    mailed_on = fields.Date()
    due = fields.Date(allow_none=True)
    late = fields.Boolean()
    #: ``full`` or ``summary`` as mailed; null (and no recipients) on a notice recorded before
    #: the service stored them
    kind = fields.String(allow_none=True)
    recipients = fields.List(fields.Nested(RecipientOut), allow_none=True)


class BlockerOut(Schema):
    code = fields.String()
    detail = fields.String()


class PlanReservationOut(Schema):
    id = fields.String()
    account_id = fields.String()
    credit_class = fields.Nested(CreditClassOut)
    amount_sqft = fields.Integer()
    status = fields.String()
    expires_on = fields.Date()


class AllocationOut(Schema):
    reservation_id = fields.String()
    lot_id = fields.String()
    credit_class = fields.String()
    amount_sqft = fields.Integer()
    portion = fields.String()


class WithdrawalOut(Schema):
    id = fields.String()
    plan_id = fields.String()
    transaction_id = fields.String()
    reversal_transaction_id = fields.String(allow_none=True)
    withdrawn_sqft = fields.Integer()
    created_at = Timestamp()
    allocations = fields.List(fields.Nested(AllocationOut))
    external_refs = external_refs_out()


class PetitionOut(Schema):
    granted = fields.Boolean()
    decided_on = fields.Date()
    reason = fields.String(allow_none=True)
    late = fields.Boolean()


class AppealDecisionOut(Schema):
    outcome = fields.String()
    decided_on = fields.Date()
    late = fields.Boolean()


class AppealOut(Schema):
    id = fields.String()
    plan_id = fields.String()
    #: the plan's application whose decision it appeals (a revision may start another)
    application_number = fields.Integer()
    petitioner_kind = fields.String()
    petitioner_name = fields.String(allow_none=True)
    petitioner_address = fields.String(allow_none=True)
    resident_count = fields.Integer(allow_none=True)
    postmarked_on = fields.Date()
    received_on = fields.Date()
    filing_fee_cents = fields.Integer()
    security_cents = fields.Integer(allow_none=True)
    security_required_cents = fields.Integer(allow_none=True)
    ruleset = fields.String()
    grant_decision_due = fields.Date()
    petition = fields.Nested(PetitionOut, allow_none=True)
    grounds = fields.List(fields.String())
    factors_considered = fields.String(allow_none=True)
    decision_due = fields.Date(allow_none=True)
    decision = fields.Nested(AppealDecisionOut, allow_none=True)
    served_on = fields.Date(allow_none=True)
    judicial_review_ends = fields.Date(allow_none=True)
    status = fields.String()


class PlanOut(Schema):
    id = fields.String()
    lgu_id = fields.String()
    applicant = fields.String()
    project = fields.String()
    received_on = fields.Date()
    first_received_on = fields.Date()
    impact = fields.Nested(ImpactIn)
    replacement_ratio = fields.String()
    method = fields.String()
    replacement_outside_service_area = fields.Boolean()
    in_lieu_amount_due_cents = fields.Integer(allow_none=True)
    appeal_security_required_cents = fields.Integer(allow_none=True)
    watershed_district = fields.String(allow_none=True)
    location = fields.String(allow_none=True)
    security_required_cents = fields.Integer(allow_none=True)
    ruleset = fields.String()
    status = fields.String()
    outcome = fields.String(allow_none=True)
    reversed_on_appeal = fields.Boolean()
    notice_kind = fields.String()
    deadlines = fields.Nested(DeadlinesOut)
    notice = fields.Nested(NoticeOut, allow_none=True)
    #: the application the dates belong to: 1, plus one per revision counting as new
    application_number = fields.Integer()
    extensions = fields.List(fields.Nested(PlanExtensionOut))
    tep = fields.Nested(PanelOut, allow_none=True)
    decision = fields.Nested(PlanDecisionOut, allow_none=True)
    decision_notice = fields.Nested(NoticeOut, allow_none=True)
    copy_requests = fields.List(fields.Nested(CopyRequestOut))
    replacement_completed_on = fields.Date(allow_none=True)
    required_credit_sqft = fields.Integer()
    required_unrestricted_sqft = fields.Integer()
    reservations = fields.List(fields.Nested(PlanReservationOut))
    withdrawals = fields.List(fields.Nested(WithdrawalOut))
    appeals = fields.List(fields.Nested(AppealOut))
    applications = fields.List(fields.Nested(ApplicationOut))
    impact_may_proceed = fields.Boolean()
    impact_blockers = fields.List(fields.Nested(BlockerOut))
    external_refs = external_refs_out()


PlanPage = page_schema(PlanOut, "PlanPage")


class PlanListArgs(Schema):
    status = fields.String(
        load_default=None,
        validate=validate.OneOf(
            ["received", "noticed", "approved", "denied", "deemed_approved", "appealed", "final"]
        ),
    )
    #: text the applicant or the project contains, in any case
    q = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=300),
        metadata={"description": "text the applicant or the project contains, in any case"},
    )
    received_from = IsoDate(
        load_default=None, metadata={"description": "received on or after this date"}
    )
    received_to = IsoDate(
        load_default=None, metadata={"description": "received on or before this date"}
    )
    external_ref = ExternalRefFilter()
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    cursor = fields.String(load_default=None)


class MailedIn(Schema):
    mailed_on = EventDate(required=True)


class WithdrawalIn(Schema):
    reservation_ids = fields.List(
        RecordId(),
        required=True,
        validate=validate.Length(min=1, max=100),
    )
    external_refs = external_refs_in()


class CompletedIn(Schema):
    completed_on = EventDate(required=True)


class PetitionIn(Schema):
    petitioner_kind = fields.String(required=True, validate=validate.OneOf(PETITIONER_KINDS))
    petitioner_name = Name(required=True)
    petitioner_address = Address(required=True)
    resident_count = StrictInteger(minimum=0, load_default=None, allow_none=True)
    postmarked_on = EventDate(required=True)
    received_on = EventDate(required=True)
    filing_fee_cents = Quantity(minimum=0, required=True)
    security_cents = Quantity(minimum=0, load_default=None, allow_none=True)


class PetitionDecisionIn(Schema):
    granted = fields.Boolean(required=True)
    decided_on = EventDate(required=True)
    reason = fields.String(load_default=None, validate=validate.Length(min=1, max=4000))
    #: Subd. 9's grounds for denying a petition: required for a denial, none for a grant
    grounds = fields.List(
        fields.String(validate=validate.OneOf(DENIAL_GROUNDS)),
        load_default=None,
        validate=validate.Length(max=len(DENIAL_GROUNDS)),
    )
    #: the wetland's size, other factors in controversy, patterns of similar acts, the
    #: consequences of the delay an appeal brings (Subd. 9)
    factors_considered = fields.String(load_default=None, validate=validate.Length(max=4000))

    @validates_schema
    def _grounds_for_a_denial_only(self, data: dict[str, object], **_: object) -> None:
        grounds = data.get("grounds")
        if data.get("granted") is False and not grounds:
            raise ValidationError(
                "a denial names one or more of " + ", ".join(DENIAL_GROUNDS), "grounds"
            )
        if data.get("granted") is True and grounds:
            raise ValidationError("a granted petition has no grounds for denial", "grounds")


class AppealDecisionIn(Schema):
    outcome = fields.String(
        required=True, validate=validate.OneOf(["plan_upheld", "plan_reversed"])
    )
    decided_on = EventDate(required=True)
    #: the day the decision was mailed to the parties, if it already was
    served_on = EventDate(load_default=None)


class ServiceIn(Schema):
    served_on = EventDate(required=True)


class AppealSecurityIn(Schema):
    #: 1..50,000 cents (the ruleset's cap, checked with the plan's ruleset)
    amount_cents = Quantity(required=True)


class PaymentIn(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(PAYMENT_KINDS))
    amount_cents = Quantity(required=True)
    payer = Name(required=True)
    received_on = EventDate(required=True)
    plan_id = RecordId(load_default=None)
    appeal_id = RecordId(load_default=None)
    external_refs = external_refs_in()


class PaymentOut(Schema):
    id = fields.String()
    kind = fields.String()
    amount_cents = fields.Integer()
    payer = fields.String()
    received_on = fields.Date()
    plan_id = fields.String(allow_none=True)
    appeal_id = fields.String(allow_none=True)
    transaction_id = fields.String()
    status = fields.String()
    compensation_transaction_id = fields.String(allow_none=True)
    ruleset = fields.String()
    created_at = Timestamp()
    external_refs = external_refs_out()


PAYMENT_STATUSES = ("received", "refunded", "returned")


class PaymentListArgs(Schema):
    plan_id = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=40),
        metadata={"description": "only this plan's payments (its appeals' included)"},
    )
    status = fields.String(load_default=None, validate=validate.OneOf(PAYMENT_STATUSES))
    external_ref = ExternalRefFilter()


class PaymentList(Schema):
    items = fields.List(fields.Nested(PaymentOut))


class SecurityIn(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(SECURITY_KINDS))
    issuer = Name(required=True)
    amount_cents = Quantity(required=True)
    irrevocable = fields.Boolean(required=True)
    issued_on = EventDate(required=True)
    expires_on = IsoDate(required=True)
    external_refs = external_refs_in()


class SecurityOut(Schema):
    id = fields.String()
    plan_id = fields.String()
    kind = fields.String()
    issuer = fields.String()
    amount_cents = fields.Integer()
    irrevocable = fields.Boolean()
    issued_on = fields.Date()
    expires_on = fields.Date()
    status = fields.String()
    released_on = fields.Date(allow_none=True)
    release_reason = fields.String(allow_none=True)
    drawn_on = fields.Date(allow_none=True)
    drawn_cents = fields.Integer(allow_none=True)
    #: what is left of it: a security drawn in part stays held for the rest
    undrawn_cents = fields.Integer()
    draws = fields.List(fields.Nested(DrawOut))
    transaction_id = fields.String()
    external_refs = external_refs_out()


class SecurityListArgs(Schema):
    status = fields.String(
        load_default=None, validate=validate.OneOf(["held", "released", "drawn", "expired"])
    )
    expiring_before = IsoDate(load_default=None)
    plan_id = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=40),
        metadata={"description": "only this plan's securities"},
    )
    external_ref = ExternalRefFilter()


class SecurityList(Schema):
    items = fields.List(fields.Nested(SecurityOut))


class ReleaseIn(Schema):
    released_on = EventDate(required=True)
    reason = Reason()


class DrawIn(Schema):
    drawn_on = EventDate(required=True)
    amount_cents = Quantity(required=True)
