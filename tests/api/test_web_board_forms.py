"""The board's forms (issue #26 item 2), on both databases: each form's success as the board sees
it, a refusal shown as the problem's sentence beside its field, a double submit that writes once,
a form without its CSRF secret refused with nothing written, and no one but the board let in.

A test fills a form as a browser would: it reads the page, keeps the form's hidden fields (the
session's CSRF secret and the form's own Idempotency-Key) and posts the fields it fills in.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from bank import parties, party_edits
from bank.access import SYSTEM, ApiToken
from bank.deposit_tables import Deposit
from bank.party_tables import BankSite, Holder
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, at, ok, on, unique
from tests.api.test_appeals import (
    _noticed_decision_requiring_security,
    noticed_decision,
    petition,
)
from tests.api.web_kit import SESSION_COOKIE, Element, audit_events, parse, signed_in

DAY = "2026-06-17"
PETITION_DAY = "2026-09-24"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def board(app: Flask, board_token: str) -> FlaskClient:
    return signed_in(app.test_client(), board_token)


def html(response: Any, status: int = 200) -> Element:
    assert response.status_code == status, response.get_data(as_text=True)[:3000]
    assert response.mimetype == "text/html"
    return parse(response.get_data(as_text=True))


def form_of(client: FlaskClient, page: str, form_id: str) -> tuple[str, dict[str, str]]:
    """The form's action and hidden fields (CSRF secret, Idempotency-Key), as drawn."""
    form = html(client.get(page)).one("form", id=form_id)
    hidden = {i.attrs["name"]: i.attrs.get("value", "") for i in form.all("input", type="hidden")}
    return form.attrs["action"], hidden


def drawn(form: Element) -> dict[str, Any]:
    """What a browser would send of ``form`` untouched: every field's value as drawn."""
    values: dict[str, Any] = {}
    for field in form.all("input"):
        kind = field.attrs.get("type", "text")
        if kind == "checkbox":
            if "checked" in field.attrs:
                values.setdefault(field.attrs["name"], []).append(field.attrs.get("value", "on"))
        else:
            values[field.attrs["name"]] = field.attrs.get("value", "")
    for area in form.all("textarea"):
        values[area.attrs["name"]] = " ".join(area.parts).strip()
    for menu in form.all("select"):
        chosen = [o for o in menu.all("option") if "selected" in o.attrs]
        values[menu.attrs["name"]] = chosen[0].attrs["value"] if chosen else ""
    return values


def fill(client: FlaskClient, page: str, form_id: str, fields: dict[str, Any]) -> Any:
    """Read ``page``, fill in its form ``form_id`` over what it shows, and post it."""
    form = html(client.get(page)).one("form", id=form_id)
    return client.post(form.attrs["action"], data={**drawn(form), **fields})


def error_beside(document: Element, name: str) -> str:
    """The refusal's sentence shown beside the field named ``name``."""
    return document.one(id="f-" + name.replace(".", "-") + "-error").text


def problem_above(document: Element) -> str:
    return document.one(id="form-problem").text


def count(app: Flask, model: Any, *where: Any) -> int:
    with app.extensions["wetbank.db"].transaction() as session:
        query = select(func.count()).select_from(model).where(*where)
        return int(session.execute(query).scalar_one())


def redirected(response: Any, path_start: str) -> str:
    assert response.status_code == 303, response.get_data(as_text=True)[:3000]
    location = str(response.headers["Location"])
    assert location.startswith(path_start), location
    return location


# --- holders and LGUs ----------------------------------------------------------------------------


def test_the_board_registers_a_holder_and_corrects_it_with_a_reason(app, board) -> None:
    name = unique("Prairie Bank")
    done = fill(board, "/holders/new", "record-form", {"name": name, "email": "a@b.example"})
    location = redirected(done, "/holders/")
    holder_id = location.split("/")[2]
    page = html(board.get(location))
    assert page.one(id="form-notice").text == "Registered."
    assert page.one("input", name="name").attrs["value"] == name

    edit = f"/holders/{holder_id}/edit"
    refused = fill(board, edit, "record-form", {"name": name + " LLC", "reason": ""})
    assert error_beside(html(refused, 422), "reason") == "Fill in this field."
    fixed = fill(board, edit, "record-form", {"name": name + " LLC", "reason": "typo in deed"})
    redirected(fixed, edit)

    with app.extensions["wetbank.db"].transaction() as session:
        (edit_row,) = party_edits.edits_of(session, "holder", holder_id)
        recorded = party_edits.as_record(edit_row)
    assert recorded["reason"] == "typo in deed"
    assert recorded["changes"] == {"name": {"from": name, "to": name + " LLC"}}
    assert recorded["actor"].startswith("test board")


def test_a_holder_form_sent_twice_registers_one_holder(app, board) -> None:
    name = unique("Twice")
    action, hidden = form_of(board, "/holders/new", "record-form")
    first = board.post(action, data={**hidden, "name": name})
    second = board.post(action, data={**hidden, "name": name})
    assert redirected(first, "/holders/") == redirected(second, "/holders/")
    assert count(app, Holder, Holder.name == name) == 1


def test_a_form_without_its_csrf_secret_writes_nothing(app, board) -> None:
    name = unique("Forged")
    action, hidden = form_of(board, "/holders/new", "record-form")
    forged = {k: v for k, v in hidden.items() if k != "csrf_token"}
    assert board.post(action, data={**forged, "name": name}).status_code == 400
    wrong = {**hidden, "csrf_token": "not-the-secret"}
    assert board.post(action, data={**wrong, "name": name}).status_code == 400
    assert count(app, Holder, Holder.name == name) == 0


