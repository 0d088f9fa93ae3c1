"""A payment's page (the board, the plan's LGU) and the acts on it: refund it (the board; the
plan's LGU its in-lieu payments and processing fees, as the API lets it), and reverse a filing
fee recorded in error, with the reason (the board).

The page is reached from every list of payments (``/payments``, the plan's page, the appeals
page).  Each form is offered only when ``bank.money.open_acts`` finds its use case would accept it
now from the reader, and posts to the ``bank.money`` use case its API twin calls (``POST
/payments/{id}/refund``, ``/reverse``), with the API's input schema, through ``api.web.forms``;
refused anyway (the payment changed meanwhile), the page comes back with the API's sentence in
place of the form, or above it for a reason left blank.  Done, the page shows the payment as it
now stands.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database, request_id
from api.schemas.plans import PaymentReverseIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import BOARD, calling
from api.web.forms import Field, Form
from api.web.signin import signed_in_actor
from bank import money, record_pages
from bank.access import Actor

REFUNDED = forms.confirmation("payment-refunded", "The payment is refunded.")
REVERSED = forms.confirmation(
    "payment-reversed",
    "The filing fee is reversed as recorded in error: the appeal it was booked on has no fee "
    "received now.",
)
ANCHOR = "payment-heading"
#: who may use each act's form: the roles its API twin takes (``money.check_refundable`` then
#: keeps an LGU to its own plans' in-lieu payments and processing fees)
ROLES = {"refund": (BOARD, "lgu"), "reverse": (BOARD,)}


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _refund_form(payment_id: str) -> Form:
    action = url_for("web.payment_refund", payment_id=payment_id)
    return Form(action, (), "Refund the payment")


def _reverse_form(payment_id: str) -> Form:
    reason = Field(
        "reason",
        "Why it was recorded in error",
        "textarea",
        required=True,
        hint="For example: booked on the wrong appeal. The reason is kept with the reversal.",
    )
    action = url_for("web.payment_reverse", payment_id=payment_id)
    return Form(action, (reason,), "Reverse the filing fee")


#: each act's form, by the name ``money.open_acts`` gives it
FORMS: dict[str, Callable[[str], Form]] = {"refund": _refund_form, "reverse": _reverse_form}


def _page(
    who: Actor, payment_id: str, status: int = 200, refused: tuple[str, Form] | None = None
) -> Response:
    """The payment, and the forms of the acts the reader may record on it now; ``refused`` is
    (act, form) as it was sent back, shown whether or not the act is open now (closed, it shows
    the refusal alone: ``forms.post``)."""
    found = record_pages.payment_page(database(), who, payment_id)
    acts = {act: FORMS[act](payment_id) for act in money.WEIGHED if act in found.open_acts}
    if refused is not None:
        act, form = refused
        acts[act] = form
    return forms.page("payment.html", status, found=found, payment=found.payment, acts=acts)


@web.get("/payments/<payment_id>")
def payment(payment_id: str) -> Response:
    """A payment (board, or its plan's LGU; 404 for anyone else, as the API answers)."""
    return _page(signed_in_actor(), payment_id)


def _on_payment(
    act: str,
    schema: type[Schema],
    run: Callable[[Actor, str, dict[str, Any]], object],
    done: str,
) -> None:
    """The form that records ``act`` on a payment, posted to its own address by the ``ROLES``
    it allows (anyone else: 403): ``run`` calls the use case; refused, the page again with the
    form as it was sent, or with the refusal alone once the act is not open."""

    @forms.signed_in(*ROLES[act])
    def post(who: Actor, payment_id: str) -> Any:
        def record(data: dict[str, Any]) -> str:
            calling(run, who, payment_id, data)
            return forms.done("web.payment", done, ANCHOR, payment_id=payment_id)

        def again(form: Form, status: int) -> Response:
            return _page(who, payment_id, status, (act, form))

        def open_now() -> bool:
            return act in record_pages.payment_page(database(), who, payment_id).open_acts

        blank = partial(FORMS[act], payment_id)
        return forms.post(who, blank, schema(), record, again, open_now=open_now)

    web.add_url_rule(f"/payments/<payment_id>/{act}", f"payment_{act}", post, methods=["POST"])


def _refund(who: Actor, payment_id: str, _data: dict[str, Any]) -> object:
    return money.refund(database(), who, payment_id, request_id())


def _reverse(who: Actor, payment_id: str, data: dict[str, Any]) -> object:
    return money.reverse_in_error(database(), who, payment_id, data["reason"], request_id())


_on_payment("refund", Schema, _refund, REFUNDED)
_on_payment("reverse", PaymentReverseIn, _reverse, REVERSED)
