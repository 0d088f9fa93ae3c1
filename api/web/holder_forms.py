"""The holder's forms on its account (the board may use them too, as through the API): reserve
credits for a plan chosen from the plans in the account's service area (or named by its id),
void a reservation, and transfer credits to another account.  Each posts to the use case its API
twin calls (``api/views/movements.py``) through ``api.web.forms``: refused for what was chosen or
typed (a plan a reservation cannot serve, a receiving account closed, credits of a frozen bank
site), the form comes back to correct; refused because the account itself may send nothing now
(frozen or closed meanwhile), the page says why with no form to send again, as a GET of the
reserve or transfer form of such an account does."""

from __future__ import annotations

import secrets
from functools import partial
from typing import Any

from flask import Response, request, url_for
from marshmallow import Schema

from api.context import database, request_id
from api.schemas.bank import ReservationIn, TransferIn
from api.web import forms
from api.web.blueprint import web
from api.web.forms import Field, Form, Item
from api.web.lists import PAGE_ROWS, BadQuery, page_args, paged, place, place_kept
from bank import account_reservations, accounts, reservable_plans, reservations, transfers
from bank.access import Actor
from bank.errors import NotFound, UnknownCursor

ROLES = ("board", "holder")

RESERVED = forms.confirmation("reserved", "The credits were reserved.")
VOIDED = forms.confirmation("voided", "The reservation was voided: its credits are available.")
TRANSFERRED = forms.confirmation("transferred", "The credits were transferred.")


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _classes(account: accounts.AccountView) -> tuple[tuple[str, str], ...]:
    return tuple(
        (b.credit_class.code, f"{b.credit_class.code} ({b.available_sqft:,} sq ft available)")
        for b in account.balances
        if b.available_sqft > 0
    )


def _back(account: accounts.AccountView) -> dict[str, str]:
    return {"url": url_for("web.account", account_id=account.id), "text": "the account"}


#: a form page's heading (``{number}``: the account's) and introduction
RESERVE_PAGE = (
    "Reserve credits of account {number}",
    "The credits are held for the plan until it withdraws them, or until the end of the day "
    "they are held until.",
)
TRANSFER_PAGE = (
    "Transfer credits from account {number}",
    "Credits keep their class and provenance in the receiving account.",
)


def _form_page(
    account: accounts.AccountView,
    texts: tuple[str, str],
    form: Form | None,
    status: int = 200,
    *,
    refused: forms.Refused | None = None,
) -> Response:
    """A form on the account, with a way back to it; or (``refused``, no form) why the account
    may send nothing now, at the status a POST of the form is refused with."""
    heading, intro = texts
    return forms.page(
        "form_page.html",
        refused.status if refused else status,
        heading=heading.format(number=account.number),
        intro=intro,
        back=_back(account),
        form=form,
        refused=refused.problems if refused else (),
    )


def _unsendable(account: accounts.AccountView, texts: tuple[str, str]) -> Response | None:
    """A GET of a form on an account that may send nothing now (frozen or closed:
    ``accounts.send_refusal``): the refusal a POST of it gets, as the API refuses a reservation
    or a transfer from it (422 ``account_frozen``, 409 ``conflict``), with no form; ``None``
    while the account may send."""
    refusal = accounts.send_refusal(account)
    if refusal is None:
        return None
    return _form_page(account, texts, None, refused=forms.refusal(refusal))


def _sends(who: Actor, account_id: str) -> bool:
    """Whether the account may send credits now, as a reservation or a transfer from it asks
    (``accounts.send_refusal``): the forms' ``open_now``.  A refusal of the plan chosen, of the
    account typed to receive or of the credits chosen (``account_frozen`` for a frozen bank
    site's) leaves the form open to choose others; one of the account itself (frozen or closed
    meanwhile) closes it."""
    return accounts.send_refusal(accounts.get_account(database(), who, account_id)) is None


# --- reserve ----------------------------------------------------------------------------------


