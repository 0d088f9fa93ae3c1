"""A list's ``?q=`` finds the text a name contains in any case, in every script, and alike on
SQLite and PostgreSQL (docs/http.md): holders, LGUs, bank sites, plans (applicant or project)
through the API and on the pages, and accounts (number, name or holder's name) on theirs.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.api.conftest import Api
from tests.api.kit import Kit, ok, on, unique
from tests.api.test_web_board_forms import html
from tests.api.web_kit import signed_in


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def board(app: Flask, board_token: str) -> FlaskClient:
    return signed_in(app.test_client(), board_token)


def found(kit: Kit, path: str, q: str, token: str | None = None) -> list[str]:
    listed = ok(kit.api.get(path, query_string={"q": q, "limit": 50}, token=token), 200)
    return [item["id"] for item in listed["items"]]


def spellings(name: str, part: str) -> list[str]:
    """``name`` as written, in lower and upper case, and ``part`` of it in each case."""
    return [name, name.lower(), name.upper(), part, part.lower(), part.upper()]


def test_holders_lgus_and_sites_are_found_in_any_case_in_every_script(kit, board) -> None:
    holder_name = unique("Ödegaard")
    holder = ok(kit.api.post("/holders", {"name": holder_name}))["id"]
    lgu_name = unique("Ålesund Township")
    lgu = ok(kit.api.post("/lgus", {"name": lgu_name, "kind": "township"}))["id"]
    site_name = unique("Żaneta Ölund Fen")
    body = {"name": site_name, "holder_id": holder, "service_area": 5, "county": "Lyon"}
    site = ok(kit.api.post("/bank-sites", body))["id"]
    for path, name, part, made in (
        ("/holders", holder_name, "ÖDEGAARD" + holder_name[len("Ödegaard") :], holder),
        ("/lgus", lgu_name, "ålesund", lgu),
        ("/bank-sites", site_name, "ölund fen " + site_name.split()[-1], site),
    ):
        for q in spellings(name, part):
            assert found(kit, path, q) == [made], (path, q)
            page = html(board.get(path, query_string={"q": q}))
            assert (
                page.has(data_holder_id=made)
                or page.has(data_lgu_id=made)
                or page.has(data_site_id=made)
            ), (path, q)
    assert found(kit, "/lgus", "lesund township " + lgu_name.split()[-1]) == [lgu]


def test_plans_and_accounts_are_found_in_any_case_in_every_script(kit, board) -> None:
    lgu = kit.lgu()
    applicant = unique("Żaneta Ölund")
    suffix = applicant.split()[-1]
    with on("2026-06-01"):
        body: dict[str, Any] = {
            **kit.plan_body(received_on="2026-06-01", area_sqft=1_000),
            "applicant": applicant,
        }
        plan = ok(kit.api.post("/plans", body, token=lgu["token"]))["id"]
        for q in spellings(applicant, f"ölund {suffix}"):
            assert found(kit, "/plans", q) == [plan], q
            assert found(kit, "/plans", q, token=lgu["token"]) == [plan], q
            assert html(board.get("/plans", query_string={"q": q})).has(href=f"/plans/{plan}"), q
    holder = ok(kit.api.post("/holders", {"name": applicant}))["id"]
    account = kit.account(holder)
    for q in spellings(applicant, f"ŻANETA ölund {suffix}"):  # the page's search (holder's name)
        assert html(board.get("/accounts", query_string={"q": q})).has(data_account_id=account)
