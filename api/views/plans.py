"""docs/http.md "Replacement plans and appeals"."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from api import listing_csv
from api.context import actor, database, request_id, require_board, ruleset
from api.pagination import Listing, csv_response, wants_csv
from api.schemas.plans import (
    AppealDecisionIn,
    AppealOut,
    AppealSecurityIn,
    CompletedIn,
    PetitionDecisionIn,
    PetitionIn,
    PlanIn,
    PlanListArgs,
    PlanOut,
    PlanPage,
    ServiceIn,
    WithdrawalIn,
    WithdrawalOut,
)
from api.views.blueprint import ApiBlueprint
from bank import appeals, listing_filters, plan_cases, plans, withdrawals

blp = ApiBlueprint("plans", __name__, description="Replacement plans, appeals")
PLANS = Listing("/plans", id_prefix="plan")


@blp.route("/plans")
class Plans(MethodView):
    @blp.write("board", "lgu", body=PlanIn, status=201, reply=PlanOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Record a replacement plan application (its LGU; the board names ``lgu_id``)."""
        request = plan_request(data)
        return plan_cases.record(database(), actor(), ruleset(), request)

    @blp.read("board", "lgu", query=PlanListArgs, reply=PlanPage)
    @blp.alt_response(200, description="text/csv of every plan kept", content_type="text/csv")
    def get(self, args: dict[str, Any]) -> Any:
        """Plans (board: all; LGU: its own), optionally by status, applicant or project text,
        date received and an integrator's reference (JSON pages or CSV).

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) plans a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor marks a place among the plans the caller lists, whatever the filters; one naming
        a plan the caller may not see (another LGU's), or none, is 400 ``bad_request``.  The
        CSV lists every plan the filters keep, not one page (a cursor given is checked the same
        way)."""
        who = actor()
        after = PLANS.after(args["cursor"])
        where = listing_filters.plans(
            args["q"], args["received_from"], args["received_to"], args["external_ref"]
        )
        if wants_csv():
            kept = plan_cases.every(database(), who, where, args["status"], after)
            rows = [listing_csv.plan_row(plan) for plan in kept]
            return csv_response(listing_csv.PLAN_FIELDS, rows, "plans.csv")
        items = plan_cases.page(database(), who, args["limit"], where, args["status"], after)
        return PLANS.page(items, args["limit"], key=lambda item: item.id)


def plan_request(data: dict[str, Any]) -> plans.PlanRequest:
    """``PlanIn`` as loaded, as the use case takes it (the pages' plan form too)."""
    impact = data["impact"]
    return plans.PlanRequest(
        lgu_id=data["lgu_id"],
        applicant=data["applicant"],
        project=data["project"],
        received_on=data["received_on"],
        area_sqft=impact["area_sqft"],
        wetland_type=impact["wetland_type"],
        service_area=impact["service_area"],
        county=impact["county"],
        on_agricultural_land=impact["on_agricultural_land"],
        peatland=impact["peatland"],
        replacement_ratio=data["replacement_ratio"],
        method=data["method"],
        replacement_outside_service_area=data["replacement_outside_service_area"],
        in_lieu_amount_due_cents=data["in_lieu_amount_due_cents"],
        appeal_security_required_cents=data["appeal_security_required_cents"],
        watershed_district=data["watershed_district"],
        location=data["location"],
        security_required_cents=data["security_required_cents"],
        external_refs=data["external_refs"],
    )


@blp.route("/plans/<plan_id>")
class PlanById(MethodView):
    @blp.read("board", "lgu", reply=PlanOut)
    def get(self, plan_id: str) -> Any:
        """A plan: every deadline, its status, reservations, and whether the impact may proceed."""
        return plan_cases.show(database(), actor(), plan_id)


@blp.route("/plans/<plan_id>/withdrawals")
class PlanWithdrawals(MethodView):
    @blp.write("board", "lgu", body=WithdrawalIn, status=201, reply=WithdrawalOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Withdraw the reserved credits for an approved plan: one ledger transaction."""
        return withdrawals.withdraw(
            database(),
            actor(),
            plan_id,
            data["reservation_ids"],
            request_id(),
            external_refs=data["external_refs"],
        )


@blp.route("/plans/<plan_id>/replacement-completed")
class PlanReplacementCompleted(MethodView):
    @blp.write("board", "lgu", body=CompletedIn, status=201, reply=PlanOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Project-specific replacement recorded complete (Subd. 3)."""
        return plan_cases.complete_replacement(database(), actor(), plan_id, data["completed_on"])


@blp.route("/plans/<plan_id>/appeal-security")
class PlanAppealSecurity(MethodView):
    @blp.write("board", "lgu", body=AppealSecurityIn, status=201, reply=PlanOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Subd. 9: the security the LGU requires of a petitioner (before any petition)."""
        return plan_cases.require_appeal_security(
            database(), actor(), plan_id, data["amount_cents"]
        )


@blp.route("/plans/<plan_id>/appeals")
class PlanAppeals(MethodView):
    @blp.write("board", body=PetitionIn, status=201, reply=AppealOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Record a petition the board received (board).

        Subd. 9 counts the appeal window to the petition's mailing: one postmarked within the
        window of an application a revision counting as new superseded (Subd. 6 (c)) appeals
        that application (its ``application_number``), though it arrives after the revision."""
        request = appeals.PetitionRequest(**data)
        return appeals.file(database(), require_board(), plan_id, request)


@blp.route("/appeals/<appeal_id>")
class AppealById(MethodView):
    @blp.read("board", "lgu", reply=AppealOut)
    def get(self, appeal_id: str) -> Any:
        """An appeal (board, or the plan's LGU)."""
        return appeals.show(database(), actor(), appeal_id)


@blp.route("/appeals/<appeal_id>/petition")
class AppealPetition(MethodView):
    @blp.write("board", body=PetitionDecisionIn, status=201, reply=AppealOut)
    def post(self, data: dict[str, Any], appeal_id: str) -> Any:
        """The board grants the petition (its fee paid, any security required posted) or
        denies it on the grounds Subd. 9 names."""
        decision = PetitionDecisionIn.decision(data)
        return appeals.decide_petition(
            database(), require_board(), appeal_id, decision, request_id()
        )


@blp.route("/appeals/<appeal_id>/decision")
class AppealDecision(MethodView):
    @blp.write("board", body=AppealDecisionIn, status=201, reply=AppealOut)
    def post(self, data: dict[str, Any], appeal_id: str) -> Any:
        """The board's decision on the merits: upheld, or reversed.

        Reversing an approval reverses the withdrawals made for it; reversing the approval of
        an application a revision superseded, only those recorded under that application."""
        return appeals.decide_appeal(
            database(),
            require_board(),
            appeal_id,
            data["outcome"],
            data["decided_on"],
            data["served_on"],
            request_id(),
        )


@blp.route("/appeals/<appeal_id>/service")
class AppealService(MethodView):
    @blp.write("board", body=ServiceIn, status=201, reply=AppealOut)
    def post(self, data: dict[str, Any], appeal_id: str) -> Any:
        """The day the board's decision was served by mail on the parties (once)."""
        return appeals.record_service(database(), require_board(), appeal_id, data["served_on"])


# the notices' routes (Subd. 6 and 7) join this blueprint, and so do the routes of the plan's
# record (decision, panel, extensions, revisions)
from api.views import notices as _notices  # noqa: E402, F401
from api.views import plan_record as _plan_record  # noqa: E402, F401
