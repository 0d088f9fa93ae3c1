"""The board's forms for holders and LGUs: register one, and correct one with a reason (kept in
``party_edits``, who and when beside it).

Each calls the ``bank`` use case its API twin calls (``api/views/parties.py``), with the API's
input schema, through ``api.web.forms``.
"""

from __future__ import annotations

from typing import Any

from flask import Response, url_for

from api.context import database
from api.schemas.bank import HolderEditIn, HolderIn, LguEditIn, LguIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, columns, labelled
from api.web.forms import Field, Fieldset, Form, Item, Refused
from bank import parties, party_edits
from bank.access import Actor
from bank.parties import LGU_KINDS

REGISTERED = forms.confirmation("registered", "Registered.")
CORRECTED = forms.confirmation(
    "corrected", "Saved. The correction, who made it and why are recorded."
)
REASON = Field(
    "reason",
    "Reason for the correction",
    "textarea",
    required=True,
    hint="Kept with the correction in the audit record.",
)


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _page(form: Form, heading: str, status: int = 200, **context: Any) -> Response:
    return forms.page("form_page.html", status, heading=heading, form=form, **context)


# --- holders ------------------------------------------------------------------------------------

HOLDER_FIELDS: tuple[Item, ...] = (
    Field("name", "Name", required=True),
    Field("email", "Email"),
    Field("address", "Address", "textarea"),
)


def _new_holder() -> Form:
    return Form(url_for("web.holder_create"), HOLDER_FIELDS, "Register the holder")


@web.get("/holders/new")
@board_only
def holder_new(who: Actor) -> Response:
    return _page(_new_holder(), "Register an account holder")


@web.post("/holders/new")
@board_only
def holder_create(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        held = parties.create_holder(database(), who, **data)
        return forms.done("web.holder_edit", REGISTERED, holder_id=held.id)

    def again(why: Refused) -> Response:
        return _page(forms.refused(_new_holder(), why), "Register an account holder", why.status)

    return forms.submit(who, _new_holder(), HolderIn(), act, again)


def _holder_form(holder_id: str) -> Form:
    action = url_for("web.holder_update", holder_id=holder_id)
    return Form(action, (*HOLDER_FIELDS, REASON), "Save the correction")


def _holder_page(holder: parties.Holder, form: Form, status: int = 200) -> Response:
    intro = (
        f"Holder {holder.id}. Its bank sites and accounts are registered under this id; a "
        "correction is recorded with who made it, when and why."
    )
    return _page(form, f"Correct holder {holder.name}", status, intro=intro)


@web.get("/holders/<holder_id>/edit")
@board_only
def holder_edit(who: Actor, holder_id: str) -> Response:
    held = parties.show_holder(database(), who, holder_id)
    form = _holder_form(holder_id)
    form.values = columns(held, "name", "email", "address")
    return _holder_page(held, form)


@web.post("/holders/<holder_id>/edit")
@board_only
def holder_update(who: Actor, holder_id: str) -> Any:
    def act(data: dict[str, Any]) -> str:
        calling(party_edits.edit_holder, database(), who, holder_id, **_cleared(data))
        return forms.done("web.holder_edit", CORRECTED, holder_id=holder_id)

    def again(why: Refused) -> Response:
        shown = parties.show_holder(database(), who, holder_id)
        return _holder_page(shown, forms.refused(_holder_form(holder_id), why), why.status)

    return forms.submit(who, _holder_form(holder_id), HolderEditIn(), act, again)


def _cleared(data: dict[str, Any]) -> dict[str, Any]:
    """A correction's optional text left blank clears it (the form always sends every field)."""
    return {"email": None, "address": None, **data}


# --- LGUs ---------------------------------------------------------------------------------------

LGU_FIELDS: tuple[Item, ...] = (
    Field("name", "Name", required=True),
    Field("kind", "Kind", "select", True, labelled(LGU_KINDS)),
    Fieldset(
        "Optional holidays the LGU observes",
        (
            Field("observes_indigenous_peoples_day", "Indigenous Peoples Day", "checkbox"),
            Field(
                "observes_friday_after_thanksgiving", "The Friday after Thanksgiving", "checkbox"
            ),
        ),
        hint="Its deadlines skip the holidays it observes.",
    ),
)


def _new_lgu() -> Form:
    return Form(url_for("web.lgu_create"), LGU_FIELDS, "Register the LGU")


@web.get("/lgus/new")
@board_only
def lgu_new(who: Actor) -> Response:
    return _page(_new_lgu(), "Register a local government unit")


@web.post("/lgus/new")
@board_only
def lgu_create(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        lgu = parties.create_lgu(database(), who, **data)
        return forms.done("web.lgu_edit", REGISTERED, lgu_id=lgu.id)

    def again(why: Refused) -> Response:
        heading = "Register a local government unit"
        return _page(forms.refused(_new_lgu(), why), heading, why.status)

    return forms.submit(who, _new_lgu(), LguIn(), act, again)


def _lgu_form(lgu_id: str) -> Form:
    fields = (Field("name", "Name", required=True), REASON)
    return Form(url_for("web.lgu_update", lgu_id=lgu_id), fields, "Save the correction")


def _lgu_page(lgu: parties.Lgu, form: Form, status: int = 200) -> Response:
    holidays = [
        name
        for name, kept in (
            ("Indigenous Peoples Day", lgu.observes_indigenous_peoples_day),
            ("the Friday after Thanksgiving", lgu.observes_friday_after_thanksgiving),
        )
        if kept
    ]
    intro = (
        f"LGU {lgu.id}, a {lgu.kind.replace('_', ' ')}; it observes "
        f"{' and '.join(holidays) or 'neither optional holiday'}. Only its name may be "
        "corrected; a correction is recorded with who made it, when and why."
    )
    return _page(form, f"Correct LGU {lgu.name}", status, intro=intro)


@web.get("/lgus/<lgu_id>/edit")
@board_only
def lgu_edit(who: Actor, lgu_id: str) -> Response:
    lgu = parties.show_lgu(database(), who, lgu_id)
    form = _lgu_form(lgu_id)
    form.values = columns(lgu, "name")
    return _lgu_page(lgu, form)


@web.post("/lgus/<lgu_id>/edit")
@board_only
def lgu_update(who: Actor, lgu_id: str) -> Any:
    def act(data: dict[str, Any]) -> str:
        calling(party_edits.edit_lgu, database(), who, lgu_id, **data)
        return forms.done("web.lgu_edit", CORRECTED, lgu_id=lgu_id)

    def again(why: Refused) -> Response:
        shown = parties.show_lgu(database(), who, lgu_id)
        return _lgu_page(shown, forms.refused(_lgu_form(lgu_id), why), why.status)

    return forms.submit(who, _lgu_form(lgu_id), LguEditIn(), act, again)
