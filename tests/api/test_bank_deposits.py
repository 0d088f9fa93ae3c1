"""docs/http.md "Accounts, deposits and transfers" and docs/domain.md §2: the worked deposit through
the API, every refusal writing nothing, idempotent replay, and who may deposit."""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, on, problem, story1_actions


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


@pytest.fixture
def prairie_creek(kit: Kit) -> dict[str, Any]:
    """Prairie Creek LLC, its bank site in BSA 5, an empty account there and the certifying LGU."""
    holder = kit.holder("Prairie Creek LLC")
    lgu = kit.lgu()
    return {
        "holder": holder,
        "lgu": lgu,
        "site_id": kit.site(holder["id"], 5, "Lyon", wetland_sqft=None),
        "account_id": kit.account(holder["id"], 5, "Lyon"),
    }


def story1_body(kit: Kit, pc: dict[str, Any], buffer_credit: int = 45_000) -> dict[str, Any]:
    return kit.deposit_body(
        pc["site_id"],
        pc["lgu"]["id"],
        story1_actions(buffer_credit),
        effective_on="2026-05-20",
        completed_on="2026-04-14",
        approved_on="2026-05-01",
        wetland_type="2",
    )


# --- the worked deposit: wetland, buffer and pond --------------------------------------------


def test_story_1_deposit_credits_114000_sqft_in_two_classes(api, kit, prairie_creek):
    pc = prairie_creek
    with on("2026-05-20"):
        response = api.post(f"/accounts/{pc['account_id']}/deposits", story1_body(kit, pc))
    body = ok(response)
    assert body["id"] and body["transaction_id"] and body["ruleset"]
    assert body["total_credit_sqft"] == 114_000
    assert [
        (c["category"], c["area_sqft"], c["credit_sqft"], c["cap_sqft"], c["restricted"])
        for c in body["credits"]
    ] == [
        ("replacement_wetland", 60_000, 60_000, 60_000, False),
        ("upland_buffer", 52_000, 45_000, 45_000, True),
        ("treatment_pond", 12_001, 9_000, 9_000, True),
    ]
    assert [c["credit_class"]["code"] for c in body["credits"]] == [
        "BSA5-T2-U",
        "BSA5-T2-R",
        "BSA5-T2-R",
    ]
    assert body["credits"][1]["credit_class"] == {
        "code": "BSA5-T2-R",
        "service_area": 5,
        "wetland_type": "2",
        "restricted": True,
    }

    rows = kit.balances(pc["account_id"])
    assert {code: row["posted_sqft"] for code, row in rows.items()} == {
        "BSA5-T2-U": 60_000,
        "BSA5-T2-R": 54_000,
    }
    assert {code: row["available_sqft"] for code, row in rows.items()} == {
        "BSA5-T2-U": 60_000,
        "BSA5-T2-R": 54_000,
    }

    lots = kit.lots(pc["account_id"])
    assert [(lot["label"], lot["credit_class"], lot["posted_sqft"]) for lot in lots] == [
        ("A", "BSA5-T2-U", 60_000),
        ("B", "BSA5-T2-R", 45_000),
        ("C", "BSA5-T2-R", 9_000),
    ]
    assert [lot["id"] for lot in lots] == [c["lot_id"] for c in body["credits"]]
    assert {lot["deposit_id"] for lot in lots} == {body["id"]}
    assert {lot["bank_site_id"] for lot in lots} == {pc["site_id"]}

    entries = kit.entries(pc["account_id"])
    assert {e["transaction_id"] for e in entries} == {body["transaction_id"]}  # one transaction
    assert sorted(e["amount_sqft"] for e in entries) == [9_000, 45_000, 60_000]
    assert {e["effective_on"] for e in entries} == {"2026-05-20"}


def test_story_1_with_the_buffer_asking_45001_is_refused_cap_exceeded_and_writes_nothing(
    api, kit, prairie_creek
):
    pc = prairie_creek
    before = kit.snapshot(pc["account_id"])
    with on("2026-05-20"):
        response = api.post(
            f"/accounts/{pc['account_id']}/deposits", story1_body(kit, pc, buffer_credit=45_001)
        )
    body = problem(response, 422, "cap_exceeded")
    assert body["category"] == "upland_buffer"
    assert body["cap_sqft"] == 45_000
    assert body["requested_sqft"] == 45_001
    assert "45,000 sq ft" in body["detail"] and "45,001 sq ft" in body["detail"]
    assert kit.snapshot(pc["account_id"]) == before
    assert kit.balances(pc["account_id"]) == {}
    assert kit.lots(pc["account_id"]) == []


