"""Schemas of API.md "Parties and reference data", "Bank accounts", "Deposits", "Transfers",
"Reservations"."""

from __future__ import annotations

from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from api.pagination import PageArgs
from api.schemas.common import (
    WETLAND_TYPES,
    County,
    CreditClassOut,
    EventDate,
    IsoDate,
    Name,
    Quantity,
    Reason,
    RecordId,
    ServiceArea,
    StrictInteger,
    Timestamp,
    page_schema,
)
from bank.parties import LGU_KINDS
from bank.rules.deposit_rules import CATEGORIES


class HolderIn(Schema):
    name = Name(required=True)
    email = fields.Email(load_default=None, validate=validate.Length(max=300))
    address = fields.String(load_default=None, validate=validate.Length(max=2000))


class HolderOut(Schema):
    id = fields.String()
    name = fields.String()
    email = fields.String(allow_none=True)
    address = fields.String(allow_none=True)
    created_at = Timestamp()


class LguIn(Schema):
    name = Name(required=True)
    kind = fields.String(required=True, validate=validate.OneOf(LGU_KINDS))
    observes_indigenous_peoples_day = fields.Boolean(load_default=False)
    observes_friday_after_thanksgiving = fields.Boolean(load_default=False)


class LguOut(LguIn):
    id = fields.String()
    created_at = Timestamp()


class CreditAreaIn(Schema):
    """The area of one credited action under the site's approved banking plan."""

    category = fields.String(required=True, validate=validate.OneOf(sorted(CATEGORIES)))
    area_sqft = Quantity(required=True)


class SiteIn(Schema):
    name = Name(required=True)
    holder_id = RecordId(required=True)
    service_area = ServiceArea(required=True)
    county = County(required=True)
    major_watershed = fields.String(load_default=None, validate=validate.Length(max=200))
    credit_areas = fields.List(
        fields.Nested(CreditAreaIn),
        load_default=list,
        validate=validate.Length(max=len(CATEGORIES)),
    )


class CreditAreaAmendIn(CreditAreaIn):
    reason = Reason()


class CreditAreaOut(Schema):
    category = fields.String()
    area_sqft = fields.Integer()
    cap_sqft = fields.Integer()
    credited_sqft = fields.Integer()
    remaining_sqft = fields.Integer()


class SiteOut(Schema):
    id = fields.String()
    name = fields.String()
    holder_id = fields.String()
    service_area = fields.Integer()
    county = fields.String()
    major_watershed = fields.String(allow_none=True)
    frozen = fields.Boolean()
    created_at = Timestamp()
    credit_areas = fields.List(fields.Nested(CreditAreaOut))


class ServiceAreaOut(Schema):
    number = fields.Integer()
    name = fields.String()


class ServiceAreaList(Schema):
    items = fields.List(fields.Nested(ServiceAreaOut))


class AccountIn(Schema):
    holder_id = RecordId(required=True)
    service_area = ServiceArea(required=True)
    county = County(required=True)
    name = fields.String(load_default=None, validate=validate.Length(max=300))


class BalanceOut(Schema):
    credit_class = fields.Nested(CreditClassOut)
    posted_sqft = fields.Integer()
    reserved_sqft = fields.Integer()
    frozen_sqft = fields.Integer()
    available_sqft = fields.Integer()


class AccountOut(Schema):
    id = fields.String()
    number = fields.String()
    holder_id = fields.String()
    service_area = fields.Integer()
    county = fields.String()
    name = fields.String(allow_none=True)
    status = fields.String()
    created_at = Timestamp()
    balances = fields.List(fields.Nested(BalanceOut))


AccountPage = page_schema(AccountOut, "AccountPage")


class AsOfArgs(Schema):
    as_of = IsoDate(required=True)


class BalancesAsOfOut(Schema):
    as_of = fields.Date()
    balances = fields.List(fields.Nested(BalanceOut))


class LotOut(Schema):
    id = fields.String()
    label = fields.String()
    credit_class = fields.String()
    bank_site_id = fields.String()
    deposit_id = fields.String()
    parent_lot_id = fields.String(allow_none=True)
    federally_approved = fields.Boolean()
    posted_sqft = fields.Integer()
    reserved_sqft = fields.Integer()
    frozen = fields.Boolean()
    available_sqft = fields.Integer()


class LotList(Schema):
    items = fields.List(fields.Nested(LotOut))


class EntryOut(Schema):
    transaction_id = fields.String()
    kind = fields.String()
    credit_class = fields.String()
    lot_id = fields.String()
    amount_sqft = fields.Integer()
    balance_after_sqft = fields.Integer()
    effective_on = fields.Date()
    recorded_at = Timestamp()
    memo = fields.String(allow_none=True)


EntryPage = page_schema(EntryOut, "EntryPage")

ENTRY_FIELDS = list(EntryOut().fields)


class BankingPlanIn(Schema):
    reference = fields.String(required=True, validate=validate.Length(min=1, max=100))
    approved_on = EventDate(required=True)
    lgu_id = RecordId(required=True)


class ActionIn(CreditAreaIn):
    credit_sqft = Quantity(required=True)
    qualifying_years = StrictInteger(minimum=0, load_default=None, allow_none=True)
    established_on = IsoDate(load_default=None, allow_none=True)
    easement_terminated_on = EventDate(load_default=None, allow_none=True)
    associated_project = fields.String(
        load_default=None, allow_none=True, validate=validate.Length(max=300)
    )


