"""Quantities exact and bounded, on SQLite and PostgreSQL.

Every ``*_sqft`` a request states is at most 10^12 and every ``*_cents`` at most 10^13; a date is
from 1900-01-01 to 2199-12-31; a replacement ratio at most 100 with at most 4 decimal places.
Beyond them a request is ``validation_error`` with nothing written; at them it is accepted and the
ledger still verifies.  A write that would make a stored quantity inexact answers 422, never 500.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from marshmallow import Schema, fields
from sqlalchemy import text

import api.schemas
import api.views
from api.schemas.common import (
    DATE_RANGE_MESSAGE,
    FIRST_DATE,
    LAST_DATE,
    MAX_CENTS,
    MAX_SQFT,
    IsoDate,
    Quantity,
)
from tests.api.conftest import Api
from tests.api.kit import Kit, decision_body, ok, on, problem, unique
from tests.api.web_kit import signed_in

DAY = "2026-06-08"
INT64_MAX = 2**63 - 1

#: the tables a refused request must leave as they were
TABLES = (
    "deposits",
    "deposit_actions",
    "lots",
    "transfers",
    "reservations",
    "plans",
    "plan_revisions",
    "appeals",
    "payments",
    "securities",
    "withdrawals",
    "ledger_transactions",
    "ledger_entries",
)


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def row_counts(app: Flask) -> dict[str, int]:
    with app.extensions["wetbank.db"].transaction() as session:
        return {
            t: int(session.execute(text(f"SELECT count(*) FROM {t}")).scalar_one()) for t in TABLES
        }


def refused(response: Any, field: str) -> dict[str, Any]:
    """``response`` is a 422 ``validation_error`` naming ``field``."""
    body = problem(response, 422, "validation_error")
    assert field in body["errors"], body
    return body


def security_body(amount: int, expires_on: str = "2027-06-01") -> dict[str, Any]:
    return {
        "kind": "letter_of_credit",
        "issuer": "First State Bank",
        "amount_cents": amount,
        "irrevocable": True,
        "issued_on": DAY,
        "expires_on": expires_on,
    }


def monetary_plan(kit: Kit, lgu: dict[str, str], due_cents: int) -> dict[str, Any]:
    body = kit.plan_body(
        received_on=DAY,
        area_sqft=9_000,
        method="monetary_payment",
        in_lieu_amount_due_cents=due_cents,
    )
    body["impact"]["on_agricultural_land"] = True
    plan = ok(kit.api.post("/plans", body, token=lgu["token"]))
    kit.mail_summary(lgu, plan, DAY)
    decision = decision_body("approved", DAY)
    return dict(ok(kit.api.post(f"/plans/{plan['id']}/decision", decision, token=lgu["token"])))


# --- every quantity and date a request carries is bounded -------------------------------------


def _input_schemas() -> list[type[Schema]]:
    """Every request schema (``...In``, ``...Args``) of the API's schema and view modules."""
    found: dict[str, type[Schema]] = {}
    for package in (api.schemas, api.views):
        for info in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{info.name}")
            for name, value in vars(module).items():
                if (
                    isinstance(value, type)
                    and issubclass(value, Schema)
                    and name.endswith(("In", "Args"))
                ):
                    found[f"{value.__module__}.{name}"] = value
    return [found[key] for key in sorted(found)]


def _fields(schema: Schema, prefix: str = "") -> Iterator[tuple[str, fields.Field[Any]]]:
    for name, field in schema.fields.items():
        inner = field.inner if isinstance(field, fields.List) else field
        if isinstance(inner, fields.Nested):
            yield from _fields(inner.schema, f"{prefix}{name}.")
        else:
            yield f"{prefix}{name}", inner


