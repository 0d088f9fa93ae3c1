"""docs/http.md "Accounts, deposits and transfers": bank accounts, balances and deposits."""

from __future__ import annotations

from operator import attrgetter, itemgetter
from typing import Any

from flask.views import MethodView

from api.context import actor, database, request_id, require_board, ruleset
from api.pagination import Listing, PageArgs, csv_response, wants_csv
from api.schemas.bank import (
    ENTRY_FIELDS,
    AccountIn,
    AccountOut,
    AccountPage,
    AsOfArgs,
    BalancesAsOfOut,
    DepositIn,
    DepositOut,
    DepositReverseIn,
    EntryPage,
    LotPage,
    StatusHistory,
)
from api.schemas.filters import AccountListArgs
from api.views.blueprint import ApiBlueprint
from bank import account_close, accounts, balances, deposit_reversal, deposit_views, deposits
from bank.rules.deposit_rules import ActionRequest

blp = ApiBlueprint("accounts", __name__, description="Bank accounts")

ACCOUNTS = Listing("/accounts", id_prefix="acct")
#: one listing of every account's lots: a cursor names a lot, looked up in the account asked for
LOTS = Listing("/accounts/{account_id}/lots", id_prefix="lot")


@blp.route("/accounts")
class Accounts(MethodView):
    @blp.write("board", body=AccountIn, status=201, reply=AccountOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Open a bank account for a holder (board)."""
        return accounts.open_account(database(), ruleset(), require_board(), **data)

    @blp.read("board", "holder", query=AccountListArgs, reply=AccountPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Accounts: all for the board, its own for a holder; ``holder_id`` keeps one
        holder's (a holder asking for another's sees none).

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) accounts a page,
        in opening order, and ``next_cursor`` (null on the last page) passed back as ``cursor``
        for the next.  A cursor naming an account the caller does not see (another holder's, for
        a holder), or none, is 400 ``bad_request``; ``holder_id`` is a filter, which does not
        move a cursor."""
        after = ACCOUNTS.after(args["cursor"])
        rows = accounts.list_accounts(database(), actor(), args["holder_id"], args["limit"], after)
        return ACCOUNTS.page(rows, args["limit"], key=attrgetter("id"))


@blp.route("/accounts/<account_id>")
class AccountById(MethodView):
    @blp.read("board", "holder", reply=AccountOut)
    def get(self, account_id: str) -> Any:
        """An account with its balances per credit class (board, or its holder).

        One row per class of the lots the account holds: a class whose credits have all left
        it (transferred, withdrawn) stays as a row of zeros."""
        return accounts.get_account(database(), actor(), account_id)


@blp.route("/accounts/<account_id>/balances")
class AccountBalancesAsOf(MethodView):
    @blp.read("board", "holder", query=AsOfArgs, reply=BalancesAsOfOut)
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """Balances at the end of a date (board, or the holder).

        The rows the account showed at the end of that date (today: as it stands now, a
        reservation expiring tonight still reserved; a later date is `validation_error`): one
        per class of the lots it had by then (a lot with an entry effective on or before it), a
        class emptied by then a row of zeros, none for a lot it came to hold later."""
        return balances.balances_as_of(database(), actor(), account_id, args["as_of"])


@blp.route("/accounts/<account_id>/lots")
class AccountLots(MethodView):
    @blp.read("board", "holder", query=PageArgs, reply=LotPage)
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """The lots the account holds, with provenance (board, or the holder), oldest first:
        lots made at once (by one deposit or transfer) in the order of their labels.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) lots a page, and
        ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor of another account's lots is 400 ``bad_request``."""
        after, limit = LOTS.after(args["cursor"]), args["limit"]
        items = accounts.page_of_lots(database(), actor(), account_id, limit, after)
        return LOTS.page(items, limit, key=attrgetter("id"))


@blp.route("/accounts/<account_id>/entries")
class AccountEntries(MethodView):
    @blp.read("board", "holder", query=PageArgs, reply=EntryPage, one_unit=False)
    @blp.alt_response(200, description="text/csv of every entry", content_type="text/csv")
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """Ledger lines, newest first in the order they committed, with the balance after each
        (JSON pages or CSV).  The order is their transaction's place in the hash chain, then
        their id: a balance never changes on reload, each page's balances carry on into the
        next page's, and an entry committed while a client pages comes on top."""
        if wants_csv():
            rows = balances.entry_stream(database(), actor(), account_id)
            return csv_response(ENTRY_FIELDS, rows, "entries.csv")
        listing = Listing(f"/accounts/{account_id}/entries", pair=True)
        after = listing.after(args["cursor"])
        page = balances.entries_page(database(), actor(), account_id, args["limit"], after)
        return listing.page(page, args["limit"], key=itemgetter("seq", "entry_id"))


@blp.route("/accounts/<account_id>/freeze")
class AccountFreeze(MethodView):
    @blp.write("board", status=200, reply=AccountOut)
    def post(self, account_id: str) -> Any:
        """Freeze an account: it accepts deposits but sends nothing out (board)."""
        return accounts.set_status(database(), require_board(), account_id, "frozen")


@blp.route("/accounts/<account_id>/unfreeze")
class AccountUnfreeze(MethodView):
    @blp.write("board", status=200, reply=AccountOut)
    def post(self, account_id: str) -> Any:
        """Unfreeze an account (board)."""
        return accounts.set_status(database(), require_board(), account_id, "open")


@blp.route("/accounts/<account_id>/status-history")
class AccountStatusHistory(MethodView):
    @blp.read("board", "holder", reply=StatusHistory)
    def get(self, account_id: str) -> Any:
        """The account's status history, first to last (board, or its holder).

        Each freeze, unfreeze and close, and a reopening on appeal, with ``from_status``,
        ``to_status``, the ``actor`` who made it, ``recorded_at`` and the ``reason`` where one
        was given (a reopening on appeal's; freeze, unfreeze and close take none).  None while
        the account is as it was opened; one stored before migration 0033 starts with the row
        that migration wrote.  Sealed in the registry: verify names a change edited or
        deleted, and an account whose status is not the one its last change set."""
        return {"items": accounts.status_changes(database(), actor(), account_id)}


@blp.route("/accounts/<account_id>/close")
class AccountClose(MethodView):
    @blp.write("board", status=200, reply=AccountOut)
    def post(self, account_id: str) -> Any:
        """Close an account (board): only one that holds no credits and has no pending
        reservation (``conflict`` otherwise, and when it is closed already).  A closed account
        accepts no deposit and sends and receives nothing."""
        return account_close.close_account(database(), require_board(), account_id)


@blp.route("/accounts/<account_id>/deposits")
class AccountDeposits(MethodView):
    @blp.write("board", body=DepositIn, status=201, reply=DepositOut)
    def post(self, data: dict[str, Any], account_id: str) -> Any:
        """Deposit credits certified under Subd. 12 (board): all actions or none, effective no
        earlier than the day the account was opened."""
        board = require_board()
        request = deposit_request(account_id, data)
        return deposits.post_deposit(database(), ruleset(), board, request, request_id())


@blp.route("/deposits/<deposit_id>")
class DepositById(MethodView):
    @blp.read("board", "holder", reply=DepositOut)
    def get(self, deposit_id: str) -> Any:
        """A deposit (board, or the holder of its account), with its reversal if any."""
        return deposit_views.show_deposit(database(), actor(), deposit_id)


@blp.route("/deposits/<deposit_id>/reverse")
class DepositReverse(MethodView):
    @blp.write("board", body=DepositReverseIn, status=201, reply=DepositOut)
    def post(self, data: dict[str, Any], deposit_id: str) -> Any:
        """Reverse a mistaken deposit (board) by a compensating transaction: only while every lot
        it made still holds all its credits unreserved (``conflict`` otherwise, and for a second
        reversal).

        Nor while the site's other credit would stand over its caps without it (``cap_exceeded``:
        a buffer credited beside the wetland the deposit credited is reversed first)."""
        board = require_board()
        return deposit_reversal.reverse_deposit(
            database(), ruleset(), board, deposit_id, request_id=request_id(), **data
        )


def deposit_request(account_id: str, data: dict[str, Any]) -> deposits.DepositRequest:
    """A deposit's body (``DepositIn``, loaded) as the use case's request, for ``account_id``:
    the board's deposit form builds its request here too."""
    plan = data["banking_plan"]
    return deposits.DepositRequest(
        account_id=account_id,
        bank_site_id=data["bank_site_id"],
        effective_on=data["effective_on"],
        banking_plan_reference=plan["reference"],
        banking_plan_approved_on=plan["approved_on"],
        banking_plan_lgu_id=plan["lgu_id"],
        wetland_type=data["wetland_type"],
        completed_on=data["completed_on"],
        federally_approved=data["federally_approved"],
        designated_for_replacement=data["designated_for_replacement"],
        paid_by_performer=data["paid_by_performer"],
        paid_back_with_interest=data["paid_back_with_interest"],
        actions=tuple(ActionRequest(**action) for action in data["actions"]),
    )
