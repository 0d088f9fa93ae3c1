"""Guarantees of a project-specific replacement (Subd. 3; docs/domain.md §5), on both databases.

The plan states the security the LGU requires; held, irrevocable, unexpired securities must add
up to it, what was drawn not counted.  A draw needs an approved plan, and a security drawn in
part stays held with its cumulative ``drawn_cents`` until all of it is drawn; the rest can be
released.  The USD ledger moves exactly what was drawn.
"""

from __future__ import annotations

import csv as csv_module
import io
from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, ok, on, problem
from tests.api.test_money import draw, hold, journal, made_final, release
from tests.api.web_kit import parse, signed_in

REQUIRED = 2_500_000


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def project_plan(kit: Kit, lgu: dict, *, decide: str | None = "approved", **extra: Any) -> dict:
    """A 9,000 sq ft project-specific plan received 2026-06-01, its summary mailed (Subd. 6 (b))
    and decided that day unless not."""
    with on("2026-06-01"):
        plan = kit.plan(
            lgu, received_on="2026-06-01", area_sqft=9_000, method="project_specific", **extra
        )
        if decide:
            kit.mail_summary(lgu, plan, "2026-06-01")
            path = f"/plans/{plan['id']}/decision"
            plan = ok(kit.api.post(path, decision_body(decide, "2026-06-01"), token=lgu["token"]))
    return dict(plan)


def blockers(kit: Kit, plan: dict, day: str) -> list[dict[str, str]]:
    with on(day):
        return list(kit.get_plan(plan["id"])["impact_blockers"])


# --- the requirement --------------------------------------------------------------------------


def test_a_project_specific_plan_states_the_security_the_lgu_requires(kit):
    lgu = kit.lgu()
    with on("2026-06-01"):
        body = kit.plan_body(received_on="2026-06-01", area_sqft=9_000, method="project_specific")
        del body["security_required_cents"]
        refused = problem(kit.api.post("/plans", body, token=lgu["token"]), 422, "validation_error")
        assert "security_required_cents" in refused["errors"]
        body["security_required_cents"] = 0
        problem(kit.api.post("/plans", body, token=lgu["token"]), 422, "validation_error")
        body["security_required_cents"] = 1
        assert ok(kit.api.post("/plans", body, token=lgu["token"]))["security_required_cents"] == 1


@pytest.mark.parametrize("method", ["bank_credits", "monetary_payment"])
def test_only_a_project_specific_plan_takes_a_security_requirement(kit, method):
    lgu = kit.lgu()
    with on("2026-06-01"):
        body = kit.plan_body(
            received_on="2026-06-01",
            area_sqft=9_000,
            method=method,
            in_lieu_amount_due_cents=1_000,
            security_required_cents=REQUIRED,
        )
        refused = problem(kit.api.post("/plans", body, token=lgu["token"]), 422, "validation_error")
    assert "security_required_cents" in refused["errors"]


@pytest.mark.parametrize("method", ["bank_credits", "monetary_payment"])
def test_a_security_is_refused_for_a_plan_not_replaced_project_specifically(kit, method):
    """Subd. 3's security guarantees "the successful completion of the replacement": credits
    withdrawn from the bank, or an in-lieu payment, is a completed replacement with nothing
    left to guarantee.  A security offered for such a plan is ``not_eligible`` (naming the
    method) and nothing is held; the same security on a project-specific plan is taken."""
    lgu = kit.lgu()
    with on("2026-06-01"):
        body = kit.plan_body(
            received_on="2026-06-01",
            area_sqft=9_000,
            method=method,
            **({"in_lieu_amount_due_cents": 1_000} if method == "monetary_payment" else {}),
        )
        plan = ok(kit.api.post("/plans", body, token=lgu["token"]))
        held_before = len(journal(kit.api, kind="security_held"))
    refused = problem(hold(kit, plan, token=lgu["token"]), 422, "not_eligible")
    assert refused["method"] == method
    assert "project-specific" in refused["detail"]
    with on("2026-06-01"):
        listed = ok(kit.api.get("/securities", query_string={"plan_id": plan["id"]}), 200)
        assert listed["items"] == []
        assert len(journal(kit.api, kind="security_held")) == held_before
    ok(hold(kit, project_plan(kit, lgu, decide=None), token=lgu["token"]))


