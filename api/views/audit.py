"""docs/http.md "Audit and reports": journal, trial balance, verify, access events, statements,
and the public credit availability report."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import asdict
from typing import Any

from flask.views import MethodView

from api.context import actor, database, require_board
from api.pagination import Listing, csv_response, wants_csv
from api.schemas.audit import (
    AsOfOptional,
    AvailabilityOut,
    AvailabilityRow,
    EventPage,
    JournalArgs,
    JournalPage,
    JournalTxOut,
    PageOnly,
    StatementArgs,
    StatementEntryOut,
    StatementOut,
    TrialBalanceOut,
    VerifyOut,
)
from api.schemas.notices import ComplianceArgs, ComplianceOut, ComplianceRow
from api.views.blueprint import ApiBlueprint
from bank import audit, compliance, reports

blp = ApiBlueprint("audit", __name__, description="Audit and reports")
JOURNAL, EVENTS = Listing("/audit/journal"), Listing("/audit/events")

JOURNAL_FIELDS = list(JournalTxOut().fields)
#: a statement as CSV: per class an opening row, its entries and a closing row
STATEMENT_FIELDS = ["credit_class", "row", *list(StatementEntryOut().fields)]


def _filters(args: dict[str, Any]) -> audit.JournalFilter:
    return audit.JournalFilter(args["from_"], args["to"], args["account_id"], args["kind"])


@blp.route("/audit/journal")
class Journal(MethodView):
    @blp.read("board", query=JournalArgs, reply=JournalPage, one_unit=False)
    @blp.alt_response(200, description="text/csv of every transaction", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Every transaction in chain order with its entries, actor, keys, times and hashes.

        Paged by cursor: `next_cursor` is null on the last page; every page also carries
        `resume_cursor`, the cursor after its last transaction (after the cursor it was read
        from, when it is empty), from which a client asks again later for the transactions
        chained since (the chain only grows at its end)."""
        board = require_board()
        if wants_csv():
            stream = audit.journal_export(database(), board, _filters(args))
            return csv_response(JOURNAL_FIELDS, stream, "journal.csv")
        after, limit = JOURNAL.after(args["cursor"]), args["limit"]
        rows = audit.journal_page(database(), board, _filters(args), limit, after)
        return JOURNAL.resumable_page(
            rows, limit, key=lambda row: row["seq"], after=after, origin=0
        )


@blp.route("/audit/trial-balance")
class TrialBalance(MethodView):
    @blp.read("board", query=AsOfOptional, reply=TrialBalanceOut)
    def get(self, args: dict[str, Any]) -> Any:
        """Per asset: total debits and credits as of a date (default today), and balanced."""
        return audit.trial_balance_as_of(database(), require_board(), args["as_of"])


@blp.route("/audit/verify")
class Verify(MethodView):
    @blp.read("board", reply=VerifyOut, one_unit=False)
    def get(self) -> Any:
        """Check the hash chain, every stored balance and the registry's seals; name the first
        break.  Checks what was written since the last full pass's checkpoint; runs the full
        pass (recording a checkpoint) when there is none yet or the chain is short."""
        return audit.verify_ledger(database(), require_board())


@blp.route("/audit/events")
class Events(MethodView):
    @blp.read("board", query=PageOnly, reply=EventPage, one_unit=False)
    def get(self, args: dict[str, Any]) -> Any:
        """Refused requests (401/403) and token creations and revocations, oldest first.

        Paged by cursor like every long list: `next_cursor` is null on the last page.  Every
        page also carries `resume_cursor`, the cursor after its last event (after the cursor it
        was read from, when it is empty): a client tailing the trail keeps the last page's and
        asks again from it later, getting the events recorded since (an empty page, 200, while
        there are none)."""
        after, limit = EVENTS.after(args["cursor"]), args["limit"]
        rows = audit.events(database(), require_board(), after, limit)
        return EVENTS.resumable_page(rows, limit, key=lambda row: row.id, after=after, origin=0)


@blp.route("/accounts/<account_id>/statement")
class Statement(MethodView):
    @blp.read("board", "holder", query=StatementArgs, reply=StatementOut, one_unit=False)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """Opening balance, every entry, closing balance, per credit class (holder or board).

        Entries by effective date and, within a day, in the order they committed (hash-chain
        position, then entry id); the closing balance is the opening plus the entries."""
        found = reports.account_statement(
            database(), actor(), account_id, args["from_"], args["to"]
        )
        if wants_csv():
            return csv_response(
                STATEMENT_FIELDS, statement_csv_rows(found.classes), "statement.csv"
            )
        return found


def statement_csv_rows(classes: list[reports.StatementClass]) -> Iterator[dict[str, Any]]:
    """A statement as CSV rows: per class an opening row, its entries, a closing row."""
    for block in classes:
        code = block.credit_class.code
        yield {"credit_class": code, "row": "opening", "balance_after_sqft": block.opening_sqft}
        for entry in block.entries:
            yield {"credit_class": code, "row": "entry", **asdict(entry)}
        yield {"credit_class": code, "row": "closing", "balance_after_sqft": block.closing_sqft}


@blp.route("/reports/credit-availability")
class CreditAvailability(MethodView):
    @blp.response(200, AvailabilityOut)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self) -> Any:
        """Available credits per service area, wetland type and restriction (public)."""
        found = reports.availability(database())
        if wants_csv():
            return csv_response(
                list(AvailabilityRow().fields), iter(found.items), "availability.csv"
            )
        return found


@blp.route("/reports/lgu-compliance")
class LguCompliance(MethodView):
    @blp.read("board", query=ComplianceArgs, reply=ComplianceOut)
    @blp.alt_response(200, description="text/csv", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Per LGU, over the plans received in the period: decided in time, deemed approved,
        notices late or missing, reversed on appeal (Subd. 1 (c); board)."""
        found = compliance.report(database(), require_board(), args["from_"], args["to"])
        if wants_csv():
            name = f"lgu-compliance-{found.from_.isoformat()}-{found.to.isoformat()}.csv"
            return csv_response(list(ComplianceRow().fields), iter(found.items), name)
        return found
