"""The board's deposit form: fill it in, preview what each action would credit against the bank
site's register (its Subd. 12 category, the cap, what the site has credited so far, what is
left, and whether the credit serves only replacement above 1:1), then post it.

"Preview" calls ``bank.deposit_preview.preview``, which writes nothing; "Post the deposit" calls
``bank.deposits.post_deposit`` as ``POST /accounts/{id}/deposits`` does, through
``api.web.forms`` (its own Idempotency-Key: a second submit posts nothing more).  Both read the
form with the API's ``DepositIn`` and the account it names.

Blank action rows are left out of the deposit, so its actions may count differently from the
form's rows: a refusal is shown beside the form's own row, and the rules' "action 0" (the API's
list, counted from 0) is said as the form's row ("action 1").  A row with only its category
chosen is kept, so its blank figures are refused beside them rather than the row skipped.
"""

from __future__ import annotations

import re
from typing import Any

from flask import Response, request, url_for
from marshmallow import ValidationError, fields, validate

from api.context import database, request_id, ruleset
from api.schemas.bank import DepositIn
from api.schemas.common import WETLAND_TYPES
from api.views.accounts import deposit_request
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, labelled, name_field
from api.web.filters import WETLAND_TYPES as TYPE_NAMES
from api.web.forms import Field, Fieldset, Form, Item, Refused
from api.web.signin import check_signed_in_post
from bank import deposit_preview, deposits
from bank.access import Actor
from bank.errors import BankError
from bank.rules.deposit_rules import CATEGORIES
from ledger.errors import LedgerError

DEPOSITED = forms.confirmation("deposited", "The deposit is posted: its lots are below.")
#: rows of actions the form offers (a deposit of more is made through the API)
ACTION_ROWS = 4
HEADING = "Deposit credits"
#: how the deposit rules name an action in their sentences: by its place in the API's list
_ACTION = re.compile(r"\baction (\d+)\b")


class DepositFormIn(DepositIn):
    """``POST /accounts/{id}/deposits``' body, and the account the form names."""

    account_id = fields.String(required=True, validate=validate.Length(min=1, max=40))


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _action_row(row: int) -> Fieldset:
    name = f"actions.{row}."
    return Fieldset(
        f"Action {row + 1}",
        (
            Field(
                name + "category",
                "Subd. 12 category",
                "select",
                False,
                labelled(CATEGORIES),
                keeps_row=True,
            ),
            Field(name + "area_sqft", "Area (sq ft)", "number"),
            Field(name + "credit_sqft", "Credit asked (sq ft)", "number"),
            Field(
                name + "qualifying_years",
                "Qualifying years",
                "number",
                hint="Vegetative cover: years cropped, rotated or set aside.",
            ),
            Field(name + "established_on", "Buffer established on", "date"),
            Field(name + "easement_terminated_on", "Easement terminated on", "date"),
            Field(name + "associated_project", "Associated project", hint="Treatment pond."),
        ),
    )


def _form() -> Form:
    items: tuple[Item, ...] = (
        Field("account_id", "Account id", required=True, hint="The account credited."),
        Field("bank_site_id", "Bank site id", required=True, hint="The holder's own site."),
        Field("effective_on", "Deposit date", "date", required=True),
        Fieldset(
            "The approved banking plan",
            (
                Field("banking_plan.reference", "Reference", required=True),
                Field("banking_plan.approved_on", "Approved on", "date", required=True),
                Field("banking_plan.lgu_id", "Approving LGU id", required=True),
            ),
        ),
        Field("wetland_type", "Wetland type", "select", True, tuple(_types())),
        Field("completed_on", "Restoration completed on", "date", required=True),
        Fieldset(
            "What the LGU certified (Subd. 12 (a), (b))",
            (
                Field("designated_for_replacement", "Designated for replacement", "checkbox"),
                Field("paid_by_performer", "Paid for by whoever performed it", "checkbox"),
                Field("paid_back_with_interest", "Paid back with interest", "checkbox"),
                Field("federally_approved", "Federally approved", "checkbox"),
            ),
        ),
        *(_action_row(row) for row in range(ACTION_ROWS)),
    )
    return Form(url_for("web.deposit_post"), items, "Post the deposit")


