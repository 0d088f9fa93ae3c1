"""The board's forms for holders and LGUs: register one, and correct one with a reason (kept in
``party_edits``, who and when beside it).

Each calls the ``bank`` use case its API twin calls (``api/views/parties.py``), with the API's
input schema, through ``api.web.forms``.  Holders and LGUs are registered and corrected the same
way; ``Party`` says what differs.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database
from api.schemas.bank import HolderEditIn, HolderIn, LguEditIn, LguIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import BOARD, board_only, calling, columns, labelled
from api.web.forms import Field, Fieldset, Form, Item
from api.web.record_forms import NewRecord
from bank import parties, party_edits
from bank.access import Actor
from bank.parties import LGU_KINDS
from ledger.db import Database

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
NAME = Field("name", "Name", required=True)


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


@dataclass(frozen=True, kw_only=True)
class Party:
    """A kind of party: registered at ``/<key>s/new`` and corrected at
    ``/<key>s/<<key>_id>/edit``, with the endpoints ``<key>_new``, ``<key>_create``,
    ``<key>_edit`` and ``<key>_update``."""

    key: str
    label: str  # as the pages name it: "Register the LGU", "Correct LGU Lyon County"
    heading: str  # the registration page's
    fields: tuple[Item, ...]
    corrected: tuple[Field, ...]  # the fields a correction may change
    schemas: tuple[type[Schema], type[Schema]]  # the registration's and the correction's
    create: Callable[..., Any]
    show: Callable[[Database, Actor, str], Any]
    edit: Callable[..., Any]
    intro: Callable[[Any], str]  # the correction page's, for the party as it is

    def declare(self) -> None:
        """Declare the party's four routes."""
        key = self.key
        NewRecord(
            path=f"/{key}s/new",
            endpoints=(f"{key}_new", f"{key}_create"),
            roles=(BOARD,),
            heading=self.heading,
            items=self._fields,
            submit=f"Register the {self.label}",
            schema=self.schemas[0],
            record=self._created,
        ).declare()
        path = f"/{key}s/<{key}_id>/edit"
        web.add_url_rule(path, f"{key}_edit", board_only(self._correction), methods=["GET"])
        web.add_url_rule(path, f"{key}_update", board_only(self._correct), methods=["POST"])

    def _fields(self, who: Actor) -> tuple[Item, ...]:
        return self.fields

    def _created(self, who: Actor, data: dict[str, Any]) -> str:
        created = self.create(database(), who, **data)
        return self._edit_page(REGISTERED, created.id)

    def _edit_page(self, confirmed: str, party_id: str) -> str:
        return forms.done(f"web.{self.key}_edit", confirmed, **self._ids(party_id))

    def _form(self, party_id: str) -> Form:
        action = url_for(f"web.{self.key}_update", **self._ids(party_id))
        return Form(action, (*self.corrected, REASON), "Save the correction")

    def _ids(self, party_id: str) -> dict[str, Any]:
        """The party's id as its pages' addresses name it (``holder_id=``)."""
        return {f"{self.key}_id": party_id}

    def _page(self, party: Any, form: Form, status: int = 200) -> Response:
        heading = f"Correct {self.label} {party.name}"
        return forms.page(
            "form_page.html", status, heading=heading, form=form, intro=self.intro(party)
        )

    def _correction(self, who: Actor, **ids: str) -> Response:
        party_id = ids[f"{self.key}_id"]
        party = self.show(database(), who, party_id)
        form = self._form(party_id)
        form.values = columns(party, *(f.name for f in self.corrected))
        return self._page(party, form)

    def _correct(self, who: Actor, **ids: str) -> Any:
        party_id = ids[f"{self.key}_id"]
        # the form always sends every field: an optional one left blank clears it
        cleared = {f.name: None for f in self.corrected if not f.required}

        def act(data: dict[str, Any]) -> str:
            calling(self.edit, database(), who, party_id, **{**cleared, **data})
            return self._edit_page(CORRECTED, party_id)

        def again(form: Form, status: int) -> Response:
            return self._page(self.show(database(), who, party_id), form, status)

        return forms.post(who, lambda: self._form(party_id), self.schemas[1](), act, again)


# --- holders ------------------------------------------------------------------------------------

HOLDER_FIELDS: tuple[Field, ...] = (
    NAME,
    Field("email", "Email"),
    Field("address", "Address", "textarea"),
)


def _holder_intro(holder: parties.Holder) -> str:
    return (
        f"Holder {holder.id}. Its bank sites and accounts are registered under this id; a "
        "correction is recorded with who made it, when and why."
    )


Party(
    key="holder",
    label="holder",
    heading="Register an account holder",
    fields=HOLDER_FIELDS,
    corrected=HOLDER_FIELDS,
    schemas=(HolderIn, HolderEditIn),
    create=parties.create_holder,
    show=parties.show_holder,
    edit=party_edits.edit_holder,
    intro=_holder_intro,
).declare()


# --- LGUs ---------------------------------------------------------------------------------------

LGU_FIELDS: tuple[Item, ...] = (
    NAME,
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


def _lgu_intro(lgu: parties.Lgu) -> str:
    holidays = [
        name
        for name, kept in (
            ("Indigenous Peoples Day", lgu.observes_indigenous_peoples_day),
            ("the Friday after Thanksgiving", lgu.observes_friday_after_thanksgiving),
        )
        if kept
    ]
    return (
        f"LGU {lgu.id}, a {lgu.kind.replace('_', ' ')}; it observes "
        f"{' and '.join(holidays) or 'neither optional holiday'}. Only its name may be "
        "corrected; a correction is recorded with who made it, when and why."
    )


Party(
    key="lgu",
    label="LGU",
    heading="Register a local government unit",
    fields=LGU_FIELDS,
    corrected=(NAME,),
    schemas=(LguIn, LguEditIn),
    create=parties.create_lgu,
    show=parties.show_lgu,
    edit=party_edits.edit_lgu,
    intro=_lgu_intro,
).declare()