def test_a_nul_pasted_into_a_form_or_an_address_is_shown_as_such_and_writes_nothing(
    app, board
) -> None:
    """PostgreSQL's text holds no NUL: the form comes back with the field marked (as typed),
    and an address holding one is a page saying so, on both databases."""
    before = count(app, Holder)
    name = unique("Acme") + "\x00Bank"
    refused = html(fill(board, "/holders/new", "record-form", {"name": name}), 422)
    assert error_beside(refused, "name") == "This must not contain a NUL character."
    assert count(app, Holder) == before
    for address in (
        "/plans?q=a%00b",
        "/holders?q=a%00b",
        "/accounts?q=a%00b",
        "/accounts/acct_%00",
    ):
        page = html(board.get(address), 400)
        assert "NUL" in page.one("main").text, address


def test_the_board_registers_an_lgu_and_corrects_its_name(kit, board) -> None:
    name = unique("Wright County")
    fields = {"name": name, "kind": "county", "observes_indigenous_peoples_day": "on"}
    location = redirected(fill(board, "/lgus/new", "record-form", fields), "/lgus/")
    lgu_id = location.split("/")[2]
    shown = ok(kit.api.get(f"/lgus/{lgu_id}"), 200)
    assert (shown["name"], shown["kind"]) == (name, "county")
    assert shown["observes_indigenous_peoples_day"] is True
    assert shown["observes_friday_after_thanksgiving"] is False

    refused = fill(board, "/lgus/new", "record-form", {"name": name, "kind": "parish"})
    assert "Must be one of" in error_beside(html(refused, 422), "kind")

    edit = f"/lgus/{lgu_id}/edit"
    fixed = {"name": name + " Board", "reason": "renamed by resolution"}
    redirected(fill(board, edit, "record-form", fixed), edit)
    assert ok(kit.api.get(f"/lgus/{lgu_id}"), 200)["name"] == name + " Board"


def test_the_new_plan_form_names_the_lgu_id_by_the_prefix_lgu_ids_have(kit, board) -> None:
    """The board's plan form asks for the LGU by its id: the label's example prefix is the one
    the LGU's id has, and the form records the plan for that LGU."""
    lgu = kit.lgu()
    form = html(board.get("/plans/new")).one("form", id="record-form")
    label = form.one("label", for_="f-lgu_id").text
    (prefix,) = re.findall(r"\((\w+_)…\)", label)
    assert lgu["id"].startswith(prefix), (label, lgu["id"])


# --- bank sites ----------------------------------------------------------------------------------


def test_a_site_is_registered_with_its_credit_register_amended_and_frozen(kit, board) -> None:
    holder = kit.holder()
    fields = {
        "name": unique("Site"),
        "holder_id": holder["id"],
        "service_area": "5",
        "county": "Lyon",
        "credit_areas.0.category": "replacement_wetland",
        "credit_areas.0.area_sqft": "10,000",
    }
    location = redirected(fill(board, "/bank-sites/new", "record-form", fields), "/bank-sites/")
    site_id = location.split("/")[2]
    page = html(board.get(location))
    row = page.one("tr", data_category="replacement_wetland")
    cells = {c.attrs["data-field"]: c.text for c in row.all("td")}
    assert cells["area_sqft"] == "10,000" and cells["remaining_sqft"] == "10,000"
    assert cells["restricted"] == "Any replacement"

    lgu = kit.lgu()
    account_id = kit.account(holder["id"])
    kit.wetland_deposit(account_id, site_id, lgu["id"], 8_000)
    edit = f"/bank-sites/{site_id}/edit"
    below = {"category": "replacement_wetland", "area_sqft": "5000", "reason": "resurvey"}
    refused = html(fill(board, edit, "amend-form", below), 422)  # the API's cap_exceeded
    assert "already credited 8,000 sq ft" in problem_above(refused)
    assert refused.has("form", id="amend-form")  # kept, to type another area
    above = {**below, "area_sqft": "12000"}
    redirected(fill(board, edit, "amend-form", above), edit)
    credit = ok(kit.api.get(f"/bank-sites/{site_id}"), 200)["credit_areas"][0]
    assert (credit["area_sqft"], credit["remaining_sqft"]) == (12_000, 4_000)

    redirected(fill(board, edit, "freeze-form", {}), edit)
    assert ok(kit.api.get(f"/bank-sites/{site_id}"), 200)["frozen"] is True
    assert html(board.get(edit)).one(id="site-frozen").text == "Frozen"


def test_a_credited_action_with_its_category_chosen_and_no_area_is_refused_not_dropped(
    app, kit, board
) -> None:
    holder = kit.holder()
    name = unique("Site")
    fields = {
        "name": name,
        "holder_id": holder["id"],
        "service_area": "5",
        "county": "Lyon",
        "credit_areas.0.category": "replacement_wetland",
        "credit_areas.0.area_sqft": "10,000",
        "credit_areas.1.category": "upland_buffer",  # its area left blank
    }
    shown = html(fill(board, "/bank-sites/new", "record-form", fields), 422)
    assert error_beside(shown, "credit_areas.1.area_sqft") == "Fill in this field."
    row = shown.one("select", id="f-credit_areas-1-category")
    chosen = [o.attrs["value"] for o in row.all("option") if "selected" in o.attrs]
    assert chosen == ["upland_buffer"]  # kept as chosen
    assert count(app, BankSite, BankSite.name == name) == 0

    fields["credit_areas.1.area_sqft"] = "4,000"
    location = redirected(fill(board, "/bank-sites/new", "record-form", fields), "/bank-sites/")
    page = html(board.get(location))
    assert {r.attrs["data-category"] for r in page.all("tr") if "data-category" in r.attrs} == {
        "replacement_wetland",
        "upland_buffer",
    }


