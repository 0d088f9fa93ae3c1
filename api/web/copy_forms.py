"""The plan page's forms for the copies of notices owed to members of the public who asked
(Subd. 6 (a), 7): one per copy owed, recording the day the LGU mailed it.  Each posts to the use
case ``POST /api/v1/plans/{id}/copy-requests/{id}/copies-mailed`` calls, with its input schema,
through ``api.web.forms``; refused, the form comes back on a page of its own with why, offering
the copies owed as they are then (none left: the refusal alone)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict
from functools import partial
from typing import Any

from flask import Blueprint, Response, url_for

from api.context import database
from api.schemas.notices import CopyMailedIn
from api.web import forms
from api.web.blueprint import web
from api.web.forms import Field, Form
from bank import plan_acts, plan_cases
from bank.access import Actor
from bank.errors import NotFound

ROLES = ("board", "lgu")
MAILED = forms.confirmation("copy_mailed", "The copy mailed was recorded.")
SUBMIT = "Record the copy mailed"


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def register(blueprint: Blueprint) -> None:
    """The plan page builds its forms with ``copy_form``."""
    blueprint.app_context_processor(lambda: {"copy_form": copy_form})


def copy_form(
    plan_id: str, application_number: int, copy_request_id: str, *owed: Mapping[str, Any]
) -> Form:
    """The form recording a copy mailed to the one who asked (``copy_request_id``) of one of
    the notices ``owed`` them (each an ``OwedCopy`` as a dict), the first chosen; a notice of
    an application before the plan's current one (``application_number``) says which."""
    choices = tuple((o["notice_id"], _choice(o, application_number)) for o in owed)
    items = (
        Field("notice_id", "Copy of", "select", True, choices),
        Field("mailed_on", "Copy mailed on", "date", required=True),
    )
    action = url_for("web.plan_copy_mailed", plan_id=plan_id, copy_request_id=copy_request_id)
    values = {"notice_id": choices[0][0]} if choices else {}
    return Form(action, items, SUBMIT, values)


def _choice(owed: Mapping[str, Any], application_number: int) -> str:
    words = f"Notice of {owed['notice']} mailed {owed['mailed_on'].isoformat()}"
    if owed["application_number"] != application_number:
        words += f", of application {owed['application_number']}"
    return words


@web.post("/plans/<plan_id>/copy-requests/<copy_request_id>/copies-mailed")
@forms.signed_in(*ROLES)
def plan_copy_mailed(who: Actor, plan_id: str, copy_request_id: str) -> Any:
    plan = plan_cases.show(database(), who, plan_id)
    asked = next((c for c in plan.copy_requests if c.id == copy_request_id), None)
    if asked is None:
        raise NotFound(f"plan {plan_id} has no copy request {copy_request_id}")

    read = forms.read_once_then_anew(plan, partial(plan_cases.show, database(), who, plan_id))

    def form() -> Form:
        """The form with the copies owed them now: shown again after a refusal (another user
        may have just recorded the copy chosen), it offers what is still owed."""
        now = read()
        owed = [asdict(o) for c in now.copy_requests if c.id == copy_request_id for o in c.owed]
        return copy_form(plan_id, now.application_number, copy_request_id, *owed)

    def act(data: dict[str, Any]) -> str:
        plan_acts.mail_copy(
            database(), who, plan_id, copy_request_id, data["notice_id"], data["mailed_on"]
        )
        return forms.done("web.plan", MAILED, "decision-record", plan_id=plan_id)

    def again(refused: Form, status: int) -> Response:
        return forms.page(
            "form_page.html",
            status,
            heading=f"{SUBMIT}: {plan.project}",
            intro=f"A copy owed to {asked.name}, {asked.address} (Subd. 6 (a), 7).",
            back={"url": url_for("web.plan", plan_id=plan_id), "text": "the plan"},
            form=refused,
        )

    def open_now() -> bool:
        """Whether a copy is still owed to the one who asked: the plan page offers their form
        until none is (a copy of the notice chosen mailed meanwhile, another may be)."""
        shown = plan_cases.show(database(), who, plan_id)
        return any(c.id == copy_request_id and c.owed for c in shown.copy_requests)

    return forms.post(who, form, CopyMailedIn(), act, again, open_now=open_now)
