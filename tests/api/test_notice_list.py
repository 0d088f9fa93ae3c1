"""``GET /plans/{id}/notices``: every notice a plan mailed (Subd. 6, 7), an earlier application's
too, with its recipients and where it is printed; and the copies an earlier application's
notices still owe the members of the public who asked; on both databases.

The plan (``renoticed``): application 1 noticed 06-22 (to Pat Public, who asked 06-18), decided
07-24 and its decision noticed 07-27; revised as new on 08-12 (application 2) and noticed again
on 08-13.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any

import pytest

from api.listing_csv import NOTICE_FIELDS
from bank.notice_document import ROLE_LABELS
from bank.registry import SEALED_TABLES
from ledger import store
from tests.api.kit import Kit, decision_body, ok, on, problem, recipients_for
from tests.api.set_once_kit import behind_the_triggers
from tests.api.test_copies_mailed import the_copy_form
from tests.api.test_plan_notices import ask, full_plan, notice
from tests.api.test_web_documents import PAT, renoticed
from tests.api.web_kit import parse, signed_in


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def listed(kit: Kit, plan_id: str, token: str | None = None, **kw: Any) -> Any:
    with on("2026-08-14"):
        return kit.api.get(f"/plans/{plan_id}/notices", token=token, **kw)


def shown(recipients: list[dict[str, str]]) -> list[dict[str, str]]:
    """The recipients as the list (and the printed notice) shows them: with their role's words."""
    return [{**r, "role_label": ROLE_LABELS[r["role"]]} for r in recipients]


def test_the_list_shows_every_notice_of_each_application_with_recipients_and_links(
    app, kit
) -> None:
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    ids = [plan["first_notice"], plan["first_decision_notice"], plan["second_notice"]]
    items = ok(listed(kit, plan["id"], lgu["token"]), 200)["items"]
    assert [
        (n["id"], n["notice"], n["kind"], n["application_number"], n["mailed_on"], n["current"])
        for n in items
    ] == [
        (ids[0], "application", "full", 1, "2026-06-22", False),
        (ids[1], "decision", "summary", 1, "2026-07-27", False),
        (ids[2], "application", "full", 2, "2026-08-13", True),
    ]
    everyone = shown([*recipients_for(plan), PAT])
    assert [n["recipients"] for n in items] == [everyone] * 3
    # ``current`` are the plan's own ``notice`` (its current application has no decision yet)
    with on("2026-08-14"):
        now = kit.get_plan(plan["id"], token=lgu["token"])
    assert (now["notice"]["id"], now["decision_notice"]) == (ids[2], None)
    # each link prints the notice as mailed: the API's document (HTML, PDF) and the site's page
    client = signed_in(app.test_client(), lgu["token"])
    for item in items:
        links = item["links"]
        assert links == {
            "document": f"/api/v1/plans/{plan['id']}/notices/{item['id']}",
            "pdf": f"/api/v1/plans/{plan['id']}/notices/{item['id']}?format=pdf",
            "page": f"/plans/{plan['id']}/notices/{item['id']}",
        }
        with on("2026-08-14"):
            document = kit.api.get(links["document"].removeprefix("/api/v1"), token=lgu["token"])
            pdf = kit.api.get(links["pdf"].removeprefix("/api/v1"), token=lgu["token"])
            page = client.get(links["page"])
        assert (document.status_code, document.mimetype) == (200, "text/html")
        assert (pdf.status_code, pdf.mimetype) == (200, "application/pdf")
        assert page.status_code == 200
        # the recipients as the printed notice lists them
        printed = document.get_data(as_text=True)
        assert all(r["name"] in printed and r["role_label"] in printed for r in everyone)


def test_the_list_is_the_plans_to_see_the_board_and_its_lgu(kit) -> None:
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    assert len(ok(listed(kit, plan["id"]), 200)["items"]) == 3  # the board
    problem(listed(kit, plan["id"], kit.lgu()["token"]), 404, "not_found")
    problem(listed(kit, plan["id"], kit.holder()["token"]), 403, "forbidden")
    problem(listed(kit, "plan_nosuchplan"), 404, "not_found")


