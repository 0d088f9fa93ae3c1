"""The pages' forms for the daily work (issue #26): the LGU's on a plan, the holder's on an
account.  Each is filled in as a browser would (the page's CSRF secret and Idempotency-Key
posted back), and checked as a user sees it: the redirect followed and the record shown, a
refusal's sentence beside its field, a double submit written once, a form without its secret
or from another role refused with nothing written.
"""

from __future__ import annotations

import re
import secrets
from datetime import date, timedelta
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from api.web.forms import MONEY_WANTED
from bank import plan_acts, reservable_plans
from bank.plan_tables import Plan
from tests.api.conftest import Api
from tests.api.kit import RECIPIENTS, Kit, decision_body, mailing, ok, on
from tests.api.web_kit import Element, page_balances, parse, signed_in

DAY = "2026-06-08"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def document(response: Any, status: int = 200) -> Element:
    text = response.get_data(as_text=True)
    assert response.status_code == status, text[:3000]
    assert response.mimetype == "text/html"
    assert "Traceback" not in text
    return parse(text)


def hidden(page: Element) -> dict[str, str]:
    """The form's hidden fields: its CSRF secret and Idempotency-Key."""
    form = page.one("form", id="record-form") if page.has("form", id="record-form") else page
    return {
        i.attrs["name"]: i.attrs["value"]
        for i in form.all("input", type="hidden")
        if i.attrs.get("name") in ("csrf_token", "idempotency_key")
    }


def fill(client: FlaskClient, path: str, fields: dict[str, Any]) -> dict[str, Any]:
    """The form at ``path`` as a browser would post it: ``fields`` and its hidden fields."""
    page = document(client.get(path))
    return {**fields, **hidden(page)}


def send(client: FlaskClient, path: str, fields: dict[str, Any]) -> Any:
    return client.post(path, data=fill(client, path, fields))


def followed(client: FlaskClient, response: Any) -> Element:
    """The page a form's 303 leads to, with its confirmation."""
    assert response.status_code == 303, response.get_data(as_text=True)[:3000]
    page = document(client.get(response.headers["Location"]))
    assert page.has("p", id="form-notice")
    return page


def beside(page: Element, field_id: str) -> str:
    return page.one("p", id=f"{field_id}-error").text


def plans_named(app: Flask, project: str) -> int:
    with app.extensions["wetbank.db"].transaction() as session:
        query = select(func.count()).select_from(Plan).where(Plan.project == project)
        return int(session.execute(query).scalar_one())


def plan_fields(project: str, received_on: str = DAY) -> dict[str, str]:
    return {
        "applicant": "Ada Applicant",
        "project": project,
        "location": "Section 14, Township 120 N, Range 25 W",
        "received_on": received_on,
        "impact.area_sqft": "9,000",
        "impact.wetland_type": "2",
        "impact.service_area": "5",
        "impact.county": "Wright",
        "replacement_ratio": "2",
        "method": "bank_credits",
    }


# --- the plan form, and the machinery every form shares ----------------------------------------