def test_a_category_registered_twice_is_named_as_its_code(app, kit, board) -> None:
    name = unique("Site")
    fields = {
        "name": name,
        "holder_id": kit.holder()["id"],
        "service_area": "5",
        "county": "Lyon",
        "credit_areas.0.category": "replacement_wetland",
        "credit_areas.0.area_sqft": "10,000",
        "credit_areas.2.category": "replacement_wetland",
        "credit_areas.2.area_sqft": "2,000",
    }
    shown = html(fill(board, "/bank-sites/new", "record-form", fields), 422)
    assert problem_above(shown).startswith("replacement_wetland is registered twice.")
    assert error_beside(shown, "credit_areas.2.category") == "Repeated."
    assert count(app, BankSite, BankSite.name == name) == 0


# --- accounts ------------------------------------------------------------------------------------


def test_the_board_opens_freezes_and_closes_an_account(kit, board) -> None:
    holder = kit.holder()
    fields = {"holder_id": holder["id"], "service_area": "5", "county": "Lyon"}
    location = redirected(fill(board, "/accounts/new", "record-form", fields), "/accounts/")
    account_id = location.split("?")[0].split("/")[2]
    assert html(board.get(location)).one(id="form-notice").text == "The account is open."

    redirected(fill(board, f"/accounts/{account_id}/freeze", "act-form", {}), "/accounts/")
    assert ok(kit.api.get(f"/accounts/{account_id}"), 200)["status"] == "frozen"
    redirected(fill(board, f"/accounts/{account_id}/unfreeze", "act-form", {}), "/accounts/")
    assert ok(kit.api.get(f"/accounts/{account_id}"), 200)["status"] == "open"

    unknown = fill(board, "/accounts/new", "record-form", {**fields, "holder_id": "hld_nope"})
    assert error_beside(html(unknown, 422), "holder_id") == "No such holder."

    redirected(fill(board, f"/accounts/{account_id}/close", "act-form", {}), "/accounts/")
    assert ok(kit.api.get(f"/accounts/{account_id}"), 200)["status"] == "closed"


def test_an_account_holding_credits_is_not_closed(kit, board) -> None:
    funded = kit.funded(12_000)
    refused = html(fill(board, f"/accounts/{funded['id']}/close", "act-form", {}), 409)
    assert "holds 12,000 sq ft of credits: transfer them first" in problem_above(refused)
    assert ok(kit.api.get(f"/accounts/{funded['id']}"), 200)["status"] == "open"


def balance_cells(document: Element) -> dict[str, dict[str, str]]:
    """The balances table's figures per credit class, by column."""
    return {
        row.attrs["data-credit-class"]: cells_of(row)
        for row in document.one("table", id="balances").all("tr")
        if "data-credit-class" in row.attrs
    }


@pytest.mark.parametrize("act", ["freeze", "close"])
def test_an_accounts_act_form_shows_what_it_holds_as_the_account_page_does(kit, board, act) -> None:
    """Before freezing or closing an account the board sees each credit class's posted,
    reserved, frozen and available square feet, the account page's figures (one read)."""
    funded = kit.funded(12_000)
    account_id, site_id = funded["id"], funded["site_id"]
    with on("2026-06-08"):
        plan = kit.plan(kit.lgu(), received_on="2026-06-08", area_sqft=2_000)
        kit.reserve(account_id, plan["id"], funded["unrestricted"], 3_000)
    figures = {
        funded["unrestricted"]: {
            "posted_sqft": "12,000",
            "reserved_sqft": "3,000",
            "frozen_sqft": "0",
            "available_sqft": "9,000",
        }
    }
    form_page = html(board.get(f"/accounts/{account_id}/{act}"))
    assert balance_cells(form_page) == figures
    assert balance_cells(html(board.get(f"/accounts/{account_id}"))) == figures

    ok(kit.api.post(f"/bank-sites/{site_id}/freeze"), 200)  # its credits are frozen
    frozen = balance_cells(html(board.get(f"/accounts/{account_id}/{act}")))
    assert frozen == balance_cells(html(board.get(f"/accounts/{account_id}")))
    assert frozen[funded["unrestricted"]]["available_sqft"] == "0"


def test_an_empty_accounts_act_form_says_it_holds_no_credits(kit, board) -> None:
    account_id = kit.account(kit.holder()["id"])
    shown = html(board.get(f"/accounts/{account_id}/close"))
    assert "This account holds no credits." in shown.one("main").text


# --- deposits ------------------------------------------------------------------------------------


def deposit_fields(account_id: str, site_id: str, lgu_id: str, *actions: dict) -> dict:
    fields = {
        "account_id": account_id,
        "bank_site_id": site_id,
        "effective_on": "2026-05-20",
        "banking_plan.reference": unique("BP"),
        "banking_plan.approved_on": "2026-05-01",
        "banking_plan.lgu_id": lgu_id,
        "wetland_type": "2",
        "completed_on": "2026-04-14",
        "designated_for_replacement": "on",
        "paid_by_performer": "on",
    }
    for index, action in enumerate(actions):
        fields |= {f"actions.{index}.{name}": str(value) for name, value in action.items()}
    return fields


def preview_lines(document: Element) -> list[dict[str, str]]:
    table = document.one("table", id="preview-actions")
    return [
        {"category": row.attrs["data-category"]}
        | {c.attrs["data-field"]: c.text for c in row.all("td") if c.attrs.get("data-field")}
        for row in table.all("tr")
        if "data-category" in row.attrs
    ]


