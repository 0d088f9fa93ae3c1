"""The board's forms for bank accounts: open one, freeze and unfreeze it, close an empty one.

Each calls the ``bank`` use case its API twin calls (``api/views/accounts.py``), with the API's
input schema, through ``api.web.forms``; the account's page is where each goes once done.  A
freeze's, an unfreeze's or a close's page shows what the account holds per credit class (posted,
reserved, frozen, available: ``accounts.get_account``'s ``balance_rows``, the account page's read,
in its table), so the board sees what it freezes or why a close would be refused.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database, ruleset
from api.schemas.bank import AccountIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import BOARD, board_only, service_area
from api.web.forms import Field, Form
from api.web.record_forms import NewRecord
from bank import account_close, accounts
from bank.access import Actor
from ledger.db import Database

OPENED = forms.confirmation("account-opened", "The account is open.")


def _freeze(db: Database, who: Actor, account_id: str) -> Any:
    return accounts.set_status(db, who, account_id, "frozen")


def _unfreeze(db: Database, who: Actor, account_id: str) -> Any:
    return accounts.set_status(db, who, account_id, "open")


#: the board's acts on an account: its verb, what it means, its use case, its confirmation
ACTS: dict[str, tuple[str, str, Callable[[Database, Actor, str], Any], str]] = {
    "freeze": (
        "Freeze",
        "A frozen account still accepts deposits but sends nothing out.",
        _freeze,
        forms.confirmation("account-frozen", "The account is frozen."),
    ),
    "unfreeze": (
        "Unfreeze",
        "The account may send credits again.",
        _unfreeze,
        forms.confirmation("account-unfrozen", "The account is open again."),
    ),
    "close": (
        "Close",
        "Only an account that holds no credits and has no pending reservation can be closed. "
        "A closed account accepts no deposit, sends and receives nothing, and stays closed.",
        account_close.close_account,
        forms.confirmation("account-closed", "The account is closed."),
    ),
}


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _open(who: Actor, data: dict[str, Any]) -> str:
    opened = accounts.open_account(database(), ruleset(), who, **data)
    return forms.done("web.account", OPENED, account_id=opened.id)


NewRecord(
    path="/accounts/new",
    endpoints=("account_new", "account_open"),
    roles=(BOARD,),
    heading="Open a bank account",
    items=lambda who: (
        Field("holder_id", "Holder id", required=True, hint="The holder the account is for."),
        service_area(),
        Field("county", "County", required=True),
        Field("name", "Account name"),
    ),
    submit="Open the account",
    schema=AccountIn,
    record=_open,
    prefill=("holder_id",),
).declare()


# --- freeze, unfreeze, close --------------------------------------------------------------------


def _act_form(account_id: str, act: str) -> Form:
    action = url_for("web.account_act", account_id=account_id, act=act)
    return Form(action, (), f"{ACTS[act][0]} the account")


def _act_page(who: Actor, account_id: str, act: str, form: Form, status: int = 200) -> Response:
    verb, explained, _call, _done = ACTS[act]
    shown = accounts.get_account(database(), who, account_id)
    return forms.page(
        "board_account_act.html",
        status,
        form=form,
        account=shown,
        verb=verb,
        explained=explained,
    )


@web.get("/accounts/<account_id>/<any(freeze, unfreeze, close):act>")
@board_only
def account_act_form(who: Actor, account_id: str, act: str) -> Response:
    return _act_page(who, account_id, act, _act_form(account_id, act))


@web.post("/accounts/<account_id>/<any(freeze, unfreeze, close):act>")
@board_only
def account_act(who: Actor, account_id: str, act: str) -> Any:
    _verb, _explained, call, done = ACTS[act]

    def run(_data: dict[str, Any]) -> str:
        call(database(), who, account_id)
        return forms.done("web.account", done, account_id=account_id)

    def again(form: Form, status: int) -> Response:
        return _act_page(who, account_id, act, form, status)

    return forms.post(who, lambda: _act_form(account_id, act), Schema(), run, again)
