"""docs/http.md "Replacement plans and appeals": the acts that make up a plan's record beyond its
notices: the decision (with its resolution, reasons and peatland record), the technical
evaluation panel's referral and determination, extensions of the decision deadline, and revised
applications.

The routes join the plans blueprint (``api.views.plans`` imports this module)."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView

from api.context import actor, database
from api.schemas.plan_record import (
    DecisionIn,
    ExtensionIn,
    ExtensionOut,
    PanelOut,
    RevisionIn,
    RevisionOut,
    TepDeterminationIn,
    TepReferralIn,
)
from api.schemas.plans import PlanOut
from api.views.plans import blp
from bank import plan_acts, plan_decisions, plan_extensions, plan_panel


@blp.route("/plans/<plan_id>/extensions")
class PlanExtensions(MethodView):
    @blp.write("board", "lgu", body=ExtensionIn, status=201, reply=ExtensionOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """An extension of the decision deadline: the LGU's one of at most 60 days (Minn. Stat.
        15.99 subd. 3 (f)), or any other with ``applicant_agreed`` (g)."""
        request = plan_extensions.ExtensionRequest(**data)
        return plan_acts.extend(database(), actor(), plan_id, request)


@blp.route("/plans/<plan_id>/tep-referral")
class PlanTepReferral(MethodView):
    @blp.write("board", "lgu", body=TepReferralIn, status=201, reply=PanelOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Subd. 2: questions of public value, location, size or type go to the technical
        evaluation panel; the decision then waits for its determination.  Referred on or
        before ``decision_due``, and recorded after it only while nothing relied on the plan's
        deemed approval (``conflict``, ``deadline_passed`` when referred later)."""
        return plan_acts.refer_to_panel(
            database(),
            actor(),
            plan_id,
            data["referred_on"],
            data["questions"],
        )


@blp.route("/plans/<plan_id>/tep-determination")
class PlanTepDetermination(MethodView):
    @blp.write("board", "lgu", body=TepDeterminationIn, status=201, reply=PanelOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Subd. 2: the panel's determination after its on-site inspection, by its three
        members (board, SWCD, the LGU's appointee), with its recommendation if any.  Inspected
        on or before ``decision_due``, and recorded after it only while nothing relied on the
        plan's deemed approval (``conflict``, ``deadline_passed`` when inspected later)."""
        determination = plan_panel.Determination(
            inspected_on=data["inspected_on"],
            members=tuple(plan_panel.PanelMember(**m) for m in data["members"]),
            determination=data["determination"],
            recommendation=data["recommendation"],
        )
        return plan_acts.record_determination(database(), actor(), plan_id, determination)


@blp.route("/plans/<plan_id>/decision")
class PlanDecision(MethodView):
    @blp.write("board", "lgu", body=DecisionIn, status=201, reply=PlanOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Approve (by the governing body's resolution) or deny (with written reasons) the
        plan's application (Subd. 1, 2, 4).  Its notice of application is recorded first: a
        plan under 10,000 sq ft has no comment period, but the summary Subd. 6 (b) mails to the
        panel, the public who asked and the DNR commissioner could not be recorded once the
        plan is decided; from 10,000 sq ft the decision follows the Subd. 8 comment period.
        Either way, ``comment_period_open`` until then."""
        request = decision_request(data)
        return plan_acts.decide(database(), actor(), plan_id, request)


def decision_request(data: dict[str, Any]) -> plan_decisions.DecisionRequest:
    resolution, peatland = data["resolution"], data["peatland"]
    return plan_decisions.DecisionRequest(
        outcome=data["outcome"],
        decided_on=data["decided_on"],
        resolution=plan_decisions.Resolution(**resolution) if resolution else None,
        reasons=data["reasons"],
        tep_recommendation=data["tep_recommendation"],
        peatland=plan_decisions.PeatlandRecord(**peatland) if peatland else None,
    )


@blp.route("/plans/<plan_id>/revisions")
class PlanRevisions(MethodView):
    @blp.write("board", "lgu", body=RevisionIn, status=201, reply=RevisionOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """A revised application; Subd. 6 (c) says whether it is a new application with its own
        timeline (accepted after an approval once it is final).  One that is not keeps the
        decision: after it, ``comment_period_open`` for an area of 10,000 sq ft or more when the
        decision was made before the Subd. 8 comment period such an impact has had run."""
        return plan_acts.revise(
            database(),
            actor(),
            plan_id,
            data["area_sqft"],
            data["displacement_ft"],
            data["received_on"],
        )