def test_every_quantity_a_request_carries_is_bounded_by_its_unit() -> None:
    checked = []
    for schema_class in _input_schemas():
        for path, field in _fields(schema_class()):
            where = f"{schema_class.__name__}.{path}"
            if path.endswith("_sqft") or path.endswith("_cents"):
                assert isinstance(field, Quantity), f"{where} is not a Quantity"
                bound = MAX_SQFT if path.endswith("_sqft") else MAX_CENTS
                assert field.maximum == bound, where
                assert field.minimum >= 0, where
                checked.append(where)
            if isinstance(field, fields.Date):
                assert isinstance(field, IsoDate), f"{where} is a date but not an IsoDate"
    expected = {"ActionIn.area_sqft", "SecurityIn.amount_cents", "PetitionIn.filing_fee_cents"}
    assert expected <= set(checked)


def test_a_quantity_field_must_name_its_unit() -> None:
    with pytest.raises(TypeError, match=r"named \*_sqft or \*_cents"):
        type("Unitless", (Schema,), {"amount": Quantity()})()


# --- one past the bound: 422, nothing written ---------------------------------------------------


def test_one_square_foot_or_cent_past_the_bound_is_refused_with_nothing_written(
    kit: Kit, app: Flask
) -> None:
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        buyer = kit.account(kit.holder()["id"], 5)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", method="project_specific")
        too_many_sqft = MAX_SQFT + 1
        too_many_cents = MAX_CENTS + 1
        attempts = [
            (
                f"/accounts/{bank['id']}/deposits",
                {
                    "bank_site_id": bank["site_id"],
                    "effective_on": DAY,
                    "banking_plan": {
                        "reference": unique("BP"),
                        "approved_on": "2026-05-01",
                        "lgu_id": lgu["id"],
                    },
                    "wetland_type": "2",
                    "completed_on": "2026-05-20",
                    "designated_for_replacement": True,
                    "paid_by_performer": True,
                    "actions": [
                        {
                            "category": "replacement_wetland",
                            "area_sqft": too_many_sqft,
                            "credit_sqft": 1_000,
                        }
                    ],
                },
                "actions.0.area_sqft",
            ),
            (
                "/transfers",
                {
                    "from_account_id": bank["id"],
                    "to_account_id": buyer,
                    "credit_class": bank["unrestricted_class"],
                    "amount_sqft": too_many_sqft,
                },
                "amount_sqft",
            ),
            (
                "/transfers",
                {
                    "from_account_id": bank["id"],
                    "to_account_id": buyer,
                    "credit_class": bank["unrestricted_class"],
                    "amount_sqft": 1_000,
                    "price_per_sqft_cents": too_many_cents,
                },
                "price_per_sqft_cents",
            ),
            (
                f"/accounts/{bank['id']}/reservations",
                {
                    "plan_id": plan["id"],
                    "credit_class": bank["unrestricted_class"],
                    "amount_sqft": too_many_sqft,
                    "expires_on": "2027-12-31",
                },
                "amount_sqft",
            ),
            (
                "/plans",
                dict(kit.plan_body(received_on=DAY, area_sqft=too_many_sqft), lgu_id=lgu["id"]),
                "impact.area_sqft",
            ),
            (
                "/plans",
                dict(
                    kit.plan_body(
                        received_on=DAY,
                        area_sqft=9_000,
                        method="monetary_payment",
                        in_lieu_amount_due_cents=too_many_cents,
                    ),
                    lgu_id=lgu["id"],
                ),
                "in_lieu_amount_due_cents",
            ),
            (
                f"/plans/{plan['id']}/revisions",
                {"area_sqft": too_many_sqft, "displacement_ft": 0, "received_on": DAY},
                "area_sqft",
            ),
            (
                "/payments",
                {
                    "kind": "processing_fee",
                    "amount_cents": too_many_cents,
                    "payer": "A. Payer",
                    "received_on": DAY,
                    "plan_id": plan["id"],
                },
                "amount_cents",
            ),
            (f"/plans/{plan['id']}/securities", security_body(too_many_cents), "amount_cents"),
            (
                f"/plans/{plan['id']}/appeals",
                {
                    "petitioner_kind": "owner",
                    "postmarked_on": DAY,
                    "received_on": DAY,
                    "filing_fee_cents": too_many_cents,
                },
                "filing_fee_cents",
            ),
        ]
        security = ok(kit.api.post(f"/plans/{plan['id']}/securities", security_body(100_000)))
        attempts.append(
            (
                f"/securities/{security['id']}/draw",
                {"drawn_on": DAY, "amount_cents": too_many_cents},
                "amount_cents",
            )
        )
        before = row_counts(app)
        for path, body, field in attempts:
            refused(kit.api.post(path, body), field)
        assert row_counts(app) == before
        # the largest int64 (the value that overflowed SQLite's balances) is refused as well
        huge = security_body(INT64_MAX)
        refused(kit.api.post(f"/plans/{plan['id']}/securities", huge), "amount_cents")
        assert row_counts(app) == before