class DepositIn(Schema):
    bank_site_id = RecordId(required=True)
    effective_on = EventDate(required=True)
    banking_plan = fields.Nested(BankingPlanIn, required=True)
    wetland_type = fields.String(required=True, validate=validate.OneOf(WETLAND_TYPES))
    completed_on = EventDate(required=True)
    federally_approved = fields.Boolean(load_default=False)
    designated_for_replacement = fields.Boolean(required=True)
    paid_by_performer = fields.Boolean(required=True)
    paid_back_with_interest = fields.Boolean(load_default=False)
    actions = fields.List(
        fields.Nested(ActionIn), required=True, validate=validate.Length(min=1, max=50)
    )


class DepositCreditOut(Schema):
    category = fields.String()
    area_sqft = fields.Integer()
    credit_sqft = fields.Integer()
    cap_sqft = fields.Integer()
    restricted = fields.Boolean()
    credit_class = fields.Nested(CreditClassOut)
    lot_id = fields.String()


class DepositReversalOut(Schema):
    transaction_id = fields.String()
    effective_on = fields.Date()
    reason = fields.String()


class DepositOut(Schema):
    id = fields.String()
    account_id = fields.String()
    bank_site_id = fields.String()
    transaction_id = fields.String()
    effective_on = fields.Date()
    ruleset = fields.String()
    credits = fields.List(fields.Nested(DepositCreditOut))
    total_credit_sqft = fields.Integer()
    reversal = fields.Nested(DepositReversalOut, allow_none=True)


class DepositReverseIn(Schema):
    effective_on = EventDate(required=True)
    reason = Reason()


class TransferIn(Schema):
    from_account_id = RecordId(required=True)
    to_account_id = RecordId(required=True)
    credit_class = fields.String(load_default=None, validate=validate.Length(max=20))
    lot_id = RecordId(load_default=None)
    amount_sqft = Quantity(required=True)
    price_per_sqft_cents = Quantity(minimum=0, load_default=None, allow_none=True)
    memo = fields.String(load_default=None, validate=validate.Length(max=2000))


class TransferLotOut(Schema):
    from_lot_id = fields.String()
    to_lot_id = fields.String()
    amount_sqft = fields.Integer()


class TransferOut(Schema):
    id = fields.String()
    transaction_id = fields.String()
    from_account_id = fields.String()
    to_account_id = fields.String()
    credit_class = fields.Nested(CreditClassOut)
    amount_sqft = fields.Integer()
    price_per_sqft_cents = fields.Integer(allow_none=True)
    memo = fields.String(allow_none=True)
    recorded_at = Timestamp()
    lots = fields.List(fields.Nested(TransferLotOut))


class ReservationIn(Schema):
    plan_id = RecordId(required=True)
    credit_class = fields.String(load_default=None, validate=validate.Length(max=20))
    lot_id = RecordId(load_default=None)
    amount_sqft = Quantity(required=True)
    expires_on = IsoDate(required=True)


class ReservationLotOut(Schema):
    lot_id = fields.String()
    amount_sqft = fields.Integer()


class ReservationOut(Schema):
    id = fields.String()
    account_id = fields.String()
    plan_id = fields.String()
    credit_class = fields.Nested(CreditClassOut)
    lot_id = fields.String(allow_none=True)
    amount_sqft = fields.Integer()
    expires_on = fields.Date()
    status = fields.String()
    created_at = Timestamp()
    lots = fields.List(fields.Nested(ReservationLotOut))


# --- the board's lists and corrections of parties; closing accounts ---------------------------


class _Edit(Schema):
    """A correction: the fields to change (at least one) and why."""

    @validates_schema
    def _changes_something(self, data: dict[str, Any], **_kwargs: Any) -> None:
        if not set(data) - {"reason"}:
            raise ValidationError("name at least one field to change", "_schema")


class HolderEditIn(_Edit):
    name = Name()
    email = fields.Email(allow_none=True, validate=validate.Length(max=300))
    address = fields.String(allow_none=True, validate=validate.Length(max=2000))
    reason = Reason()


class LguEditIn(_Edit):
    name = Name()
    reason = Reason()


class SiteEditIn(_Edit):
    name = Name()
    county = County()
    major_watershed = fields.String(allow_none=True, validate=validate.Length(max=200))
    reason = Reason()


class NameQueryArgs(PageArgs):
    """``?q=`` (text the name contains, any case), ``&limit=&cursor=``"""

    q = fields.String(load_default=None, validate=validate.Length(max=300))


class SiteQueryArgs(NameQueryArgs):
    holder_id = RecordId(load_default=None)
    service_area = fields.Integer(load_default=None, validate=validate.Range(min=1, max=1000))


HolderPage = page_schema(HolderOut, "HolderPage")
LguPage = page_schema(LguOut, "LguPage")
SitePage = page_schema(SiteOut, "SitePage")


class ReservedForPlanOut(Schema):
    """The plan a reservation is for, as the account's holder may see it."""

    id = fields.String()
    project = fields.String()
    lgu_name = fields.String()
    status = fields.String()


class AccountReservationOut(ReservationOut):
    """A reservation as its account's holder sees it: the plan it is for, not its lots."""

    class Meta:
        exclude = ("plan_id", "lots")

    plan = fields.Nested(ReservedForPlanOut)


class AccountReservationList(Schema):
    items = fields.List(fields.Nested(AccountReservationOut))
