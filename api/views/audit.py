"""API.md "Audit and reports": journal, trial balance, verify, access events, statements, and the
public credit availability report."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import select
from sqlalchemy.orm import Session

from api.context import actor, database, require_board
from api.pagination import Listing, csv_response, wants_csv
from api.roles import roles
from api.schemas.common import CreditClassOut, IsoDate, Timestamp
from api.schemas.notices import ComplianceArgs, ComplianceOut, ComplianceRow
from bank import audit, compliance, parties, reports
from bank.access import AuditEvent
from bank.errors import ValidationFailed
from ledger import clock, sealer

blp = Blueprint("audit", __name__, url_prefix="/api/v1", description="Audit and reports")
JOURNAL, EVENTS = Listing("/audit/journal"), Listing("/audit/events")


class JournalArgs(Schema):
    from_ = IsoDate(data_key="from", load_default=None)
    to = IsoDate(load_default=None)
    account_id = fields.String(load_default=None)
    kind = fields.String(load_default=None)
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    cursor = fields.String(load_default=None)


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


class JournalPage(Schema):
    items = fields.List(fields.Nested(JournalTxOut))
    next_cursor = fields.String(allow_none=True)


JOURNAL_FIELDS = list(JournalTxOut().fields)


class AsOfOptional(Schema):
    as_of = IsoDate(load_default=None)


class AssetRow(Schema):
    asset = fields.String()
    unit = fields.String()
    debits = fields.Integer()
    credits = fields.Integer()
    balanced = fields.Boolean()


class TrialBalanceOut(Schema):
    as_of = fields.Date()
    balanced = fields.Boolean()
    assets = fields.List(fields.Nested(AssetRow))


class LastFullPassOut(Schema):
    at = Timestamp()
    seq = fields.Integer()
    transactions = fields.Integer()


class VerifyOut(Schema):
    ok = fields.Boolean()
    mode = fields.String(validate=validate.OneOf(["full", "since_checkpoint"]))
    transactions_checked = fields.Integer()
    accounts_checked = fields.Integer()
    first_broken = fields.Dict(allow_none=True)
    last_full_pass = fields.Nested(LastFullPassOut, allow_none=True)


class EventOut(Schema):
    at = Timestamp()
    actor = fields.String(allow_none=True)
    kind = fields.String()
    path = fields.String()
    request_id = fields.String(allow_none=True)
    status = fields.Integer()


class EventPage(Schema):
    items = fields.List(fields.Nested(EventOut))
    next_cursor = fields.String(allow_none=True)


class PageOnly(Schema):
    limit = fields.Integer(load_default=50, validate=validate.Range(min=1, max=500))
    cursor = fields.String(load_default=None)


class StatementArgs(Schema):
    from_ = IsoDate(data_key="from", required=True)
    to = IsoDate(required=True)


class StatementEntryOut(Schema):
    transaction_id = fields.String()
    kind = fields.String()
    lot_id = fields.String()
    amount_sqft = fields.Integer()
    balance_after_sqft = fields.Integer()
    effective_on = fields.Date()
    recorded_at = Timestamp()
    memo = fields.String(allow_none=True)


class StatementClassOut(Schema):
    credit_class = fields.Nested(CreditClassOut)
    opening_sqft = fields.Integer()
    entries = fields.List(fields.Nested(StatementEntryOut))
    closing_sqft = fields.Integer()


class StatementOut(Schema):
    account_id = fields.String()
    from_ = fields.Date(data_key="from")
    to = fields.Date()
    classes = fields.List(fields.Nested(StatementClassOut))


STATEMENT_FIELDS = ["credit_class", "row", *list(StatementEntryOut().fields)]


class AvailabilityRow(Schema):
    service_area = fields.Integer()
    wetland_type = fields.String()
    restricted = fields.Boolean()
    available_sqft = fields.Integer()


class AvailabilityOut(Schema):
    as_of = fields.Date()
    items = fields.List(fields.Nested(AvailabilityRow))


def _filters(args: dict[str, Any]) -> audit.JournalFilter:
    return audit.JournalFilter(args["from_"], args["to"], args["account_id"], args["kind"])


@blp.route("/audit/journal")
class Journal(MethodView):
    @roles("board")
    @blp.arguments(JournalArgs, location="query")
    @blp.response(200, JournalPage)
    @blp.alt_response(200, description="text/csv of every transaction", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Every transaction in chain order with its entries, actor, keys, times and hashes."""
        require_board()
        db = database()
        sealer.seal_all(db)
        if wants_csv():
            return csv_response(JOURNAL_FIELDS, _stream_journal(db, _filters(args)), "journal.csv")
        with db.transaction() as session:
            rows = audit.journal_page(
                session, _filters(args), args["limit"], JOURNAL.after(args["cursor"])
            )
        return JOURNAL.page(rows, args["limit"], key=lambda row: row["seq"])