# --- at the bound: accepted, and the ledger still verifies --------------------------------------


def test_the_largest_amounts_are_accepted_and_the_ledger_still_verifies(fresh: Kit) -> None:
    kit = fresh
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=MAX_SQFT)
        assert bank["deposit"]["total_credit_sqft"] == MAX_SQFT
        buyer = kit.account(kit.holder()["id"], 5)
        transfer = {
            "from_account_id": bank["id"],
            "to_account_id": buyer,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": MAX_SQFT,
            "price_per_sqft_cents": MAX_CENTS,
        }
        assert ok(kit.api.post("/transfers", transfer))["amount_sqft"] == MAX_SQFT
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", method="project_specific")
        # credits are reserved only for a plan replaced with them
        credits_plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        reserved = kit.reserve(buyer, credits_plan["id"], bank["unrestricted_class"], MAX_SQFT)
        assert reserved["amount_sqft"] == MAX_SQFT
        big = ok(kit.api.post(f"/plans/{plan['id']}/securities", security_body(MAX_CENTS)))
        drawn = {"drawn_on": DAY, "amount_cents": MAX_CENTS}
        assert ok(kit.api.post(f"/securities/{big['id']}/draw", drawn))["status"] == "drawn"
        # the report: after the largest security, a 1-cent one is held and released as ever
        ok(kit.api.post(f"/plans/{plan['id']}/securities", security_body(MAX_CENTS)))
        cent = ok(kit.api.post(f"/plans/{plan['id']}/securities", security_body(1)))
        release = {"released_on": DAY, "reason": "replaced"}
        released = ok(kit.api.post(f"/securities/{cent['id']}/release", release))
        assert released["status"] == "released"
        monetary = monetary_plan(kit, lgu, MAX_CENTS)
        payment = {
            "kind": "in_lieu",
            "amount_cents": MAX_CENTS,
            "payer": "A. Payer",
            "received_on": DAY,
            "plan_id": monetary["id"],
        }
        assert ok(kit.api.post("/payments", payment))["amount_cents"] == MAX_CENTS
        assert kit.get_plan(monetary["id"])["in_lieu_amount_due_cents"] == MAX_CENTS
        # the largest impact at the highest ratio: its requirement (10^14 sq ft) is exact
        largest = kit.plan(lgu, received_on=DAY, area_sqft=MAX_SQFT, ratio="100")
        assert largest["required_credit_sqft"] == 100 * MAX_SQFT
        revision = {"area_sqft": MAX_SQFT, "displacement_ft": 0, "received_on": DAY}
        ok(kit.api.post(f"/plans/{largest['id']}/revisions", revision))
        verified = ok(kit.api.get("/audit/verify"), 200)
        trial = ok(kit.api.get("/audit/trial-balance"), 200)
    assert verified["ok"] is True, verified["first_broken"]
    assert trial["balanced"] is True
    assert kit.balances(buyer)[bank["unrestricted_class"]]["reserved_sqft"] == MAX_SQFT


# --- a write that would make a stored quantity inexact ------------------------------------------


