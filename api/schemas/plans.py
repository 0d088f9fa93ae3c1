"""Schemas of docs/http.md "Replacement plans and appeals", "Money and security instruments"."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

# derive the replies that those below nest: recipients, copy requests, draws; a plan's panel,
# decision, extensions and earlier applications
import api.schemas.notices  # noqa: F401
import api.schemas.plan_record  # noqa: F401
from api.pagination import PageArgs
from api.schemas.common import (
    WETLAND_TYPES,
    Address,
    County,
    EventDate,
    IsoDate,
    Name,
    Quantity,
    Ratio,
    Reason,
    RecordId,
    ServiceArea,
    StrictInteger,
    WithdrawnSqft,
    page_schema,
    text_of,
)
from api.schemas.filters import ExternalRefFilter, external_refs_in
from api.schemas.replies import reply_schema
from bank.appeal_views import AppealDecisionView, AppealView, PetitionView
from bank.appeals import DENIAL_GROUNDS, PETITIONER_KINDS, PetitionDecision
from bank.money import PaymentView
from bank.money_tables import PAYMENT_KINDS, PAYMENT_STATUSES, SECURITY_KINDS
from bank.notices import NoticeView
from bank.plan_report import Blocker, PlanReport
from bank.plans import METHODS
from bank.reservations import ReservationView
from bank.rules.timeline import Deadlines
from bank.securities import STATUSES as SECURITY_STATUSES
from bank.securities import SecurityView
from bank.withdrawals import AllocationView, WithdrawalView


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
    location = fields.String(required=True, validate=text_of(1000))
    #: Subd. 3: the security the LGU requires of a project-specific replacement (required then)
    security_required_cents = Quantity(load_default=None, allow_none=True)
    external_refs = external_refs_in()


# the notice kind is shown once, beside the deadlines
DeadlinesOut = reply_schema(Deadlines, "DeadlinesOut", exclude=("notice_kind",))
NoticeOut = reply_schema(NoticeView, "NoticeOut")
BlockerOut = reply_schema(Blocker, "BlockerOut")
# a reservation as its plan lists it: not the plan itself, nor the lot asked for, when it was
# made, or each lot's share
PlanReservationOut = reply_schema(
    ReservationView,
    "PlanReservationOut",
    exclude=("plan_id", "lot_id", "created_at", "lots"),
    withdrawn_sqft=WithdrawnSqft(),
)
AllocationOut = reply_schema(AllocationView, "AllocationOut")
WithdrawalOut = reply_schema(WithdrawalView, "WithdrawalOut")
# a petition's (an appeal's) decision is stored with its date, so a decision always has one,
# though the column it is read from may be null
PetitionOut = reply_schema(PetitionView, "PetitionOut", decided_on=fields.Date())
AppealDecisionOut = reply_schema(AppealDecisionView, "AppealDecisionOut", decided_on=fields.Date())
AppealOut = reply_schema(AppealView, "AppealOut")
PlanOut = reply_schema(
    PlanReport,
    "PlanOut",
    impact=fields.Nested(ImpactIn),
    deadlines=fields.Nested(DeadlinesOut),
    reservations=fields.List(fields.Nested(PlanReservationOut)),
)


PlanPage = page_schema(PlanOut, "PlanPage")


class PlanListArgs(PageArgs):
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
    reason = fields.String(load_default=None, validate=text_of(4000))
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

    @staticmethod
    def decision(data: dict[str, Any]) -> PetitionDecision:
        """The use case's request from what this schema loaded (the API's body, the page's form)."""
        return PetitionDecision(
            granted=data["granted"],
            decided_on=data["decided_on"],
            reason=data["reason"],
            grounds=tuple(data["grounds"] or ()),
            factors_considered=data["factors_considered"],
        )


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


#: ``postmarked_on`` of a payment (Subd. 9: a filing fee is mailed within the appeal window)
FEE_POSTMARK_DESCRIPTION = (
    "appeal_filing_fee only: the postmark on the envelope the fee came in, on or before "
    "received_on. Omitted for a fee received the day its petition was, the petition's postmark "
    "is recorded (the fee came in the petition's envelope); a fee received on another day "
    "names its own (validation_error without it). A fee postmarked after the appeal window (15 "
    "days after the notice of decision was mailed) is refused with appeal_window_closed, as a "
    "late petition is; any other kind of payment is refused with a postmark (validation_error)."
)


def fee_postmark_in() -> EventDate:
    return EventDate(
        load_default=None, allow_none=True, metadata={"description": FEE_POSTMARK_DESCRIPTION}
    )


class PaymentIn(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(PAYMENT_KINDS))
    amount_cents = Quantity(required=True)
    payer = Name(required=True)
    received_on = EventDate(required=True)
    postmarked_on = fee_postmark_in()
    plan_id = RecordId(load_default=None)
    appeal_id = RecordId(load_default=None)
    external_refs = external_refs_in()


class AppealPaymentIn(Schema):
    """The board's appeals page: a payment for the appeal it is recorded on."""

    kind = fields.String(
        required=True, validate=validate.OneOf(("appeal_filing_fee", "appeal_security"))
    )
    amount_cents = Quantity(required=True)
    payer = Name(required=True)
    received_on = EventDate(required=True)
    postmarked_on = fee_postmark_in()


# a reply's status is one of those its listing filters by (the OpenAPI document's enum)
PaymentOut = reply_schema(
    PaymentView, "PaymentOut", status=fields.String(validate=validate.OneOf(PAYMENT_STATUSES))
)


class PaymentReverseIn(Schema):
    """Why the board reverses a filing fee recorded in error (the wrong appeal, a mistyped id)."""

    reason = Reason()


class PaymentListArgs(PageArgs):
    """``GET /payments``: a page of them (``limit``, ``cursor``), by plan, status and reference."""

    plan_id = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=40),
        metadata={
            "description": "only this plan's payments (its appeals' included); not_found for a "
            "plan the caller may not see"
        },
    )
    status = fields.String(load_default=None, validate=validate.OneOf(PAYMENT_STATUSES))
    external_ref = ExternalRefFilter()


PaymentPage = page_schema(PaymentOut, "PaymentPage")


class SecurityIn(Schema):
    kind = fields.String(required=True, validate=validate.OneOf(SECURITY_KINDS))
    issuer = Name(required=True)
    amount_cents = Quantity(required=True)
    irrevocable = fields.Boolean(required=True)
    issued_on = EventDate(required=True)
    expires_on = IsoDate(required=True)
    external_refs = external_refs_in()


SecurityOut = reply_schema(
    SecurityView, "SecurityOut", status=fields.String(validate=validate.OneOf(SECURITY_STATUSES))
)


class SecurityListArgs(PageArgs):
    """``GET /securities``: a page of them (``limit``, ``cursor``), by status, expiry, plan and
    reference."""

    status = fields.String(load_default=None, validate=validate.OneOf(SECURITY_STATUSES))
    expiring_before = IsoDate(load_default=None)
    plan_id = fields.String(
        load_default=None,
        validate=validate.Length(min=1, max=40),
        metadata={
            "description": "only this plan's securities; not_found for a plan the caller may "
            "not see, as on /payments"
        },
    )
    external_ref = ExternalRefFilter()


SecurityPage = page_schema(SecurityOut, "SecurityPage")


class ReleaseIn(Schema):
    released_on = EventDate(required=True)
    reason = Reason()


class DrawIn(Schema):
    drawn_on = EventDate(required=True)
    amount_cents = Quantity(required=True)