def test_story_1_with_the_buffer_at_exactly_its_cap_is_accepted_after_a_refusal(
    api, kit, prairie_creek
):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    with on("2026-05-20"):
        problem(api.post(path, story1_body(kit, pc, 45_001)), 422, "cap_exceeded")
        ok(api.post(path, story1_body(kit, pc, 45_000)))
    assert [lot["label"] for lot in kit.lots(pc["account_id"])] == ["A", "B", "C"]


# --- refusals --------------------------------------------------------------------------------


def _refusal(kit: Kit, pc: dict[str, Any], status: int, code: str, **change: Any) -> Any:
    """Post a story-1 deposit changed by ``change`` after one good deposit; check nothing moved.

    The changed deposit is for another site of the holder's, so that what the first deposit
    credited does not count against it (the site caps have tests of their own)."""
    path = f"/accounts/{pc['account_id']}/deposits"
    ok(kit.api.post(path, story1_body(kit, pc)))
    before = kit.snapshot(pc["account_id"])
    body = story1_body(
        kit, dict(pc, site_id=kit.site(pc["holder"]["id"], 5, "Lyon", wetland_sqft=None))
    )
    for key, value in change.items():
        if key.startswith("action_"):
            index, field = key.removeprefix("action_").split("_", 1)
            body["actions"][int(index)][field] = value
        elif value is None:
            body.pop(key)
        else:
            body[key] = value
    refused = problem(kit.api.post(path, body), status, code)
    assert kit.snapshot(pc["account_id"]) == before
    assert kit.balances(pc["account_id"])["BSA5-T2-U"]["posted_sqft"] == 60_000
    return refused


def test_a_deposit_not_designated_for_replacement_is_not_eligible(kit, prairie_creek):
    body = _refusal(kit, prairie_creek, 422, "not_eligible", designated_for_replacement=False)
    assert body["field"] == "designated_for_replacement"


def test_a_deposit_not_paid_by_its_performer_is_not_eligible(kit, prairie_creek):
    _refusal(kit, prairie_creek, 422, "not_eligible", paid_by_performer=False)


def test_a_deposit_completed_after_its_date_is_not_eligible(kit, prairie_creek):
    with on("2026-06-30"):
        body = _refusal(kit, prairie_creek, 422, "not_eligible", completed_on="2026-05-21")
    assert body["field"] == "completed_on"


def test_a_buffer_not_established_with_the_wetland_is_not_eligible(kit, prairie_creek):
    body = _refusal(
        kit, prairie_creek, 422, "not_eligible", **{"action_1_established_on": "2026-04-15"}
    )
    assert body["category"] == "upland_buffer"


@pytest.mark.parametrize(
    "project",
    [" ", "\u200b", "\u200b \u2060", "\x07\t", "\u3164"],
    ids=["space", "zero-width space", "zero-width and word joiner", "bell", "hangul filler"],
)
def test_a_pond_without_a_visible_associated_project_is_not_eligible(kit, prairie_creek, project):
    """Text that shows nothing (docs/http.md "Names and other text") names no project: refused
    as a blank one is, by Subd. 12 (c)(4), not accepted as a project."""
    change = {"action_2_associated_project": project}
    body = _refusal(kit, prairie_creek, 422, "not_eligible", **change)
    assert (body["category"], body["field"]) == ("treatment_pond", "associated_project")


def test_a_pond_asking_one_square_foot_over_75_percent_is_cap_exceeded(kit, prairie_creek):
    body = _refusal(kit, prairie_creek, 422, "cap_exceeded", **{"action_2_credit_sqft": 9_001})
    assert (body["category"], body["cap_sqft"], body["requested_sqft"]) == (
        "treatment_pond",
        9_000,
        9_001,
    )


def test_a_deposit_dated_in_the_future_is_a_validation_error(kit, prairie_creek):
    with on("2026-05-20"):
        body = _refusal(kit, prairie_creek, 422, "validation_error", effective_on="2026-05-21")
    assert "effective_on" in body["errors"]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"bank_site_id": "site_nope"}, "bank_site_id"),
        ({"wetland_type": "9"}, "wetland_type"),
        ({"actions": []}, "actions"),
        ({"actions": None}, "actions"),
        ({"designated_for_replacement": None}, "designated_for_replacement"),
        ({"action_0_credit_sqft": 0}, "actions"),
        ({"action_0_area_sqft": 1.5}, "actions"),
        ({"action_0_category": "swamp"}, "actions"),
    ],
)
def test_a_malformed_deposit_is_a_validation_error(kit, prairie_creek, change, field):
    body = _refusal(kit, prairie_creek, 422, "validation_error", **change)
    assert any(key.startswith(field) for key in body["errors"]), body["errors"]