def test_a_deposit_is_previewed_with_each_actions_cap_then_posted_once(app, kit, board) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    kit.wetland_deposit(account_id, site_id, lgu["id"], 4_000)
    wetland = {"category": "replacement_wetland", "area_sqft": 3_000, "credit_sqft": 3_000}
    buffer = {
        "category": "upland_buffer",
        "area_sqft": 4_000,
        "credit_sqft": 3_000,
        "established_on": "2026-04-14",
    }
    fields = deposit_fields(account_id, site_id, lgu["id"], wetland, buffer)
    page = f"/deposits/new?account_id={account_id}"
    action, hidden = form_of(board, page, "deposit-form")

    shown = html(board.post("/deposits/preview", data={**hidden, **fields}))
    assert shown.one(id="preview-verdict").text.startswith("This deposit may be posted")
    wet, buf = preview_lines(shown)
    assert (wet["category"], wet["cap_sqft"], wet["credited_sqft"]) == (
        "replacement_wetland",
        "10,000",
        "4,000",
    )
    assert (wet["remaining_sqft"], wet["restricted"]) == ("6,000", "Any replacement")
    assert buf["restricted"].startswith("Above 1:1 only")
    assert (buf["cap_sqft"], buf["remaining_sqft"]) == ("4,000", "4,000")
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 1  # the preview wrote nothing

    # the preview keeps the form's key: posting it, twice, deposits once
    key = shown.one("form", id="deposit-form").one("input", name="idempotency_key").attrs["value"]
    assert key == hidden["idempotency_key"]
    first = board.post(action, data={**hidden, **fields})
    second = board.post(action, data={**hidden, **fields})
    assert redirected(first, f"/accounts/{account_id}") == redirected(second, "/accounts/")
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 2
    assert kit.balances(account_id)["BSA5-T2-R"]["posted_sqft"] == 3_000


def test_a_deposit_over_the_sites_cap_shows_why_beside_the_action(app, kit, board) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    kit.wetland_deposit(account_id, site_id, lgu["id"], 8_000)
    over = {"category": "replacement_wetland", "area_sqft": 3_000, "credit_sqft": 3_000}
    fields = deposit_fields(account_id, site_id, lgu["id"], over)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    shown = html(board.post("/deposits/preview", data={**hidden, **fields}))
    assert shown.one(id="preview-verdict").text.startswith("Posting this deposit would be")
    (line,) = preview_lines(shown)
    assert (line["credited_sqft"], line["remaining_sqft"]) == ("8,000", "2,000")
    sentence = error_beside(shown, "actions.0.credit_sqft")
    assert "may yield at most 10,000 sq ft" in sentence

    posted = html(board.post(action, data={**hidden, **fields}), 422)
    assert error_beside(posted, "actions.0.credit_sqft") == sentence
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 1


def test_a_pond_whose_project_shows_nothing_is_previewed_as_not_eligible(app, kit, board) -> None:
    """A zero-width space names no project: the preview says posting would be refused, beside
    the field, as for a blank one, and posting it is refused the same way."""
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    pond = {
        "category": "treatment_pond",
        "area_sqft": 4_000,
        "credit_sqft": 3_000,
        "associated_project": "\u200b",
    }
    fields = deposit_fields(account_id, site_id, lgu["id"], pond)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    shown = html(board.post("/deposits/preview", data={**hidden, **fields}))
    assert shown.one(id="preview-verdict").text.startswith("Posting this deposit would be")
    assert "Subd. 12 (c)(4)" in error_beside(shown, "actions.0.associated_project")

    posted = html(board.post(action, data={**hidden, **fields}), 422)
    assert "Subd. 12 (c)(4)" in error_beside(posted, "actions.0.associated_project")
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 0


def test_a_deposit_into_a_closed_account_keeps_the_form_to_name_another(app, kit, board) -> None:
    """The account is typed: refused because it is closed (409, the API's sentence above the
    form), the form comes back as sent, and with an open account named it deposits."""
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    shut = kit.account(holder["id"])
    ok(kit.api.post(f"/accounts/{shut}/close"), 200)
    account_id = kit.account(holder["id"])
    wetland = {"category": "replacement_wetland", "area_sqft": 1_000, "credit_sqft": 1_000}
    fields = deposit_fields(shut, site_id, lgu["id"], wetland)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    refused = html(board.post(action, data={**hidden, **fields}), 409)
    assert problem_above(refused) == "A closed account accepts no deposit."
    form = refused.one("form", id="deposit-form")
    assert form.one("input", name="account_id").attrs["value"] == shut
    assert form.one("input", id="f-actions-0-credit_sqft").attrs["value"] == "1000"
    sent = {i.attrs["name"]: i.attrs["value"] for i in form.all("input", type="hidden")}
    done = board.post(action, data={**fields, **sent, "account_id": account_id})
    redirected(done, f"/accounts/{account_id}")
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 1


def rows_of(*actions: dict | None) -> dict:
    """Action rows as the form numbers them: ``None`` leaves that row blank."""
    fields: dict = {}
    for index, action in enumerate(actions):
        fields |= {f"actions.{index}.{k}": str(v) for k, v in (action or {}).items()}
    return fields


def test_a_refused_action_after_a_blank_row_is_shown_beside_its_own_row(app, kit, board) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    wetland = {"category": "replacement_wetland", "area_sqft": 1_000, "credit_sqft": 1_000}
    faulty = {"category": "replacement_wetland", "area_sqft": "12.5", "credit_sqft": 500}
    fields = deposit_fields(account_id, site_id, lgu["id"]) | rows_of(wetland, None, faulty)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    for path in ("/deposits/preview", action):
        shown = html(board.post(path, data={**hidden, **fields}), 422)
        assert error_beside(shown, "actions.2.area_sqft") == "Write a whole number.", path
        assert not shown.has(id="f-actions-1-area_sqft-error"), path  # the blank row is clean
        assert shown.one("input", id="f-actions-2-area_sqft").attrs["value"] == "12.5"
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 0


