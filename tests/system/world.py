"""A small populated bank for the hostile-input and authorization tests (Flask test client).

Every resource a path names exists, owned by "the" LGU or holder, with another LGU and another
holder that own nothing of it; and a valid body for every write, so that what a test changes in
one is the only thing wrong with it.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from flask import Flask
from flask.testing import FlaskClient

from tests.system.harness import (
    BASE,
    CREDIT_CLASS,
    Bank,
    approved_plan,
    days_ago,
    mailing,
    open_account,
    seed,
    unique,
)


class AppClient:
    """The Flask test client behind ``harness.Client``'s interface: ``(status, headers, body)``."""

    def __init__(self, client: FlaskClient, token: str | None = None) -> None:
        self.client, self.token = client, token

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | str | None = None,
        query: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        sent = dict(headers or {})
        chosen = token if token is not None else self.token
        if chosen:
            sent["Authorization"] = f"Bearer {chosen}"
        payload = raw
        if payload is None and body is not None:
            payload = json.dumps(body)
            sent.setdefault("Content-Type", "application/json")
        response = self.client.open(
            BASE + path, method=method, data=payload, headers=sent, query_string=query
        )
        out_headers = {k.lower(): v for k, v in response.headers.items()}
        parsed = response.get_json(silent=True) if response.is_json else response.data
        return response.status_code, out_headers, parsed

    def ok(self, method: str, path: str, body: Any = None, status: int = 201, **kw: Any) -> Any:
        got, _headers, parsed = self.call(method, path, body, **kw)
        assert got == status, (method, path, got, parsed)
        return parsed


@dataclass
class World:
    bank: Bank
    #: role in the authorization matrix → its token (None: no token)
    tokens: dict[str, str | None] = field(default_factory=dict)
    #: path parameter → the id of a resource owned by the bank's LGU or holder
    ids: dict[str, str] = field(default_factory=dict)
    other_account: str = ""
    other_lgu_id: str = ""


def build_world(app: Flask, url: str) -> World:
    client = AppClient(app.test_client())
    bank = seed(client, url, [50_000, 50_000])
    board = bank.board
    other_lgu = client.ok("POST", "/lgus", {"name": unique("Other LGU"), "kind": "city"})
    other_lgu_token = client.ok(
        "POST", "/tokens", {"role": "lgu", "name": "other lgu", "lgu_id": other_lgu["id"]}
    )["token"]
    other_holder = client.ok("POST", "/holders", {"name": unique("Other holder")})
    other_holder_token = client.ok(
        "POST", "/tokens", {"role": "holder", "name": "other", "holder_id": other_holder["id"]}
    )["token"]
    other_bank = Bank(board, bank.lgu_id, "", other_holder["id"], "", bank.site_id)
    other_account = open_account(client, other_bank, 0)
    revoked = client.ok("POST", "/tokens", {"role": "board", "name": "revoked"})
    client.ok("DELETE", f"/tokens/{revoked['id']}", status=204)
    throwaway = client.ok(
        "POST", "/tokens", {"role": "holder", "name": "x", "holder_id": bank.holder_id}
    )

    plan = approved_plan(client, bank)
    decision_notice = client.ok(
        "POST", f"/plans/{plan['id']}/decision-notice", mailing(days_ago(1), plan)
    )
    # registered after the notice of decision, asked by its day: a copy of it is owed
    copy_request = client.ok(
        "POST",
        f"/plans/{plan['id']}/copy-requests",
        {"name": "Quinn Reader", "address": "7 Oak St, Marshall, MN", "requested_on": days_ago(1)},
    )
    reservation = client.ok(
        "POST",
        f"/accounts/{bank.accounts[0]}/reservations",
        {
            "plan_id": plan["id"],
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 8_000,
            "expires_on": days_ago(-60),
        },
    )
    payment = client.ok(
        "POST",
        "/payments",
        {
            "kind": "processing_fee",
            "amount_cents": 5_000,
            "payer": "Applicant",
            "received_on": days_ago(1),
            "plan_id": plan["id"],
        },
    )
    # a security guarantees a project-specific replacement (Subd. 3), not the credits of ``plan``
    own_plan = approved_plan(
        client, bank, method="project_specific", security_required_cents=100_000
    )
    security = client.ok("POST", f"/plans/{own_plan['id']}/securities", security_body())
    deposit = client.ok(
        "POST",
        f"/accounts/{bank.accounts[1]}/deposits",
        valid_bodies_deposit(bank),
        token=board,
    )
    appeal = client.ok(
        "POST",
        f"/plans/{plan['id']}/appeals",
        {
            "petitioner_kind": "owner",
            "petitioner_name": "Ann Owner",
            "petitioner_address": "1 Lake Rd, Buffalo, MN",
            "postmarked_on": days_ago(0),
            "received_on": days_ago(0),
            "filing_fee_cents": 20_000,
        },
    )
    return World(
        bank=bank,
        tokens={
            "board": board,
            "lgu": bank.lgu_token,
            "other_lgu": other_lgu_token,
            "holder": bank.holder_token,
            "other_holder": other_holder_token,
            "revoked": revoked["token"],
            "none": None,
        },
        ids={
            "token_id": throwaway["id"],
            "holder_id": bank.holder_id,
            "lgu_id": bank.lgu_id,
            "site_id": bank.site_id,
            "account_id": bank.accounts[0],
            "reservation_id": reservation["id"],
            "plan_id": plan["id"],
            "appeal_id": appeal["id"],
            "payment_id": payment["id"],
            "security_id": security["id"],
            "deposit_id": deposit["id"],
            "copy_request_id": copy_request["id"],
            "notice_id": decision_notice["id"],
        },
        other_account=other_account,
        other_lgu_id=other_lgu["id"],
    )