def test_a_balance_that_would_overflow_answers_422_and_writes_nothing(fresh: Kit) -> None:
    """The stored balance is pushed next to 2^63 by hand (no request can get it there); the next
    security would overflow it: SQLite's guard or PostgreSQL's BIGINT refuses, the API says 422."""
    kit, app = fresh, fresh.app
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", method="project_specific")
        ok(kit.api.post(f"/plans/{plan['id']}/securities", security_body(1_000)))
        with app.extensions["wetbank.db"].transaction() as session:
            session.execute(
                text(
                    "UPDATE ledger_balances SET credits_pending = :near WHERE account_id = "
                    "(SELECT id FROM ledger_accounts WHERE code = :code)"
                ),
                {"near": INT64_MAX - 10, "code": f"usd:securities-held:{lgu['id']}"},
            )
        before = row_counts(app)
        response = kit.api.post(f"/plans/{plan['id']}/securities", security_body(MAX_CENTS))
        assert "out of range" in problem(response, 422, "validation_error")["detail"]
        assert row_counts(app) == before
        with app.extensions["wetbank.db"].transaction() as session:
            stored = session.execute(
                text(
                    "SELECT credits_pending FROM ledger_balances WHERE account_id = "
                    "(SELECT id FROM ledger_accounts WHERE code = :code)"
                ),
                {"code": f"usd:securities-held:{lgu['id']}"},
            ).scalar_one()
    assert stored == INT64_MAX - 10 and isinstance(stored, int)


# --- replacement ratios -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ratio", "status", "code"),
    [
        ("100.0001", 422, "validation_error"),
        ("101", 422, "validation_error"),
        ("1.23456", 422, "validation_error"),
        ("0.12345", 422, "validation_error"),
        ("100", 201, None),
        ("100.0000", 201, None),
        ("1.2345", 201, None),
        ("0.5", 422, "ratio_too_low"),
    ],
)
def test_a_ratio_is_at_most_100_with_at_most_4_decimal_places(
    kit: Kit, app: Flask, ratio: str, status: int, code: str | None
) -> None:
    lgu = kit.lgu()
    with on(DAY):
        before = row_counts(app)
        response = kit.api.post(
            "/plans",
            kit.plan_body(received_on=DAY, area_sqft=9_000, ratio=ratio),
            token=lgu["token"],
        )
        if status == 201:
            assert ok(response)["replacement_ratio"] == ratio
            return
        body = problem(response, status, str(code))
        assert row_counts(app) == before
    if code == "validation_error":
        assert "replacement_ratio" in body["errors"]


# --- dates --------------------------------------------------------------------------------------


def queries_bound(
    kit: Kit, queries: list[tuple[str, str]], outside: tuple[str, ...], bound: str
) -> None:
    """Each query (a path ending in ``field=``) refuses every date of ``outside`` on its field
    and answers the ``bound`` itself."""
    for prefix, field in queries:
        for day in outside:
            refused(kit.api.get(prefix + day), field)
        assert kit.api.get(prefix + bound).status_code == 200, prefix


def deposit_effective_on(kit: Kit, bank: dict[str, Any], lgu: dict[str, Any], day: str) -> Any:
    """``POST /accounts/{id}/deposits`` of 10 sq ft into ``bank``, effective ``day``."""
    return kit.api.post(
        f"/accounts/{bank['id']}/deposits",
        {
            "bank_site_id": bank["site_id"],
            "effective_on": day,
            "banking_plan": {
                "reference": unique("BP"),
                "approved_on": "2026-05-01",
                "lgu_id": lgu["id"],
            },
            "wetland_type": "2",
            "completed_on": "2026-05-20",
            "designated_for_replacement": True,
            "paid_by_performer": True,
            "actions": [{"category": "replacement_wetland", "area_sqft": 10, "credit_sqft": 10}],
        },
    )