def test_a_deposit_under_an_unknown_banking_plan_lgu_is_a_validation_error(kit, prairie_creek):
    plan = {"reference": "BP-1", "approved_on": "2026-05-01", "lgu_id": "lgu_nope"}
    body = _refusal(kit, prairie_creek, 422, "validation_error", banking_plan=plan)
    assert any(key.startswith("banking_plan") for key in body["errors"])


def test_a_deposit_into_an_unknown_account_is_404(api, kit, prairie_creek):
    problem(
        api.post("/accounts/acct_nope/deposits", story1_body(kit, prairie_creek)), 404, "not_found"
    )


def test_only_the_board_deposits(api, kit, prairie_creek):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    before = kit.snapshot(pc["account_id"])
    problem(api.post(path, story1_body(kit, pc), token=pc["holder"]["token"]), 403, "forbidden")
    problem(api.post(path, story1_body(kit, pc), token=pc["lgu"]["token"]), 403, "forbidden")
    assert kit.snapshot(pc["account_id"]) == before


def test_a_frozen_account_still_accepts_deposits(api, kit, prairie_creek):
    pc = prairie_creek
    ok(api.post(f"/accounts/{pc['account_id']}/freeze"), 200)
    ok(api.post(f"/accounts/{pc['account_id']}/deposits", story1_body(kit, pc)))
    row = kit.balances(pc["account_id"])["BSA5-T2-U"]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (60_000, 60_000, 0)


def test_a_federally_approved_deposit_makes_federally_approved_lots(api, kit, prairie_creek):
    pc = prairie_creek
    body = story1_body(kit, prairie_creek)
    body["federally_approved"] = True
    ok(api.post(f"/accounts/{pc['account_id']}/deposits", body))
    assert {lot["federally_approved"] for lot in kit.lots(pc["account_id"])} == {True}


# --- idempotency -----------------------------------------------------------------------------


def test_a_replayed_deposit_returns_the_same_body_and_counts_once(api, kit, prairie_creek):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    body = story1_body(kit, pc)
    headers = {"Idempotency-Key": "story-1-deposit"}
    first = api.post(path, body, headers=headers)
    assert first.status_code == 201
    assert first.headers.get("Idempotent-Replayed") is None
    after_first = kit.snapshot(pc["account_id"])

    again = api.post(path, body, headers=headers)
    assert again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first.json
    assert kit.snapshot(pc["account_id"]) == after_first
    assert kit.rows_naming(pc["account_id"])["deposits"] == 1
    rows = kit.balances(pc["account_id"])
    assert rows["BSA5-T2-U"]["posted_sqft"] == 60_000
    assert rows["BSA5-T2-R"]["posted_sqft"] == 54_000


def test_the_same_idempotency_key_with_another_body_is_409(api, kit, prairie_creek):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    body = story1_body(kit, pc)
    headers = {"Idempotency-Key": "story-1-other"}
    ok(api.post(path, body, headers=headers))
    after_first = kit.snapshot(pc["account_id"])
    changed = {**body, "actions": story1_actions(44_000)}
    problem(api.post(path, changed, headers=headers), 409, "idempotency_conflict")
    assert kit.snapshot(pc["account_id"]) == after_first


def test_a_refused_deposit_keeps_no_key_so_the_corrected_request_may_reuse_it(
    api, kit, prairie_creek
):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    headers = {"Idempotency-Key": "story-1-retry"}
    problem(api.post(path, story1_body(kit, pc, 45_001), headers=headers), 422, "cap_exceeded")
    fixed = api.post(path, story1_body(kit, pc, 45_000), headers=headers)
    assert fixed.status_code == 201
    assert fixed.headers.get("Idempotent-Replayed") is None
    assert kit.balances(pc["account_id"])["BSA5-T2-R"]["posted_sqft"] == 54_000