def test_a_refusal_names_the_action_by_the_forms_own_row(app, kit, board) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    kit.wetland_deposit(account_id, site_id, lgu["id"], 8_000)
    over = {"category": "replacement_wetland", "area_sqft": 3_000, "credit_sqft": 3_000}
    fields = deposit_fields(account_id, site_id, lgu["id"]) | rows_of(None, over)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    shown = html(board.post("/deposits/preview", data={**hidden, **fields}))
    assert shown.one("table", id="preview-actions").one("tbody").one("th").text == "2"
    sentence = error_beside(shown, "actions.1.credit_sqft")
    assert "(action 2)" in sentence and "(action 0)" not in sentence
    assert "(action 2)" in problem_above(shown)
    assert not shown.has(id="f-actions-0-credit_sqft-error")

    posted = html(board.post(action, data={**hidden, **fields}), 422)
    assert error_beside(posted, "actions.1.credit_sqft") == sentence
    assert "(action 2)" in problem_above(posted) and "(action 0)" not in problem_above(posted)
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 1


def test_an_action_row_with_only_its_category_chosen_is_refused_not_skipped(
    app, kit, board
) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    site_id = kit.site(holder["id"], wetland_sqft=10_000)
    account_id = kit.account(holder["id"])
    drawn_form = drawn(html(board.get("/deposits/new")).one("form", id="deposit-form"))
    assert all(drawn_form[f"actions.{i}.category"] == "" for i in range(4))  # none preselected
    wetland = {"category": "replacement_wetland", "area_sqft": 1_000, "credit_sqft": 1_000}
    half = {"category": "replacement_wetland"}
    fields = deposit_fields(account_id, site_id, lgu["id"]) | rows_of(wetland, half)
    action, hidden = form_of(board, "/deposits/new", "deposit-form")

    for path in ("/deposits/preview", action):
        shown = html(board.post(path, data={**hidden, **fields}), 422)
        assert error_beside(shown, "actions.1.area_sqft") == "Fill in this field.", path
        assert error_beside(shown, "actions.1.credit_sqft") == "Fill in this field.", path
        assert not shown.has(id="preview-verdict")
    assert count(app, Deposit, Deposit.bank_site_id == site_id) == 0


# --- appeals -------------------------------------------------------------------------------------


def test_the_board_records_a_petition_and_decides_it(kit, board) -> None:
    plan = noticed_decision(kit, kit.lgu())
    page = f"/plans/{plan['id']}/appeals"
    petition = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Main St, Buffalo, MN",
        "postmarked_on": "2026-09-21",
        "received_on": PETITION_DAY,
        "filing_fee_cents": "200",
    }
    with on(PETITION_DAY):
        late = fill(board, page, "petition-form", {**petition, "received_on": "2026-09-20"})
        refused = html(late, 422)
        assert error_beside(refused, "received_on") == "Before postmark."
        assert problem_above(refused) == "Received before it was mailed."
        location = redirected(fill(board, page, "petition-form", petition), page)
        document = html(board.get(location))
    (appeal_id,) = [a.attrs["data-appeal-id"] for a in document.all("article")]
    assert ok(kit.api.get(f"/appeals/{appeal_id}"), 200)["petitioner_name"] == "Ann Owner"

    grant_form = f"appeal-{appeal_id}-petition"
    with on(PETITION_DAY):
        denied = {"granted": "false", "decided_on": PETITION_DAY}
        no_grounds = html(fill(board, page, grant_form, denied), 422)
        assert error_beside(no_grounds, "grounds").startswith("A denial names one or more of")
        unpaid = fill(board, page, grant_form, {"granted": "true", "decided_on": PETITION_DAY})
        assert "filing fee has not been paid" in problem_above(html(unpaid, 422))
        redirected(fill(board, page, grant_form, {**denied, "grounds": ["trivial"]}), page)
    shown = ok(kit.api.get(f"/appeals/{appeal_id}"), 200)
    assert shown["petition"]["granted"] is False and shown["grounds"] == ["trivial"]


def test_an_appeals_form_posted_under_another_plans_address_is_not_found(kit, board) -> None:
    lgu = kit.lgu()
    plan, other = noticed_decision(kit, lgu), noticed_decision(kit, lgu)
    with on(PETITION_DAY):
        appeal = ok(
            kit.api.post(
                f"/plans/{plan['id']}/appeals",
                {
                    "petitioner_kind": "owner",
                    "petitioner_name": "Ann Owner",
                    "petitioner_address": "1 Main St, Buffalo, MN",
                    "postmarked_on": "2026-09-21",
                    "received_on": PETITION_DAY,
                    "filing_fee_cents": 20_000,
                },
            )
        )
        _action, hidden = form_of(
            board, f"/plans/{plan['id']}/appeals", f"appeal-{appeal['id']}-petition"
        )
        elsewhere = f"/plans/{other['id']}/appeals/{appeal['id']}/petition"
        denied = {"granted": "false", "decided_on": PETITION_DAY, "grounds": ["trivial"]}
        html(board.post(elsewhere, data={**hidden, **denied}), 404)
    assert ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)["petition"] is None


