"""API.md "Money and security instruments"."""

from __future__ import annotations

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
from bank import guarantees, listing_filters, money, plans

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
        with database().transaction() as session:
            payment = money.receive_payment(
                session, ruleset(), who, money.PaymentRequest(**data), request_id()
            )
            return money.payment_dict(payment)

    @roles("board", "lgu")
    @blp.arguments(PaymentListArgs, location="query")
    @blp.response(200, PaymentList)
    @blp.alt_response(200, description="text/csv of the payments kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Payments (board: all; LGU: its plans'), oldest first: a plan's (its appeals'
        included), by status, by an integrator's reference (JSON or CSV)."""
        who = require_role("board", "lgu")
        where = listing_filters.payments(args["status"], args["external_ref"])
        with database().transaction() as session:
            if args["plan_id"] is not None:
                plan = plans.visible_plan(session, who, args["plan_id"])
                rows = money.payments_of_plan(session, plan.id, where)
            else:
                rows = money.list_payments(session, who, where)
            items = [money.payment_dict(p) for p in rows]
        if wants_csv():
            return csv_response(listing_csv.PAYMENT_FIELDS, items, "payments.csv")
        return {"items": items}


@blp.route("/payments/<payment_id>")
class PaymentById(MethodView):
    @roles("board", "lgu")
    @blp.response(200, PaymentOut)
    def get(self, payment_id: str) -> Any:
        """A payment (board, or its plan's LGU)."""
        with database().transaction() as session:
            return money.payment_dict(money.visible_payment(session, actor(), payment_id))


@blp.route("/payments/<payment_id>/refund")
class PaymentRefund(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.response(201, PaymentOut)
    def post(self, payment_id: str) -> Any:
        """Refund a payment with a compensating transaction (at most once)."""
        who = require_role("board", "lgu")
        with database().transaction() as session:
            return money.payment_dict(money.refund(session, who, payment_id, request_id()))


@blp.route("/plans/<plan_id>/securities")
class PlanSecurities(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(SecurityIn)
    @blp.response(201, SecurityOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Record a security given to the LGU (Subd. 3); a letter of credit must be irrevocable."""
        who = require_role("board", "lgu")
        with database().transaction() as session:
            plan = plans.visible_plan(session, who, plan_id, lock=True)
            security = money.hold_security(
                session, who, plan, money.SecurityRequest(**data), request_id()
            )
            return guarantees.security_dict(session, security)


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
        with database().transaction() as session:
            rows = money.list_securities(
                session, who, args["status"], args["expiring_before"], where
            )
            items = [guarantees.security_dict(session, s) for s in rows]
        if wants_csv():
            return csv_response(listing_csv.SECURITY_FIELDS, items, "securities.csv")
        return {"items": items}


@blp.route("/securities/<security_id>")
class SecurityById(MethodView):
    @roles("board", "lgu")
    @blp.response(200, SecurityOut)
    def get(self, security_id: str) -> Any:
        """A security (board, or its plan's LGU)."""
        with database().transaction() as session:
            security = money.visible_security(session, actor(), security_id)
            return guarantees.security_dict(session, security)


@blp.route("/securities/<security_id>/release")
class SecurityRelease(MethodView):
    @writes
    @roles("board", "lgu")
    @blp.arguments(ReleaseIn)
    @blp.response(201, SecurityOut)
    def post(self, data: dict[str, Any], security_id: str) -> Any:
        """Release a held security (what is left of it after any draws)."""
        who = require_role("board", "lgu")
        with database().transaction() as session:
            security = money.visible_security(session, who, security_id, lock=True)
            guarantees.release(
                session, who, security, data["released_on"], data["reason"], request_id()
            )
            return guarantees.security_dict(session, security)


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
        with database().transaction() as session:
            security = money.visible_security(session, who, security_id, lock=True)
            guarantees.draw(
                session, who, security, data["drawn_on"], data["amount_cents"], request_id()
            )
            return guarantees.security_dict(session, security)
