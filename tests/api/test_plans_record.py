"""Issue 24, part A: the decision's record (Subd. 1 (b); Minn. Stat. 15.99 subd. 2), the
technical evaluation panel (Subd. 2), peatlands (Subd. 1 (a)) and holidays by the year they took
effect (Minn. Stat. 645.44), each on both sides of its boundary, on both databases.

A refused request changes nothing: each refusal below is followed by a read of the plan."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.web_kit import parse, signed_in

DAY = "2026-06-17"
NEXT = "2026-06-18"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def small_plan(kit: Kit, lgu: dict, **kw: Any) -> dict:
    """9,000 sq ft received on ``DAY`` and its summary mailed that day (Subd. 6 (b)): no
    comment period, so it may be decided at once."""
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000, **kw)
        kit.mail_summary(lgu, plan, DAY)
        return plan


def decide(kit: Kit, plan: dict, lgu: dict, body: dict, day: str = DAY):
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"])


def undecided(kit: Kit, plan: dict) -> None:
    with on(NEXT):
        shown = kit.get_plan(plan["id"])
    assert shown["decision"] is None and shown["outcome"] is None


# --- item 1: the decision's record ---------------------------------------------------------------


def test_an_approval_without_a_resolution_is_422_and_with_one_201(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    body = problem(
        decide(kit, plan, lgu, {"outcome": "approved", "decided_on": DAY}), 422, "validation_error"
    )
    assert "Subd. 1 (b)" in body["detail"] and "resolution" in body["errors"]
    undecided(kit, plan)
    resolution = {"number": "2026-117", "adopted_on": DAY}
    approved = ok(
        decide(kit, plan, lgu, {"outcome": "approved", "decided_on": DAY, "resolution": resolution})
    )
    assert approved["outcome"] == "approved"
    assert approved["decision"]["resolution"] == resolution
    assert approved["decision"]["reasons"] is None
    assert kit.get_plan(plan["id"])["decision"]["resolution"] == resolution


@pytest.mark.parametrize(
    ("adopted_on", "status"),
    [
        ("2026-06-16", 422),  # before the application was received
        ("2026-06-17", 201),  # the day it was received
        ("2026-06-18", 201),  # decided_on itself
        ("2026-06-19", 422),  # after decided_on
    ],
)
def test_the_resolution_is_adopted_between_receipt_and_the_decision(
    kit: Kit, adopted_on: str, status: int
) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    body = {
        "outcome": "approved",
        "decided_on": "2026-06-18",
        "resolution": {"number": "R-7", "adopted_on": adopted_on},
    }
    response = decide(kit, plan, lgu, body, day="2026-06-19")
    if status == 422:
        refused = problem(response, 422, "validation_error")
        assert "adopted_on" in refused["errors"]["resolution"]
        undecided(kit, plan)
    else:
        assert ok(response)["decision"]["resolution"]["adopted_on"] == adopted_on


@pytest.mark.parametrize(
    ("adopted_on", "status"),
    [
        ("2026-08-11", 422),  # the day after the notice
        ("2026-09-09", 422),  # the last day of the comment period
        ("2026-09-10", 201),  # the day after it, decided_on itself
    ],
)
def test_the_resolution_is_adopted_after_the_comment_period_like_the_decision(
    kit: Kit, adopted_on: str, status: int
) -> None:
    """Subd. 1 (b): the plan is approved by the resolution, so the resolution is the approval
    Subd. 8's comment period comes "before": 20,000 sq ft received 2026-08-03, noticed 08-10,
    comments to 09-09; decided_on 09-10 does not make a resolution of 08-11 any later."""
    lgu = kit.lgu()
    with on("2026-08-03"):
        plan = kit.plan(lgu, received_on="2026-08-03", area_sqft=20_000)
    with on("2026-08-10"):
        ok(kit.api.post(f"/plans/{plan['id']}/notices", mailing("2026-08-10"), token=lgu["token"]))
    body = {
        "outcome": "approved",
        "decided_on": "2026-09-10",
        "resolution": {"number": "R1", "adopted_on": adopted_on},
    }
    response = decide(kit, plan, lgu, body, day="2026-09-10")
    if status == 422:
        refused = problem(response, 422, "comment_period_open")
        assert "resolution.adopted_on" in refused["detail"] and "Subd. 8" in refused["detail"]
        assert refused["ends"] == "2026-09-09"
        assert "adopted_on" in refused["errors"]["resolution"]
        undecided(kit, plan)
    else:
        assert ok(response)["decision"]["resolution"]["adopted_on"] == adopted_on


@pytest.mark.parametrize("reasons", [None, "", "   "])
def test_a_denial_without_written_reasons_is_422(kit: Kit, reasons: str | None) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    body: dict[str, Any] = {"outcome": "denied", "decided_on": DAY}
    if reasons is not None:
        body["reasons"] = reasons
    refused = problem(decide(kit, plan, lgu, body), 422, "validation_error")
    assert "reasons" in refused["errors"]
    undecided(kit, plan)


def test_a_denial_with_its_reasons_is_201_and_shows_them_on_the_plan_and_its_page(
    kit: Kit, app: Flask
) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    reasons = "the replacement site lies outside the watershed"
    denied = ok(
        decide(kit, plan, lgu, {"outcome": "denied", "decided_on": DAY, "reasons": reasons})
    )
    assert denied["decision"]["reasons"] == reasons and denied["decision"]["resolution"] is None
    approved_plan = small_plan(kit, lgu)
    body = decision_body("approved", DAY)
    ok(decide(kit, approved_plan, lgu, body))
    with on(NEXT):
        client = signed_in(app.test_client(), lgu["token"])
        denied_page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
        approved_page = parse(client.get(f"/plans/{approved_plan['id']}").get_data(as_text=True))
    assert denied_page.one("dd", id="decision-reasons").text == reasons
    number = body["resolution"]["number"]
    assert approved_page.one("dd", id="decision-resolution").text == (
        f"No. {number}, adopted {DAY}"
    )


# --- item 2: the technical evaluation panel ----------------------------------------------------

MEMBERS = [
    {"name": "Dana Board", "represents": "board"},
    {"name": "Sam Swcd", "represents": "swcd"},
    {"name": "Lee Appointee", "represents": "lgu"},
]


def refer(kit: Kit, plan: dict, lgu: dict, questions: list[str], day: str = DAY):
    body = {"referred_on": day, "questions": questions}
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/tep-referral", body, token=lgu["token"])


def determine(kit: Kit, plan: dict, lgu: dict, members: list[dict], day: str = DAY, **extra: Any):
    body = {
        "inspected_on": day,
        "members": members,
        "determination": "a type 2 wet meadow of 9,000 sq ft; its public value is moderate",
        "recommendation": "approve",
        **extra,
    }
    with on(day):
        return kit.api.post(f"/plans/{plan['id']}/tep-determination", body, token=lgu["token"])


def test_questions_are_referred_once_from_the_four_the_statute_names(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    problem(refer(kit, plan, lgu, []), 422, "validation_error")
    problem(refer(kit, plan, lgu, ["wildlife"]), 422, "validation_error")
    assert kit.get_plan(plan["id"])["tep"] is None
    panel = ok(refer(kit, plan, lgu, ["size", "public_value", "size"]))
    assert panel == {
        "application_number": 1,
        "referred_on": DAY,
        "questions": ["public_value", "size"],  # each once, in the statute's order
        "determination": None,
    }
    problem(refer(kit, plan, lgu, ["type"]), 409, "conflict")
    assert kit.get_plan(plan["id"])["tep"] == panel


@pytest.mark.parametrize(
    "members",
    [
        MEMBERS[:2],  # two members
        [*MEMBERS[:2], {"name": "Other Swcd", "represents": "swcd"}],  # two of one kind
        [*MEMBERS, {"name": "Extra", "represents": "lgu"}],  # four
    ],
    ids=["two members", "no lgu appointee", "four members"],
)
def test_a_panel_not_of_one_member_of_each_kind_is_422(kit: Kit, members: list[dict]) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(refer(kit, plan, lgu, ["type"]))
    refused = problem(determine(kit, plan, lgu, members), 422, "validation_error")
    assert "members" in refused["errors"]
    assert kit.get_plan(plan["id"])["tep"]["determination"] is None


def test_a_decision_before_the_referred_determination_is_409_and_after_it_includes_it(
    kit: Kit, app: Flask
) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(refer(kit, plan, lgu, ["public_value", "location"]))
    refused = problem(decide(kit, plan, lgu, decision_body("approved", DAY)), 409, "conflict")
    assert "Subd. 2" in refused["detail"]
    undecided(kit, plan)
    panel = ok(determine(kit, plan, lgu, MEMBERS, day=NEXT))
    determination = panel["determination"]
    assert determination["members"] == MEMBERS
    assert determination["inspected_on"] == NEXT and determination["recommendation"] == "approve"
    # the decision considers the determination: not dated before the inspection
    problem(
        decide(kit, plan, lgu, decision_body("approved", DAY), day=NEXT), 422, "validation_error"
    )
    approved = ok(
        decide(kit, plan, lgu, decision_body("approved", NEXT, tep_recommendation="approve"), NEXT)
    )
    assert approved["decision"]["tep_determination"] == determination
    assert approved["decision"]["tep_recommendation"] == "approve"  # the old field stays
    assert approved["tep"]["determination"] == determination
    # the panel's part came before the decision
    problem(determine(kit, plan, lgu, MEMBERS, day=NEXT), 409, "conflict")
    problem(refer(kit, plan, lgu, ["type"], day=NEXT), 409, "conflict")
    with on(NEXT):
        client = signed_in(app.test_client(), lgu["token"])
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    shown = page.one("dd", id="tep").text
    assert shown.startswith(f"Questions of public value, location referred {DAY}")
    assert "Dana Board (board), Sam Swcd (SWCD), Lee Appointee (LGU)" in shown
    assert "(recommends: approve)" in shown


@pytest.mark.parametrize(
    ("adopted_on", "status"),
    [(DAY, 422), (NEXT, 201)],  # the day before the inspection, the day of it
)
def test_the_resolution_includes_the_panels_determination_so_follows_its_inspection(
    kit: Kit, adopted_on: str, status: int
) -> None:
    """Subd. 2: the LGU "must consider and include the decision of the technical evaluation
    panel in their approval or denial", and the approval is the resolution (Subd. 1 (b))."""
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(refer(kit, plan, lgu, ["size"]))
    ok(determine(kit, plan, lgu, MEMBERS, day=NEXT))
    later = "2026-06-19"
    body = {
        "outcome": "approved",
        "decided_on": later,
        "resolution": {"number": "R-8", "adopted_on": adopted_on},
    }
    response = decide(kit, plan, lgu, body, day=later)
    if status == 422:
        refused = problem(response, 422, "validation_error")
        assert "resolution.adopted_on" in refused["detail"] and "Subd. 2" in refused["detail"]
        assert "adopted_on" in refused["errors"]["resolution"]
        undecided(kit, plan)
    else:
        assert ok(response)["decision"]["resolution"]["adopted_on"] == adopted_on