def _types() -> list[tuple[str, str]]:
    return [(code, f"{code}: {TYPE_NAMES[code]}") for code in WETLAND_TYPES]


def _page(
    form: Form, status: int = 200, shown: Any = None, body: forms.Body | None = None
) -> Response:
    return forms.page(
        "board_deposit.html",
        status,
        heading=HEADING,
        form=form,
        preview=shown,
        preview_action=url_for("web.deposit_previewed"),
        restricted=CATEGORIES,
        # the form's row of each action previewed (blank rows are not in the deposit)
        action_rows=[(body or forms.Body({})).row("actions", i) for i in range(ACTION_ROWS)],
    )


@web.get("/deposits/new")
@board_only
def deposit_new(who: Actor) -> Response:
    form = _form()
    form.values = {name: request.args.get(name, "") for name in ("account_id", "bank_site_id")} | {
        "designated_for_replacement": True,
        "paid_by_performer": True,
    }
    return _page(form)


@web.post("/deposits/preview")
@board_only
def deposit_previewed(who: Actor) -> Any:
    """What the deposit would credit, per action; nothing is written."""
    check_signed_in_post()
    form = _form()
    unusable = forms.unstorable_fields(form)
    if unusable:
        why = Refused(422, unusable, ["Check the fields marked below."])
        return _page(forms.refused(form, why), why.status)
    body = forms.read(form)
    try:
        data = DepositFormIn().load(body.data)
        shown = deposit_preview.preview(database(), ruleset(), who, _request(data))
    except ValidationError as invalid:
        why = Refused(422, forms.flatten(invalid.messages), ["Check the fields marked below."])
        why = body.refused(why)
        return _page(forms.refused(form, why), why.status)
    except LedgerError as error:
        why = body.refused(_beside(error))
        return _page(_numbered(forms.refused(form, why), body), why.status)
    form = forms.filled(form)
    form.key = request.form.get(forms.KEY_FIELD, form.key)
    if shown.refusal is not None:
        why = body.refused(_beside(shown.refusal))
        form.errors, form.problems = dict(why.errors), list(why.problems)
        form = _numbered(form, body)
    return _page(form, 200, shown, body)


@web.post("/deposits/new")
@board_only
def deposit_post(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        asked = _request(data)
        posted = calling(deposits.post_deposit, database(), ruleset(), who, asked, request_id())
        return forms.done("web.account", DEPOSITED, account_id=posted.account_id)

    def again(form: Form, status: int) -> Response:
        return _page(_numbered(form, forms.read(form)), status)

    # the account and the site are typed: a refusal of theirs (a closed account, another
    # holder's site) is of what was typed, and the form stays to name others
    return forms.post(who, _form, DepositFormIn(), act, again, open_now=forms.always_open)


def _beside(error: LedgerError) -> Refused:
    """A refusal as the form shows it: a Subd. 12 one beside the field or action it names."""
    if isinstance(error, BankError):
        name_field(error)
    return forms.refusal(error)


def _numbered(form: Form, body: forms.Body) -> Form:
    """``form`` with its refusal's sentences saying each "action 0" of the rules (counted from 0
    over the actions kept, ``body``'s) as the form labels that row ("action 1")."""

    def said(text: str) -> str:
        return _ACTION.sub(lambda m: f"action {body.row('actions', int(m[1])) + 1}", text)

    form.errors = {path: said(message) for path, message in form.errors.items()}
    form.problems = [said(problem) for problem in form.problems]
    return form


def _request(data: dict[str, Any]) -> deposits.DepositRequest:
    """The form's fields as the API view builds the deposit from its body."""
    return deposit_request(data["account_id"], data)