def _reserve_form(who: Actor, account: accounts.AccountView) -> Form:
    """The plan is chosen from the newest plans of the account's area a reservation can still
    serve (``reservable_plans``: at most ``OFFERED``), or named by its id: an older one the menu
    has no room for (the API refuses, by the same rule, any plan the menu leaves out for its
    state, and the form shows why)."""
    offered = reservable_plans.for_account(database(), who, account.id)
    plans = tuple(
        (p.id, f"{p.project}, {p.lgu_name} ({p.status.replace('_', ' ')})") for p in offered
    )
    items: tuple[Item, ...] = (
        Field(
            "plan_id",
            "Plan",
            "select",
            False,
            plans,
            f"Plans whose impact is in service area {account.service_area}, newest first "
            f"(at most {reservable_plans.OFFERED}), that can still use credits: not those "
            "denied, those whose credits are all withdrawn, nor final plans replaced otherwise.",
        ),
        Field(
            "other_plan_id",
            "Or another plan, by its id",
            hint="A plan the list does not offer, by the id its LGU gives (plan_…): "
            "used instead of the list's choice.",
            stands_for="plan_id",
        ),
        Field("credit_class", "Credit class", "select", True, _classes(account)),
        Field("amount_sqft", "Square feet", "number", required=True),
        Field("expires_on", "Held until", "date", required=True),
    )
    action = url_for("web.reserve", account_id=account.id)
    return Form(action, items, "Reserve the credits")


@web.route("/accounts/<account_id>/reservations/new", methods=["GET"])
@forms.signed_in(*ROLES)
def reserve_form(who: Actor, account_id: str) -> Response:
    account = accounts.get_account(database(), who, account_id)
    return _unsendable(account, RESERVE_PAGE) or _form_page(
        account, RESERVE_PAGE, _reserve_form(who, account)
    )


@web.route("/accounts/<account_id>/reservations/new", methods=["POST"])
@forms.signed_in(*ROLES)
def reserve(who: Actor, account_id: str) -> Any:
    account = accounts.get_account(database(), who, account_id)

    def act(data: dict[str, Any]) -> str:
        request = reservations.ReservationRequest(account_id=account_id, **data)
        reservations.reserve_for_plan(database(), who, request, request_id())
        return forms.done("web.account_reservations", RESERVED, account_id=account_id)

    def again(form: Form, status: int) -> Response:
        return _form_page(account, RESERVE_PAGE, form, status)

    shown = forms.read_once_then_anew(
        account, partial(accounts.get_account, database(), who, account_id)
    )

    def blank() -> Form:
        return _reserve_form(who, shown())

    return forms.post(
        who, blank, ReservationIn(), act, again, open_now=partial(_sends, who, account_id)
    )


# --- the account's reservations, and voiding one ----------------------------------------------


def _reservations_page(
    who: Actor,
    account_id: str,
    problems: list[str] | None = None,
    status: int = 200,
    shown: dict[str, Any] | None = None,
) -> Response:
    """The page of the account's reservations ``shown`` names (``after`` and ``limit``: a void
    refused shows the page it was sent from), by default the page the query names."""
    account = accounts.get_account(database(), who, account_id)
    if shown is None:
        shown = page_args()  # ``after`` the last reservation shown, and ``limit``
    after, limit = shown["after"], shown["limit"]
    try:
        held = account_reservations.page_of_account_reservations(
            database(), who, account_id, limit, after
        )
    except UnknownCursor:  # a place no page of the account gives: none there, and the first
        held = []
    listed = paged(held, limit, "web.account_reservations", bool(after), account_id=account_id)
    return forms.page(
        "account_reservations.html",
        status,
        account=account,
        reservations=listed["rows"],
        next_page=listed["next_page"],
        first_page=listed["first_page"],
        problems=problems or [],
        back=_back(account),
        void_key=lambda: secrets.token_urlsafe(24),
        # each Void button sends the page it is on, to come back to it
        sent_from=place_kept(after, limit),
        form=Form("", (), ""),
    )


