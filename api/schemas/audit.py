"""Schemas of docs/http.md "Audit and reports": the journal, the trial balance, verify, access
events, statements, and the public credit availability report."""

from __future__ import annotations

from marshmallow import Schema, fields, validate

from api.pagination import PageArgs
from api.schemas.common import IsoDate, PeriodArgs, Timestamp
from api.schemas.replies import reply_schema
from bank import journal
from bank.audit import AssetTotals, LastFullPass, TrialBalance, VerifyAnswer
from bank.reports import Availability, Statement, StatementClass, StatementEntry


class JournalArgs(PageArgs):
    from_ = IsoDate(data_key="from", load_default=None)
    to = IsoDate(load_default=None)
    account_id = fields.String(load_default=None)
    kind = fields.String(
        load_default=None,
        validate=validate.OneOf(journal.KINDS),
        metadata={"description": "only the transactions of this kind"},
    )


class JournalEntryOut(Schema):
    account = fields.String()
    asset = fields.String()
    amount = fields.Integer()
    phase = fields.String()
    #: on an account with several balance slots (a hot system account), ``balance_after`` is
    #: the balance of the slot this entry changed; 0 on every other account
    balance_after = fields.Integer()
    balance_slot = fields.Integer()
    resolves_id = fields.String(allow_none=True)


class JournalTxOut(Schema):
    seq = fields.Integer()
    transaction_id = fields.String()
    kind = fields.String()
    pending = fields.Boolean()
    expires_at = Timestamp(allow_none=True)
    reverses_id = fields.String(allow_none=True)
    actor = fields.String(allow_none=True)
    request_id = fields.String(allow_none=True)
    idempotency_key = fields.String()
    effective_on = fields.Date()
    recorded_at = Timestamp()
    memo = fields.String(allow_none=True)
    hash = fields.String()
    prev_hash = fields.String()
    entries = fields.List(fields.Nested(JournalEntryOut))


def resumable_page(item: type[Schema], name: str, rows: str, since: str) -> type[Schema]:
    """A page of ``item`` that a client can tail (``api.pagination.Listing.resumable_page``):
    ``next_cursor`` null on the last page, ``resume_cursor`` never null; ``rows`` names what it
    lists, ``since`` how they come after it."""
    return Schema.from_dict(
        {
            "items": fields.List(fields.Nested(item)),
            "next_cursor": fields.String(
                allow_none=True,
                metadata={"description": "the next page's cursor; null on the last page"},
            ),
            "resume_cursor": fields.String(
                metadata={
                    "description": f"the cursor after this page's last {rows[:-1]} (after the "
                    "cursor it was read from, when it is empty); never null: pass it as "
                    f"`cursor` later to get the {rows} {since}"
                },
            ),
        },
        name=name,
    )


JournalPage = resumable_page(JournalTxOut, "JournalPage", "transactions", "chained since")


class AsOfOptional(Schema):
    as_of = IsoDate(load_default=None)


AssetRow = reply_schema(AssetTotals, "AssetRow")
TrialBalanceOut = reply_schema(TrialBalance, "TrialBalanceOut")
LastFullPassOut = reply_schema(LastFullPass, "LastFullPassOut")
VerifyOut = reply_schema(
    VerifyAnswer,
    "VerifyOut",
    mode=fields.String(validate=validate.OneOf(["full", "since_checkpoint"])),
)


class EventOut(Schema):
    at = Timestamp()
    actor = fields.String(allow_none=True)
    kind = fields.String()
    path = fields.String()
    request_id = fields.String(allow_none=True)
    status = fields.Integer()


EventPage = resumable_page(EventOut, "EventPage", "events", "recorded since")


class PageOnly(PageArgs):
    """``?limit=&cursor=``"""


StatementArgs = PeriodArgs


StatementEntryOut = reply_schema(StatementEntry, "StatementEntryOut")
StatementClassOut = reply_schema(StatementClass, "StatementClassOut")
StatementOut = reply_schema(Statement, "StatementOut")


class AvailabilityRow(Schema):
    service_area = fields.Integer()
    wetland_type = fields.String()
    restricted = fields.Boolean()
    available_sqft = fields.Integer()


AvailabilityOut = reply_schema(
    Availability, "AvailabilityOut", items=fields.List(fields.Nested(AvailabilityRow))
)
