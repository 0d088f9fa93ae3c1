"""API.md "Money and security instruments"."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from api import listing_csv
from api.context import actor, database, request_id, require_role, ruleset
from api.idempotency import writes
from api.pagination import csv_response, wants_csv
from api.roles import roles
from api.schemas.plans import (
    DrawIn,
    PaymentIn,
    PaymentList,
    PaymentListArgs,
    PaymentOut,
    ReleaseIn,
    SecurityIn,
    SecurityList,
    SecurityListArgs,
    SecurityOut,
)
from bank import guarantees, listing_filters, money, securities

blp = Blueprint("money", __name__, url_prefix="/api/v1", description="Payments and securities")


@blp.route("/payments")
class Payments(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(PaymentIn)
    @blp.response(201, PaymentOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Record a payment (LGU: its own plans' in-lieu and processing fees; board: any)."""
        who = require_role("board", "lgu")
        request = money.PaymentRequest(**data)
        return money.receive_payment(database(), ruleset(), who, request, request_id())

    @roles("board", "lgu")
    @blp.arguments(PaymentListArgs, location="query")
    @blp.response(200, PaymentList)
    @blp.alt_response(200, description="text/csv of the payments kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Payments (board: all; LGU: its plans'), oldest first: a plan's (its appeals'
        included), by status, by an integrator's reference (JSON or CSV)."""
        who = require_role("board", "lgu")
        where = listing_filters.payments(args["status"], args["external_ref"])
        items = money.list_payments(database(), who, args["plan_id"], where)
        if wants_csv():
            rows = (asdict(item) for item in items)
            return csv_response(listing_csv.PAYMENT_FIELDS, rows, "payments.csv")
        return {"items": items}


@blp.route("/payments/<payment_id>")
class PaymentById(MethodView):
    @roles("board", "lgu")
    @blp.response(200, PaymentOut)
    def get(self, payment_id: str) -> Any:
        """A payment (board, or its plan's LGU)."""
        return money.get_payment(database(), actor(), payment_id)


@blp.route("/payments/<payment_id>/refund")
class PaymentRefund(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.response(201, PaymentOut)
    def post(self, payment_id: str) -> Any:
        """Refund a payment with a compensating transaction (at most once)."""
        who = require_role("board", "lgu")
        return money.refund(database(), who, payment_id, request_id())


@blp.route("/plans/<plan_id>/securities")
class PlanSecurities(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(SecurityIn)
    @blp.response(201, SecurityOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Record a security given to the LGU (Subd. 3); a letter of credit must be irrevocable."""
        who = require_role("board", "lgu")
        request = securities.SecurityRequest(**data)
        return securities.hold_security(database(), who, plan_id, request, request_id())


@blp.route("/securities")
class Securities(MethodView):
    @roles("board", "lgu")
    @blp.arguments(SecurityListArgs, location="query")
    @blp.response(200, SecurityList)
    @blp.alt_response(200, description="text/csv of the securities kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Securities by plan, status, expiring before a date and an integrator's reference
        (board: all; LGU: its own), soonest expiry first (JSON or CSV)."""
        who = require_role("board", "lgu")
        where = listing_filters.securities(args["plan_id"], args["external_ref"])
        items = securities.list_securities(
            database(), who, args["status"], args["expiring_before"], where
        )
        if wants_csv():
            rows = (asdict(item) for item in items)
            return csv_response(listing_csv.SECURITY_FIELDS, rows, "securities.csv")
        return {"items": items}


@blp.route("/securities/<security_id>")
class SecurityById(MethodView):
    @roles("board", "lgu")
    @blp.response(200, SecurityOut)
    def get(self, security_id: str) -> Any:
        """A security (board, or its plan's LGU)."""
        return securities.get_security(database(), actor(), security_id)


@blp.route("/securities/<security_id>/release")
class SecurityRelease(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(ReleaseIn)
    @blp.response(201, SecurityOut)
    def post(self, data: dict[str, Any], security_id: str) -> Any:
        """Release a held security (what is left of it after any draws)."""
        who = require_role("board", "lgu")
        return guarantees.release(
            database(), who, security_id, data["released_on"], data["reason"], request_id()
        )


@blp.route("/securities/<security_id>/draw")
class SecurityDraw(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(DrawIn)
    @blp.response(201, SecurityOut)
    def post(self, data: dict[str, Any], security_id: str) -> Any:
        """Draw on a held security of an approved plan (at most what is left of it); a
        security drawn in part stays held for the rest."""
        who = require_role("board", "lgu")
        return guarantees.draw(
            database(), who, security_id, data["drawn_on"], data["amount_cents"], request_id()
        )
