"""A name shows something, on SQLite and PostgreSQL: a holder's, an LGU's, a bank site's, an
account's, a plan's applicant and project, a token's, a notice recipient's... each needs at least
one letter, digit, punctuation mark or symbol.  One of nothing but spaces, control characters
(a bell), format characters (a zero-width space, a direction mark), separators, combining marks
alone or a blank filler is 422 ``validation_error`` on the field, through the API and beside
the field on the pages' forms, with nothing written.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.conftest import Api
from tests.api.kit import Kit, ok, on, problem
from tests.api.test_hostile_input import count
from tests.api.test_web_board_forms import form_of, html
from tests.api.web_kit import signed_in

#: names that show nothing, each with what it is made of
INVISIBLE = {
    "a bell (Cc)": "\u0007",
    "a zero-width space (Cf)": "\u200b",
    "zero-width joiners and a byte order mark (Cf)": "\u200d\u200c\ufeff",
    "a right-to-left mark (Cf)": "\u200f",
    "no-break and ideographic spaces (Zs)": "\u00a0\u3000",
    "a line separator (Zl) and a paragraph separator (Zp)": "\u2028\u2029",
    "a combining acute accent alone (Mn)": "\u0301",
    "a Hangul filler (a letter that draws nothing)": "\u3164",
    "the blank braille pattern": "\u2800",
    "tabs and a zero-width space": "\t \u200b ",
}
#: names that show something, however unusual
VISIBLE = ["Ödegaard", "Żaneta Ölund", "李", "e\u0301", "\u200bÅlesund", "#1", "♥"]


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def refused_on(response: Any, field: str) -> None:
    body = problem(response, 422, "validation_error")
    assert body["errors"] == {field: ["Must not be blank."]}, body


@pytest.mark.parametrize("name", INVISIBLE.values(), ids=INVISIBLE.keys())
def test_a_holder_named_with_nothing_visible_is_refused(kit: Kit, name: str) -> None:
    refused_on(kit.api.post("/holders", {"name": name}), "name")
    holder = kit.holder()
    refused_on(kit.api.patch(f"/holders/{holder['id']}", {"name": name, "reason": "typo"}), "name")


def test_names_of_any_script_are_accepted(kit: Kit) -> None:
    for name in VISIBLE:
        assert ok(kit.api.post("/holders", {"name": name}))["name"] == name


def test_every_kind_of_name_needs_something_visible(kit: Kit) -> None:
    blank = INVISIBLE["a zero-width space (Cf)"]
    holder = kit.holder()
    lgu = kit.lgu()
    refused_on(kit.api.post("/lgus", {"name": blank, "kind": "county"}), "name")
    site = {"name": blank, "holder_id": holder["id"], "service_area": 5, "county": "Lyon"}
    refused_on(kit.api.post("/bank-sites", site), "name")
    refused_on(kit.api.post("/bank-sites", {**site, "name": "Site", "county": blank}), "county")
    account = {"holder_id": holder["id"], "service_area": 5, "county": "Lyon", "name": blank}
    refused_on(kit.api.post("/accounts", account), "name")
    refused_on(kit.api.post("/tokens", {"role": "board", "name": blank}), "name")
    with on("2026-06-01"):
        for field in ("applicant", "project"):
            body = {**kit.plan_body(received_on="2026-06-01", area_sqft=1_000), field: blank}
            refused_on(kit.api.post("/plans", body, token=lgu["token"]), field)
        plan = kit.plan(lgu, received_on="2026-06-01", area_sqft=1_000)
        asked = {"name": blank, "address": "1 Main St", "requested_on": "2026-06-01"}
        path = f"/plans/{plan['id']}/copy-requests"
        refused_on(kit.api.post(path, asked, token=lgu["token"]), "name")
        assert kit.get_plan(plan["id"])["copy_requests"] == []


def test_the_holder_form_shows_a_name_with_nothing_visible_refused_beside_it(
    app: Flask, board_token: str
) -> None:
    board = signed_in(app.test_client(), board_token)
    holders = count(app, "holders")
    for name in ("\u200b", "\u0007", "\u200b\u3164"):
        action, hidden = form_of(board, "/holders/new", "record-form")
        sent = {**hidden, "name": name, "email": "someone@example.org"}
        page = html(board.post(action, data=sent), 422)
        assert page.one("p", id="f-name-error").text == "Must not be blank."
        assert page.one("input", name="name").attrs.get("aria-invalid") == "true"
    assert count(app, "holders") == holders