def test_the_board_records_the_filing_fee_on_the_appeals_page_and_grants_the_petition(
    kit, board
) -> None:
    """Subd. 9: a petition is granted once its $200 fee is paid; the page records the payment
    (as POST /payments does) and shows it, so the grant need not leave the page."""
    plan = noticed_decision(kit, kit.lgu())
    page = f"/plans/{plan['id']}/appeals"
    petition = {
        "petitioner_kind": "owner",
        "petitioner_name": "Ann Owner",
        "petitioner_address": "1 Main St, Buffalo, MN",
        "postmarked_on": "2026-09-21",
        "received_on": PETITION_DAY,
        "filing_fee_cents": "200",
    }
    with on(PETITION_DAY):
        document = html(board.get(redirected(fill(board, page, "petition-form", petition), page)))
        (appeal_id,) = [a.attrs["data-appeal-id"] for a in document.all("article")]
        assert document.one("dd", data_field="payments").text.startswith("none")
        pay_form, grant_form = f"appeal-{appeal_id}-payment", f"appeal-{appeal_id}-petition"
        fee = {"kind": "appeal_filing_fee", "payer": "Ann Owner", "received_on": PETITION_DAY}
        short = html(fill(board, page, pay_form, {**fee, "amount_cents": "199.99"}), 422)
        assert problem_above(short) == "The appeal filing fee is $200.00."
        # mailed the day after the window (Subd. 9), refused as a late petition is
        late = {**fee, "amount_cents": "$200", "postmarked_on": "2026-09-22"}
        refused = html(fill(board, page, pay_form, late), 422)
        assert problem_above(refused).startswith(
            "Subd. 9: the filing fee had to be mailed by 2026-09-21"
        )
        assert ok(kit.api.get(f"/payments?plan_id={plan['id']}"), 200)["items"] == []
        document = html(
            board.get(
                redirected(fill(board, page, pay_form, {**fee, "amount_cents": "$200"}), page)
            )
        )
        recorded = document.one("dd", data_field="payments").text
        assert recorded.startswith("Filing fee $200.00")
        # no postmark given: the fee came in the petition's envelope
        assert f"received {PETITION_DAY} (postmarked 2026-09-21)" in recorded
        granted = {"granted": "true", "decided_on": PETITION_DAY}
        redirected(fill(board, page, grant_form, granted), page)
    shown = ok(kit.api.get(f"/appeals/{appeal_id}"), 200)
    assert shown["petition"]["granted"] is True
    (paid,) = ok(kit.api.get(f"/payments?plan_id={plan['id']}"), 200)["items"]
    assert (paid["kind"], paid["appeal_id"], paid["amount_cents"]) == (
        "appeal_filing_fee",
        appeal_id,
        20_000,
    )


def payment_kinds(document: Element, appeal_id: str) -> list[str]:
    """The kinds of payment the appeal's payment form offers."""
    menu = document.one("form", id=f"appeal-{appeal_id}-payment").one("select", name="kind")
    return [o.attrs["value"] for o in menu.all("option") if o.attrs.get("value")]


def test_the_payment_form_offers_appeal_security_only_where_the_lgu_required_it(kit, board) -> None:
    """Subd. 9: security is posted only where the LGU required it (the API refuses any other
    as ``invalid_fee``), so the form offers it only there."""
    lgu = kit.lgu()
    free, secured = (
        noticed_decision(kit, lgu),
        _noticed_decision_requiring_security(kit, lgu, 30_000),
    )
    with on(PETITION_DAY):
        unsecured_appeal, appeal = ok(petition(kit, free)), ok(petition(kit, secured))
        page = f"/plans/{free['id']}/appeals"
        assert payment_kinds(html(board.get(page)), unsecured_appeal["id"]) == ["appeal_filing_fee"]
        page = f"/plans/{secured['id']}/appeals"
        assert payment_kinds(html(board.get(page)), appeal["id"]) == [
            "appeal_filing_fee",
            "appeal_security",
        ]
        security = {
            "kind": "appeal_security",
            "amount_cents": "$300",
            "payer": "Wright County residents",
            "received_on": PETITION_DAY,
        }
        redirected(fill(board, page, f"appeal-{appeal['id']}-payment", security), page)
        # sent anyway where none was required, it is refused and nothing is recorded
        page = f"/plans/{free['id']}/appeals"
        refused = html(fill(board, page, f"appeal-{unsecured_appeal['id']}-payment", security), 422)
        assert problem_above(refused).startswith("Subd. 9: the LGU required no appeal security")
    (paid,) = ok(kit.api.get(f"/payments?plan_id={secured['id']}"), 200)["items"]
    assert (paid["kind"], paid["amount_cents"]) == ("appeal_security", 30_000)
    assert ok(kit.api.get(f"/payments?plan_id={free['id']}"), 200)["items"] == []


# --- tokens --------------------------------------------------------------------------------------


def test_a_token_is_created_with_its_secret_shown_once_and_revoked(kit, board) -> None:
    holder = kit.holder()
    fields = {"role": "holder", "name": "Prairie's bookkeeper", "holder_id": holder["id"]}
    action, hidden = form_of(board, "/tokens", "create-form")
    created = html(board.post(action, data={**hidden, **fields}), 201)
    secret = created.one(id="token-secret").text
    token_id = created.one("code", data_field="token_id").text
    me = ok(kit.api.get("/me", token=secret), 200)
    assert (me["token_id"], me["holder_id"]) == (token_id, holder["id"])

    again = board.post(action, data={**hidden, **fields})
    location = redirected(again, "/tokens")
    assert secret not in board.get(location).get_data(as_text=True)
    assert secret not in again.get_data(as_text=True)

    refused = fill(board, "/tokens", "create-form", {"role": "lgu", "name": "x"})
    assert error_beside(html(refused, 422), "lgu_id") == "Required for role lgu."

    redirected(fill(board, "/tokens", "revoke-form", {"token_id": token_id}), "/tokens")
    assert kit.api.get("/me", token=secret).status_code == 401


def test_the_revoke_form_takes_a_token_revoked_already_and_keeps_a_mistyped_id(kit, board) -> None:
    """Revoking a token revoked already changes nothing and is not refused (as through the
    API): no token's state closes the form, so what it refuses is the id typed, and the form
    comes back with it to correct."""
    made = ok(kit.api.post("/tokens", {"role": "board", "name": unique("gone")}), 201)
    assert kit.api.delete(f"/tokens/{made['id']}").status_code == 204
    done = fill(board, "/tokens", "revoke-form", {"token_id": made["id"]})
    assert redirected(done, "/tokens").endswith(f"token_id={made['id']}")

    unknown = html(fill(board, "/tokens", "revoke-form", {"token_id": "tok_nosuchtoken"}), 404)
    assert problem_above(unknown) == "There is no such record, or you may not see it."
    form = unknown.one("form", id="revoke-form")
    assert form.one("input", name="token_id").attrs["value"] == "tok_nosuchtoken"
    blank = html(fill(board, "/tokens", "revoke-form", {"token_id": ""}), 422)
    assert error_beside(blank, "token_id") == "Fill in this field."
    assert blank.has("form", id="revoke-form")