def test_securities_one_cent_short_block_the_impact_and_exactly_enough_let_it_proceed(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    assert plan["security_required_cents"] == REQUIRED
    ok(hold(kit, plan, token=lgu["token"], amount=1_500_000))
    short = ok(hold(kit, plan, token=lgu["token"], amount=999_999))
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    (blocker,) = blockers(kit, plan, final_on)
    assert blocker["code"] == "replacement_not_guaranteed"
    assert "guarantee $24,999.99 of the $25,000.00 required" in blocker["detail"]

    ok(release(kit, short, final_on, token=lgu["token"]))
    ok(hold(kit, plan, token=lgu["token"], amount=1_000_000, issued_on=final_on))
    with on(final_on):
        exact = kit.get_plan(plan["id"])
    assert exact["impact_may_proceed"] is True
    assert exact["impact_blockers"] == []


def test_revocable_expired_or_released_securities_do_not_count(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    ok(hold(kit, plan, kind="cash", irrevocable=False, amount=REQUIRED))
    ok(hold(kit, plan, amount=REQUIRED, expires_on="2026-06-10"))
    gone = ok(hold(kit, plan, amount=REQUIRED))
    final_on = made_final(kit, lgu, plan, "2026-06-01")
    ok(release(kit, gone, final_on))
    assert [b["code"] for b in blockers(kit, plan, final_on)] == ["replacement_not_guaranteed"]


# --- draws ------------------------------------------------------------------------------------


@pytest.mark.parametrize("decide", [None, "denied"])
def test_a_draw_needs_an_approved_plan(kit, decide):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu, decide=decide)
    security = ok(hold(kit, plan, token=lgu["token"]))
    body = problem(draw(kit, security, "2026-06-02", 1_000, token=lgu["token"]), 409, "conflict")
    assert body.get("outcome") == decide
    with on("2026-06-02"):
        unchanged = ok(kit.api.get(f"/securities/{security['id']}"), 200)
    assert (unchanged["status"], unchanged["drawn_cents"], unchanged["draws"]) == ("held", None, [])


def test_two_partial_draws_leave_the_security_held_then_the_rest_is_released(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, token=lgu["token"], amount=REQUIRED))
    assert (security["undrawn_cents"], security["draws"]) == (REQUIRED, [])

    first = ok(draw(kit, security, "2026-07-01", 1_000_000, token=lgu["token"]))
    assert (first["status"], first["drawn_cents"], first["undrawn_cents"]) == (
        "held",
        1_000_000,
        1_500_000,
    )
    second = ok(draw(kit, security, "2026-07-15", 600_000, token=lgu["token"]))
    assert (second["status"], second["drawn_on"], second["drawn_cents"]) == (
        "held",
        "2026-07-15",
        1_600_000,
    )
    assert [(d["drawn_on"], d["amount_cents"]) for d in second["draws"]] == [
        ("2026-07-01", 1_000_000),
        ("2026-07-15", 600_000),
    ]
    # a draw is at most what is left
    over = problem(draw(kit, security, "2026-07-16", 900_001), 422, "validation_error")
    assert over["errors"]["amount_cents"] == ["at most $9,000.00"]
    # what is left no longer covers the requirement
    assert [b["code"] for b in blockers(kit, plan, "2026-07-16")] == [
        "decision_not_final",
        "replacement_not_guaranteed",
    ]

    released = ok(release(kit, security, "2026-07-20", token=lgu["token"]))
    assert (released["status"], released["drawn_cents"], released["released_on"]) == (
        "released",
        1_600_000,
        "2026-07-20",
    )
    problem(draw(kit, security, "2026-07-21", 1), 409, "conflict")
    problem(release(kit, security, "2026-07-21"), 409, "conflict")

    # the ledger posted exactly the two draws and released the rest
    with on("2026-07-21"):
        drawn = {t["transaction_id"]: t for t in journal(kit.api, kind="security_drawn")}
        released_tx = journal(kit.api, kind="security_released")
    for item in second["draws"]:
        posted = [e for e in drawn[item["transaction_id"]]["entries"] if e["phase"] == "posted"]
        assert sorted(e["amount"] for e in posted) == [-item["amount_cents"], item["amount_cents"]]
    assert any(
        e["phase"] == "release" and abs(e["amount"]) == 900_000
        for t in released_tx
        for e in t["entries"]
    )


