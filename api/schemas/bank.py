"""Schemas of docs/http.md "Parties and reference data", "Accounts, deposits and transfers",
"Reservations"."""

from __future__ import annotations

import re
from typing import Any

from marshmallow import Schema, ValidationError, fields, validate, validates_schema

from api.pagination import PageArgs
from api.schemas.common import (
    WETLAND_TYPES,
    County,
    EventDate,
    IsoDate,
    Name,
    Quantity,
    Reason,
    RecordId,
    ServiceArea,
    StrictInteger,
    Timestamp,
    WithdrawnSqft,
    page_schema,
    text_of,
)
from api.schemas.replies import register, reply_schema
from bank.account_reservations import AccountReservation, ReservedFor
from bank.accounts import AccountView
from bank.balances import BalancesAsOf, ClassBalance, PastClassBalance
from bank.credits import CLASS_CODE_PATTERN, LotView
from bank.deposit_views import DepositCredit, DepositView, ReversalView
from bank.parties import LGU_KINDS
from bank.reservation_tables import ReservationLot
from bank.reservations import ReservationView
from bank.rules.deposit_rules import CATEGORIES
from bank.site_register import CreditAreaLine, SiteView
from bank.status_history import StatusChangeView
from bank.transfers import TransferLotView, TransferView


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


CreditAreaOut = reply_schema(CreditAreaLine, "CreditAreaOut")
SiteOut = reply_schema(SiteView, "SiteOut")


class ServiceAreaOut(Schema):
    number = fields.Integer()
    name = fields.String()


class ServiceAreaList(Schema):
    items = fields.List(fields.Nested(ServiceAreaOut))


StatusChangeOut = reply_schema(StatusChangeView, "StatusChangeOut")


class StatusHistory(Schema):
    """An account's or a site's status changes, first to last (a short list: not paged)."""

    items = fields.List(fields.Nested(StatusChangeOut))


class AccountIn(Schema):
    holder_id = RecordId(required=True)
    service_area = ServiceArea(required=True)
    county = County(required=True)
    name = Name(load_default=None)


BalanceOut = reply_schema(ClassBalance, "BalanceOut")
AccountOut = reply_schema(AccountView, "AccountOut")


AccountPage = page_schema(AccountOut, "AccountPage")


class AsOfArgs(Schema):
    # a day not yet lived has no balances to show: what the account will hold depends on what
    # is still to happen (docs/http.md)
    as_of = EventDate(
        required=True,
        metadata={
            "description": "The day whose end the balances are read at; today reads the "
            "account as it stands now, and a later day is refused (validation_error)."
        },
    )


# a past day's balance: posted and reserved as of that day's end (freezes are not dated)
PastBalanceOut = reply_schema(PastClassBalance, "PastBalanceOut")
BalancesAsOfOut = reply_schema(BalancesAsOf, "BalancesAsOfOut")
LotOut = reply_schema(LotView, "LotOut")


LotPage = page_schema(LotOut, "LotPage")


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
    reference = fields.String(required=True, validate=text_of(100))
    approved_on = EventDate(required=True)
    lgu_id = RecordId(required=True)


class ActionIn(CreditAreaIn):
    credit_sqft = Quantity(required=True)
    qualifying_years = StrictInteger(minimum=0, load_default=None, allow_none=True)
    established_on = IsoDate(load_default=None, allow_none=True)
    easement_terminated_on = EventDate(load_default=None, allow_none=True)
    associated_project = fields.String(
        load_default=None,
        allow_none=True,
        validate=validate.Length(max=300),
        metadata={
            "description": (
                "A treatment pond's project that will impact a wetland (Subd. 12 (c)(4)). A "
                "pond without one, or with text that shows nothing (spaces, a zero-width space, "
                "control characters), is `not_eligible`."
            )
        },
    )


class DepositIn(Schema):
    bank_site_id = RecordId(required=True)
    effective_on = EventDate(
        required=True,
        metadata={
            "description": "The day the credits are effective: not before the day the account "
            "was opened (validation_error)."
        },
    )
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


DepositCreditOut = reply_schema(DepositCredit, "DepositCreditOut")
DepositReversalOut = reply_schema(ReversalView, "DepositReversalOut")
DepositOut = reply_schema(DepositView, "DepositOut")


class DepositReverseIn(Schema):
    effective_on = EventDate(required=True)
    reason = Reason()


class CreditClassCode(fields.String):
    """A credit class's code, such as ``BSA5-T2-U`` (``bank.credits.CLASS_CODE_PATTERN``, the
    whole value: a trailing newline is not the code either)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(metadata={"pattern": CLASS_CODE_PATTERN}, **kwargs)

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> Any:
        code = super()._deserialize(value, attr, data, **kwargs)
        if not re.fullmatch(CLASS_CODE_PATTERN, code):
            raise ValidationError("Not a credit class code, such as BSA5-T2-U.")
        return code


class TransferIn(Schema):
    from_account_id = RecordId(required=True)
    to_account_id = RecordId(required=True)
    credit_class = CreditClassCode(load_default=None)
    lot_id = RecordId(load_default=None)
    amount_sqft = Quantity(required=True)
    price_per_sqft_cents = Quantity(minimum=0, load_default=None, allow_none=True)
    memo = fields.String(load_default=None, validate=validate.Length(max=2000))


TransferLotOut = reply_schema(TransferLotView, "TransferLotOut")
TransferOut = reply_schema(TransferView, "TransferOut")


class ReservationIn(Schema):
    plan_id = RecordId(required=True)
    credit_class = CreditClassCode(load_default=None)
    lot_id = RecordId(load_default=None)
    amount_sqft = Quantity(required=True)
    expires_on = IsoDate(required=True)


class ReservationLotOut(Schema):
    """A lot's share of a reservation: two columns of the row (its pending transfer stays in
    the ledger)."""

    lot_id = fields.String()
    amount_sqft = fields.Integer()


register(ReservationLot, ReservationLotOut)
ReservationOut = reply_schema(ReservationView, "ReservationOut", withdrawn_sqft=WithdrawnSqft())


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


ReservedForPlanOut = reply_schema(ReservedFor, "ReservedForPlanOut")
# a reservation as its account's holder sees it: the plan it is for, not its lots
AccountReservationOut = reply_schema(
    AccountReservation,
    "AccountReservationOut",
    exclude=("plan_id", "lots"),
    withdrawn_sqft=WithdrawnSqft(),
)
register(AccountReservation, AccountReservationOut)
AccountReservationPage = page_schema(AccountReservationOut, "AccountReservationPage")