@web.route("/accounts/<account_id>/reservations", endpoint="account_reservations")
@forms.signed_in(*ROLES)
def account_reservations_page(who: Actor, account_id: str) -> Response:
    return _reservations_page(who, account_id)


def _sent_from(who: Actor, account_id: str) -> dict[str, Any]:
    """The page of the account's reservations a Void button was sent from (its ``after`` and
    ``limit``, checked as the page checks its query): a place that does not fit (not what a
    page gives, or an ``after`` that is no reservation of this account's) is the first page."""
    first: dict[str, Any] = {"after": None, "limit": PAGE_ROWS}
    try:
        shown = place(request.form)
    except BadQuery:
        return first
    if shown["after"] is not None:
        try:
            cursor = reservations.show_reservation(database(), who, shown["after"])
        except NotFound:
            return first
        if cursor.account_id != account_id:
            return first
    return shown


@web.route("/reservations/<reservation_id>/void", methods=["POST"])
@forms.signed_in(*ROLES)
def void_reservation(who: Actor, reservation_id: str) -> Any:
    """Void the reservation, and come back to the page of the account's reservations the
    button was on (``_sent_from``), voided or refused."""
    account_id = reservations.show_reservation(database(), who, reservation_id).account_id
    shown = _sent_from(who, account_id)

    def act(_data: dict[str, Any]) -> str:
        reservations.void(database(), who, reservation_id, request_id())
        kept = place_kept(shown["after"], shown["limit"])
        return forms.done("web.account_reservations", VOIDED, account_id=account_id, **kept)

    def again(form: Form, status: int) -> Response:
        return _reservations_page(who, account_id, form.problems, status, shown)

    # the page draws no form of its own: each row's "Void" button is there while the
    # reservation is pending (``_status``, the state ``reservations.void`` asks for), so a void
    # refused for the reservation's state comes back as the refusal, the row without its button
    return forms.post(who, lambda: Form("", (), ""), Schema(), act, again)


# --- transfer ---------------------------------------------------------------------------------

#: the source is the account the form is on
TRANSFER = TransferIn(exclude=("from_account_id",))


def _transfer_form(account: accounts.AccountView) -> Form:
    items: tuple[Item, ...] = (
        Field("to_account_id", "To account (its number, e.g. WB-000003)", required=True),
        Field("credit_class", "Credit class", "select", True, _classes(account)),
        Field("amount_sqft", "Square feet", "number", required=True),
        Field("price_per_sqft_cents", "Price per sq ft ($)", "money"),
        Field("memo", "Memo", "textarea"),
    )
    return Form(url_for("web.transfer", account_id=account.id), items, "Transfer the credits")


@web.route("/accounts/<account_id>/transfers/new", methods=["GET"])
@forms.signed_in(*ROLES)
def transfer_form(who: Actor, account_id: str) -> Response:
    account = accounts.get_account(database(), who, account_id)
    return _unsendable(account, TRANSFER_PAGE) or _form_page(
        account, TRANSFER_PAGE, _transfer_form(account)
    )


@web.route("/accounts/<account_id>/transfers/new", methods=["POST"])
@forms.signed_in(*ROLES)
def transfer(who: Actor, account_id: str) -> Any:
    account = accounts.get_account(database(), who, account_id)

    def act(data: dict[str, Any]) -> str:
        target = accounts.id_of(database(), data.pop("to_account_id"))
        request = transfers.TransferRequest(
            from_account_id=account_id, to_account_id=target, **data
        )
        transfers.transfer(database(), who, request, request_id())
        return forms.done("web.account", TRANSFERRED, "balances-heading", account_id=account_id)

    def again(form: Form, status: int) -> Response:
        return _form_page(account, TRANSFER_PAGE, form, status)

    shown = forms.read_once_then_anew(
        account, partial(accounts.get_account, database(), who, account_id)
    )

    def blank() -> Form:
        return _transfer_form(shown())

    return forms.post(who, blank, TRANSFER, act, again, open_now=partial(_sends, who, account_id))