def test_a_draw_or_release_is_dated_on_or_after_the_issue_and_the_last_draw(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, token=lgu["token"], amount=REQUIRED, issued_on="2026-06-10"))
    path = f"/securities/{security['id']}"
    with on("2026-07-20"):

        def draw_on(day: str) -> Any:
            return kit.api.post(f"{path}/draw", {"drawn_on": day, "amount_cents": 1_000})

        def release_on(day: str) -> Any:
            return kit.api.post(f"{path}/release", {"released_on": day, "reason": "replaced"})

        problem(draw_on("2026-06-09"), 422, "validation_error")  # before it was issued
        problem(release_on("2026-06-09"), 422, "validation_error")
        ok(draw_on("2026-07-15"))
        problem(draw_on("2026-07-14"), 422, "validation_error")  # before the last draw
        problem(release_on("2026-07-14"), 422, "validation_error")
        shown = ok(release_on("2026-07-15"))
    assert (shown["status"], shown["drawn_on"], shown["drawn_cents"]) == (
        "released",
        "2026-07-15",
        1_000,
    )


def test_drawing_all_that_is_left_makes_the_security_drawn(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, amount=1_000))
    ok(draw(kit, security, "2026-07-01", 400))
    drawn = ok(draw(kit, security, "2026-07-01", 600))
    assert (drawn["status"], drawn["drawn_cents"], drawn["undrawn_cents"]) == ("drawn", 1_000, 0)
    problem(release(kit, security, "2026-07-02"), 409, "conflict")


def test_what_is_left_of_a_security_still_expires_at_the_end_of_its_expiry_date(kit):
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, amount=10_000, expires_on="2026-07-31"))
    ok(draw(kit, security, "2026-07-01", 4_000))
    with on("2026-07-31"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200)["status"] == "held"
    with on("2026-08-01"):
        assert ok(kit.api.get(f"/securities/{security['id']}"), 200)["status"] == "expired"
    problem(draw(kit, security, "2026-08-01", 1_000), 409, "conflict")
    problem(release(kit, security, "2026-08-01"), 409, "conflict")


def test_partial_draws_and_a_release_keep_the_ledger_balanced_and_verified(fresh):
    kit = fresh
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, amount=REQUIRED))
    ok(draw(kit, security, "2026-07-01", 1_000_000))
    ok(draw(kit, security, "2026-07-02", 500_000))
    ok(release(kit, security, "2026-07-03"))
    with on("2026-07-04"):
        trial = ok(kit.api.get("/audit/trial-balance"), 200)
        verified = ok(kit.api.get("/audit/verify"), 200)
    (usd,) = [row for row in trial["assets"] if row["asset"] == "USD"]
    assert usd["balanced"] is True and usd["debits"] == usd["credits"] == 1_500_000
    assert verified["ok"] is True, verified["first_broken"]