def test_a_plan_that_mailed_nothing_lists_no_notice(kit) -> None:
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    assert ok(listed(kit, plan["id"], lgu["token"]), 200) == {"items": []}


def test_the_list_is_offered_as_csv(kit) -> None:
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    json_items = ok(listed(kit, plan["id"], lgu["token"]), 200)["items"]
    for asked in ({"query_string": {"format": "csv"}}, {"headers": {"Accept": "text/csv"}}):
        response = listed(kit, plan["id"], lgu["token"], **asked)
        assert (response.status_code, response.mimetype) == (200, "text/csv")
        assert f'filename="notices-{plan["id"]}.csv"' in response.headers["Content-Disposition"]
        text = response.get_data(as_text=True)
        assert text.splitlines()[0] == ",".join(NOTICE_FIELDS)
        rows = list(csv.DictReader(io.StringIO(text)))
        assert [
            (r["id"], r["notice"], r["application_number"], r["mailed_on"], r["current"])
            for r in rows
        ] == [
            (n["id"], n["notice"], str(n["application_number"]), n["mailed_on"], c)
            for n, c in zip(json_items, ("false", "false", "true"), strict=True)
        ]
        assert [json.loads(r["recipients"]) for r in rows] == [n["recipients"] for n in json_items]


# --- the copies an earlier application's notices owe ---------------------------------------------


def superseded_owing(kit: Kit, lgu: dict[str, str]) -> dict[str, Any]:
    """Application 1 noticed 06-22 and its decision 07-27, both to Pat Public; the LGU registers
    on 07-28 one who asked on 07-27 (the decision notice's day: owed it, Subd. 7); the approval
    is final and a revision counting as new supersedes the application on 08-12."""
    plan = full_plan(kit, lgu)
    pat = ask(kit, plan, lgu, "2026-06-18", name="Pat Public")
    everyone = [*recipients_for(plan), PAT]
    ok(notice(kit, plan, lgu, "2026-06-22", everyone))
    with on("2026-07-24"):
        path = f"/plans/{plan['id']}/decision"
        ok(kit.api.post(path, decision_body("approved", "2026-07-24"), token=lgu["token"]))
    decision = ok(notice(kit, plan, lgu, "2026-07-27", everyone, decision=True))
    with on("2026-07-28"):
        body = {"name": "Late Registered", "address": "9 Elm St", "requested_on": "2026-07-27"}
        late = ok(kit.api.post(f"/plans/{plan['id']}/copy-requests", body, token=lgu["token"]))
    assert [o["notice_id"] for o in late["owed"]] == [decision["id"]]
    revision = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-08-12"}
    with on("2026-08-12"):
        path = f"/plans/{plan['id']}/revisions"
        assert ok(kit.api.post(path, revision, token=lgu["token"]))["application_number"] == 2
    return {"plan": plan, "pat": pat, "late": late, "decision": decision}