def test_dates_after_2199_12_31_are_validation_errors_and_that_day_is_accepted(
    kit: Kit, app: Flask
) -> None:
    assert LAST_DATE.isoformat() == "2199-12-31"
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", method="project_specific")
        # a security is for a project-specific plan, a reservation for one replaced with credits
        credits_plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        securities = f"/plans/{plan['id']}/securities"
        reservations = f"/accounts/{bank['id']}/reservations"
        reservation = {
            "plan_id": credits_plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 1_000,
        }
        before = row_counts(app)
        for late in ("2200-01-01", "9999-12-31"):
            refused(kit.api.post(securities, security_body(1_000, late)), "expires_on")
            body = dict(reservation, expires_on=late)
            refused(kit.api.post(reservations, body), "expires_on")
            effective = deposit_effective_on(kit, bank, lgu, late)
            refused(effective, "effective_on")
        assert row_counts(app) == before
        last = LAST_DATE.isoformat()
        held = ok(kit.api.post(securities, security_body(1_000, last)))
        assert held["expires_on"] == last
        reserved = ok(kit.api.post(reservations, dict(reservation, expires_on=last)))
        assert reserved["expires_on"] == last
        assert kit.get_plan(credits_plan["id"])["reservations"]
        account = bank["id"]
        # (an account's balances take no day after today: test_balances_as_of.py)
        queries = [
            ("/audit/trial-balance?as_of=", "as_of"),
            ("/audit/journal?from=", "from"),
            ("/audit/journal?to=", "to"),
            (f"/accounts/{account}/statement?from=2026-01-01&to=", "to"),
            ("/securities?expiring_before=", "expiring_before"),
        ]
        queries_bound(kit, queries, ("2200-01-01", "9999-12-31"), last)
        page = signed_in(app.test_client(), bank["holder"]["token"])
        late_page = page.get(f"/accounts/{account}?from=2026-01-01&to=2200-01-01")
        assert late_page.status_code == 422
        assert last in late_page.get_data(as_text=True)
        assert page.get(f"/accounts/{account}?from=2026-01-01&to={last}").status_code == 200


def test_dates_before_1900_01_01_are_validation_errors_and_that_day_is_accepted(
    kit: Kit, app: Flask
) -> None:
    """A year such as 0001 or 0202 is a typing mistake: in a body (a security's ``issued_on``,
    a plan's ``received_on``, a deposit's ``effective_on``) or a query it is refused on its
    field, with the range, and nothing is written; 1900-01-01 itself is a date like any other."""
    assert FIRST_DATE.isoformat() == "1900-01-01"
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", method="project_specific")
        securities = f"/plans/{plan['id']}/securities"
        before = row_counts(app)
        for early in ("0001-01-01", "0202-06-08", "1899-12-31"):
            issued = dict(security_body(1_000), issued_on=early)
            body = refused(kit.api.post(securities, issued), "issued_on")
            assert body["errors"]["issued_on"] == [DATE_RANGE_MESSAGE]
            received = kit.plan_body(received_on=early, area_sqft=9_000)
            refused(kit.api.post("/plans", received, token=lgu["token"]), "received_on")
            effective = deposit_effective_on(kit, bank, lgu, early)
            refused(effective, "effective_on")
        assert row_counts(app) == before
        first = FIRST_DATE.isoformat()
        held = ok(kit.api.post(securities, dict(security_body(1_000), issued_on=first)))
        assert held["issued_on"] == first and held["status"] == "held"
        account = bank["id"]
        queries = [
            (f"/accounts/{account}/balances?as_of=", "as_of"),
            ("/audit/trial-balance?as_of=", "as_of"),
            ("/audit/journal?from=", "from"),
            (f"/accounts/{account}/statement?to=2026-01-01&from=", "from"),
            ("/securities?expiring_before=", "expiring_before"),
        ]
        queries_bound(kit, queries, ("0001-01-01", "1899-12-31"), first)
        page = signed_in(app.test_client(), bank["holder"]["token"])
        early_page = page.get(f"/accounts/{account}?from=0001-01-01&to=2026-01-01")
        assert early_page.status_code == 422
        assert first in early_page.get_data(as_text=True)
        assert page.get(f"/accounts/{account}?from={first}&to=2026-01-01").status_code == 200