def token_row(client: FlaskClient, token_id: str) -> Element:
    """The token's row on the tokens page, following its "Next page" links to it."""
    address: str | None = "/tokens"
    while address:
        page = html(client.get(address))
        rows = page.all("tr", data_token_id=token_id)
        if rows:
            return rows[0]
        following = page.all("a", id="next-page")
        address = following[0].attrs["href"] if following else None
    raise AssertionError(f"{token_id} is not on the tokens page")


def cells_of(row: Element) -> dict[str, str]:
    return {c.attrs["data-field"]: c.text for c in row.all("td") if "data-field" in c.attrs}


def test_a_token_created_on_the_page_is_listed_and_revoked_from_its_row(app, kit, board) -> None:
    holder = kit.holder("Prairie & <Sons>")
    holder_name = ok(kit.api.get(f"/holders/{holder['id']}"), 200)["name"]
    name = unique("Prairie's clerk")
    fields = {"role": "holder", "name": name, "holder_id": holder["id"]}
    action, hidden = form_of(board, "/tokens", "create-form")
    created = html(board.post(action, data={**hidden, **fields}), 201)
    secret = created.one(id="token-secret").text
    token_id = created.one("code", data_field="token_id").text

    row = token_row(board, token_id)
    assert row.attrs["data-status"] == "active"
    assert name in row.one("th").text
    cells = cells_of(row)
    assert (cells["role"], cells["status"], cells["last_used_at"]) == ("Holder", "Active", "Never")
    assert cells["acts_for"] == f"Holder {holder_name} {holder['id']}"  # its name, escaped
    assert secret not in board.get("/tokens").get_data(as_text=True)
    button = row.one("form")
    assert (button.attrs["method"], button.attrs["action"]) == ("post", "/tokens/revoke")
    sent = {i.attrs["name"]: i.attrs["value"] for i in button.all("input", type="hidden")}
    assert sent["token_id"] == token_id and sent["csrf_token"] and sent["idempotency_key"]
    assert button.one("button").text == "Revoke"
    assert button.one("button").attrs["aria-describedby"] == row.one("th").attrs["id"]

    # someone other than the board cannot send that button, and the token keeps working
    intruder = signed_in(app.test_client(), holder["token"])
    assert intruder.get("/tokens").status_code == 403
    csrf = parse(intruder.get("/").get_data(as_text=True)).one("input", name="csrf_token")
    refused = intruder.post("/tokens/revoke", data={**sent, "csrf_token": csrf.attrs["value"]})
    assert refused.status_code == 403
    assert ok(kit.api.get("/me", token=secret), 200)["token_id"] == token_id

    done = board.post(button.attrs["action"], data=sent)
    location = redirected(done, "/tokens")
    after = html(board.get(location))
    assert after.one(id="form-notice").text.startswith("The token is revoked")
    assert kit.api.get("/me", token=secret).status_code == 401
    row = token_row(board, token_id)
    assert row.attrs["data-status"] == "revoked"
    assert cells_of(row)["status"].startswith("Revoked 20")
    assert not row.has("form")
    # the same button sent again answers as the first time and revokes nothing more
    assert redirected(board.post(button.attrs["action"], data=sent), "/tokens") == location


def test_the_tokens_page_lists_tokens_newest_first_in_pages(fresh_app) -> None:
    """Three tokens made in 2020, one second apart (the first revoked since), and the board's
    made now: two rows a page, newest first."""
    db = fresh_app.extensions["wetbank.db"]
    lgu_id = parties.create_lgu(db, SYSTEM, name="Lyon County", kind="county").id
    for second, kw in enumerate([{}, {"lgu_id": lgu_id}, {}], 1):
        with at(f"2020-01-01 00:00:0{second}"):
            make_token(fresh_app, "lgu" if kw else "board", **kw)
    board_token = make_token(fresh_app, "board")
    with db.transaction() as session:
        made = session.execute(select(ApiToken).order_by(ApiToken.created_at)).scalars()
        oldest, lgus, older, board_id = [row.id for row in made]
    client = signed_in(fresh_app.test_client(), board_token)
    redirected(fill(client, "/tokens", "revoke-form", {"token_id": oldest}), "/tokens")

    def rows_of(page: Element) -> list[Element]:
        table = page.one("table", id="tokens")
        assert table.one("caption").text == "API tokens, newest first"
        return [row for row in table.all("tr") if "data-token-id" in row.attrs]

    first = html(client.get("/tokens?limit=2"))
    rows = rows_of(first)
    assert [row.attrs["data-token-id"] for row in rows] == [board_id, older]
    assert "you are signed in with it" in rows[0].one("th").text
    assert not first.has("a", id="first-page")
    second = html(client.get(first.one("a", id="next-page").attrs["href"]))
    rows = rows_of(second)
    assert [row.attrs["data-token-id"] for row in rows] == [lgus, oldest]
    assert cells_of(rows[0])["role"] == "LGU"
    assert cells_of(rows[0])["acts_for"] == f"LGU Lyon County {lgu_id}"
    assert cells_of(rows[0])["created_at"] == "2019-12-31 18:00 CST"  # Minnesota's time
    assert rows[0].has("form") and not rows[0].has("a")
    assert rows[1].attrs["data-status"] == "revoked" and not rows[1].has("form")
    assert second.has("a", id="first-page") and not second.has("a", id="next-page")


# --- who may use the forms -----------------------------------------------------------------------