def security_body() -> dict[str, Any]:
    return {
        "kind": "letter_of_credit",
        "issuer": "First State Bank",
        "amount_cents": 100_000,
        "irrevocable": True,
        "issued_on": days_ago(3),
        "expires_on": days_ago(-365),
    }


def valid_bodies_deposit(bank: Bank) -> dict[str, Any]:
    """A deposit of 1,000 sq ft from the bank's site."""
    return {
        "bank_site_id": bank.site_id,
        "effective_on": days_ago(0),  # not before the account was opened, today
        "banking_plan": {
            "reference": "BP-1",
            "approved_on": days_ago(20),
            "lgu_id": bank.lgu_id,
        },
        "wetland_type": "2",
        "completed_on": days_ago(10),
        "federally_approved": False,
        "designated_for_replacement": True,
        "paid_by_performer": True,
        "paid_back_with_interest": False,
        "actions": [{"category": "replacement_wetland", "area_sqft": 1_000, "credit_sqft": 1_000}],
    }


def valid_bodies(world: World) -> dict[str, dict[str, Any]]:
    """A well-formed body for every write that takes one, keyed ``"POST /path/{param}"``."""
    bank, ids = world.bank, world.ids
    return {
        "POST /tokens": {"role": "holder", "name": "new", "holder_id": bank.holder_id},
        "POST /holders": {"name": "Holder", "email": "h@example.org", "address": "1 Main St"},
        "POST /lgus": {
            "name": "LGU",
            "kind": "township",
            "observes_indigenous_peoples_day": False,
            "observes_friday_after_thanksgiving": True,
        },
        "POST /bank-sites": {
            "name": "Site",
            "holder_id": bank.holder_id,
            "service_area": 5,
            "county": "Lyon",
            "major_watershed": "Redwood",
        },
        "POST /accounts": {
            "holder_id": bank.holder_id,
            "service_area": 5,
            "county": "Lyon",
            "name": "Second",
        },
        "POST /accounts/{account_id}/deposits": valid_bodies_deposit(bank),
        "POST /deposits/{deposit_id}/reverse": {"effective_on": days_ago(0), "reason": "error"},
        "POST /payments/{payment_id}/reverse": {"reason": "booked on the wrong appeal"},
        "PATCH /holders/{holder_id}": {"address": "2 Main St", "reason": "moved"},
        "PATCH /lgus/{lgu_id}": {"name": "Lyon County", "reason": "full name"},
        "PATCH /bank-sites/{site_id}": {"major_watershed": "Cottonwood", "reason": "resurveyed"},
        "POST /bank-sites/{site_id}/credit-areas": {
            "category": "replacement_wetland",
            "area_sqft": 10**11,
            "reason": "resurveyed",
        },
        "POST /transfers": {
            "from_account_id": bank.accounts[0],
            "to_account_id": bank.accounts[1],
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 10,
            "price_per_sqft_cents": 250,
            "memo": "sale",
        },
        "POST /accounts/{account_id}/reservations": {
            "plan_id": ids["plan_id"],
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 10,
            "expires_on": days_ago(-30),
        },
        "POST /plans": {
            "lgu_id": bank.lgu_id,
            "applicant": "Applicant",
            "project": "Road",
            "location": "Section 14, Lyon County",
            "received_on": days_ago(3),
            "impact": {
                "area_sqft": 2_000,
                "wetland_type": "2",
                "service_area": 5,
                "county": "Lyon",
                "on_agricultural_land": False,
            },
            "replacement_ratio": "2",
            "method": "bank_credits",
            "replacement_outside_service_area": False,
        },
        "POST /plans/{plan_id}/notices": mailing(days_ago(2)),
        "POST /plans/{plan_id}/extensions": {
            "notified_on": days_ago(2),
            "days": 30,
            "reason": "more time",
            "applicant_agreed": False,
        },
        "POST /plans/{plan_id}/decision": {
            "outcome": "approved",
            "decided_on": days_ago(1),
            "resolution": {"number": "2026-41", "adopted_on": days_ago(1)},
            "tep_recommendation": "approve",
        },
        "POST /plans/{plan_id}/tep-referral": {
            "referred_on": days_ago(2),
            "questions": ["public_value", "size"],
        },
        "POST /plans/{plan_id}/tep-determination": {
            "inspected_on": days_ago(1),
            "members": [
                {"name": "Dana Board", "represents": "board"},
                {"name": "Sam Swcd", "represents": "swcd"},
                {"name": "Lee Appointee", "represents": "lgu"},
            ],
            "determination": "a type 2 wet meadow",
            "recommendation": "approve",
        },
        "POST /plans/{plan_id}/decision-notice": mailing(days_ago(1)),
        "POST /plans/{plan_id}/revisions": {
            "area_sqft": 2_100,
            "displacement_ft": 3,
            "received_on": days_ago(1),
        },
        "POST /plans/{plan_id}/copy-requests": {
            "name": "Pat Public",
            "address": "5 Lake St, Marshall, MN",
            "requested_on": days_ago(0),
        },
        "POST /plans/{plan_id}/copy-requests/{copy_request_id}/copies-mailed": {
            "notice_id": ids["notice_id"],
            "mailed_on": days_ago(0),
        },
        "POST /plans/{plan_id}/withdrawals": {"reservation_ids": [ids["reservation_id"]]},
        "POST /plans/{plan_id}/replacement-completed": {"completed_on": days_ago(1)},
        "POST /plans/{plan_id}/appeal-security": {"amount_cents": 50_000},
        "POST /plans/{plan_id}/appeals": {
            "petitioner_kind": "residents",
            "petitioner_name": "Wright County residents",
            "petitioner_address": "10 2nd St NW, Buffalo, MN",
            "resident_count": 100,
            "postmarked_on": days_ago(1),
            "received_on": days_ago(0),
            "filing_fee_cents": 20_000,
            "security_cents": 0,
        },
        "POST /appeals/{appeal_id}/petition": {
            "granted": True,
            "decided_on": days_ago(0),
            "reason": "a question of public value",
        },
        "POST /appeals/{appeal_id}/decision": {"outcome": "plan_upheld", "decided_on": days_ago(0)},
        "POST /appeals/{appeal_id}/service": {"served_on": days_ago(0)},
        "POST /payments": {
            "kind": "processing_fee",
            "amount_cents": 1_000,
            "payer": "Applicant",
            "received_on": days_ago(1),
            "plan_id": ids["plan_id"],
        },
        "POST /plans/{plan_id}/securities": security_body(),
        "POST /securities/{security_id}/release": {
            "released_on": days_ago(0),
            "reason": "work done",
        },
        "POST /securities/{security_id}/draw": {"drawn_on": days_ago(0), "amount_cents": 100},
    }


def operations(doc: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    """Every operation of the OpenAPI document: ``(METHOD, path without the base, operation)``."""
    out = []
    for path, item in doc["paths"].items():
        for method, operation in item.items():
            if method in ("get", "post", "put", "patch", "delete"):
                out.append((method.upper(), path.removeprefix(BASE), operation))
    return out


def fill(path: str, ids: dict[str, str]) -> str:
    for name, value in ids.items():
        path = path.replace("{" + name + "}", value)
    assert "{" not in path, f"no id for a parameter of {path}"
    return path