def test_an_lgu_records_a_plan_and_sees_it(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        response = send(client, "/plans/new", plan_fields("Form plan A"))
        page = followed(client, response)
    assert page.one("h1").text == "Replacement plan: Form plan A"
    assert "18,000 sq ft" in page.one("dd", id="required-credits").text


def test_a_refused_field_is_named_beside_it(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    fields = {**plan_fields("Form plan B", received_on="2026-07-01"), "impact.area_sqft": "lots"}
    with on(DAY):
        page = document(send(client, "/plans/new", fields), 422)
    assert beside(page, "f-received_on") == "This date is in the future."
    assert beside(page, "f-impact-area_sqft") == "Write a whole number."
    assert page.one("input", id="f-project").attrs["value"] == "Form plan B"  # kept as entered
    assert page.one("input", id="f-received_on").attrs["aria-invalid"] == "true"
    assert plans_named(app, "Form plan B") == 0


def test_a_double_submit_records_once(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        data = fill(client, "/plans/new", plan_fields("Form plan C"))
        first = client.post("/plans/new", data=data)
        second = client.post("/plans/new", data=data)
    assert first.status_code == second.status_code == 303
    assert second.headers["Location"] == first.headers["Location"]
    assert plans_named(app, "Form plan C") == 1


def test_a_key_sent_again_with_other_values_writes_nothing_more(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        data = fill(client, "/plans/new", plan_fields("Form plan F"))
        assert client.post("/plans/new", data=data).status_code == 303
        changed = {**data, "project": "Form plan G"}
        page = document(client.post("/plans/new", data=changed), 409)
        fresh = hidden(page)
    assert "already sent with other values" in page.one("div", id="form-problem").text
    assert fresh["idempotency_key"] != data["idempotency_key"]  # the form shown may be sent anew
    assert (plans_named(app, "Form plan F"), plans_named(app, "Form plan G")) == (1, 0)


def test_a_form_without_its_secret_writes_nothing(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        data = fill(client, "/plans/new", plan_fields("Form plan D"))
        del data["csrf_token"]
        refused = client.post("/plans/new", data=data)
        forged = client.post("/plans/new", data={**data, "csrf_token": "forged"})
    assert refused.status_code == forged.status_code == 400
    assert plans_named(app, "Form plan D") == 0


def test_another_role_may_not_use_the_lgu_forms(app: Flask, kit: Kit, holder) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), holder["token"])
    assert client.get("/plans/new").status_code == 403
    lgu_client = signed_in(app.test_client(), lgu["token"])
    data = fill(lgu_client, "/plans/new", plan_fields("Form plan E"))
    with on(DAY):
        posted = client.post("/plans/new", data={**data, **hidden_of(client)})
    assert posted.status_code == 403
    assert plans_named(app, "Form plan E") == 0


def hidden_of(client: FlaskClient) -> dict[str, str]:
    """A signed-in person's CSRF secret, from any page that shows it (sign-out's)."""
    text = client.get("/").get_data(as_text=True)
    match = re.search(r'name="csrf_token" value="([^"]+)"', text)
    assert match
    return {"csrf_token": match.group(1), "idempotency_key": "k" * 24}


def test_signed_out_the_form_asks_to_sign_in(app: Flask) -> None:
    response = app.test_client().get("/plans/new")
    assert response.status_code == 303
    assert "/sign-in" in response.headers["Location"]


# --- the acts on a plan -----------------------------------------------------------------------


def recipients(rows: list[dict[str, str]]) -> dict[str, str]:
    out = {}
    for i, row in enumerate(rows):
        out.update({f"recipients.{i}.{k}": v for k, v in row.items()})
    return out


def test_the_lgu_records_a_plan_s_notices_and_decision(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        base = f"/plans/{plan['id']}"
        panel = [r for r in RECIPIENTS if r["role"] in ("tep_member", "dnr_commissioner")]
        notice = {"mailed_on": DAY, **recipients(panel)}
        page = followed(client, send(client, f"{base}/notice-of-application", notice))
        assert kit.get_plan(plan["id"])["notice"]["mailed_on"] == DAY

        extension = {"notified_on": DAY, "days": "30", "reason": "the panel needs to inspect"}
        page = followed(client, send(client, f"{base}/extension", extension))
        assert "30 days" in page.one("dd", id="extensions").text

        decision = {
            "outcome": "approved",
            "decided_on": DAY,
            "resolution.number": "Res. 2026-41",
            "resolution.adopted_on": DAY,
        }
        page = followed(client, send(client, f"{base}/decision", decision))
        assert page.one("dd", id="decision-outcome").text.startswith("Approved")
        assert "Res. 2026-41" in page.one("dd", id="decision-resolution").text

        applicant = {"name": plan["applicant"], "address": "1 Main St", "role": "applicant"}
        notice = {"mailed_on": DAY, **recipients([*panel, applicant])}
        followed(client, send(client, f"{base}/notice-of-decision", notice))
        assert kit.get_plan(plan["id"])["decision_notice"]["mailed_on"] == DAY


#: the acts on a plan's record whose links the plan page offers by the plan's state
WEIGHED = {
    "notice-of-application",
    "extension",
    "panel-referral",
    "panel-determination",
    "decision",
    "notice-of-decision",
    "revision",
}


def offered(client: FlaskClient, plan_id: str) -> set[str]:
    """The acts the plan page links to, of those its state decides (``WEIGHED``); the form of
    every act its state decides is shown by a GET exactly when the page links to it."""
    nav = document(client.get(f"/plans/{plan_id}")).one("nav", id="plan-forms")
    acts = {a.attrs["href"].removeprefix(f"/plans/{plan_id}/") for a in nav.all("a")}
    for act in plan_acts.WEIGHED:
        response = client.get(f"/plans/{plan_id}/{act}")
        if act in acts:
            assert document(response).has("form", id="record-form"), act
        else:
            refused_form(response, None)
    return acts & WEIGHED


def refused_form(response: Any, status: int | None) -> str:
    """A GET of a form the plan page does not offer: the page says why, at ``status`` (the one
    a POST of the form is refused with; any refusal when ``None``), and shows no form."""
    if status is None:
        assert response.status_code in (409, 422), response.get_data(as_text=True)[:3000]
        status = response.status_code
    page = document(response, status)
    assert not page.has("form", id="record-form")
    return page.one("div", id="form-problem").text


def send_unoffered(client: FlaskClient, path: str, fields: dict[str, Any]) -> Any:
    """Post the form at ``path`` as a browser still could when the plan page offers no form
    (a GET of it shows none): the session's secret from the plan page, a key of its own."""
    plan_page = document(client.get(path.rsplit("/", 1)[0]))
    key = {"idempotency_key": secrets.token_urlsafe(24)}
    return client.post(path, data={**fields, **hidden(plan_page), **key})


def test_the_plan_page_offers_only_the_acts_the_plans_state_allows(app: Flask, kit: Kit) -> None:
    """An undecided plan is offered no notice of decision, no determination before a referral
    and, below 10,000 sq ft, no decision before its summary is recorded (Subd. 6 (b)); a decided
    plan no second decision, nor the acts that come before one; each notice once.  The rules
    are the use cases' own (``bank.plan_acts.open_acts``)."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    decision = {
        "outcome": "approved",
        "decided_on": DAY,
        "resolution.number": "Res. 2026-42",
        "resolution.adopted_on": DAY,
    }
    panel = [r for r in RECIPIENTS if r["role"] in ("tep_member", "dnr_commissioner")]
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        base = f"/plans/{plan['id']}"
        assert offered(client, plan["id"]) == WEIGHED - {
            "panel-determination",
            "decision",
            "notice-of-decision",
        }
        # a decision the page does not offer is still refused if posted, as the API refuses it
        waiting = document(send_unoffered(client, f"{base}/decision", decision), 422)
        assert "Subd. 6 (b)" in waiting.one("div", id="form-problem").text
        assert kit.get_plan(plan["id"])["decision"] is None
        summary = {"mailed_on": DAY, **recipients(panel)}
        followed(client, send(client, f"{base}/notice-of-application", summary))
        assert offered(client, plan["id"]) == WEIGHED - {
            "notice-of-application",
            "panel-determination",
            "notice-of-decision",
        }
        send(client, f"{base}/panel-referral", {"referred_on": DAY, "questions": ["size"]})
        assert offered(client, plan["id"]) == WEIGHED - {
            "notice-of-application",
            "panel-referral",
            "notice-of-decision",
        }

        other = kit.approved_plan(lgu, DAY)
        assert offered(client, other["id"]) == {"notice-of-decision", "revision"}
        applicant = {"name": other["applicant"], "address": "1 Main St", "role": "applicant"}
        notice = {"mailed_on": DAY, **recipients([*panel, applicant])}
        followed(client, send(client, f"/plans/{other['id']}/notice-of-decision", notice))
        assert offered(client, other["id"]) == {"revision"}
        # a decision the page does not offer is still refused if posted, as the API refuses it
        path = f"/plans/{other['id']}/decision"
        assert refused_form(client.get(path), 409) == "The plan was already decided."
        refused = document(send_unoffered(client, path, decision), 409)
    assert refused.one("div", id="form-problem").text == "The plan was already decided."
    assert not refused.has("form", id="record-form")  # as the GET: no form to send again


def test_past_its_decision_due_an_undecided_plan_is_offered_its_notice_of_deemed_approval(
    app: Flask, kit: Kit
) -> None:
    """15.99: on ``decision_due`` a notice of decision has nothing to give notice of; the day
    after, the plan is deemed approved and it does, while a decision dated by the deadline may
    still be recorded (nothing relied on the deemed approval yet), once the summary of the
    application is (Subd. 6 (b)): one mailed by the deadline is offered until then."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
    due = date.fromisoformat(kit.get_plan(plan["id"])["deadlines"]["decision_due"])
    deemed = (due + timedelta(days=1)).isoformat()
    for day in (due.isoformat(), deemed):
        with on(day):
            acts = offered(client, plan["id"])
            assert "decision" not in acts and "notice-of-application" in acts
    with on(due.isoformat()):
        assert "notice-of-decision" not in offered(client, plan["id"])
    with on(deemed):
        assert "notice-of-decision" in offered(client, plan["id"])
        kit.mail_summary(lgu, plan, due.isoformat())  # mailed in time, recorded late
        assert {"notice-of-decision", "decision"} <= offered(client, plan["id"])
        assert "notice-of-application" not in offered(client, plan["id"])


def test_the_notice_of_decision_form_names_the_parties_as_the_plan_records_them(
    app: Flask, kit: Kit
) -> None:
    """The notice must name the applicant, the watershed district and the panel's members as the
    plan records them: the form starts with their names."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    members = [
        {"name": "Ann Able", "represents": "board"},
        {"name": "Ben Baker", "represents": "swcd"},
        {"name": "Cy Carter", "represents": "lgu"},
    ]
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, watershed_district="Buffalo WD")
        path = f"/plans/{plan['id']}"
        kit.mail_summary(lgu, plan, DAY)
        ok(kit.api.post(f"{path}/tep-referral", {"referred_on": DAY, "questions": ["size"]}))
        determination = {"inspected_on": DAY, "members": members, "determination": "x"}
        ok(kit.api.post(f"{path}/tep-determination", determination))
        ok(kit.api.post(f"{path}/decision", decision_body("approved", DAY)))
        form = document(client.get(f"{path}/notice-of-decision"))
    named = set()
    for i in range(6):
        role = form.one("select", id=f"f-recipients-{i}-role").all("option")
        (chosen,) = [o.attrs["value"] for o in role if "selected" in o.attrs]
        name = form.one("input", id=f"f-recipients-{i}-name").attrs.get("value", "")
        named.add(f"{chosen}: {name}")
    assert named == {
        "tep_member: Ann Able",
        "tep_member: Ben Baker",
        "tep_member: Cy Carter",
        "dnr_commissioner: ",
        "watershed_district: Buffalo WD",
        f"applicant: {plan['applicant']}",
    }


def test_a_refused_recipient_after_a_skipped_row_is_shown_beside_its_own_row(
    app: Flask, kit: Kit
) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        path = f"/plans/{plan['id']}/notice-of-application"
        skipped = {"name": "", "address": "", "role": "tep_member"}
        no_address = {"name": "Sam Swcd", "address": "", "role": "tep_member"}
        notice = {"mailed_on": DAY, **recipients([RECIPIENTS[0], skipped, no_address])}
        page = document(send(client, path, notice), 422)
    assert beside(page, "f-recipients-2-address") == "Fill in this field."
    assert not page.has("p", id="f-recipients-1-address-error")  # the row left blank
    assert page.one("input", id="f-recipients-2-name").attrs["value"] == "Sam Swcd"
    assert kit.get_plan(plan["id"])["notice"] is None


def test_a_form_refused_for_the_plans_state_is_answered_as_its_get_with_no_form(
    app: Flask, kit: Kit
) -> None:
    """A form drawn while its act was open and sent after the plan moved on (the notice of
    application recorded meanwhile, by a second form drawn beside it): refused as the API
    refuses it (409), the page says why and, as a GET of the form now does, offers no form to
    send again; nothing more is written.  A refusal of what was typed (a date in the future)
    comes back with the form, the sentence beside its field."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        path = f"/plans/{plan['id']}/notice-of-application"
        panel = [r for r in RECIPIENTS if r["role"] in ("tep_member", "dnr_commissioner")]
        notice = {"mailed_on": DAY, **recipients(panel)}
        first, second = fill(client, path, notice), fill(client, path, notice)
        later = (date.fromisoformat(DAY) + timedelta(days=3)).isoformat()
        typed = document(client.post(path, data={**first, "mailed_on": later}), 422)
        assert typed.has("form", id="record-form")
        assert beside(typed, "f-mailed_on")
        followed(client, client.post(path, data=first))
        recorded = kit.get_plan(plan["id"])["notice"]
        refused = document(client.post(path, data=second), 409)
        get_says = refused_form(client.get(path), 409)
    assert refused.one("div", id="form-problem").text == get_says
    assert not refused.has("form", id="record-form")
    assert not refused.has("input", name="mailed_on")
    assert kit.get_plan(plan["id"])["notice"] == recorded


def test_a_peatland_approval_without_its_record_keeps_the_form_to_complete(
    app: Flask, kit: Kit
) -> None:
    """Subd. 1 (a)'s refusal of a peatland approval without its record is ``not_eligible``, but
    of what was typed: the decision is still open (``plan_acts.act_refusal``), so the form comes
    back as sent, to complete, and completed it is recorded."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        body = kit.plan_body(received_on=DAY, area_sqft=9_000)
        body["impact"]["peatland"] = True
        plan = ok(kit.api.post("/plans", body, token=lgu["token"]))
        kit.mail_summary(lgu, plan, DAY)
        path = f"/plans/{plan['id']}/decision"
        fields = {
            "outcome": "approved",
            "decided_on": DAY,
            "resolution.number": "Res. 2026-77",
            "resolution.adopted_on": DAY,
        }
        refused = document(send(client, path, fields), 422)
        assert "Subd. 1 (a)" in refused.one("div", id="form-problem").text
        form = refused.one("form", id="record-form")
        assert form.one("input", name="resolution.number").attrs["value"] == "Res. 2026-77"
        assert kit.get_plan(plan["id"])["decision"] is None
        record = {
            "peatland.carbon_balance_considered": "on",
            "peatland.trees_or_shrubs": "tamarack",
        }
        followed(client, client.post(path, data={**fields, **record, **hidden(refused)}))
    assert kit.get_plan(plan["id"])["decision"]["outcome"] == "approved"


def test_a_decision_without_its_record_is_refused_in_words(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        kit.mail_summary(lgu, plan, DAY)
        fields = {"outcome": "approved", "decided_on": DAY}
        page = document(send(client, f"/plans/{plan['id']}/decision", fields), 422)
    assert page.one("div", id="form-problem").text
    assert kit.get_plan(plan["id"])["decision"] is None


def test_the_lgu_refers_to_the_panel_and_records_its_determination(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        base = f"/plans/{plan['id']}"
        followed(
            client,
            send(client, f"{base}/panel-referral", {"referred_on": DAY, "questions": ["size"]}),
        )
        members = {
            "members.0.name": "Ann Board",
            "members.0.represents": "board",
            "members.1.name": "Sam Swcd",
            "members.1.represents": "swcd",
            "members.2.name": "Lee Lgu",
            "members.2.represents": "lgu",
        }
        fields = {"inspected_on": DAY, "determination": "It is 9,000 sq ft.", **members}
        page = followed(client, send(client, f"{base}/panel-determination", fields))
    assert "It is 9,000 sq ft." in page.one("dd", id="tep").text


def test_the_lgu_records_a_revision_and_a_security(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        base = f"/plans/{plan['id']}"
        revision = {"area_sqft": "9500", "displacement_ft": "0", "received_on": DAY}
        followed(client, send(client, f"{base}/revision", revision))
        assert kit.get_plan(plan["id"])["impact"]["area_sqft"] == 9_500

        security = {
            "kind": "letter_of_credit",
            "issuer": "First Bank of Buffalo",
            "amount_cents": "25,000",
            "irrevocable": "on",
            "issued_on": DAY,
            "expires_on": "2028-06-08",
        }
        page = followed(client, send(client, f"{base}/securities", security))
    rows = page.all(
        "tr",
        data_security_id=kit.api.get(f"/securities?plan_id={plan['id']}").json["items"][0]["id"],
    )
    assert len(rows) == 1 and "First Bank of Buffalo" in rows[0].text


def test_a_revocable_letter_of_credit_is_refused_beside_its_field(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        security = {
            "kind": "letter_of_credit",
            "issuer": "First Bank of Buffalo",
            "amount_cents": "25,000",
            "issued_on": DAY,
            "expires_on": "2028-06-08",
        }
        page = document(send(client, f"/plans/{plan['id']}/securities", security), 422)
    assert beside(page, "f-irrevocable") == "A letter of credit must be irrevocable."
    assert "irrevocable letter of credit" in page.one("div", id="form-problem").text
    assert kit.api.get(f"/securities?plan_id={plan['id']}").json["items"] == []


def test_the_lgu_withdraws_the_reserved_credits(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000, restricted=9_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000)
        path = f"/plans/{plan['id']}/withdrawal"
        form = document(client.get(path))
        chosen = [
            i.attrs["value"] for i in form.all("input", type="checkbox") if "checked" in i.attrs
        ]
        assert sorted(chosen) == sorted([u["id"], r["id"]])
        data = fill(client, path, {"reservation_ids": chosen})
        first = client.post(path, data=data)
        page = followed(client, first)
        again = client.post(path, data=data)
    assert again.status_code == 303 and again.headers["Location"] == first.headers["Location"]
    assert len(page.all("table", class_="withdrawal")) == 1
    assert len(kit.get_plan(plan["id"])["withdrawals"]) == 1


def plan_form_links(client: FlaskClient, plan_id: str) -> set[str]:
    """The forms the plan page's "Record on this plan" links to, by their last path segment."""
    nav = document(client.get(f"/plans/{plan_id}")).one("nav", id="plan-forms")
    return {a.attrs["href"].removeprefix(f"/plans/{plan_id}/") for a in nav.all("a")}


def test_the_withdrawal_form_is_offered_only_while_the_plan_allows_a_withdrawal(
    app: Flask, kit: Kit
) -> None:
    """The withdrawal use case's own check (``withdrawals.check_withdrawable``): an approved plan
    replaced with bank credits whose requirement is not yet met. An undecided plan, a
    project-specific one and one whose withdrawals met its requirement are not offered the form;
    posted anyway, it is refused as the API refuses it and nothing is withdrawn."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        undecided = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        own = kit.approved_plan(lgu, DAY, area_sqft=9_000, method="project_specific")
        plan = kit.approved_plan(lgu, DAY, area_sqft=4_000, ratio="1")
        assert "withdrawal" not in plan_form_links(client, undecided["id"])
        assert "withdrawal" not in plan_form_links(client, own["id"])
        assert "withdrawal" in plan_form_links(client, plan["id"])
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 4_000)
        ok(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [held["id"]]},
                token=lgu["token"],
            )
        )
        assert "withdrawal" not in plan_form_links(client, plan["id"])
        early = kit.reserve(bank["id"], undecided["id"], bank["unrestricted_class"], 1_000)
        path = f"/plans/{undecided['id']}/withdrawal"
        assert "only for an approved plan" in refused_form(client.get(path), 409)
        own_refused = refused_form(client.get(f"/plans/{own['id']}/withdrawal"), 422)
        assert "project specific, not bank credits" in own_refused
        sent = send_unoffered(client, path, {"reservation_ids": [early["id"]]})
        refused = document(sent, 409)
    assert "only for an approved plan" in refused.one("div", id="form-problem").text
    assert not refused.has("form", id="record-form")
    assert kit.get_plan(undecided["id"])["withdrawals"] == []


def test_the_security_form_is_offered_only_for_a_project_specific_plan(
    app: Flask, kit: Kit
) -> None:
    """The security use case's own check (``securities.method_refusal``): Subd. 3's security
    guarantees a project-specific replacement, so a plan replaced with bank credits is not
    offered the form; posted anyway, it is refused as the API refuses it and nothing is held."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        credits = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        own = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        assert "securities" not in plan_form_links(client, credits["id"])
        assert "securities" in plan_form_links(client, own["id"])
        path = f"/plans/{credits['id']}/securities"
        assert "not project-specific" in refused_form(client.get(path), 422)
        refused = document(send_unoffered(client, path, letter_of_credit("25,000")), 422)
    assert "not project-specific" in refused.one("div", id="form-problem").text
    assert not refused.has("form", id="record-form")  # not_eligible: the plan's, not typed
    assert ok(kit.api.get(f"/securities?plan_id={credits['id']}"), 200)["items"] == []


def test_a_refusal_that_starts_with_an_id_keeps_the_id_as_written(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1")
        other = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1")
        theirs = kit.reserve(bank["id"], other["id"], bank["unrestricted_class"], 1_000)
        path = f"/plans/{plan['id']}/withdrawal"
        page = document(send(client, path, {"reservation_ids": [theirs["id"]]}), 422)
    assert theirs["id"].startswith("res_")
    assert beside(page, "f-reservation_ids") == f"{theirs['id']} is not reserved for this plan."
    assert (
        page.one("div", id="form-problem").text == f"No reservation {theirs['id']} for this plan."
    )
    assert kit.get_plan(plan["id"])["withdrawals"] == []


# --- the holder's forms -------------------------------------------------------------------------


def test_a_holder_reserves_credits_for_a_plan_of_its_area(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        # service area 8, which few other tests use: the form offers the newest plans of the area
        bank = kit.funded_account(day=DAY, service_area=8, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, service_area=8)
        elsewhere = kit.plan(lgu, received_on=DAY, area_sqft=9_000, service_area=5)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/reservations/new"
        offered = [
            o.attrs["value"]
            for o in document(client.get(path)).one("select", id="f-plan_id").all("option")
        ]
        assert plan["id"] in offered and elsewhere["id"] not in offered
        fields = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "5,000",
            "expires_on": "2027-06-08",
        }
        data = fill(client, path, fields)
        first = client.post(path, data=data)
        page = followed(client, first)
        second = client.post(path, data=data)
    assert second.headers["Location"] == first.headers["Location"]
    rows = page.one("table", id="account-reservations").one("tbody").all("tr")
    assert len(rows) == 1 and rows[0].attrs["data-status"] == "pending"
    assert kit.rows_naming(bank["id"])["reservations"] == 1
    assert kit.available(bank["id"], bank["unrestricted_class"]) == 15_000


@pytest.mark.parametrize("typed", ["1,5", "10,00", "1,0000", ",500", "1,500,", "1_000", "12 000"])
def test_a_misplaced_thousands_separator_is_refused_not_read_as_another_amount(
    app: Flask, kit: Kit, typed: str
) -> None:
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        fields = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": typed,
            "expires_on": "2027-06-08",
        }
        page = document(send(client, f"/accounts/{bank['id']}/reservations/new", fields), 422)
    assert beside(page, "f-amount_sqft") == "Write a whole number."
    assert page.one("input", id="f-amount_sqft").attrs["value"] == typed  # kept as typed
    assert kit.rows_naming(bank["id"])["reservations"] == 0
    assert kit.available(bank["id"], bank["unrestricted_class"]) == 20_000


def test_amounts_grouped_by_threes_are_read_as_written(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=1_500_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/transfers/new"
        for amount in ("1,234,567", "12,000", "433"):
            fields = {
                "to_account_id": other,
                "credit_class": bank["unrestricted_class"],
                "amount_sqft": amount,
            }
            followed(client, send(client, path, fields))
        refused = {**fields, "amount_sqft": "10,00", "price_per_sqft_cents": "1,5"}
        page = document(send(client, path, refused), 422)
    assert beside(page, "f-amount_sqft") == "Write a whole number."
    assert beside(page, "f-price_per_sqft_cents") == MONEY_WANTED
    assert kit.available(other, bank["unrestricted_class"]) == 1_234_567 + 12_000 + 433


def offered_plans(client: FlaskClient, account_id: str) -> list[str]:
    menu = document(client.get(f"/accounts/{account_id}/reservations/new"))
    return [o.attrs["value"] for o in menu.one("select", id="f-plan_id").all("option")]


def met_plan(kit: Kit, lgu: dict) -> tuple[dict, dict, dict]:
    """In service area 8 (which few other tests use), on ``DAY``: an account of 20,000 sq ft and
    a plan of 1,000 sq ft at 1:1 whose requirement a withdrawal of 1,000 from it met: the
    account, the plan and the reservation withdrawn."""
    bank = kit.funded_account(day=DAY, service_area=8, unrestricted=20_000)
    met = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1", service_area=8)
    used = kit.reserve(bank["id"], met["id"], bank["unrestricted_class"], 1_000)
    path = f"/plans/{met['id']}/withdrawals"
    ok(kit.api.post(path, {"reservation_ids": [used["id"]]}, token=lgu["token"]))
    return bank, met, used


def test_the_reserve_form_offers_only_plans_a_reservation_can_still_serve(
    app: Flask, kit: Kit
) -> None:
    lgu = kit.lgu()
    with on(DAY):
        # service area 8, which few other tests use: the form offers the newest plans of the area
        bank, met, _used = met_plan(kit, lgu)
        received = kit.plan(lgu, received_on=DAY, area_sqft=1_000, service_area=8)
        methods = {
            method: kit.approved_plan(lgu, DAY, area_sqft=1_000, service_area=8, method=method)
            for method in ("bank_credits", "project_specific")
        }
        for plan in methods.values():
            notice = f"/plans/{plan['id']}/decision-notice"
            ok(kit.api.post(notice, mailing(DAY, plan=plan), token=lgu["token"]))
        holder = bank["holder"]["token"]
        before_final = offered_plans(signed_in(app.test_client(), holder), bank["id"])
    with on("2026-07-06"):  # the appeal windows have closed: both decisions are final
        assert {kit.get_plan(p["id"])["status"] for p in methods.values()} == {"final"}
        offered = offered_plans(signed_in(app.test_client(), holder), bank["id"])
    assert met["id"] not in before_final and met["id"] not in offered  # its credits all withdrawn
    assert {received["id"], methods["bank_credits"]["id"]} <= set(offered)
    # its impact takes no credits, and nothing changes a plan's method: offered neither before
    # the decision is final nor after
    assert methods["project_specific"]["id"] not in before_final
    assert methods["project_specific"]["id"] not in offered


def test_a_plan_the_menu_does_not_offer_is_reserved_by_its_id(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on("2027-03-01"):
        bank = kit.funded_account(day="2027-03-01", service_area=7, unrestricted=20_000)
        older = kit.plan(lgu, received_on="2027-03-01", area_sqft=1_000, service_area=7)
    with on("2027-03-02"):  # every one of them newer than ``older``
        for _ in range(reservable_plans.OFFERED):
            kit.plan(lgu, received_on="2027-03-02", area_sqft=1_000, service_area=7)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/reservations/new"
        assert older["id"] not in offered_plans(client, bank["id"])
        fields = {
            "other_plan_id": "plan_0123456789abcdef",
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "700",
            "expires_on": "2027-06-08",
        }
        unknown = document(send(client, path, fields), 422)
        assert beside(unknown, "f-other_plan_id") == "No such plan."
        assert unknown.one("input", id="f-other_plan_id").attrs["value"] == fields["other_plan_id"]
        followed(client, send(client, path, {**fields, "other_plan_id": f" {older['id']} "}))
    held = kit.get_plan(older["id"])["reservations"]
    assert [(r["account_id"], r["amount_sqft"]) for r in held] == [(bank["id"], 700)]


def test_a_plan_the_menu_leaves_out_for_its_state_is_refused_by_its_id_too(
    app: Flask, kit: Kit
) -> None:
    """Named by its id, a plan whose requirement withdrawals met is refused as the API refuses
    it (one rule, ``bank.credit_needs``): the form says why, and nothing is reserved."""
    lgu = kit.lgu()
    with on(DAY):
        bank, met, used = met_plan(kit, lgu)
        code = bank["unrestricted_class"]
        client = signed_in(app.test_client(), bank["holder"]["token"])
        assert met["id"] not in offered_plans(client, bank["id"])
        fields = {
            "other_plan_id": met["id"],
            "credit_class": code,
            "amount_sqft": "700",
            "expires_on": "2027-06-08",
        }
        form = f"/accounts/{bank['id']}/reservations/new"
        page = document(send(client, form, fields), 409)
    assert "nothing is left to withdraw" in page.one("div", id="form-problem").text
    # a refusal of the plan named, not of the account: the form stays to name another
    typed = page.one("form", id="record-form").one("input", name="other_plan_id")
    assert typed.attrs["value"] == met["id"]
    assert [r["id"] for r in kit.get_plan(met["id"])["reservations"]] == [used["id"]]


def test_a_reserve_form_naming_no_plan_is_refused_beside_the_menu(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        fields = {
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "700",
            "expires_on": "2027-06-08",
        }
        page = document(send(client, f"/accounts/{bank['id']}/reservations/new", fields), 422)
    assert beside(page, "f-plan_id") == "Fill in this field."
    assert kit.rows_naming(bank["id"])["reservations"] == 0


def refused_reservation(app: Flask, kit: Kit, amount: str, expires_on: str) -> tuple[Any, dict]:
    """The holder's reserve form, for a plan received on ``DAY``, of ``amount`` from an account
    of 20,000 sq ft, refused (422): the page and the account."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        fields = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": amount,
            "expires_on": expires_on,
        }
        page = document(send(client, f"/accounts/{bank['id']}/reservations/new", fields), 422)
    return page, bank


def test_a_reservation_past_its_expiry_is_refused_beside_the_field(app: Flask, kit: Kit) -> None:
    page, bank = refused_reservation(app, kit, "5000", "2026-06-01")
    assert beside(page, "f-expires_on") == "In the past."
    assert page.one("div", id="form-problem").text == "The expiry is in the past."
    assert kit.rows_naming(bank["id"])["reservations"] == 0


def test_a_reservation_of_more_than_is_available_says_the_area_as_people_write_it(
    app: Flask, kit: Kit
) -> None:
    """The refusal names the square feet with thousands separators, as every page does."""
    page, bank = refused_reservation(app, kit, "20,001", "2027-06-08")
    assert page.one("div", id="form-problem").text == "Only 20,000 sq ft available."
    assert kit.rows_naming(bank["id"])["reservations"] == 0
    assert kit.available(bank["id"], bank["unrestricted_class"]) == 20_000


def test_a_holder_voids_a_reservation_once(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 5_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        listing = document(client.get(f"/accounts/{bank['id']}/reservations"))
        row = listing.one("tr", data_reservation_id=held["id"])
        data = hidden(row)
        path = f"/reservations/{held['id']}/void"
        page = followed(client, client.post(path, data=data))
        again = client.post(path, data=data)
        fresh = {**data, "idempotency_key": "x" * 30}
        refused = document(client.post(path, data=fresh), 409)
    assert again.status_code == 303
    assert page.one("tr", data_reservation_id=held["id"]).attrs["data-status"] == "voided"
    assert "not pending" in refused.one("div", id="form-problem").text
    assert not refused.one("tr", data_reservation_id=held["id"]).has("form")  # nothing to send
    assert kit.available(bank["id"], bank["unrestricted_class"]) == 20_000


def test_a_holder_transfers_to_another_account(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/transfers/new"
        fields = {
            "to_account_id": other,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "4000",
        }
        data = fill(client, path, fields)
        first = client.post(path, data=data)
        page = followed(client, first)
        client.post(path, data=data)
    assert page_balances(page)[bank["unrestricted_class"]]["available_sqft"] == 16_000
    assert kit.available(other, bank["unrestricted_class"]) == 4_000
    assert kit.rows_naming(bank["id"])["transfers"] == 1


def test_a_holder_names_the_receiving_account_by_its_number(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        number = kit.account_body(other)["number"]
        client = signed_in(app.test_client(), bank["holder"]["token"])
        fields = {
            "to_account_id": number.lower(),  # as typed, in any case
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "2500",
        }
        followed(client, send(client, f"/accounts/{bank['id']}/transfers/new", fields))
    assert number.startswith("WB-")
    assert kit.available(other, bank["unrestricted_class"]) == 2_500


def test_a_transfer_to_no_account_is_refused_beside_the_field(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        fields = {
            "to_account_id": "acct_nothere",
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "4000",
        }
        page = document(send(client, f"/accounts/{bank['id']}/transfers/new", fields), 422)
    assert beside(page, "f-to_account_id") == "No such account."
    assert kit.rows_naming(bank["id"])["transfers"] == 0


def emptied_and_closed(kit: Kit, bank: dict[str, Any], available: int) -> str:
    """``bank``'s ``available`` sq ft sent to a new account, and ``bank`` closed (the board);
    returns its number."""
    spare = kit.account(kit.holder()["id"], 5, "Wright")
    body = {
        "from_account_id": bank["id"],
        "to_account_id": spare,
        "credit_class": bank["unrestricted_class"],
        "amount_sqft": available,
    }
    ok(kit.api.post("/transfers", body), 201)
    closed = ok(kit.api.post(f"/accounts/{bank['id']}/close"), 200)
    assert closed["status"] == "closed"
    return str(closed["number"])


def test_a_reserve_form_sent_after_the_account_closed_is_answered_with_no_form(
    app: Flask, kit: Kit
) -> None:
    """A reserve form drawn while the account was open and sent after the board closed it:
    refused as the API refuses it (409), the page says why with no form to send again, for
    the account itself sends nothing now (``accounts.send_refusal``).  A mistake typed in the
    same form (an expiry in the past) comes back with the form, the sentence beside its
    field."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/reservations/new"
        fields = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "5,000",
            "expires_on": "2027-06-08",
        }
        drawn = fill(client, path, fields)
        typed = document(client.post(path, data={**drawn, "expires_on": "2026-06-01"}), 422)
        assert beside(typed, "f-expires_on") == "In the past."
        kept = typed.one("form", id="record-form").one("input", id="f-amount_sqft")
        assert kept.attrs["value"] == "5,000"
        number = emptied_and_closed(kit, bank, 20_000)
        refused = document(client.post(path, data=drawn), 409)
    assert refused.one("div", id="form-problem").text == f"Account {number} is closed."
    assert not refused.has("form", id="record-form")
    assert not refused.has("input", name="amount_sqft")
    assert kit.rows_naming(bank["id"])["reservations"] == 0


def test_a_transfer_form_sent_after_the_account_closed_is_answered_with_no_form(
    app: Flask, kit: Kit
) -> None:
    """A transfer refused for what was typed keeps its form: an amount that is no number
    (beside its field), or a receiving account that is closed (409, the sentence above the
    form: another account may be named).  Refused because the account it sends from was closed
    after the form was drawn (409), the page says why with no form."""
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        shut = kit.account(kit.holder()["id"], 5, "Wright")
        ok(kit.api.post(f"/accounts/{shut}/close"), 200)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/transfers/new"
        fields = {
            "to_account_id": other,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "4,000",
        }
        drawn = fill(client, path, fields)
        typed = document(client.post(path, data={**drawn, "amount_sqft": "4,00"}), 422)
        assert beside(typed, "f-amount_sqft") == "Write a whole number."
        assert typed.has("form", id="record-form")
        to_closed = document(client.post(path, data={**drawn, "to_account_id": shut}), 409)
        assert to_closed.one("div", id="form-problem").text == "A closed account receives nothing."
        kept = to_closed.one("form", id="record-form").one("input", name="to_account_id")
        assert kept.attrs["value"] == shut
        number = emptied_and_closed(kit, bank, 20_000)
        refused = document(client.post(path, data=drawn), 409)
    assert refused.one("div", id="form-problem").text == f"Account {number} is closed."
    assert not refused.has("form", id="record-form")
    assert not refused.has("input", name="to_account_id")
    assert kit.rows_naming(bank["id"])["transfers"] == 1  # the one that emptied it
    assert ok(kit.api.get(f"/accounts/{other}"), 200)["balances"] == []


def api_refusal(kit: Kit, bank: dict[str, Any], plan_id: str, to: str) -> set[tuple[int, str]]:
    """What the API answers a reservation and a transfer from ``bank`` now: (status, code)."""
    reserved = kit.api.post(
        f"/accounts/{bank['id']}/reservations",
        kit.reservation_body(plan_id, bank["unrestricted_class"], 1_000),
    )
    moved = kit.api.post(
        "/transfers",
        {
            "from_account_id": bank["id"],
            "to_account_id": to,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 1_000,
        },
    )
    return {(r.status_code, r.json["code"]) for r in (reserved, moved)}


def test_the_forms_of_an_account_that_may_send_nothing_answer_its_refusal_with_no_form(
    app: Flask, kit: Kit
) -> None:
    """A GET of the reserve or transfer form of a frozen or closed account answers the refusal
    a POST of it gets, at the status the API refuses a reservation or a transfer from it with
    (frozen: 422 ``account_frozen``; closed: 409 ``conflict``), and draws no form, and the
    account page does not link to them; unfrozen, the forms are offered and drawn again."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        client = signed_in(app.test_client(), bank["holder"]["token"])
        paths = [f"/accounts/{bank['id']}/{act}/new" for act in ("reservations", "transfers")]
        number = kit.account_body(bank["id"])["number"]
        ok(kit.api.post(f"/accounts/{bank['id']}/freeze"), 200)
        assert api_refusal(kit, bank, plan["id"], other) == {(422, "account_frozen")}
        for path in paths:
            assert refused_form(client.get(path), 422) == f"Account {number} is frozen.", path
        assert not set(paths) & account_form_links(client, bank["id"])
        ok(kit.api.post(f"/accounts/{bank['id']}/unfreeze"), 200)
        for path in paths:
            assert document(client.get(path)).has("form", id="record-form"), path
        assert set(paths) <= account_form_links(client, bank["id"])
        emptied_and_closed(kit, bank, 20_000)
        assert api_refusal(kit, bank, plan["id"], other) == {(409, "conflict")}
        for path in paths:
            assert refused_form(client.get(path), 409) == f"Account {number} is closed.", path
        assert not set(paths) & account_form_links(client, bank["id"])


def account_form_links(client: FlaskClient, account_id: str) -> set[str]:
    """The forms the account page's "Act on this account" links to."""
    nav = document(client.get(f"/accounts/{account_id}")).one("nav", id="account-forms")
    return {a.attrs["href"] for a in nav.all("a")}


def test_a_form_sent_after_the_account_was_frozen_is_answered_with_no_form(
    app: Flask, kit: Kit
) -> None:
    """Reserve and transfer forms drawn while the account was open and sent after the board
    froze it: refused as the API refuses them (422 ``account_frozen``), the page says why with no
    form, for the account sends nothing until the board unfreezes it.  Unfrozen, the same forms,
    sent again, are used."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        client = signed_in(app.test_client(), bank["holder"]["token"])
        number = kit.account_body(bank["id"])["number"]
        reserve = f"/accounts/{bank['id']}/reservations/new"
        transfer = f"/accounts/{bank['id']}/transfers/new"
        unrestricted = bank["unrestricted_class"]
        drawn = {
            reserve: fill(
                client,
                reserve,
                {
                    "plan_id": plan["id"],
                    "credit_class": unrestricted,
                    "amount_sqft": "5,000",
                    "expires_on": "2027-06-08",
                },
            ),
            transfer: fill(
                client,
                transfer,
                {"to_account_id": other, "credit_class": unrestricted, "amount_sqft": "4,000"},
            ),
        }
        ok(kit.api.post(f"/accounts/{bank['id']}/freeze"), 200)
        for path, data in drawn.items():
            refused = document(client.post(path, data=data), 422)
            assert refused.one("div", id="form-problem").text == f"Account {number} is frozen."
            assert not refused.has("form", id="record-form"), path
            assert not refused.has("input", name="amount_sqft"), path
        assert kit.rows_naming(bank["id"])["reservations"] == 0
        assert kit.rows_naming(bank["id"])["transfers"] == 0
        ok(kit.api.post(f"/accounts/{bank['id']}/unfreeze"), 200)
        for path, data in drawn.items():
            followed(client, client.post(path, data=data))
    assert kit.available(bank["id"], unrestricted) == 20_000 - 5_000 - 4_000


def test_credits_of_a_frozen_site_refused_keep_the_form_to_choose_others(
    app: Flask, kit: Kit
) -> None:
    """``account_frozen`` for the credits chosen (their bank site frozen), the account itself
    open: the form stays, to choose other credits; so does the withdrawal form refused for a
    reservation of a frozen account, to choose other reservations."""
    lgu = kit.lgu()
    lgu_client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1")
        other = kit.account(kit.holder()["id"], 5, "Wright")
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 1_000)
        client = signed_in(app.test_client(), bank["holder"]["token"])
        reserve = f"/accounts/{bank['id']}/reservations/new"
        transfer = f"/accounts/{bank['id']}/transfers/new"
        fields = {
            reserve: {
                "plan_id": plan["id"],
                "credit_class": bank["unrestricted_class"],
                "amount_sqft": "5,000",
                "expires_on": "2027-06-08",
            },
            transfer: {
                "to_account_id": other,
                "credit_class": bank["unrestricted_class"],
                "amount_sqft": "4,000",
            },
        }
        drawn = {path: fill(client, path, typed) for path, typed in fields.items()}
        ok(kit.api.post(f"/bank-sites/{bank['site_id']}/freeze"), 200)
        for path, data in drawn.items():
            kept = document(client.post(path, data=data), 422)
            assert "frozen" in kept.one("div", id="form-problem").text, path
            amount = kept.one("form", id="record-form").one("input", id="f-amount_sqft")
            assert amount.attrs["value"] == fields[path]["amount_sqft"], path
        ok(kit.api.post(f"/bank-sites/{bank['site_id']}/unfreeze"), 200)
        ok(kit.api.post(f"/accounts/{bank['id']}/freeze"), 200)
        number = kit.account_body(bank["id"])["number"]
        path = f"/plans/{plan['id']}/withdrawal"
        withdrawal = document(send(lgu_client, path, {"reservation_ids": [held["id"]]}), 422)
    assert withdrawal.one("div", id="form-problem").text == f"Account {number} is frozen."
    assert withdrawal.has("form", id="record-form")
    assert kit.get_plan(plan["id"])["withdrawals"] == []


def test_another_role_may_not_use_the_holder_forms(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        holder_client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/reservations/new"
        fields = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "5000",
            "expires_on": "2027-06-08",
        }
        data = fill(holder_client, path, fields)
        client = signed_in(app.test_client(), lgu["token"])
        assert client.get(path).status_code == 403
        posted = client.post(path, data={**data, **hidden_of(client)})
    assert posted.status_code == 403
    assert kit.rows_naming(bank["id"])["reservations"] == 0


def test_a_holder_form_without_its_secret_writes_nothing(app: Flask, kit: Kit) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        other = kit.account(kit.holder()["id"], 5, "Wright")
        client = signed_in(app.test_client(), bank["holder"]["token"])
        path = f"/accounts/{bank['id']}/transfers/new"
        fields = {
            "to_account_id": other,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": "4000",
        }
        data = fill(client, path, fields)
        del data["csrf_token"]
        assert client.post(path, data=data).status_code == 400
    assert kit.rows_naming(bank["id"])["transfers"] == 0
    assert ok(kit.api.get(f"/accounts/{other}"), 200)["balances"] == []


def test_the_pages_link_to_the_forms(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        kit.mail_summary(lgu, plan, DAY)
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        lgu_client = signed_in(app.test_client(), lgu["token"])
        plan_page = document(lgu_client.get(f"/plans/{plan['id']}"))
        holder_client = signed_in(app.test_client(), bank["holder"]["token"])
        account_page = document(holder_client.get(f"/accounts/{bank['id']}"))
        home = document(lgu_client.get("/"))
    links = {a.attrs["href"] for a in plan_page.one("nav", id="plan-forms").all("a")}
    assert f"/plans/{plan['id']}/decision" in links
    assert f"/plans/{plan['id']}/securities" in links
    assert home.one("p", id="record-plan").one("a").attrs["href"] == "/plans/new"
    links = {a.attrs["href"] for a in account_page.one("nav", id="account-forms").all("a")}
    assert f"/accounts/{bank['id']}/reservations/new" in links
    assert f"/accounts/{bank['id']}/transfers/new" in links


# --- amounts of money, typed in dollars ---------------------------------------------------------


def letter_of_credit(amount: str) -> dict[str, str]:
    return {
        "kind": "letter_of_credit",
        "issuer": "First Bank of Buffalo",
        "amount_cents": amount,
        "irrevocable": "on",
        "issued_on": DAY,
        "expires_on": "2028-06-08",
    }


@pytest.mark.parametrize(
    ("typed", "cents"),
    [
        ("12,000.50", 1_200_050),
        ("$12,000.50", 1_200_050),
        ("12000.5", 1_200_050),
        ("12000", 1_200_000),
        ("12,000", 1_200_000),
    ],
)
def test_a_money_field_takes_dollars_as_people_write_them(
    app: Flask, kit: Kit, typed: str, cents: int
) -> None:
    """Every page shows dollars, so a $12,000 letter of credit is typed as 12,000, not as
    1200000 cents; the API records it in cents."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        form = document(client.get(f"/plans/{plan['id']}/securities"))
        assert form.one("label", for_="f-amount_cents").text.startswith("Amount ($)")
        followed(client, send(client, f"/plans/{plan['id']}/securities", letter_of_credit(typed)))
    (held,) = ok(kit.api.get(f"/securities?plan_id={plan['id']}"), 200)["items"]
    assert held["amount_cents"] == cents


@pytest.mark.parametrize("typed", ["1.234", "1,5", "10,00", "12,000.", "12k", "$-5"])
def test_an_amount_not_written_in_dollars_is_refused_beside_its_field(
    app: Flask, kit: Kit, typed: str
) -> None:
    """A third decimal or a misplaced separator never changes the amount: the form comes back
    with what was typed, and nothing is recorded."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        path = f"/plans/{plan['id']}/securities"
        page = document(send(client, path, letter_of_credit(typed)), 422)
    assert beside(page, "f-amount_cents") == MONEY_WANTED
    assert page.one("input", id="f-amount_cents").attrs["value"] == typed
    assert ok(kit.api.get(f"/securities?plan_id={plan['id']}"), 200)["items"] == []


def test_a_negative_amount_is_refused_in_dollars(app: Flask, kit: Kit) -> None:
    """The schema wants a positive amount; its bound, in cents, is said in dollars."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
        path = f"/plans/{plan['id']}/securities"
        page = document(send(client, path, letter_of_credit("-$12,000")), 422)
    assert beside(page, "f-amount_cents").startswith("Must be greater than or equal to $0.01 ")
    assert page.one("input", id="f-amount_cents").attrs["value"] == "-$12,000"
    assert ok(kit.api.get(f"/securities?plan_id={plan['id']}"), 200)["items"] == []


def test_the_security_form_is_filled_in_with_the_security_required_in_dollars(
    app: Flask, kit: Kit
) -> None:
    """The plan is recorded on its form with the security it requires typed in dollars; the
    security form then offers that amount, in dollars, and records it as shown."""
    lgu = kit.lgu()
    client = signed_in(app.test_client(), lgu["token"])
    fields = {
        **plan_fields("Form plan money"),
        "method": "project_specific",
        "security_required_cents": "$25,000.75",
    }
    with on(DAY):
        recorded = send(client, "/plans/new", fields)
        followed(client, recorded)
        plan_id = recorded.headers["Location"].split("?")[0].rsplit("/", 1)[-1]
        plan = kit.get_plan(plan_id)
        assert plan["security_required_cents"] == 2_500_075
        path = f"/plans/{plan['id']}/securities"
        offered = document(client.get(path)).one("input", id="f-amount_cents")
        assert offered.attrs["value"] == "25,000.75"
        followed(client, send(client, path, letter_of_credit(offered.attrs["value"])))
    (held,) = ok(kit.api.get(f"/securities?plan_id={plan['id']}"), 200)["items"]
    assert held["amount_cents"] == 2_500_075