def test_without_a_referral_a_decision_needs_no_determination_and_none_is_accepted(
    kit: Kit,
) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    problem(determine(kit, plan, lgu, MEMBERS), 409, "conflict")
    approved = ok(decide(kit, plan, lgu, decision_body("approved", DAY)))
    assert approved["tep"] is None and approved["decision"]["tep_determination"] is None


def test_the_inspection_follows_the_referral_and_is_not_in_the_future(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(refer(kit, plan, lgu, ["size"], day=NEXT))
    with on(NEXT):
        early = {"inspected_on": DAY, "members": MEMBERS, "determination": "x"}
        later = {**early, "inspected_on": "2026-06-19"}
        path = f"/plans/{plan['id']}/tep-determination"
        assert (
            "inspected_on" in problem(kit.api.post(path, early), 422, "validation_error")["errors"]
        )
        problem(kit.api.post(path, later), 422, "validation_error")
        ok(kit.api.post(path, {**early, "inspected_on": NEXT, "recommendation": None}))
        shown = kit.get_plan(plan["id"])
    assert shown["tep"]["determination"]["recommendation"] is None


def test_a_second_determination_is_409(kit: Kit) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    ok(refer(kit, plan, lgu, ["size"]))
    ok(determine(kit, plan, lgu, MEMBERS))
    problem(
        determine(kit, plan, lgu, list(reversed(MEMBERS)), determination="other"), 409, "conflict"
    )


# --- item 3: peatlands ---------------------------------------------------------------------------


def peatland_plan(kit: Kit, lgu: dict) -> dict:
    """``small_plan`` on peatland."""
    with on(DAY):
        body = kit.plan_body(received_on=DAY, area_sqft=9_000)
        body["impact"]["peatland"] = True
        plan = dict(ok(kit.api.post("/plans", body, token=lgu["token"])))
        kit.mail_summary(lgu, plan, DAY)
        return plan


@pytest.mark.parametrize(
    "peatland",
    [
        None,
        {"carbon_balance_considered": True},
        {"carbon_balance_considered": True, "trees_or_shrubs": "  "},
        {"carbon_balance_considered": False, "trees_or_shrubs": "tamarack and black spruce"},
    ],
    ids=["no record", "no planting", "blank planting", "carbon not considered"],
)
def test_a_peatland_approval_without_carbon_and_planting_is_not_eligible(
    kit: Kit, peatland: dict | None
) -> None:
    lgu = kit.lgu()
    plan = peatland_plan(kit, lgu)
    assert plan["impact"]["peatland"] is True
    extra = {} if peatland is None else {"peatland": peatland}
    refused = problem(
        decide(kit, plan, lgu, decision_body("approved", DAY, **extra)), 422, "not_eligible"
    )
    assert "Subd. 1 (a)" in refused["detail"]
    undecided(kit, plan)


def test_a_peatland_approval_with_carbon_and_planting_is_201_and_shows_them(
    kit: Kit, app: Flask
) -> None:
    lgu = kit.lgu()
    plan = peatland_plan(kit, lgu)
    record = {"carbon_balance_considered": True, "trees_or_shrubs": "tamarack and black spruce"}
    approved = ok(decide(kit, plan, lgu, decision_body("approved", DAY, peatland=record)))
    assert approved["decision"]["peatland"] == record
    with on(DAY):
        client = signed_in(app.test_client(), lgu["token"])
        page = parse(client.get(f"/plans/{plan['id']}").get_data(as_text=True))
    assert page.one("dd", id="decision-peatland").text == (
        "Carbon balance considered; planting: tamarack and black spruce"
    )
    # a denial asks for neither
    denied = peatland_plan(kit, lgu)
    assert (
        ok(decide(kit, denied, lgu, decision_body("denied", DAY)))["decision"]["peatland"] is None
    )


def test_an_impact_is_not_on_peatland_unless_said_and_then_takes_no_peatland_record(
    kit: Kit,
) -> None:
    lgu = kit.lgu()
    plan = small_plan(kit, lgu)
    assert plan["impact"]["peatland"] is False
    record = {"carbon_balance_considered": True, "trees_or_shrubs": "willows"}
    refused = problem(
        decide(kit, plan, lgu, decision_body("approved", DAY, peatland=record)),
        422,
        "validation_error",
    )
    assert "peatland" in refused["errors"]
    undecided(kit, plan)


# --- item 9: holidays by the year they took effect -----------------------------------------------


@pytest.mark.parametrize(
    ("received_on", "decision_due"),
    [
        # 60 days end Monday 2022-06-20: Juneteenth (Sunday 06-19) was not yet a legal holiday
        ("2022-04-21", "2022-06-20"),
        # 60 days end Monday 2023-06-19, Juneteenth: the deadline runs to Tuesday 06-20
        ("2023-04-20", "2023-06-20"),
    ],
)
def test_juneteenth_moves_a_deadline_from_2023_on_only(
    kit: Kit, received_on: str, decision_due: str
) -> None:
    lgu = kit.lgu()
    with on(received_on):
        plan = kit.plan(lgu, received_on=received_on, area_sqft=9_000)
    assert plan["deadlines"]["decision_due"] == decision_due
