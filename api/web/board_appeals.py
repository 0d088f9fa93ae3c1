"""The board's appeals page for a plan (Subd. 9): record a petition it received, the filing fee
and security paid for it, decide whether to grant it, decide the appeal on its merits, and record
the day that decision was served.

Each form calls the ``bank.appeals`` use case its API twin calls (``api/views/plans.py``), with
the API's input schema, through ``api.web.forms``; every form comes back to this page.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database, request_id, ruleset
from api.schemas.plans import (
    AppealDecisionIn,
    AppealPaymentIn,
    PetitionDecisionIn,
    PetitionIn,
    ServiceIn,
)
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, labelled
from api.web.forms import Field, Form, Item
from bank import appeals, money, plan_cases
from bank.access import Actor
from bank.appeal_views import AppealView
from bank.errors import NotFound

FILED = forms.confirmation("petition-filed", "The petition is recorded.")
PETITION_DECIDED = forms.confirmation(
    "petition-decided", "The decision on the petition is recorded."
)
PAID = forms.confirmation("appeal-paid", "The payment is recorded.")
#: what a petitioner pays the board (Subd. 9), recorded as the API's ``POST /payments`` does
FILING_FEE = ("appeal_filing_fee", "Filing fee")
SECURITY = ("appeal_security", "Appeal security")
APPEAL_DECIDED = forms.confirmation("appeal-decided", "The decision on the appeal is recorded.")
SERVED = forms.confirmation("appeal-served", "The day the decision was served is recorded.")
ANCHOR = "appeals"


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _petition_form(plan_id: str) -> Form:
    items: tuple[Item, ...] = (
        Field("petitioner_kind", "Petitioner", "select", True, labelled(appeals.PETITIONER_KINDS)),
        Field("petitioner_name", "Petitioner's name", required=True),
        Field("petitioner_address", "Petitioner's address", "textarea", required=True),
        Field("resident_count", "Residents petitioning", "number", hint="Residents only."),
        Field("postmarked_on", "Postmarked on", "date", required=True),
        Field("received_on", "Received on", "date", required=True),
        Field("filing_fee_cents", "Filing fee paid ($)", "money", required=True),
        Field("security_cents", "Appeal security posted ($)", "money"),
    )
    return Form(url_for("web.appeal_file", plan_id=plan_id), items, "Record the petition")


def _grant_form(plan_id: str, appeal: AppealView) -> Form:
    items: tuple[Item, ...] = (
        Field("granted", "Decision", "select", True, (("true", "Grant"), ("false", "Deny"))),
        Field("decided_on", "Decided on", "date", required=True),
        Field("reason", "Reason", "textarea"),
        Field(
            "grounds",
            "Grounds for a denial (Subd. 9)",
            "checkboxes",
            False,
            labelled(appeals.DENIAL_GROUNDS),
        ),
        Field("factors_considered", "Factors considered", "textarea"),
    )
    action = url_for("web.appeal_petition", plan_id=plan_id, appeal_id=appeal.id)
    return Form(action, items, "Record the decision on the petition")


def _payment_form(plan_id: str, appeal: AppealView) -> Form:
    """The filing fee, and the security only where the LGU required it of this petitioner
    (``plans.security_required_cents``, which ``money.receive_payment`` holds a payment to:
    ``invalid_fee`` otherwise)."""
    kinds = (FILING_FEE, SECURITY) if appeal.security_required_cents is not None else (FILING_FEE,)
    items: tuple[Item, ...] = (
        Field("kind", "Payment", "select", True, kinds),
        Field("amount_cents", "Amount ($)", "money", required=True),
        Field("payer", "Paid by", required=True),
        Field("received_on", "Received on", "date", required=True),
        Field(
            "postmarked_on",
            "Fee postmarked on",
            "date",
            hint=(
                "Filing fee only: its envelope's postmark. Left empty, the petition's "
                "(for a fee received the day the petition was)."
            ),
        ),
    )
    action = url_for("web.appeal_payment", plan_id=plan_id, appeal_id=appeal.id)
    return Form(action, items, "Record the payment")


def _decision_form(plan_id: str, appeal: AppealView) -> Form:
    outcomes = (("plan_upheld", "Plan upheld"), ("plan_reversed", "Plan reversed"))
    items: tuple[Item, ...] = (
        Field("outcome", "Outcome", "select", True, outcomes),
        Field("decided_on", "Decided on", "date", required=True),
        Field("served_on", "Served by mail on", "date", hint="If it already was."),
    )
    action = url_for("web.appeal_decision", plan_id=plan_id, appeal_id=appeal.id)
    return Form(action, items, "Record the decision on the appeal")


def _service_form(plan_id: str, appeal: AppealView) -> Form:
    items = (Field("served_on", "Served by mail on", "date", required=True),)
    action = url_for("web.appeal_service", plan_id=plan_id, appeal_id=appeal.id)
    return Form(action, items, "Record the service")


def _forms_of(plan_id: str, appeal: AppealView) -> dict[str, Form]:
    """The forms an appeal still takes, by what they do."""
    if appeal.petition is None:  # the fee (and any security) is paid before a grant
        return {
            "payment": _payment_form(plan_id, appeal),
            "petition": _grant_form(plan_id, appeal),
        }
    if appeal.petition.granted and appeal.decision is None:
        return {"decision": _decision_form(plan_id, appeal)}
    if appeal.decision is not None and appeal.served_on is None:
        return {"service": _service_form(plan_id, appeal)}
    return {}


def _page(
    who: Actor, plan_id: str, status: int = 200, refused: tuple[str, str, Form] | None = None
) -> Response:
    """The plan's appeals and the forms each takes; ``refused`` is (appeal id or "", what, form)
    as it was sent back."""
    plan = plan_cases.show(database(), who, plan_id)
    paid: dict[str, list[money.PaymentView]] = {}
    for payment in money.list_payments(database(), who, plan_id):
        if payment.appeal_id is not None:
            paid.setdefault(payment.appeal_id, []).append(payment)
    petition = _petition_form(plan_id)
    per_appeal = {appeal.id: _forms_of(plan_id, appeal) for appeal in plan.appeals}
    if refused is not None:
        appeal_id, what, form = refused
        if appeal_id:
            per_appeal.setdefault(appeal_id, {})[what] = form
        else:
            petition = form
    return forms.page(
        "board_appeals.html",
        status,
        plan=plan,
        petition=petition,
        per_appeal=per_appeal,
        paid=paid,
    )


@web.get("/plans/<plan_id>/appeals")
@board_only
def appeals_page(who: Actor, plan_id: str) -> Response:
    return _page(who, plan_id)


@web.post("/plans/<plan_id>/appeals")
@board_only
def appeal_file(who: Actor, plan_id: str) -> Any:
    def act(data: dict[str, Any]) -> str:
        calling(appeals.file, database(), who, plan_id, appeals.PetitionRequest(**data))
        return forms.done("web.appeals_page", FILED, ANCHOR, plan_id=plan_id)

    def again(form: Form, status: int) -> Response:
        return _page(who, plan_id, status, ("", "file", form))

    # the page always offers a petition's form: what its use case refuses is what was typed
    blank = partial(_petition_form, plan_id)
    return forms.post(who, blank, PetitionIn(), act, again, open_now=forms.always_open)


def _on_appeal(
    what: str,
    form: Callable[[str, AppealView], Form],
    schema: type[Schema],
    run: Callable[[Actor, str, dict[str, Any]], object],
    confirm: str,
) -> None:
    """The form that records ``what`` on an appeal, posted to its own address: ``run`` calls
    the use case; refused, the page again with the form as it was sent."""

    @board_only
    def post(who: Actor, plan_id: str, appeal_id: str) -> Any:
        appeal = appeals.show(database(), who, appeal_id)
        if appeal.plan_id != plan_id:
            raise NotFound(f"plan {plan_id} has no appeal {appeal_id}")  # another plan's address

        def act(data: dict[str, Any]) -> str:
            calling(run, who, appeal_id, data)
            return forms.done("web.appeals_page", confirm, ANCHOR, plan_id=plan_id)

        def again(refused: Form, status: int) -> Response:
            return _page(who, plan_id, status, (appeal_id, what, refused))

        def open_now() -> bool:
            """Whether the page still offers the form (``_forms_of``): a payment of a kind
            already paid is refused for the kind chosen, and the form stays to choose another."""
            plan = plan_cases.show(database(), who, plan_id)
            return any(a.id == appeal_id and what in _forms_of(plan_id, a) for a in plan.appeals)

        blank = partial(form, plan_id, appeal)
        return forms.post(who, blank, schema(), act, again, open_now=open_now)

    path = f"/plans/<plan_id>/appeals/<appeal_id>/{what}"
    web.add_url_rule(path, f"appeal_{what}", post, methods=["POST"])


def _decide_petition(who: Actor, appeal_id: str, data: dict[str, Any]) -> object:
    decision = PetitionDecisionIn.decision(data)
    return appeals.decide_petition(database(), who, appeal_id, decision, request_id())


def _decide_appeal(who: Actor, appeal_id: str, data: dict[str, Any]) -> object:
    outcome, decided_on, served_on = data["outcome"], data["decided_on"], data["served_on"]
    return appeals.decide_appeal(
        database(), who, appeal_id, outcome, decided_on, served_on, request_id()
    )


def _pay(who: Actor, appeal_id: str, data: dict[str, Any]) -> object:
    request = money.PaymentRequest(appeal_id=appeal_id, **data)
    return money.receive_payment(database(), ruleset(), who, request, request_id())


def _serve(who: Actor, appeal_id: str, data: dict[str, Any]) -> object:
    return appeals.record_service(database(), who, appeal_id, data["served_on"])


_on_appeal("payment", _payment_form, AppealPaymentIn, _pay, PAID)
_on_appeal("petition", _grant_form, PetitionDecisionIn, _decide_petition, PETITION_DECIDED)
_on_appeal("decision", _decision_form, AppealDecisionIn, _decide_appeal, APPEAL_DECIDED)
_on_appeal("service", _service_form, ServiceIn, _serve, SERVED)
