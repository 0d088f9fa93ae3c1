"""docs/http.md "Money and security instruments"."""

from __future__ import annotations

from dataclasses import asdict
from operator import attrgetter
from typing import Any

from flask import Response
from flask.views import MethodView

from api import listing_csv
from api.context import actor, database, request_id, ruleset
from api.pagination import Listing, csv_response, wants_csv
from api.schemas.plans import (
    DrawIn,
    PaymentIn,
    PaymentListArgs,
    PaymentOut,
    PaymentPage,
    PaymentReverseIn,
    ReleaseIn,
    SecurityIn,
    SecurityListArgs,
    SecurityOut,
    SecurityPage,
)
from api.views.blueprint import ApiBlueprint
from bank import guarantees, listing_filters, money, securities

blp = ApiBlueprint("money", __name__, description="Payments and securities")
PAYMENTS = Listing("/payments", id_prefix="pay")
SECURITIES = Listing("/securities", id_prefix="sec")


def _csv(items: list[Any], fields: list[str], filename: str) -> Response:
    """A listing's ``items`` (dataclasses) as the CSV file ``filename``."""
    return csv_response(fields, (asdict(item) for item in items), filename)


@blp.route("/payments")
class Payments(MethodView):
    @blp.write("board", "lgu", body=PaymentIn, status=201, reply=PaymentOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Record a payment (LGU: its own plans' in-lieu and processing fees; board: any)."""
        request = money.PaymentRequest(**data)
        return money.receive_payment(database(), ruleset(), actor(), request, request_id())

    @blp.read("board", "lgu", query=PaymentListArgs, reply=PaymentPage)
    @blp.alt_response(200, description="text/csv of every payment kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Payments (board: all; LGU: its plans'), oldest first: a plan's (its appeals'
        included), by status, by an integrator's reference (JSON pages or CSV).

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) payments a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor marks a place among the payments the caller sees, whatever the filters; one
        naming a payment the caller may not see is 400 ``bad_request``.  The CSV lists every
        payment the filters keep, not one page (a cursor given is checked the same way)."""
        who, after = actor(), PAYMENTS.after(args["cursor"])
        where = listing_filters.payments(args["status"], args["external_ref"])
        if wants_csv():
            every = money.list_payments(database(), who, args["plan_id"], where, after)
            return _csv(every, listing_csv.PAYMENT_FIELDS, "payments.csv")
        limit = args["limit"]
        items = money.page_of_payments(database(), who, limit, args["plan_id"], where, after)
        return PAYMENTS.page(items, limit, key=attrgetter("id"))


@blp.route("/payments/<payment_id>")
class PaymentById(MethodView):
    @blp.read("board", "lgu", reply=PaymentOut)
    def get(self, payment_id: str) -> Any:
        """A payment (board, or its plan's LGU)."""
        return money.get_payment(database(), actor(), payment_id)


@blp.route("/payments/<payment_id>/refund")
class PaymentRefund(MethodView):
    @blp.write("board", "lgu", status=201, reply=PaymentOut)
    def post(self, payment_id: str) -> Any:
        """Refund a payment with a compensating transaction (at most once)."""
        return money.refund(database(), actor(), payment_id, request_id())


@blp.route("/payments/<payment_id>/reverse")
class PaymentReverse(MethodView):
    @blp.write("board", body=PaymentReverseIn, status=201, reply=PaymentOut)
    def post(self, data: dict[str, Any], payment_id: str) -> Any:
        """Reverse a filing fee recorded in error (board): a compensating transaction with the
        reason, at most once; ``conflict`` once the grant of its petition relied on it, and
        ``not_eligible`` for any other kind of payment (refund it)."""
        return money.reverse_in_error(database(), actor(), payment_id, data["reason"], request_id())


@blp.route("/plans/<plan_id>/securities")
class PlanSecurities(MethodView):
    @blp.write("board", "lgu", body=SecurityIn, status=201, reply=SecurityOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Record a security given to the LGU (Subd. 3) for a project-specific plan.

        A plan of another method is ``not_eligible`` (``method`` names it: credits withdrawn or
        an in-lieu payment is a replacement completed).  A letter of credit must be irrevocable,
        and a security expires after its issue and no earlier than the day it is recorded."""
        request = securities.SecurityRequest(**data)
        return securities.hold_security(database(), actor(), plan_id, request, request_id())


@blp.route("/securities")
class Securities(MethodView):
    @blp.read("board", "lgu", query=SecurityListArgs, reply=SecurityPage)
    @blp.alt_response(200, description="text/csv of every security kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Securities by plan, status, expiring before a date and an integrator's reference
        (board: all; LGU: its own), soonest expiry first, then by id (JSON pages or CSV).

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) securities a
        page, and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the
        next.  A cursor marks a place among the securities the caller sees, whatever the
        filters; one naming a security the caller may not see is 400 ``bad_request``.  The CSV
        lists every security the filters keep, not one page (a cursor given is checked the same
        way)."""
        who, after = actor(), SECURITIES.after(args["cursor"])
        status, before = args["status"], args["expiring_before"]
        where, plan_id = listing_filters.securities(args["external_ref"]), args["plan_id"]
        if wants_csv():
            every = securities.list_securities(
                database(), who, status, before, where, after, plan_id
            )
            return _csv(every, listing_csv.SECURITY_FIELDS, "securities.csv")
        limit = args["limit"]
        items = securities.page_of_securities(
            database(), who, limit, status, before, where, after, plan_id
        )
        return SECURITIES.page(items, limit, key=attrgetter("id"))


@blp.route("/securities/<security_id>")
class SecurityById(MethodView):
    @blp.read("board", "lgu", reply=SecurityOut)
    def get(self, security_id: str) -> Any:
        """A security (board, or its plan's LGU)."""
        return securities.get_security(database(), actor(), security_id)


@blp.route("/securities/<security_id>/release")
class SecurityRelease(MethodView):
    @blp.write("board", "lgu", body=ReleaseIn, status=201, reply=SecurityOut)
    def post(self, data: dict[str, Any], security_id: str) -> Any:
        """Release a held security (what is left of it after any draws)."""
        return guarantees.release(
            database(), actor(), security_id, data["released_on"], data["reason"], request_id()
        )


@blp.route("/securities/<security_id>/draw")
class SecurityDraw(MethodView):
    @blp.write("board", "lgu", body=DrawIn, status=201, reply=SecurityOut)
    def post(self, data: dict[str, Any], security_id: str) -> Any:
        """Draw on a held security of an approved plan (at most what is left of it); a
        security drawn in part stays held for the rest."""
        return guarantees.draw(
            database(), actor(), security_id, data["drawn_on"], data["amount_cents"], request_id()
        )