def test_a_draw_is_dated_on_or_after_the_day_the_plan_was_approved(kit):
    """Received and its security issued 06-01, approved 06-10: a draw dated 06-09 would stand
    before the approval it is drawn for (422, nothing drawn); dated 06-10 it is taken."""
    lgu = kit.lgu()
    plan = project_plan(kit, lgu, decide=None)
    security = ok(hold(kit, plan, token=lgu["token"], issued_on="2026-06-01"))
    with on("2026-06-10"):
        kit.mail_summary(lgu, plan, "2026-06-10")
        path = f"/plans/{plan['id']}/decision"
        ok(kit.api.post(path, decision_body("approved", "2026-06-10"), token=lgu["token"]))
    path = f"/securities/{security['id']}"
    with on("2026-06-12"):  # recorded after the approval, dated before it
        body = {"drawn_on": "2026-06-09", "amount_cents": 1_000}
        refused = problem(
            kit.api.post(f"{path}/draw", body, token=lgu["token"]), 422, "validation_error"
        )
        assert refused["errors"] == {"drawn_on": ["before 2026-06-10"]}
        assert ok(kit.api.get(path), 200)["draws"] == []
        body = {"drawn_on": "2026-06-10", "amount_cents": 1_000}
        drawn = ok(kit.api.post(f"{path}/draw", body, token=lgu["token"]))
    assert (drawn["drawn_on"], drawn["drawn_cents"]) == ("2026-06-10", 1_000)


def test_a_draw_is_taken_from_the_day_the_resolution_approved_the_plan(kit):
    """Approved by a resolution adopted 06-10, recorded as decided 06-15: the resolution is the
    approval (Subd. 1 (b)), so a draw dated 06-12 is taken; 06-09, before it, is not."""
    lgu = kit.lgu()
    plan = project_plan(kit, lgu, decide=None)
    security = ok(hold(kit, plan, token=lgu["token"], issued_on="2026-06-01"))
    with on("2026-06-15"):
        kit.mail_summary(lgu, plan, "2026-06-08")
        body = decision_body("approved", "2026-06-15")
        body["resolution"]["adopted_on"] = "2026-06-10"
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    path = f"/securities/{security['id']}/draw"
    with on("2026-06-16"):
        early = {"drawn_on": "2026-06-09", "amount_cents": 1_000}
        refused = problem(kit.api.post(path, early, token=lgu["token"]), 422, "validation_error")
        assert refused["errors"] == {"drawn_on": ["before 2026-06-10"]}
        body = {"drawn_on": "2026-06-12", "amount_cents": 1_000}
        drawn = ok(kit.api.post(path, body, token=lgu["token"]))
    assert (drawn["drawn_on"], drawn["drawn_cents"]) == ("2026-06-12", 1_000)


@pytest.mark.parametrize("ended", ["released", "expired"])
def test_a_security_no_longer_held_has_nothing_left_to_draw(kit, ended):
    """$10,000 drawn of $25,000, then the rest released 07-01, or the security expired 07-01:
    what is left to draw is 0 in the API and on the plan's page (the $15,000 is gone, not
    available), while what was drawn stays on record."""
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    security = ok(hold(kit, plan, token=lgu["token"], amount=REQUIRED, expires_on="2026-07-01"))
    ok(draw(kit, security, "2026-06-10", 1_000_000, token=lgu["token"]))
    day = "2026-07-02"
    if ended == "released":
        ok(release(kit, security, "2026-07-01", token=lgu["token"]))
    with on(day):
        shown = ok(kit.api.get(f"/securities/{security['id']}"), 200)
        listed = ok(kit.api.get("/securities", query_string={"plan_id": plan["id"]}), 200)
        csv = kit.api.get("/securities", query_string={"plan_id": plan["id"], "format": "csv"})
        csv_text = csv.get_data(as_text=True)  # streamed: read before the next request
        client = signed_in(kit.app.test_client(), lgu["token"])
        plan_page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
        list_page = parse(client.get("/securities").get_data(as_text=True))
    assert (shown["status"], shown["drawn_cents"], shown["undrawn_cents"]) == (ended, 1_000_000, 0)
    # the pages say what is left to draw, never an "Undrawn" sum that reads as still available
    for table in (plan_page.one("table", id="securities"), list_page.one("table")):
        headings = [th.text for th in table.one("thead").all("th")]
        assert "Left to draw" in headings and "Undrawn" not in headings
        (row,) = table.one("tbody").all("tr")
        assert row.one("td", data_field="left_to_draw").text == "$0.00"
    assert [s["undrawn_cents"] for s in listed["items"]] == [0]
    rows = list(csv_module.DictReader(io.StringIO(csv_text)))
    assert [r["undrawn_cents"] for r in rows] == ["0"]
