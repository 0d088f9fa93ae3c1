"""Copies of a notice owed to members of the public who asked (Subd. 6 (a), 7: "individual
members of the public who request a copy"), recorded as mailed; on both databases.

A notice of application mailed 2026-06-22 is recorded; only then the LGU registers one who
asked on 06-22 (owed a copy of it: ``owed``), one the notice reached (owed nothing) and one who
asked on 06-23 (owed nothing).  The LGU records the copy it mailed: the request owes it no more,
shows the copy under ``copies_mailed``, and the board's compliance report stops counting it.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from bank import plan_acts, plan_cases
from bank.access import SYSTEM
from tests.api.kit import Kit, ok, on, problem, recipients_for
from tests.api.test_plan_notices import ask, decided, full_plan, notice, requester
from tests.api.web_kit import parse, signed_in


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def owing(kit: Kit, lgu: dict) -> dict[str, Any]:
    """The plan, its notice of application mailed 06-22, and the three who asked."""
    plan = full_plan(kit, lgu)
    listed = ask(kit, plan, lgu, "2026-06-18", name="Listed Reader")
    sent = ok(notice(kit, plan, lgu, "2026-06-22", [*recipients_for(plan), requester(listed)]))
    owed = ask(kit, plan, lgu, "2026-06-22", name="Late Registered")
    after = ask(kit, plan, lgu, "2026-06-23", name="After Mailing")
    assert [o["notice_id"] for o in owed["owed"]] == [sent["id"]]
    return {"plan": plan, "notice": sent, "listed": listed, "owed": owed, "after": after}


def mail_copy(kit: Kit, plan: dict, asked_id: str, body: dict, token: str, day: str) -> Any:
    path = f"/plans/{plan['id']}/copy-requests/{asked_id}/copies-mailed"
    with on(day):
        return kit.api.post(path, body, token=token)


def shown_requests(kit: Kit, plan: dict, day: str = "2026-06-26") -> dict[str, dict[str, Any]]:
    with on(day):
        return {c["name"]: c for c in kit.get_plan(plan["id"])["copy_requests"]}


def test_a_copy_mailed_is_owed_no_more_and_shown_as_mailed(kit):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    body = {"notice_id": sent["id"], "mailed_on": "2026-06-24"}
    mailed = ok(mail_copy(kit, plan, asked["id"], body, lgu["token"], "2026-06-25"))
    copy = {
        "notice_id": sent["id"],
        "notice": "application",
        "notice_mailed_on": "2026-06-22",
        "mailed_on": "2026-06-24",
        "application_number": 1,
    }
    assert (mailed["id"], mailed["owed"], mailed["copies_mailed"]) == (asked["id"], [], [copy])
    shown = shown_requests(kit, plan)
    assert shown["Late Registered"] == mailed
    assert (shown["Listed Reader"]["copies_mailed"], shown["After Mailing"]["owed"]) == ([], [])
    # recorded once: again, on another day or the same, is a conflict naming the first
    for day in ("2026-06-24", "2026-06-25"):
        again = {**body, "mailed_on": day}
        refused = problem(
            mail_copy(kit, plan, asked["id"], again, lgu["token"], "2026-06-25"), 409, "conflict"
        )
        assert (refused["copy_request_id"], refused["notice_id"]) == (asked["id"], sent["id"])
        assert refused["copy_mailed_on"] == "2026-06-24"
    assert shown_requests(kit, plan)["Late Registered"] == mailed


def test_the_board_records_a_copy_mailed_too_and_another_lgu_cannot(kit, board_token):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    body = {"notice_id": sent["id"], "mailed_on": "2026-06-24"}
    problem(
        mail_copy(kit, plan, asked["id"], body, kit.lgu()["token"], "2026-06-25"), 404, "not_found"
    )
    problem(
        mail_copy(kit, plan, asked["id"], body, kit.holder()["token"], "2026-06-25"),
        403,
        "forbidden",
    )
    assert shown_requests(kit, plan)["Late Registered"]["copies_mailed"] == []
    ok(mail_copy(kit, plan, asked["id"], body, board_token, "2026-06-25"))


@pytest.mark.parametrize(
    ("mailed_on", "status"),
    [("2026-06-21", 422), ("2026-06-22", 201), ("2026-06-25", 201), ("2026-06-26", 422)],
    ids=str,
)
def test_a_copy_is_mailed_no_earlier_than_the_notice_and_not_in_the_future(kit, mailed_on, status):
    """Recorded on 06-25, of the notice mailed 06-22 to one who asked on 06-22: the day before
    the notice (and the request) is refused, the notice's own day and today are not, tomorrow
    is in the future."""
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    body = {"notice_id": sent["id"], "mailed_on": mailed_on}
    response = mail_copy(kit, plan, asked["id"], body, lgu["token"], "2026-06-25")
    if status == 201:
        assert ok(response)["copies_mailed"][0]["mailed_on"] == mailed_on
        return
    assert list(problem(response, 422, "validation_error")["errors"]) == ["mailed_on"]
    assert shown_requests(kit, plan)["Late Registered"] == asked


def test_a_notice_not_owed_an_unknown_request_and_another_plans_are_refused(kit):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent = world["plan"], world["notice"]
    other = owing(kit, lgu)
    body = {"notice_id": sent["id"], "mailed_on": "2026-06-24"}
    token, day = lgu["token"], "2026-06-25"
    before = shown_requests(kit, plan)
    # the notice reached them, or was mailed before they asked: nothing is owed
    for name in ("listed", "after"):
        refused = problem(
            mail_copy(kit, plan, world[name]["id"], body, token, day), 409, "conflict"
        )
        assert (refused["copy_request_id"], refused["notice_id"]) == (world[name]["id"], sent["id"])
    assert (
        "mailed to them"
        in problem(mail_copy(kit, plan, world["listed"]["id"], body, token, day), 409, "conflict")[
            "detail"
        ]
    )
    assert (
        "mailed before they asked"
        in problem(mail_copy(kit, plan, world["after"]["id"], body, token, day), 409, "conflict")[
            "detail"
        ]
    )
    # no such request, or another plan's (its own plan's address works)
    problem(mail_copy(kit, plan, "creq_nosuchrequest", body, token, day), 404, "not_found")
    problem(mail_copy(kit, plan, other["owed"]["id"], body, token, day), 404, "not_found")
    # a notice the plan did not mail: unknown, or another plan's
    for notice_id in ("ntc_nosuchnotice", other["notice"]["id"]):
        wrong = {**body, "notice_id": notice_id}
        refused = problem(
            mail_copy(kit, plan, world["owed"]["id"], wrong, token, day), 422, "validation_error"
        )
        assert list(refused["errors"]) == ["notice_id"]
    assert shown_requests(kit, plan) == before
    assert shown_requests(kit, other["plan"])["Late Registered"]["copies_mailed"] == []


def test_a_retry_with_the_same_idempotency_key_records_the_copy_once(kit):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    path = f"/plans/{plan['id']}/copy-requests/{asked['id']}/copies-mailed"
    body = {"notice_id": sent["id"], "mailed_on": "2026-06-24"}
    headers = {"Idempotency-Key": "copy-mailed-retry-0001"}
    with on("2026-06-25"):
        first = ok(kit.api.post(path, body, token=lgu["token"], headers=headers))
        second = kit.api.post(path, body, token=lgu["token"], headers=headers)
    assert ok(second) == first
    assert len(shown_requests(kit, plan)["Late Registered"]["copies_mailed"]) == 1


def test_the_compliance_report_counts_the_copies_owed_until_mailed(kit, board_token):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    query = {"from": "2026-06-17", "to": "2026-06-17"}

    def owed_count() -> int:
        with on("2026-06-25"):
            body = ok(kit.api.get("/reports/lgu-compliance", query_string=query), 200)
        (row,) = [item for item in body["items"] if item["lgu_id"] == lgu["id"]]
        return int(row["copies_owed"])

    assert owed_count() == 1
    with on("2026-06-25"):
        board = signed_in(kit.app.test_client(), board_token)
        page = parse(
            board.get("/reports/lgu-compliance?from=2026-06-17&to=2026-06-17").get_data(
                as_text=True
            )
        )
    assert page.one("tr", data_lgu_id=lgu["id"]).one("td", data_field="copies_owed").text == "1"
    ok(
        mail_copy(
            kit,
            plan,
            asked["id"],
            {"notice_id": sent["id"], "mailed_on": "2026-06-24"},
            lgu["token"],
            "2026-06-25",
        )
    )
    assert owed_count() == 0


# --- the plan page ------------------------------------------------------------------------------


def the_copy_form(
    client: Any, plan: dict[str, Any], asked: dict[str, Any], sent: dict[str, Any]
) -> tuple[Any, dict[str, str]]:
    """The plan page's one copy form, for request ``asked`` and notice ``sent``, and the values
    of its inputs."""
    page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    (form,) = page.one("div", id="copy-forms").all("form")
    assert (form.attrs["data-copy-request-id"], form.attrs["data-notice-id"]) == (
        asked["id"],
        sent["id"],
    )
    return form, {i.attrs["name"]: i.attrs.get("value", "") for i in form.all("input")}


def test_the_plan_page_records_a_copy_mailed_and_lists_it(app, kit):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    with on("2026-06-25"):
        client = signed_in(app.test_client(), lgu["token"])
        form, fields = the_copy_form(client, plan, asked, sent)
        assert "Late Registered" in form.text
        # a day before the notice: refused beside the field, nothing recorded
        refused = client.post(form.attrs["action"], data={**fields, "mailed_on": "2026-06-21"})
        assert refused.status_code == 422
        again = parse(refused.get_data(as_text=True))
        assert "2026-06-22" in again.one("div", data_field="mailed_on").text
        assert shown_requests(kit, plan, "2026-06-25")["Late Registered"]["copies_mailed"] == []
        done = client.post(form.attrs["action"], data={**fields, "mailed_on": "2026-06-24"})
        assert done.status_code == 303
        after = parse(client.get(done.headers["Location"]).get_data(as_text=True))
    assert not after.has("div", id="copy-forms") and not after.has("dd", id="copies-owed")
    (listed,) = after.one("dd", id="copies-mailed").all("span")
    assert (listed.attrs["data-copy-request-id"], listed.attrs["data-notice-id"]) == (
        asked["id"],
        sent["id"],
    )
    assert listed.text == (
        "Late Registered, 5 Lake St, Buffalo, MN: a copy of the notice of application mailed "
        "2026-06-22, mailed on 2026-06-24"
    )
    assert shown_requests(kit, plan)["Late Registered"]["copies_mailed"][0]["mailed_on"] == (
        "2026-06-24"
    )


def test_the_copy_forms_are_shown_only_to_those_who_record_them(app, kit, board_token):
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan = world["plan"]
    with on("2026-06-25"):
        board = signed_in(app.test_client(), board_token)
        page = parse(board.get(f"/plans/{plan['id']}").get_data(as_text=True))
        assert len(page.one("div", id="copy-forms").all("form")) == 1
        holder = signed_in(app.test_client(), kit.holder()["token"])
        assert holder.get(f"/plans/{plan['id']}").status_code == 404


def test_a_copy_form_refused_as_recorded_meanwhile_offers_the_copies_owed_now(
    app, kit, monkeypatch
):
    """One who asked on 06-20, registered on 07-28, is owed copies of the notice of
    application (06-22) and of decision (07-27).  The LGU sends the plan page's form for the
    first as another user records that very copy, after the request read the plan and before
    its use case ran: refused (409), the form comes back offering the copy still owed (the
    decision's), not the one just recorded, and sent with it records it."""
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    application = ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    decided(kit, plan, lgu)
    decision = ok(notice(kit, plan, lgu, "2026-07-27", recipients_for(plan), decision=True))
    body = {"name": "Two Owed", "address": "7 Pine St, Buffalo, MN", "requested_on": "2026-06-20"}
    with on("2026-07-28"):
        path = f"/plans/{plan['id']}/copy-requests"
        asked = ok(kit.api.post(path, body, token=lgu["token"]))
    assert [o["notice_id"] for o in asked["owed"]] == [application["id"], decision["id"]]
    read = plan_cases.show
    meanwhile = [application["id"]]

    def read_then_recorded_meanwhile(db: Any, who: Any, plan_id: str, *args: Any) -> Any:
        shown = read(db, who, plan_id, *args)
        if meanwhile:  # the board records the copy just after this request read the plan
            notice_id = meanwhile.pop()
            plan_acts.mail_copy(db, SYSTEM, plan_id, asked["id"], notice_id, date(2026, 7, 28))
        return shown

    with on("2026-07-29"):
        client = signed_in(app.test_client(), lgu["token"])
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
        (form,) = [
            f
            for f in page.one("div", id="copy-forms").all("form")
            if f.attrs["data-notice-id"] == application["id"]
        ]
        fields = {i.attrs["name"]: i.attrs.get("value", "") for i in form.all("input")}
        monkeypatch.setattr(plan_cases, "show", read_then_recorded_meanwhile)
        refused = client.post(form.attrs["action"], data={**fields, "mailed_on": "2026-07-28"})
        monkeypatch.undo()
        assert refused.status_code == 409
        again = parse(refused.get_data(as_text=True))
        menu = again.one("form", id="record-form").one("select", name="notice_id")
        assert [o.attrs["value"] for o in menu.all("option")] == [decision["id"]]
        assert "Notice of decision mailed 2026-07-27" in menu.text
        sent = {
            i.attrs["name"]: i.attrs["value"]
            for i in again.one("form", id="record-form").all("input", type="hidden")
        }
        done = client.post(
            form.attrs["action"],
            data={**sent, "notice_id": decision["id"], "mailed_on": "2026-07-29"},
        )
        assert done.status_code == 303
    copies = shown_requests(kit, plan, "2026-07-29")["Two Owed"]
    assert copies["owed"] == []
    assert [(c["notice_id"], c["mailed_on"]) for c in copies["copies_mailed"]] == [
        (application["id"], "2026-07-28"),
        (decision["id"], "2026-07-29"),
    ]