def _stream_journal(db: Any, filters: audit.JournalFilter) -> Iterator[dict[str, Any]]:
    with db.reader() as connection, Session(bind=connection) as session:
        yield from audit.journal_all(session, filters)


@blp.route("/audit/trial-balance")
class TrialBalance(MethodView):
    @roles("board")
    @blp.arguments(AsOfOptional, location="query")
    @blp.response(200, TrialBalanceOut)
    def get(self, args: dict[str, Any]) -> Any:
        """Per asset: total debits and credits as of a date (default today), and balanced."""
        require_board()
        as_of = args["as_of"] or clock.today()
        with database().transaction() as session:
            assets = audit.trial_balance(session, as_of)
        return {"as_of": as_of, "balanced": all(a["balanced"] for a in assets), "assets": assets}


@blp.route("/audit/verify")
class Verify(MethodView):
    @roles("board")
    @blp.response(200, VerifyOut)
    def get(self) -> Any:
        """Check the hash chain, every stored balance and the registry's seals; name the first
        break.  Checks what was written since the last full pass's checkpoint; runs the full
        pass (recording a checkpoint) when there is none yet or the chain is short."""
        require_board()
        return audit.verify_answer(audit.verify_now(database()))


@blp.route("/audit/events")
class Events(MethodView):
    @roles("board")
    @blp.arguments(PageOnly, location="query")
    @blp.response(200, EventPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Refused requests (401/403) and token creations and revocations, oldest first."""
        require_board()
        after = EVENTS.after(args["cursor"])
        query = select(AuditEvent).order_by(AuditEvent.id).limit(args["limit"] + 1)
        if after is not None:
            query = query.where(AuditEvent.id > after)
        with database().transaction() as session:
            rows = [
                {
                    **parties.as_dict(e, "at", "actor", "kind", "path", "request_id", "status"),
                    "id": e.id,
                }
                for e in session.execute(query).scalars()
            ]
        return EVENTS.page(rows, args["limit"], key=lambda row: row["id"])


@blp.route("/accounts/<account_id>/statement")
class Statement(MethodView):
    @roles("board", "holder")
    @blp.arguments(StatementArgs, location="query")
    @blp.response(200, StatementOut)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """Opening balance, every entry, closing balance, per credit class (holder or board)."""
        start, end = args["from_"], args["to"]
        if end < start:
            raise ValidationFailed("the period ends before it starts", {"to": ["before from"]})
        with database().transaction() as session:
            account = parties.visible_account(session, actor(), account_id)
            classes = reports.statement(session, account, start, end)
        if wants_csv():
            return csv_response(STATEMENT_FIELDS, statement_csv_rows(classes), "statement.csv")
        return {"account_id": account_id, "from_": start, "to": end, "classes": classes}


def statement_csv_rows(classes: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """A statement as CSV rows: per class an opening row, its entries, a closing row."""
    for block in classes:
        code = block["credit_class"]["code"]
        yield {"credit_class": code, "row": "opening", "balance_after_sqft": block["opening_sqft"]}
        for entry in block["entries"]:
            yield {"credit_class": code, "row": "entry", **entry}
        yield {"credit_class": code, "row": "closing", "balance_after_sqft": block["closing_sqft"]}


@blp.route("/reports/credit-availability")
class CreditAvailability(MethodView):
    @blp.response(200, AvailabilityOut)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self) -> Any:
        """Available credits per service area, wetland type and restriction (public)."""
        with database().transaction() as session:
            items = reports.credit_availability(session)
        if wants_csv():
            return csv_response(list(AvailabilityRow().fields), iter(items), "availability.csv")
        return {"as_of": clock.today(), "items": items}


@blp.route("/reports/lgu-compliance")
class LguCompliance(MethodView):
    @roles("board")
    @blp.arguments(ComplianceArgs, location="query")
    @blp.response(200, ComplianceOut)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Per LGU, over the plans received in the period: decided in time, deemed approved,
        notices late or missing, reversed on appeal (Subd. 1 (c); board)."""
        require_board()
        start, end = args["from_"], args["to"]
        if end < start:
            raise ValidationFailed("the period ends before it starts", {"to": ["before from"]})
        today = clock.today()
        with database().transaction() as session:
            items = compliance.lgu_compliance(session, start, end, today)
        if wants_csv():
            name = f"lgu-compliance-{start.isoformat()}-{end.isoformat()}.csv"
            return csv_response(list(ComplianceRow().fields), iter(items), name)
        return {"from_": start, "to": end, "as_of": today, "items": items}