def owed_by_name(kit: Kit, plan: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    with on("2026-08-13"):
        return {c["name"]: c["owed"] for c in kit.get_plan(plan["id"])["copy_requests"]}


def compliance_owed(kit: Kit, lgu: dict[str, str]) -> int:
    query = {"from": "2026-06-17", "to": "2026-06-17"}
    with on("2026-08-13"):
        body = ok(kit.api.get("/reports/lgu-compliance", query_string=query), 200)
    (row,) = [item for item in body["items"] if item["lgu_id"] == lgu["id"]]
    return int(row["copies_owed"])


def test_a_copy_of_a_superseded_applications_notice_stays_owed_until_mailed(kit) -> None:
    """Subd. 7 required the notice of decision mailed to them on 07-27; the revision of 08-12
    starts a new application but does not unsend that notice: the copy stays owed, on the plan
    and in the compliance report, until the LGU records it mailed."""
    lgu = kit.lgu()
    world = superseded_owing(kit, lgu)
    plan, late, decision = world["plan"], world["late"], world["decision"]
    owed = owed_by_name(kit, plan)
    assert owed["Pat Public"] == []
    assert owed["Late Registered"] == [
        {
            "notice_id": decision["id"],
            "notice": "decision",
            "mailed_on": "2026-07-27",
            "application_number": 1,
            "detail": (
                "asked for a copy on 2026-07-27: the notice of decision mailed on 2026-07-27 "
                "for application 1, which a revision counting as new superseded, was not "
                "mailed to them (Subd. 7); a copy is owed"
            ),
        }
    ]
    assert compliance_owed(kit, lgu) == 1
    # the new application's notice, mailed to them, leaves the earlier one owed
    late_recipient = {"name": "Late Registered", "address": "9 Elm St", "role": "public_requester"}
    ok(notice(kit, plan, lgu, "2026-08-13", [*recipients_for(plan), PAT, late_recipient]))
    assert [o["notice_id"] for o in owed_by_name(kit, plan)["Late Registered"]] == [decision["id"]]
    path = f"/plans/{plan['id']}/copy-requests/{late['id']}/copies-mailed"
    with on("2026-08-13"):
        body = {"notice_id": decision["id"], "mailed_on": "2026-08-13"}
        mailed = ok(kit.api.post(path, body, token=lgu["token"]))
    assert mailed["owed"] == []
    # named as ``owed`` named it: the application it was mailed for, not the plan's current
    assert mailed["copies_mailed"] == [
        {
            "notice_id": decision["id"],
            "notice": "decision",
            "notice_mailed_on": "2026-07-27",
            "mailed_on": "2026-08-13",
            "application_number": 1,
        }
    ]
    with on("2026-08-13"):
        shown = {c["name"]: c for c in kit.get_plan(plan["id"])["copy_requests"]}
    assert shown["Late Registered"]["copies_mailed"] == mailed["copies_mailed"]
    assert owed_by_name(kit, plan)["Late Registered"] == []
    assert compliance_owed(kit, lgu) == 0


def test_the_plan_page_offers_the_form_for_a_superseded_applications_copy(app, kit) -> None:
    lgu = kit.lgu()
    world = superseded_owing(kit, lgu)
    plan, late, decision = world["plan"], world["late"], world["decision"]
    with on("2026-08-13"):
        client = signed_in(app.test_client(), lgu["token"])
        form, fields = the_copy_form(client, plan, late, decision)
        assert "a copy of the notice of decision mailed 2026-07-27, of application 1." in (
            form.text
        )
        done = client.post(form.attrs["action"], data={**fields, "mailed_on": "2026-08-13"})
        assert done.status_code == 303
        after = parse(client.get(done.headers["Location"]).get_data(as_text=True))
    assert not after.has("div", id="copy-forms")
    (copy,) = after.one("dd", id="copies-mailed").all("span")
    assert copy.attrs["data-notice-id"] == decision["id"]
    assert copy.text == (
        "Late Registered, 9 Elm St: a copy of the notice of decision mailed 2026-07-27, of "
        "application 1, mailed on 2026-08-13"
    )


# --- a notice recorded before the service kept notice documents ---------------------------------


def document_not_kept(app, notice_id: str) -> None:
    """The notice as a database from before notice documents were kept (migration 0017) holds
    it: its row and its recipients, no document, and sealed so (as migration 0030 seals such a
    row): the row is sealed, so this is done behind its triggers, its seal with it."""
    engine = app.extensions["wetbank.db"].engine
    (table,) = (t for t in SEALED_TABLES if t.name == "plan_notices")
    with engine.connect() as connection:
        content = store.of(connection).ddl.sealed_content(table.columns, "t")
    statement = "UPDATE plan_notices SET document = NULL WHERE id = :id"
    behind_the_triggers(engine, "plan_notices", statement, id=notice_id)
    behind_the_triggers(
        engine,
        "ledger_row_seals",
        f"""UPDATE ledger_row_seals SET content = (SELECT {content} FROM plan_notices AS t
        WHERE t.id = :id) WHERE table_name = 'plan_notices' AND row_id = :id""",
        id=notice_id,
    )


def test_a_notice_recorded_before_documents_were_kept_is_listed_as_recorded(app, kit) -> None:
    """Listed like any other (JSON and CSV), with its recipients as recorded, and
    ``document_kept`` false; the notices whose documents were kept say true."""
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    document_not_kept(app, plan["first_notice"])
    items = ok(listed(kit, plan["id"], lgu["token"]), 200)["items"]
    assert [(n["id"], n["document_kept"]) for n in items] == [
        (plan["first_notice"], False),
        (plan["first_decision_notice"], True),
        (plan["second_notice"], True),
    ]
    first = items[0]
    assert (first["notice"], first["kind"], first["application_number"], first["mailed_on"]) == (
        "application",
        "full",
        1,
        "2026-06-22",
    )
    assert first["recipients"] == shown([*recipients_for(plan), PAT])
    response = listed(kit, plan["id"], lgu["token"], query_string={"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))
    assert [(r["id"], r["document_kept"]) for r in rows] == [
        (plan["first_notice"], "false"),
        (plan["first_decision_notice"], "true"),
        (plan["second_notice"], "true"),
    ]


def test_a_notice_recorded_before_documents_were_kept_prints_what_its_row_records(app, kit) -> None:
    """Its date, kind, application and recipients, and that the rest was not kept: never the
    plan as it is now (application 2, 40,000 sq ft, its own comment period) as if mailed."""
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    document_not_kept(app, plan["first_notice"])
    client = signed_in(app.test_client(), lgu["token"])
    path = f"/plans/{plan['id']}/notices/{plan['first_notice']}"
    with on("2026-08-14"):
        api = kit.api.get(path, token=lgu["token"])
        pdf = kit.api.get(path, token=lgu["token"], query_string={"format": "pdf"})
        page = client.get(path)
    assert (api.status_code, pdf.status_code, page.status_code) == (200, 200, 200)
    printed = parse(api.get_data(as_text=True)).one("main")
    on_page = parse(page.get_data(as_text=True)).one("article", id="notice")
    everyone = [*recipients_for(plan), PAT]
    for doc in (printed, on_page):
        assert doc.one(id="mailed-on").text == "June 22, 2026"
        assert [h.text for h in doc.all("h2")] == ["Not kept", "Mailed to"]
        assert "recorded before the service kept the documents of the notices it mailed" in (
            doc.text
        )
        assert "the notice of application (full notice) for application 1" in doc.text
        assert [li.attrs["data-role"] for li in doc.one("ul", id="recipients").all("li")] == [
            r["role"] for r in everyone
        ]
        assert all(r["name"] in doc.text for r in everyone)
        # nothing of the plan as it is now
        for now in ("40,000", "square feet", "Anyone may comment", plan["project"]):
            assert now not in doc.text, now
    assert pdf.mimetype == "application/pdf"
    assert b"Not kept" in pdf.data and b"40,000" not in pdf.data
    # the plan page lists it so
    with on("2026-08-14"):
        plan_page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    notes = {
        li.one("a").attrs["data-notice-id"]: li.has(data_field="document-not-kept")
        for li in plan_page.one("ul", id="notices").all("li")
    }
    assert notes == {
        plan["first_notice"]: True,
        plan["first_decision_notice"]: False,
        plan["second_notice"]: False,
    }
    # the notices whose documents were kept print as mailed, as before
    with on("2026-08-14"):
        kept = kit.api.get(f"/plans/{plan['id']}/notices/{plan['second_notice']}")
    assert "40,000 square feet" in kept.get_data(as_text=True)


def test_a_notice_not_kept_names_the_lgu_as_it_was_when_recorded(app, kit) -> None:
    """The LGU's name, corrected since the notice was recorded, is printed as it was then (the
    correction's ``from``), as a kept document prints the name it was mailed under."""
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    before = ok(kit.api.get(f"/lgus/{lgu['id']}"), 200)["name"]
    document_not_kept(app, plan["first_notice"])
    ok(kit.api.patch(f"/lgus/{lgu['id']}", {"name": "Renamed County", "reason": "typo"}), 200)
    with on("2026-08-14"):
        printed = kit.api.get(f"/plans/{plan['id']}/notices/{plan['first_notice']}")
        kept = kit.api.get(f"/plans/{plan['id']}/notices/{plan['second_notice']}")
    for document in (printed, kept):
        text = parse(document.get_data(as_text=True)).one("main").text
        assert before in text and "Renamed County" not in text
