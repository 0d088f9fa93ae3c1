"""The LGU's forms (the board may use them too, as through the API): record a plan, and on a
plan the notice of application, an extension, the panel's referral and determination, the
decision, the notice of decision, a revision, a security, and the withdrawal of the credits
reserved for it.  Each posts to the use case its API twin calls (``api/views/plans.py``,
``notices.py``, ``plan_record.py``, ``money.py``) through ``api.web.forms``.  An act the plan's
state does not allow now (``plan_acts.act_refusal``) is answered with its refusal and no form,
whether its form is asked for (GET) or sent anyway (a POST refused for the plan's state)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Response, url_for
from marshmallow import Schema

from api.context import database, request_id, ruleset
from api.schemas.notices import NoticeIn
from api.schemas.plan_record import (
    DecisionIn,
    ExtensionIn,
    RevisionIn,
    TepDeterminationIn,
    TepReferralIn,
)
from api.schemas.plans import PlanIn, SecurityIn, WithdrawalIn
from api.views.notices import recipients
from api.views.plan_record import decision_request
from api.views.plans import plan_request
from api.web import forms, lgu_fields
from api.web.blueprint import web
from api.web.forms import Form, Item
from api.web.record_forms import NewRecord
from bank import (
    plan_acts,
    plan_cases,
    plan_extensions,
    plan_panel,
    securities,
    withdrawals,
)
from bank.access import Actor
from bank.plan_report import PlanReport

ROLES = ("board", "lgu")


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


# --- /plans/new -------------------------------------------------------------------------------

RECORDED = forms.confirmation("plan_recorded", "The plan was recorded.")


def _record(who: Actor, data: dict[str, Any]) -> str:
    plan = plan_cases.record(database(), who, ruleset(), plan_request(data))
    return forms.done("web.plan", RECORDED, plan_id=plan.id)


NewRecord(
    path="/plans/new",
    endpoints=("new_plan_form", "new_plan"),
    roles=ROLES,
    heading="Record a replacement plan application",
    items=lambda who: lgu_fields.new_plan(who.is_board),
    submit="Record the plan",
    schema=PlanIn,
    record=_record,
    intro="The application as received (Subd. 6); its deadlines are computed from it.",
).declare()


# --- the acts on a plan -----------------------------------------------------------------------


@dataclass(frozen=True)
class PlanAct:
    """A form on a plan: its address, fields, schema, the use case it calls, where it leads."""

    slug: str
    heading: str
    intro: str
    submit: str
    schema: type[Schema]
    fields: Callable[[PlanReport], tuple[tuple[Item, ...], dict[str, Any]]]
    run: Callable[[Actor, str, dict[str, Any]], object]
    confirm: str
    anchor: str = ""
    leads_to: str = "web.plan"

    @property
    def endpoint(self) -> str:
        return "plan_" + self.slug.replace("-", "_")


def _static(
    items: tuple[Item, ...],
) -> Callable[[PlanReport], tuple[tuple[Item, ...], dict[str, Any]]]:
    return lambda plan: (items, {})


def _register(act: PlanAct) -> None:
    path = f"/plans/<plan_id>/{act.slug}"
    if act.slug not in plan_acts.WEIGHED:
        raise ValueError(f"the plan page does not weigh the act {act.slug!r}")

    @forms.signed_in(*ROLES)
    def show(who: Actor, plan_id: str) -> Response:
        """The form; for an act the plan's state does not let the caller record now (which
        the plan page does not offer: ``plan_acts.open_acts``), its refusal instead, as a POST
        of the form would be refused, with no form."""
        plan, refusal = plan_acts.act_form(database(), who, plan_id, act.slug)
        if refusal is not None:
            return _act_page(act, who, plan, None, refused=forms.refusal(refusal))
        items, values = act.fields(plan)
        form = Form(url_for(f"web.{act.endpoint}", plan_id=plan_id), items, act.submit, values)
        return _act_page(act, who, plan, form)

    @forms.signed_in(*ROLES)
    def post(who: Actor, plan_id: str) -> Any:
        plan = plan_cases.show(database(), who, plan_id)
        items, _values = act.fields(plan)
        action = url_for(f"web.{act.endpoint}", plan_id=plan_id)

        def run(data: dict[str, Any]) -> str:
            act.run(who, plan_id, data)
            return forms.done(act.leads_to, act.confirm, act.anchor, plan_id=plan_id)

        def again(form: Form, status: int) -> Response:
            shown = plan_cases.show(database(), who, plan_id)
            return _act_page(act, who, shown, form, status)

        def blank() -> Form:
            return Form(action, items, act.submit)

        def open_now() -> bool:
            return plan_acts.act_form(database(), who, plan_id, act.slug)[1] is None

        return forms.post(who, blank, act.schema(), run, again, open_now=open_now)

    web.add_url_rule(path, f"{act.endpoint}_form", show, methods=["GET"])
    web.add_url_rule(path, act.endpoint, post, methods=["POST"])


def _act_page(
    act: PlanAct,
    who: Actor,
    plan: PlanReport,
    form: Form | None,
    status: int = 200,
    *,
    refused: forms.Refused | None = None,
) -> Response:
    """The form's page, or (``refused``, no form) why the act may not be recorded now, at the
    status its POST would be refused with."""
    return forms.page(
        "form_page.html",
        refused.status if refused else status,
        heading=f"{act.heading}: {plan.project}",
        intro=act.intro,
        back={"url": url_for("web.plan", plan_id=plan.id), "text": "the plan"},
        plan=plan,
        form=form,
        refused=refused.problems if refused else (),
    )


def _notice(decision: bool, heading: str, intro: str, confirm: str) -> PlanAct:
    """Mailing the notice of application (Subd. 6) or, ``decision``, of decision (Subd. 7)."""
    notice = "decision" if decision else "application"

    def mail(who: Actor, plan_id: str, data: dict[str, Any]) -> object:
        return plan_acts.mail_notice(
            database(), who, plan_id, notice, data["mailed_on"], recipients(data)
        )

    return PlanAct(
        f"notice-of-{notice}",
        heading,
        intro,
        "Record the notice",
        NoticeIn,
        lambda plan: lgu_fields.notice(plan, decision=decision),
        mail,
        confirm,
        "timeline-heading",
    )


def _determination(who: Actor, plan_id: str, data: dict[str, Any]) -> object:
    determination = plan_panel.Determination(
        inspected_on=data["inspected_on"],
        members=tuple(plan_panel.PanelMember(**m) for m in data["members"]),
        determination=data["determination"],
        recommendation=data["recommendation"],
    )
    return plan_acts.record_determination(database(), who, plan_id, determination)


ACTS = (
    _notice(
        False,
        "Mail the notice of application",
        "Subd. 6: to the panel, the commissioner, the watershed district and the members of "
        "the public who asked for a copy.",
        forms.confirmation("notice_mailed", "The notice of application was recorded."),
    ),
    PlanAct(
        "extension",
        "Extend the decision deadline",
        "Minn. Stat. 15.99 subd. 3: the LGU's one extension of at most 60 days, or another the "
        "applicant agreed to.",
        "Record the extension",
        ExtensionIn,
        _static(lgu_fields.EXTENSION),
        lambda who, plan_id, data: plan_acts.extend(
            database(), who, plan_id, plan_extensions.ExtensionRequest(**data)
        ),
        forms.confirmation("extended", "The extension was recorded."),
        "extensions",
    ),
    PlanAct(
        "panel-referral",
        "Refer questions to the technical evaluation panel",
        "Subd. 2: questions of public value, location, size or type.",
        "Record the referral",
        TepReferralIn,
        _static(lgu_fields.PANEL_REFERRAL),
        lambda who, plan_id, data: plan_acts.refer_to_panel(
            database(), who, plan_id, data["referred_on"], data["questions"]
        ),
        forms.confirmation("referred", "The referral to the panel was recorded."),
        "tep",
    ),
    PlanAct(
        "panel-determination",
        "Record the panel's determination",
        "Subd. 2: after its on-site inspection, by its three members.",
        "Record the determination",
        TepDeterminationIn,
        lambda plan: lgu_fields.panel_determination(),
        _determination,
        forms.confirmation("determined", "The panel's determination was recorded."),
        "tep",
    ),
    PlanAct(
        "decision",
        "Record the decision",
        "Subd. 1, 2 and 4: an approval by the governing body's resolution, a denial with its "
        "reasons in writing.",
        "Record the decision",
        DecisionIn,
        lambda plan: (lgu_fields.decision(plan), {}),
        lambda who, plan_id, data: plan_acts.decide(
            database(), who, plan_id, decision_request(data)
        ),
        forms.confirmation("decided", "The decision was recorded."),
        "decision-record",
    ),
    _notice(
        True,
        "Mail the notice of decision",
        "Subd. 7: to the panel, the applicant, the commissioner, the watershed district and "
        "the members of the public who asked; it opens the appeal window.",
        forms.confirmation("decision_notice_mailed", "The notice of decision was recorded."),
    ),
    PlanAct(
        "revision",
        "Record a revised application",
        "Subd. 6 (c) decides whether it is a new application with a timeline of its own.",
        "Record the revision",
        RevisionIn,
        _static(lgu_fields.REVISION),
        lambda who, plan_id, data: plan_acts.revise(
            database(),
            who,
            plan_id,
            data["area_sqft"],
            data["displacement_ft"],
            data["received_on"],
        ),
        forms.confirmation("revised", "The revised application was recorded."),
    ),
    PlanAct(
        "securities",
        "Securities",
        "Subd. 3: a security given to the LGU for the replacement; a letter of credit must be "
        "irrevocable.",
        "Record the security",
        SecurityIn,
        lgu_fields.security,
        lambda who, plan_id, data: securities.hold_security(
            database(), who, plan_id, securities.SecurityRequest(**data), request_id()
        ),
        forms.confirmation("security_held", "The security was recorded."),
        "securities-heading",
    ),
    PlanAct(
        "withdrawal",
        "Withdraw the reserved credits",
        "The reservations chosen are posted for this approved plan as one ledger transaction.",
        "Withdraw the credits",
        WithdrawalIn,
        lgu_fields.withdrawal,
        lambda who, plan_id, data: withdrawals.withdraw(
            database(),
            who,
            plan_id,
            data["reservation_ids"],
            request_id(),
            external_refs=data["external_refs"],
        ),
        forms.confirmation("withdrawn", "The credits were withdrawn."),
        "withdrawals-heading",
    ),
)

for _act in ACTS:
    _register(_act)