PAGES = [
    "/holders/new",
    "/holders/hld_any/edit",
    "/lgus/new",
    "/lgus/lgu_any/edit",
    "/bank-sites/new",
    "/bank-sites/site_any/edit",
    "/accounts/new",
    "/accounts/acct_any/freeze",
    "/accounts/acct_any/unfreeze",
    "/accounts/acct_any/close",
    "/deposits/new",
    "/plans/plan_any/appeals",
    "/tokens",
]
#: every form's POST (a holder's own account or an LGU's own plan is no exception); a payment's
#: refund is the plan's LGU's too (tests/api/test_web_payments.py)
POSTS = [
    "/holders/new",
    "/holders/hld_any/edit",
    "/lgus/new",
    "/lgus/lgu_any/edit",
    "/bank-sites/new",
    "/bank-sites/site_any/edit",
    "/bank-sites/site_any/credit-areas",
    "/bank-sites/site_any/freeze",
    "/bank-sites/site_any/unfreeze",
    "/accounts/new",
    "/accounts/acct_any/close",
    "/deposits/preview",
    "/deposits/new",
    "/plans/plan_any/appeals",
    "/plans/plan_any/appeals/apl_any/payment",
    "/payments/pay_any/reverse",
    "/plans/plan_any/appeals/apl_any/petition",
    "/plans/plan_any/appeals/apl_any/decision",
    "/plans/plan_any/appeals/apl_any/service",
    "/tokens",
    "/tokens/revoke",
]


def test_no_one_but_the_board_may_use_the_forms(app, kit) -> None:
    holder = kit.holder()
    lgu = kit.lgu()
    for token in (holder["token"], lgu["token"]):
        client = signed_in(app.test_client(), token)
        for path in PAGES:
            assert client.get(path).status_code == 403, path
        csrf = (
            parse(client.get("/").get_data(as_text=True))
            .one("input", name="csrf_token")
            .attrs["value"]
        )
        name = unique("Intruder")
        body = {"csrf_token": csrf, "idempotency_key": "k" * 24, "name": name}
        for path in POSTS:
            assert client.post(path, data={**body, "role": "board"}).status_code == 403, path
        assert count(app, Holder, Holder.name == name) == 0
    anonymous = app.test_client()
    response = anonymous.get("/holders/new")
    assert response.status_code == 303 and "/sign-in" in response.headers["Location"]


def revocations_by(api: Any, token_id: str) -> list[tuple[str, int]]:
    """The ``token_revoked`` events the token ``token_id`` recorded: (path, status)."""
    return [
        (event["path"], event["status"])
        for event in audit_events(api)
        if event["kind"] == "token_revoked" and event["actor"].endswith(f"({token_id})")
    ]


def test_the_board_revokes_the_token_it_signed_in_with_and_is_signed_out(app, kit) -> None:
    """A board user revoking, from its row, the token they signed in with (leaked, say): the
    token stops working at once, the one revocation is recorded, and the session that rested on
    it ends: the answer is the sign-in page saying the token was revoked, not an error.  The
    same form sent again (a double click, with the old cookie) lands there too and revokes
    nothing more."""
    token = make_token(app, "board")
    mine = ok(kit.api.get("/me", token=token), 200)["token_id"]
    client = signed_in(app.test_client(), token)
    row = token_row(client, mine)
    assert "(you are signed in with it: revoking it signs you out)" in row.one("th").text
    button = row.one("form")
    sent = {i.attrs["name"]: i.attrs["value"] for i in button.all("input", type="hidden")}
    cookie = client.get_cookie(SESSION_COOKIE)
    assert cookie is not None

    done = client.post(button.attrs["action"], data=sent)

    location = redirected(done, "/sign-in")
    cookies = done.headers.getlist("Set-Cookie")
    assert any(c.startswith(f"{SESSION_COOKIE}=;") for c in cookies), cookies  # dropped
    page = html(client.get(location))
    assert page.one(id="sign-in-notice").text.startswith("The token is revoked")
    assert "you signed in with" in page.one(id="sign-in-notice").text
    assert page.has("input", id="token")  # the sign-in form, to sign in with another
    assert kit.api.get("/me", token=token).status_code == 401
    assert client.get("/tokens").status_code == 303  # signed out
    assert revocations_by(kit.api, mine) == [("POST /tokens/revoke", 204)]

    client.set_cookie(SESSION_COOKIE, cookie.value)  # sent again before the answer came
    again = client.post(button.attrs["action"], data=sent, headers={"Referer": "/tokens"})
    again_page = html(client.get(redirected(again, "/sign-in")))
    assert "revoked" in again_page.one(id="sign-in-notice").text
    assert again_page.has("input", id="token")
    assert revocations_by(kit.api, mine) == [("POST /tokens/revoke", 204)]
    assert kit.api.get("/me", token=token).status_code == 401


def test_a_form_sent_once_its_sessions_token_was_revoked_lands_on_sign_in_saying_so(
    app, kit
) -> None:
    """Revoking another token leaves the session as it was; a session whose token was revoked
    (by someone else) can send no form: its revoke form lands on the sign-in page saying why,
    and the token it named stays live."""
    token = make_token(app, "board")
    mine = ok(kit.api.get("/me", token=token), 200)["token_id"]
    client = signed_in(app.test_client(), token)
    other = ok(kit.api.post("/tokens", {"role": "board", "name": unique("other")}), 201)
    action, hidden = form_of(client, "/tokens", "revoke-form")
    redirected(client.post(action, data={**hidden, "token_id": other["id"]}), "/tokens")
    assert html(client.get("/tokens")).has("form", id="revoke-form")  # still signed in

    spare = ok(kit.api.post("/tokens", {"role": "board", "name": unique("spare")}), 201)
    action, hidden = form_of(client, "/tokens", "revoke-form")  # drawn while signed in
    assert kit.api.delete(f"/tokens/{mine}").status_code == 204
    sent = client.post(action, data={**hidden, "token_id": spare["id"]})
    page = html(client.get(redirected(sent, "/sign-in")))
    assert "revoked" in page.one(id="sign-in-notice").text
    assert ok(kit.api.get("/me", token=spare["token"]), 200)["token_id"] == spare["id"]