def test_a_deposit_before_its_banking_plan_was_approved_is_a_validation_error(kit, prairie_creek):
    plan = {"reference": "BP-1", "approved_on": "2026-05-21", "lgu_id": prairie_creek["lgu"]["id"]}
    body = _refusal(kit, prairie_creek, 422, "validation_error", banking_plan=plan)
    assert any(key.startswith("banking_plan") for key in body["errors"])


def test_a_deposit_dated_today_in_minnesota_is_accepted_late_in_the_evening(
    api, kit, prairie_creek
):
    pc = prairie_creek
    path = f"/accounts/{pc['account_id']}/deposits"
    # 22:00 on 2026-05-20 in Minnesota is already 2026-05-21 in UTC
    with at("2026-05-21 03:00:00"):
        tomorrow = story1_body(kit, pc)
        tomorrow["effective_on"] = "2026-05-21"
        problem(api.post(path, tomorrow), 422, "validation_error")
        ok(api.post(path, story1_body(kit, pc)))


# --- every Subd. 12 (c) category through the API ------------------------------------------------


def test_every_category_at_its_cap_is_accepted_with_its_cap_and_restriction(
    api, kit, prairie_creek
):
    pc = prairie_creek
    actions = [
        {"category": "replacement_wetland", "area_sqft": 10_001, "credit_sqft": 10_001},
        {
            "category": "upland_buffer",
            "area_sqft": 9_000,
            "credit_sqft": 7_500,
            "established_on": "2026-04-14",
        },
        {
            "category": "vegetative_cover",
            "area_sqft": 8_001,
            "credit_sqft": 4_000,
            "qualifying_years": 6,
        },
        {
            "category": "easement_restoration",
            "area_sqft": 4_001,
            "credit_sqft": 3_000,
            "easement_terminated_on": "2025-12-31",
        },
        {"category": "easement_buffer", "area_sqft": 2_000, "credit_sqft": 1_000},
        {
            "category": "treatment_pond",
            "area_sqft": 1_001,
            "credit_sqft": 750,
            "associated_project": "CSAH 9 rebuild",
        },
    ]
    body = ok(
        api.post(
            f"/accounts/{pc['account_id']}/deposits",
            kit.deposit_body(pc["site_id"], pc["lgu"]["id"], actions),
        )
    )
    assert [(c["category"], c["cap_sqft"], c["restricted"]) for c in body["credits"]] == [
        ("replacement_wetland", 10_001, False),
        ("upland_buffer", 7_500, True),  # 75% of 10,001, rounded down
        ("vegetative_cover", 4_000, False),  # 50% of 8,001
        ("easement_restoration", 3_000, False),  # 75% of 4,001
        ("easement_buffer", 1_000, True),  # 25% of 4,001
        ("treatment_pond", 750, True),  # 75% of 1,001
    ]
    assert body["total_credit_sqft"] == 10_001 + 7_500 + 4_000 + 3_000 + 1_000 + 750
    posted = {code: row["posted_sqft"] for code, row in kit.balances(pc["account_id"]).items()}
    assert posted == {"BSA5-T2-U": 17_001, "BSA5-T2-R": 9_250}


def test_vegetative_cover_in_only_5_of_10_years_is_not_eligible(kit, prairie_creek):
    action = {
        "category": "vegetative_cover",
        "area_sqft": 8_000,
        "credit_sqft": 4_000,
        "qualifying_years": 5,
    }
    body = _refusal(kit, prairie_creek, 422, "not_eligible", actions=[*story1_actions(), action])
    assert body["category"] == "vegetative_cover"


def test_an_easement_restoration_without_a_termination_date_is_not_eligible(kit, prairie_creek):
    action = {"category": "easement_restoration", "area_sqft": 4_000, "credit_sqft": 3_000}
    body = _refusal(kit, prairie_creek, 422, "not_eligible", actions=[*story1_actions(), action])
    assert body["category"] == "easement_restoration"


def test_a_buffer_without_a_wetland_in_the_deposit_or_the_site_register_is_not_eligible(
    kit, prairie_creek
):
    buffer = story1_actions()[1]
    body = _refusal(kit, prairie_creek, 422, "not_eligible", actions=[buffer])
    assert body["category"] == "upland_buffer"


def test_paid_back_with_interest_lifts_subd_12_a(api, kit, prairie_creek):
    pc = prairie_creek
    body = story1_body(kit, pc)
    body.update(
        designated_for_replacement=False, paid_by_performer=False, paid_back_with_interest=True
    )
    assert ok(api.post(f"/accounts/{pc['account_id']}/deposits", body))["total_credit_sqft"] == (
        114_000
    )
