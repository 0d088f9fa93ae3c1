"""The board's forms for bank sites: register one with its credit register (Subd. 12 (c)), correct
its names with a reason, amend one category of its register with a reason, freeze and unfreeze
its credits.

Each calls the ``bank.site_register`` use case its API twin calls (``api/views/parties.py``),
with the API's input schema, through ``api.web.forms``.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database, ruleset
from api.schemas.bank import CreditAreaAmendIn, SiteEditIn, SiteIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import BOARD, board_only, calling, columns, labelled, service_area
from api.web.forms import Field, Fieldset, Form, Item
from api.web.record_forms import NewRecord
from bank import site_register
from bank.access import Actor
from bank.rules.deposit_rules import CATEGORIES

REGISTERED = forms.confirmation("site-registered", "The bank site is registered.")
CORRECTED = forms.confirmation(
    "site-corrected", "Saved. The correction, who made it and why are recorded."
)
AMENDED = forms.confirmation(
    "site-amended", "The credit register is amended; who amended it and why are recorded."
)
FROZEN = forms.confirmation("site-frozen", "Every credit that came from the site is frozen.")
UNFROZEN = forms.confirmation("site-unfrozen", "The site's credits are no longer frozen.")
CATEGORY_CHOICES = labelled(CATEGORIES)


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


# --- register a site ----------------------------------------------------------------------------


def _new_site(who: Actor) -> tuple[Item, ...]:
    rows = tuple(
        Fieldset(
            f"Credited action {row + 1}",
            (
                Field(
                    f"credit_areas.{row}.category",
                    "Category",
                    "select",
                    choices=CATEGORY_CHOICES,
                    keeps_row=True,
                ),
                Field(f"credit_areas.{row}.area_sqft", "Area (sq ft)", "number"),
            ),
        )
        for row in range(len(CATEGORIES))
    )
    return (
        Field("name", "Name", required=True),
        Field("holder_id", "Holder id", required=True, hint="The holder whose site it is."),
        service_area(),
        Field("county", "County", required=True),
        Field("major_watershed", "Major watershed"),
        *rows,
    )


def _register(who: Actor, data: dict[str, Any]) -> str:
    site = calling(site_register.register_site, database(), ruleset(), who, **data)
    return forms.done("web.site_edit", REGISTERED, site_id=site.id)


NewRecord(
    path="/bank-sites/new",
    endpoints=("site_new", "site_create"),
    roles=(BOARD,),
    heading="Register a bank site",
    items=_new_site,
    submit="Register the site",
    schema=SiteIn,
    record=_register,
    intro="With the area of each credited action under the site's approved banking plan, "
    "where known: Subd. 12 (c) caps what the site may yield on these areas. A category "
    "left out registers with the first deposit that credits it.",
    prefill=("holder_id",),
).declare()


# --- a site: its register, corrections, amendments, freezing ------------------------------------


def _edit_form(site_id: str) -> Form:
    items = (
        Field("name", "Name", required=True),
        Field("county", "County", required=True),
        Field("major_watershed", "Major watershed"),
        Field("reason", "Reason for the correction", "textarea", required=True),
    )
    return Form(url_for("web.site_update", site_id=site_id), items, "Save the correction")


def _amend_form(site_id: str) -> Form:
    items = (
        Field("category", "Category", "select", True, CATEGORY_CHOICES),
        Field("area_sqft", "Registered area (sq ft)", "number", required=True),
        Field("reason", "Reason for the amendment", "textarea", required=True),
    )
    return Form(url_for("web.site_amend", site_id=site_id), items, "Amend the register")


def _freeze_form(site_id: str, freeze: bool) -> Form:
    """The form that freezes the site's credits, or (not ``freeze``) unfreezes them."""
    endpoint = "web.site_freeze" if freeze else "web.site_unfreeze"
    label = "Freeze the site's credits" if freeze else "Unfreeze the site's credits"
    return Form(url_for(endpoint, site_id=site_id), (), label)


def _site_page(who: Actor, site_id: str, status: int = 200, **refused: Form) -> Response:
    site = site_register.show_site(database(), ruleset(), who, site_id)
    edit = refused.get("edit")
    if edit is None:
        edit = _edit_form(site_id)
        edit.values = columns(site, "name", "county", "major_watershed")
    return forms.page(
        "board_site.html",
        status,
        site=site,
        restricted=CATEGORIES,
        edit=edit,
        amend=refused.get("amend") or _amend_form(site_id),
        freeze=refused.get("freeze") or _freeze_form(site.id, not site.frozen),
        history=site_register.status_changes(database(), who, site_id),
    )


@web.get("/bank-sites/<site_id>/edit")
@board_only
def site_edit(who: Actor, site_id: str) -> Response:
    return _site_page(who, site_id)


def _on_site(
    path: str,
    endpoint: str,
    slot: str,
    form: Callable[[str], Form],
    schema: type[Schema],
    run: Callable[[Actor, str, dict[str, Any]], object],
    confirm: str,
    open_now: Callable[[], bool] | None = None,
) -> None:
    """The site page's ``slot`` form, posted to ``/bank-sites/<site_id>/<path>``: ``run``
    calls the use case; refused, the page again with the form as it was sent (closed for a
    refusal about the site's state unless ``open_now``: ``forms.post``)."""

    @board_only
    def post(who: Actor, site_id: str) -> Any:
        def act(data: dict[str, Any]) -> str:
            run(who, site_id, data)
            return forms.done("web.site_edit", confirm, site_id=site_id)

        def again(refused: Form, status: int) -> Response:
            return _site_page(who, site_id, status, **{slot: refused})

        return forms.post(who, partial(form, site_id), schema(), act, again, open_now=open_now)

    web.add_url_rule(f"/bank-sites/<site_id>/{path}", endpoint, post, methods=["POST"])


def _correct(who: Actor, site_id: str, data: dict[str, Any]) -> object:
    changes = {"major_watershed": None, **data}  # left blank: cleared
    return calling(site_register.edit_site, database(), ruleset(), who, site_id, **changes)


def _amend(who: Actor, site_id: str, data: dict[str, Any]) -> object:
    return calling(site_register.amend, database(), ruleset(), who, site_id, **data)


def _on_freezing(path: str, frozen: bool, confirm: str) -> None:
    """Freezing (or unfreezing) the site's credits: a form of no fields, in the ``freeze``
    slot."""

    def run(who: Actor, site_id: str, _data: dict[str, Any]) -> object:
        return site_register.freeze_site(database(), ruleset(), who, site_id, frozen)

    form = partial(_freeze_form, freeze=frozen)
    _on_site(path, f"site_{path}", "freeze", form, Schema, run, confirm)


_on_site("edit", "site_update", "edit", _edit_form, SiteEditIn, _correct, CORRECTED)
# an amendment refused (an area that would cap an action below what it credited) is refused for
# the area typed: the form stays, to type another
_on_site(
    "credit-areas",
    "site_amend",
    "amend",
    _amend_form,
    CreditAreaAmendIn,
    _amend,
    AMENDED,
    forms.always_open,
)
_on_freezing("freeze", True, FROZEN)
_on_freezing("unfreeze", False, UNFROZEN)
