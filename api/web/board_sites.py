"""The board's forms for bank sites: register one with its credit register (Subd. 12 (c)), correct
its names with a reason, amend one category of its register with a reason, freeze and unfreeze
its credits.

Each calls the ``bank.site_register`` use case its API twin calls (``api/views/parties.py``),
with the API's input schema, through ``api.web.forms``.
"""

from __future__ import annotations

from typing import Any

from flask import Response, request, url_for
from marshmallow import Schema

from api.context import database, ruleset
from api.schemas.bank import CreditAreaAmendIn, SiteEditIn, SiteIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, columns, labelled, service_area
from api.web.forms import Field, Fieldset, Form, Item, Refused
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


def _new_site() -> Form:
    rows = tuple(
        Fieldset(
            f"Credited action {row + 1}",
            (
                Field(
                    f"credit_areas.{row}.category", "Category", "select", choices=CATEGORY_CHOICES
                ),
                Field(f"credit_areas.{row}.area_sqft", "Area (sq ft)", "number"),
            ),
        )
        for row in range(len(CATEGORIES))
    )
    items: tuple[Item, ...] = (
        Field("name", "Name", required=True),
        Field("holder_id", "Holder id", required=True, hint="The holder whose site it is."),
        service_area(),
        Field("county", "County", required=True),
        Field("major_watershed", "Major watershed"),
        *rows,
    )
    return Form(url_for("web.site_create"), items, "Register the site")


def _new_page(form: Form, status: int = 200) -> Response:
    return forms.page(
        "form_page.html",
        status,
        heading="Register a bank site",
        intro="With the area of each credited action under the site's approved banking plan, "
        "where known: Subd. 12 (c) caps what the site may yield on these areas. A category "
        "left out registers with the first deposit that credits it.",
        form=form,
    )


@web.get("/bank-sites/new")
@board_only
def site_new(who: Actor) -> Response:
    form = _new_site()
    form.values = {"holder_id": request.args.get("holder_id", "")}
    return _new_page(form)


@web.post("/bank-sites/new")
@board_only
def site_create(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        site = calling(site_register.register_site, database(), ruleset(), who, **data)
        return forms.done("web.site_edit", REGISTERED, site_id=site.id)

    def again(why: Refused) -> Response:
        return _new_page(forms.refused(_new_site(), why), why.status)

    return forms.submit(who, _new_site(), SiteIn(), act, again)


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


def _freeze_form(site: site_register.SiteView) -> Form:
    endpoint = "web.site_unfreeze" if site.frozen else "web.site_freeze"
    label = "Unfreeze the site's credits" if site.frozen else "Freeze the site's credits"
    return Form(url_for(endpoint, site_id=site.id), (), label)


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
        freeze=refused.get("freeze") or _freeze_form(site),
    )


@web.get("/bank-sites/<site_id>/edit")
@board_only
def site_edit(who: Actor, site_id: str) -> Response:
    return _site_page(who, site_id)


@web.post("/bank-sites/<site_id>/edit")
@board_only
def site_update(who: Actor, site_id: str) -> Any:
    def act(data: dict[str, Any]) -> str:
        changes = {"major_watershed": None, **data}  # left blank: cleared
        calling(site_register.edit_site, database(), ruleset(), who, site_id, **changes)
        return forms.done("web.site_edit", CORRECTED, site_id=site_id)

    def again(why: Refused) -> Response:
        return _site_page(who, site_id, why.status, edit=forms.refused(_edit_form(site_id), why))

    return forms.submit(who, _edit_form(site_id), SiteEditIn(), act, again)


@web.post("/bank-sites/<site_id>/credit-areas")
@board_only
def site_amend(who: Actor, site_id: str) -> Any:
    def act(data: dict[str, Any]) -> str:
        calling(site_register.amend, database(), ruleset(), who, site_id, **data)
        return forms.done("web.site_edit", AMENDED, site_id=site_id)

    def again(why: Refused) -> Response:
        amend = forms.refused(_amend_form(site_id), why)
        return _site_page(who, site_id, why.status, amend=amend)

    return forms.submit(who, _amend_form(site_id), CreditAreaAmendIn(), act, again)


@web.post("/bank-sites/<site_id>/freeze")
@board_only
def site_freeze(who: Actor, site_id: str) -> Any:
    return _freezing(who, site_id, True)


@web.post("/bank-sites/<site_id>/unfreeze")
@board_only
def site_unfreeze(who: Actor, site_id: str) -> Any:
    return _freezing(who, site_id, False)


def _freezing(who: Actor, site_id: str, frozen: bool) -> Any:
    endpoint = "web.site_freeze" if frozen else "web.site_unfreeze"
    label = "Freeze the site's credits" if frozen else "Unfreeze the site's credits"
    form = Form(url_for(endpoint, site_id=site_id), (), label)

    def act(_data: dict[str, Any]) -> str:
        site_register.freeze_site(database(), ruleset(), who, site_id, frozen)
        return forms.done("web.site_edit", FROZEN if frozen else UNFROZEN, site_id=site_id)

    def again(why: Refused) -> Response:
        return _site_page(who, site_id, why.status, freeze=forms.refused(form, why))

    return forms.submit(who, form, Schema(), act, again)
