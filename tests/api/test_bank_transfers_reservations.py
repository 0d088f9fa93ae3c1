"""docs/http.md "Accounts, deposits and transfers" and "Reservations": provenance through transfers
(the worked Hollis Township plan's purchase), frozen sites and accounts, expiry at Minnesota
midnight, who may act, and refusals that write nothing."""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import text

from bank.transfers import Transfer
from ledger import clock
from tests.api.kit import Kit, at, mailing, ok, on, problem, story1_actions


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def transfer(kit: Kit, source: str, target: str, amount: int, **kw: Any) -> dict[str, Any]:
    token = kw.pop("token", None)
    body = {"from_account_id": source, "to_account_id": target, "amount_sqft": amount, **kw}
    return dict(ok(kit.api.post("/transfers", body, token=token)))


def by_label(lots: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {lot["label"]: lot for lot in lots}


# --- transfers: the worked Hollis Township plan's purchase -------------------------------------


@pytest.fixture
def story2(kit: Kit) -> dict[str, Any]:
    """Prairie Creek's story-1 deposit (federally approved) and the Hollis Township road account."""
    prairie, lgu = kit.holder("Prairie Creek LLC"), kit.lgu()
    site_id = kit.site(prairie["id"], 5, "Lyon")
    account_id = kit.account(prairie["id"], 5, "Lyon")
    body = kit.deposit_body(site_id, lgu["id"], story1_actions(), federally_approved=True)
    deposit = ok(kit.api.post(f"/accounts/{account_id}/deposits", body))
    hollis = kit.holder("Hollis Township")
    return {
        "prairie": prairie,
        "site_id": site_id,
        "account_id": account_id,
        "deposit": deposit,
        "hollis": hollis,
        "hollis_account_id": kit.account(hollis["id"], 5, "Lyon"),
    }


def test_story_2_prairie_creek_sells_20000_unrestricted_and_8000_restricted_to_hollis(kit, story2):
    pc, hollis = story2["account_id"], story2["hollis_account_id"]
    sold_u = transfer(kit, pc, hollis, 20_000, credit_class="BSA5-T2-U", price_per_sqft_cents=150)
    sold_r = transfer(kit, pc, hollis, 8_000, credit_class="BSA5-T2-R", memo="road credits")
    assert sold_u["id"] and sold_u["transaction_id"]
    assert (sold_u["from_account_id"], sold_u["to_account_id"]) == (pc, hollis)
    assert sold_u["credit_class"]["code"] == "BSA5-T2-U"
    assert (sold_u["amount_sqft"], sold_u["price_per_sqft_cents"]) == (20_000, 150)
    assert (sold_r["credit_class"]["code"], sold_r["amount_sqft"]) == ("BSA5-T2-R", 8_000)
    assert sold_r["memo"] == "road credits"

    posted = {code: row["posted_sqft"] for code, row in kit.balances(pc).items()}
    assert posted == {"BSA5-T2-U": 40_000, "BSA5-T2-R": 46_000}
    posted = {code: row["posted_sqft"] for code, row in kit.balances(hollis).items()}
    assert posted == {"BSA5-T2-U": 20_000, "BSA5-T2-R": 8_000}

    source = by_label(kit.lots(pc))
    received = by_label(kit.lots(hollis))
    assert set(received) == {"A", "B"}
    # the restricted credits come from the oldest restricted lot: the buffer (B), not the pond (C)
    assert received["A"]["parent_lot_id"] == source["A"]["id"]
    assert received["B"]["parent_lot_id"] == source["B"]["id"]
    assert (source["B"]["posted_sqft"], source["C"]["posted_sqft"]) == (37_000, 9_000)
    for lot in received.values():
        assert lot["bank_site_id"] == story2["site_id"]
        assert lot["deposit_id"] == story2["deposit"]["id"]
        assert lot["federally_approved"] is False
    assert {lot["federally_approved"] for lot in source.values()} == {True}
    assert sold_u["lots"] == [
        {"from_lot_id": source["A"]["id"], "to_lot_id": received["A"]["id"], "amount_sqft": 20_000}
    ]

    out = kit.entries(pc)
    assert [(e["kind"], e["amount_sqft"]) for e in out[:2]] == [
        ("transfer", -8_000),
        ("transfer", -20_000),
    ]
    assert out[1]["balance_after_sqft"] == 40_000 and out[0]["balance_after_sqft"] == 46_000
    into = kit.entries(hollis)
    assert [(e["kind"], e["amount_sqft"]) for e in into] == [
        ("transfer", 8_000),
        ("transfer", 20_000),
    ]
    assert into[0]["transaction_id"] == sold_r["transaction_id"]


def test_lots_after_two_successive_transfers_point_back_to_the_deposit_and_site(kit, story2):
    a = story2["account_id"]
    b = story2["hollis_account_id"]
    c_holder = kit.holder("Third")
    c = kit.account(c_holder["id"], 5)
    transfer(kit, a, b, 20_000, credit_class="BSA5-T2-U")
    b_lot = kit.lots(b)[0]
    transfer(kit, b, c, 5_000, lot_id=b_lot["id"], token=story2["hollis"]["token"])

    c_lots = kit.lots(c)
    assert len(c_lots) == 1
    c_lot = c_lots[0]
    assert c_lot["posted_sqft"] == 5_000 and c_lot["credit_class"] == "BSA5-T2-U"
    lots_by_id = {lot["id"]: lot for account in (a, b, c) for lot in kit.lots(account)}
    chain = [c_lot]
    while chain[-1]["parent_lot_id"] is not None:
        chain.append(lots_by_id[chain[-1]["parent_lot_id"]])
    assert [lot["id"] for lot in chain] == [
        c_lot["id"],
        b_lot["id"],
        story2["deposit"]["credits"][0]["lot_id"],
    ]
    assert {lot["deposit_id"] for lot in chain} == {story2["deposit"]["id"]}
    assert {lot["bank_site_id"] for lot in chain} == {story2["site_id"]}
    assert [lot["federally_approved"] for lot in chain] == [False, False, True]
    assert kit.balances(b)["BSA5-T2-U"]["posted_sqft"] == 15_000
    assert kit.balances(a)["BSA5-T2-U"]["posted_sqft"] == 40_000


def test_what_a_transfer_answers_is_what_it_recorded(app, kit):
    # PostgreSQL records the transfer and its lots in one statement, SQLite in two
    funded = kit.funded(5_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 7_000)
    target = kit.account(kit.holder()["id"])
    done = transfer(
        kit,
        funded["id"],
        target,
        8_000,
        credit_class="BSA5-T2-U",
        price_per_sqft_cents=125,
        memo="two lots",
    )
    with app.extensions["wetbank.db"].transaction() as session:
        stored = session.get(Transfer, done["id"])
        assert stored is not None
        row = (
            stored.from_account_id,
            stored.to_account_id,
            stored.credit_class,
            stored.amount_sqft,
            stored.price_per_sqft_cents,
            stored.memo,
            stored.transaction_id,
            stored.recorded_at,
        )
        lots = session.execute(
            text(
                "SELECT from_lot_id, to_lot_id, amount_sqft FROM transfer_lots "
                "WHERE transfer_id = :id ORDER BY id"
            ),
            {"id": done["id"]},
        ).all()
    assert (*row[:6], str(row[6])) == (
        funded["id"],
        target,
        "BSA5-T2-U",
        8_000,
        125,
        "two lots",
        done["transaction_id"],
    )
    assert clock.as_utc(row[7]) == datetime.fromisoformat(done["recorded_at"])
    assert len(done["lots"]) == 2
    assert [tuple(lot) for lot in lots] == [
        (t["from_lot_id"], t["to_lot_id"], t["amount_sqft"]) for t in done["lots"]
    ]


def test_a_transfer_by_class_takes_the_oldest_lots_first(api, kit):
    funded = kit.funded(5_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 7_000)
    target = kit.account(kit.holder()["id"])
    done = transfer(kit, funded["id"], target, 8_000, credit_class="BSA5-T2-U")
    source = by_label(kit.lots(funded["id"]))
    assert [(t["from_lot_id"], t["amount_sqft"]) for t in done["lots"]] == [
        (source["A"]["id"], 5_000),
        (source["B"]["id"], 3_000),
    ]
    assert (source["A"]["posted_sqft"], source["B"]["posted_sqft"]) == (0, 4_000)
    received = kit.lots(target)
    assert sorted(lot["posted_sqft"] for lot in received) == [3_000, 5_000]
    assert {lot["parent_lot_id"] for lot in received} == {source["A"]["id"], source["B"]["id"]}


def test_repeated_transfers_from_one_lot_accumulate_in_one_receiving_lot(kit):
    funded = kit.funded(10_000)
    target = kit.account(kit.holder()["id"])
    transfer(kit, funded["id"], target, 1_000, credit_class="BSA5-T2-U")
    transfer(kit, funded["id"], target, 2_000, credit_class="BSA5-T2-U")
    lots = kit.lots(target)
    assert [(lot["label"], lot["posted_sqft"]) for lot in lots] == [("A", 3_000)]


def test_a_holder_transfers_out_of_its_own_account(kit):
    funded = kit.funded(10_000)
    target = kit.account(kit.holder()["id"])
    transfer(
        kit, funded["id"], target, 4_000, credit_class="BSA5-T2-U", token=funded["holder"]["token"]
    )
    assert kit.balances(target)["BSA5-T2-U"]["posted_sqft"] == 4_000


def test_a_replayed_transfer_moves_credits_once(api, kit):
    funded = kit.funded(10_000)
    target = kit.account(kit.holder()["id"])
    body = {
        "from_account_id": funded["id"],
        "to_account_id": target,
        "credit_class": "BSA5-T2-U",
        "amount_sqft": 2_500,
    }
    headers = {"Idempotency-Key": "sale-1"}
    first = ok(api.post("/transfers", body, headers=headers))
    again = api.post("/transfers", body, headers=headers)
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json == first
    assert kit.balances(target)["BSA5-T2-U"]["posted_sqft"] == 2_500
    assert kit.balances(funded["id"])["BSA5-T2-U"]["posted_sqft"] == 7_500
    problem(
        api.post("/transfers", {**body, "amount_sqft": 2_501}, headers=headers),
        409,
        "idempotency_conflict",
    )


# --- transfers: refusals -------------------------------------------------------------------


@pytest.fixture
def pair(kit: Kit) -> dict[str, Any]:
    """A funded account (10,000 unrestricted) and another holder's empty account."""
    funded = kit.funded(10_000)
    other = kit.holder("Buyer")
    return {
        "funded": funded,
        "source": funded["id"],
        "other": other,
        "target": kit.account(other["id"]),
    }


def refused_transfer(
    kit: Kit,
    pair: dict[str, Any],
    status: int,
    code: str,
    token: str | None = None,
    **change: Any,
) -> dict[str, Any]:
    body = {
        "from_account_id": pair["source"],
        "to_account_id": pair["target"],
        "credit_class": "BSA5-T2-U",
        "amount_sqft": 1_000,
    }
    for key, value in change.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    before = kit.snapshot(pair["source"], pair["target"])
    refused = problem(kit.api.post("/transfers", body, token=token), status, code)
    assert kit.snapshot(pair["source"], pair["target"]) == before
    return refused


def test_a_transfer_of_more_than_is_available_is_insufficient_credits(kit, pair):
    body = refused_transfer(kit, pair, 422, "insufficient_credits", amount_sqft=10_001)
    assert body["available_sqft"] == 10_000 and body["requested_sqft"] == 10_001
    # the detail is read by people: its area has thousands separators, the fields stay numbers
    assert body["detail"] == "only 10,000 sq ft available"


def test_a_transfer_of_a_class_the_account_does_not_hold_is_insufficient_credits(kit, pair):
    refused_transfer(kit, pair, 422, "insufficient_credits", credit_class="BSA5-T3-U")


def test_a_transfer_out_of_a_frozen_account_is_account_frozen(kit, pair):
    ok(kit.api.post(f"/accounts/{pair['source']}/freeze"), 200)
    refused_transfer(kit, pair, 422, "account_frozen")
    ok(kit.api.post(f"/accounts/{pair['source']}/unfreeze"), 200)
    transfer(kit, pair["source"], pair["target"], 1_000, credit_class="BSA5-T2-U")


def test_a_transfer_of_credits_from_a_frozen_site_is_account_frozen(kit, pair):
    ok(kit.api.post(f"/bank-sites/{pair['funded']['site_id']}/freeze"), 200)
    refused_transfer(kit, pair, 422, "account_frozen")
    ok(kit.api.post(f"/bank-sites/{pair['funded']['site_id']}/unfreeze"), 200)


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"lot_id": "lot_x"}, "credit_class"),  # both a class and a lot
        ({"credit_class": None}, "credit_class"),  # neither
        ({"amount_sqft": 0}, "amount_sqft"),
        ({"amount_sqft": 1.5}, "amount_sqft"),
        ({"amount_sqft": "1000"}, "amount_sqft"),
        ({"amount_sqft": None}, "amount_sqft"),
        ({"to_account_id": "acct_nope"}, "to_account_id"),
        ({"to_account_id": None}, "to_account_id"),
    ],
)
def test_a_malformed_transfer_is_a_validation_error(kit, pair, change, field):
    body = refused_transfer(kit, pair, 422, "validation_error", **change)
    assert field in body["errors"]


def test_a_transfer_to_the_same_account_is_a_validation_error(kit, pair):
    body = refused_transfer(kit, pair, 422, "validation_error", to_account_id=pair["source"])
    assert "to_account_id" in body["errors"]


def test_a_transfer_from_an_unknown_account_or_of_a_lot_held_elsewhere_is_404(kit, pair):
    problem(
        kit.api.post(
            "/transfers",
            {
                "from_account_id": "acct_nope",
                "to_account_id": pair["target"],
                "credit_class": "BSA5-T2-U",
                "amount_sqft": 1,
            },
        ),
        404,
        "not_found",
    )
    elsewhere = kit.funded(1_000)
    lot_id = kit.lots(elsewhere["id"])[0]["id"]
    refused_transfer(kit, pair, 404, "not_found", credit_class=None, lot_id=lot_id)


def test_a_holder_may_not_transfer_out_of_another_holders_account(kit, pair):
    refused_transfer(kit, pair, 404, "not_found", token=pair["other"]["token"])


def test_an_lgu_may_not_transfer(kit, pair, lgu):
    refused_transfer(kit, pair, 403, "forbidden", token=lgu["token"])


def test_reserved_credits_cannot_be_transferred(kit, pair):
    plan = kit.board_plan(kit.lgu()["id"])
    body = kit.reservation_body(plan["id"], "BSA5-T2-U", 9_500)
    ok(kit.api.post(f"/accounts/{pair['source']}/reservations", body))
    refused_transfer(kit, pair, 422, "insufficient_credits", amount_sqft=501)
    transfer(kit, pair["source"], pair["target"], 500, credit_class="BSA5-T2-U")


# --- reservations ----------------------------------------------------------------------------


@pytest.fixture
def reserving(kit: Kit) -> dict[str, Any]:
    """A funded BSA 5 account (30,000 unrestricted, 20,000 restricted) and a BSA 5 plan."""
    funded = kit.funded(30_000, buffer_sqft=20_000)
    lgu = kit.lgu()
    return {
        "funded": funded,
        "account_id": funded["id"],
        "lgu": lgu,
        "plan": kit.board_plan(lgu["id"]),
    }


def reserve_path(r: dict[str, Any]) -> str:
    return f"/accounts/{r['account_id']}/reservations"


def test_a_reservation_is_pending_and_lowers_available_at_once(api, kit, reserving):
    r = reserving
    body = ok(
        api.post(
            reserve_path(r),
            kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 18_000, "2099-01-31"),
        )
    )
    assert body["id"] and body["status"] == "pending"
    assert (body["account_id"], body["plan_id"]) == (r["account_id"], r["plan"]["id"])
    assert body["credit_class"]["code"] == "BSA5-T2-U"
    assert (body["amount_sqft"], body["expires_on"]) == (18_000, "2099-01-31")
    row = kit.balances(r["account_id"])["BSA5-T2-U"]
    assert (row["posted_sqft"], row["reserved_sqft"], row["available_sqft"]) == (
        30_000,
        18_000,
        12_000,
    )
    lot = by_label(kit.lots(r["account_id"]))["A"]
    assert (lot["posted_sqft"], lot["available_sqft"]) == (30_000, 12_000)
    assert ok(api.get(f"/reservations/{body['id']}"), 200) == body


def test_what_a_reservation_of_two_lots_answers_is_what_it_recorded(api, kit):
    # the answer is built from what the request wrote, not read back: it must read the same
    funded = kit.funded(5_000)
    kit.wetland_deposit(funded["id"], funded["site_id"], funded["lgu"]["id"], 7_000)
    plan = kit.board_plan(kit.lgu()["id"])
    body = kit.reservation_body(plan["id"], "BSA5-T2-U", 8_000, "2099-01-31")
    made = ok(api.post(f"/accounts/{funded['id']}/reservations", body))
    assert made["status"] == "pending"
    assert [lot["amount_sqft"] for lot in made["lots"]] == [5_000, 3_000]
    assert ok(api.get(f"/reservations/{made['id']}"), 200) == made


def test_a_reservation_of_one_lot_draws_only_on_it(api, kit, reserving):
    r = reserving
    lot_b = by_label(kit.lots(r["account_id"]))["B"]
    body = {
        "plan_id": r["plan"]["id"],
        "lot_id": lot_b["id"],
        "amount_sqft": 5_000,
        "expires_on": "2099-01-31",
    }
    made = ok(api.post(reserve_path(r), body))
    assert made["lot_id"] == lot_b["id"] and made["credit_class"]["code"] == "BSA5-T2-R"
    assert made["lots"] == [{"lot_id": lot_b["id"], "amount_sqft": 5_000}]
    assert kit.available(r["account_id"], "BSA5-T2-R") == 15_000
    assert kit.available(r["account_id"], "BSA5-T2-U") == 30_000


def test_voiding_a_reservation_restores_available_and_a_second_void_is_conflict(
    api, kit, reserving
):
    r = reserving
    made = ok(api.post(reserve_path(r), kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 10_000)))
    voided = ok(api.post(f"/reservations/{made['id']}/void"), 200)
    assert voided["status"] == "voided"
    assert kit.available(r["account_id"], "BSA5-T2-U") == 30_000
    assert kit.balances(r["account_id"])["BSA5-T2-U"]["reserved_sqft"] == 0
    problem(api.post(f"/reservations/{made['id']}/void"), 409, "conflict")
    assert ok(api.get(f"/reservations/{made['id']}"), 200)["status"] == "voided"


def test_the_holder_reserves_and_voids_on_its_own_account(api, kit, reserving):
    r = reserving
    token = r["funded"]["holder"]["token"]
    body = kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 4_000)
    made = ok(api.post(reserve_path(r), body, token=token))
    assert ok(api.get(f"/reservations/{made['id']}", token=token), 200)["status"] == "pending"
    assert ok(api.post(f"/reservations/{made['id']}/void", token=token), 200)["status"] == "voided"


def test_a_reservation_is_seen_by_the_board_its_holder_and_the_plans_lgu_only(api, kit, reserving):
    r = reserving
    made = ok(api.post(reserve_path(r), kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 1_000)))
    path = f"/reservations/{made['id']}"
    assert ok(api.get(path, token=r["lgu"]["token"]), 200)["id"] == made["id"]
    stranger, other_lgu = kit.holder(), kit.lgu()
    problem(api.get(path, token=stranger["token"]), 404, "not_found")
    problem(api.get(path, token=other_lgu["token"]), 404, "not_found")
    problem(api.get("/reservations/res_nope"), 404, "not_found")


def test_only_the_holder_or_the_board_voids_a_reservation(api, kit, reserving):
    r = reserving
    made = ok(api.post(reserve_path(r), kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 1_000)))
    path = f"/reservations/{made['id']}/void"
    problem(api.post(path, token=r["lgu"]["token"]), 403, "forbidden")
    problem(api.post(path, token=kit.holder()["token"]), 404, "not_found")
    problem(api.post("/reservations/res_nope/void"), 404, "not_found")
    assert ok(api.get(f"/reservations/{made['id']}"), 200)["status"] == "pending"
    assert kit.available(r["account_id"], "BSA5-T2-U") == 29_000


# --- reservations: refusals write nothing -------------------------------------------------------


def refused_reservation(
    kit: Kit, r: dict[str, Any], status: int, code: str, token: str | None = None, **change: Any
) -> dict[str, Any]:
    body = kit.reservation_body(r["plan"]["id"], "BSA5-T2-U", 1_000)
    for key, value in change.items():
        if value is None:
            body.pop(key, None)
        else:
            body[key] = value
    before = kit.snapshot(r["account_id"])
    refused = problem(kit.api.post(reserve_path(r), body, token=token), status, code)
    assert kit.snapshot(r["account_id"]) == before
    return refused


def test_a_reservation_expiring_in_the_past_is_a_validation_error(kit, reserving):
    with on("2026-07-10"):
        body = refused_reservation(kit, reserving, 422, "validation_error", expires_on="2026-07-09")
        assert "expires_on" in body["errors"]
        # expiring today is allowed: the day is not over
        ok(
            kit.api.post(
                reserve_path(reserving),
                kit.reservation_body(reserving["plan"]["id"], "BSA5-T2-U", 1_000, "2026-07-10"),
            )
        )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"plan_id": "plan_nope"}, "plan_id"),
        ({"plan_id": None}, "plan_id"),
        ({"expires_on": None}, "expires_on"),
        ({"expires_on": "someday"}, "expires_on"),
        ({"amount_sqft": 0}, "amount_sqft"),
        ({"amount_sqft": 2.5}, "amount_sqft"),
        ({"lot_id": "lot_x"}, "credit_class"),
    ],
)
def test_a_malformed_reservation_is_a_validation_error(kit, reserving, change, field):
    body = refused_reservation(kit, reserving, 422, "validation_error", **change)
    assert field in body["errors"]


def test_a_reservation_of_more_than_is_available_is_insufficient_credits(api, kit, reserving):
    ok(
        api.post(
            reserve_path(reserving),
            kit.reservation_body(reserving["plan"]["id"], "BSA5-T2-U", 25_000),
        )
    )
    refused_reservation(kit, reserving, 422, "insufficient_credits", amount_sqft=5_001)


def test_a_reservation_from_a_frozen_account_is_account_frozen(kit, reserving):
    ok(kit.api.post(f"/accounts/{reserving['account_id']}/freeze"), 200)
    refused_reservation(kit, reserving, 422, "account_frozen")


def test_an_lgu_may_not_reserve(kit, reserving):
    refused_reservation(kit, reserving, 403, "forbidden", token=reserving["lgu"]["token"])


def test_a_holder_may_not_reserve_on_another_holders_account(kit, reserving):
    refused_reservation(kit, reserving, 404, "not_found", token=kit.holder()["token"])


def test_a_reservation_on_an_unknown_account_is_404(api, kit, reserving):
    body = kit.reservation_body(reserving["plan"]["id"], "BSA5-T2-U", 1_000)
    problem(api.post("/accounts/acct_nope/reservations", body), 404, "not_found")


def test_credits_of_another_service_area_are_not_eligible_unless_the_plan_allows_it(api, kit):
    funded = kit.funded(10_000, service_area=7)
    lgu = kit.lgu()
    plan = kit.board_plan(lgu["id"], service_area=5)
    r = {"account_id": funded["id"], "plan": plan}
    body = refused_reservation(kit, r, 422, "not_eligible", credit_class="BSA7-T2-U")
    assert (body["credit_service_area"], body["impact_service_area"]) == (7, 5)

    outside = kit.board_plan(lgu["id"], service_area=5, replacement_outside_service_area=True)
    made = ok(
        api.post(
            f"/accounts/{funded['id']}/reservations",
            kit.reservation_body(outside["id"], "BSA7-T2-U", 1_000),
        )
    )
    assert made["status"] == "pending"
    assert kit.available(funded["id"], "BSA7-T2-U") == 9_000


def test_a_reservation_for_a_denied_plan_is_conflict(api, kit, reserving):
    r = reserving
    with on("2026-06-15"):
        plan = kit.board_plan(r["lgu"]["id"], received_on="2026-06-08")
        ok(api.post(f"/plans/{plan['id']}/notices", mailing("2026-06-15", plan=plan)))
        ok(
            api.post(
                f"/plans/{plan['id']}/decision",
                {
                    "outcome": "denied",
                    "decided_on": "2026-06-15",
                    "reasons": "the replacement would not replace the wetland's public value",
                },
            )
        )
    refused_reservation(kit, {**r, "plan": plan}, 409, "conflict")


# --- frozen sites, wherever their credits went -------------------------------------------------


def test_a_frozen_site_blocks_a_reservation_from_the_account_its_credits_went_to(api, kit):
    seller = kit.funded(20_000)
    buyer = kit.holder("Buyer")
    bought = kit.account(buyer["id"])
    transfer(kit, seller["id"], bought, 12_000, credit_class="BSA5-T2-U")
    plan = kit.board_plan(kit.lgu()["id"])
    r = {"account_id": bought, "plan": plan}

    ok(api.post(f"/bank-sites/{seller['site_id']}/freeze"), 200)
    row = kit.balances(bought)["BSA5-T2-U"]
    assert (row["posted_sqft"], row["frozen_sqft"], row["available_sqft"]) == (12_000, 12_000, 0)
    assert kit.lots(bought)[0]["frozen"] is True
    refused_reservation(kit, r, 422, "account_frozen", token=buyer["token"], amount_sqft=9_000)
    refused_reservation(kit, r, 422, "account_frozen", amount_sqft=9_000)

    ok(api.post(f"/bank-sites/{seller['site_id']}/unfreeze"), 200)
    made = ok(
        api.post(
            f"/accounts/{bought}/reservations",
            kit.reservation_body(plan["id"], "BSA5-T2-U", 9_000),
            token=buyer["token"],
        )
    )
    assert made["status"] == "pending"
    assert kit.available(bought, "BSA5-T2-U") == 3_000


# --- expiry at Minnesota midnight -------------------------------------------------------------


def test_a_reservation_expires_at_midnight_minnesota_time_at_the_end_of_its_expiry_date(api, kit):
    with on("2026-07-01"):
        funded = kit.funded(20_000)
        plan = kit.board_plan(kit.lgu()["id"])
        made = ok(
            api.post(
                f"/accounts/{funded['id']}/reservations",
                kit.reservation_body(plan["id"], "BSA5-T2-U", 15_000, "2026-07-15"),
            )
        )
    path = f"/reservations/{made['id']}"

    # 23:59:59 on 2026-07-15 in Minnesota (CDT, UTC-5) is 04:59:59 UTC on the 16th
    with at("2026-07-16 04:59:59"):
        assert ok(api.get(path), 200)["status"] == "pending"
        row = kit.balances(funded["id"])["BSA5-T2-U"]
        assert (row["reserved_sqft"], row["available_sqft"]) == (15_000, 5_000)

    # midnight at the end of 2026-07-15, Minnesota time: no job has run
    with at("2026-07-16 05:00:00"):
        assert ok(api.get(path), 200)["status"] == "expired"
        row = kit.balances(funded["id"])["BSA5-T2-U"]
        assert (row["posted_sqft"], row["reserved_sqft"], row["available_sqft"]) == (
            20_000,
            0,
            20_000,
        )
        assert kit.lots(funded["id"])[0]["available_sqft"] == 20_000
        problem(api.post(f"{path}/void"), 409, "conflict")
        assert ok(api.get(path), 200)["status"] == "expired"
        # the credits it held may be reserved again
        again = ok(
            api.post(
                f"/accounts/{funded['id']}/reservations",
                kit.reservation_body(plan["id"], "BSA5-T2-U", 20_000, "2026-07-31"),
            )
        )
        assert again["status"] == "pending"


def test_an_expiry_date_that_is_today_in_minnesota_is_not_in_the_past_late_in_the_evening(api, kit):
    funded = kit.funded(5_000)
    plan = kit.board_plan(kit.lgu()["id"])
    path = f"/accounts/{funded['id']}/reservations"
    # 22:00 on 2026-07-15 in Minnesota is already 2026-07-16 in UTC
    with at("2026-07-16 03:00:00"):
        made = ok(
            api.post(path, kit.reservation_body(plan["id"], "BSA5-T2-U", 1_000, "2026-07-15"))
        )
        assert made["status"] == "pending"
        body = kit.reservation_body(plan["id"], "BSA5-T2-U", 1_000, "2026-07-14")
        problem(api.post(path, body), 422, "validation_error")
    with at("2026-07-16 05:00:00"):
        assert ok(api.get(f"/reservations/{made['id']}"), 200)["status"] == "expired"


def test_reserved_balances_as_of_a_date_follow_reservations_made_voided_and_expired(api, kit):
    with on("2026-07-01"):
        funded = kit.funded(20_000)
        plan = kit.board_plan(kit.lgu()["id"])
        path = f"/accounts/{funded['id']}/reservations"
        ok(api.post(path, kit.reservation_body(plan["id"], "BSA5-T2-U", 15_000, "2026-07-15")))
    with on("2026-07-03"):
        short = ok(
            api.post(path, kit.reservation_body(plan["id"], "BSA5-T2-U", 2_000, "2026-07-31"))
        )
    with on("2026-07-05"):
        ok(api.post(f"/reservations/{short['id']}/void"), 200)
    with on("2026-07-20"):  # after the first expired, the same lot is reserved again
        ok(api.post(path, kit.reservation_body(plan["id"], "BSA5-T2-U", 20_000, "2026-07-31")))

    def reserved(day: str) -> tuple[int, int]:
        body = ok(api.get(f"/accounts/{funded['id']}/balances?as_of={day}"), 200)
        (row,) = body["balances"]
        return row["posted_sqft"], row["reserved_sqft"]

    assert reserved("2026-06-30") == (20_000, 0)
    assert reserved("2026-07-01") == (20_000, 15_000)
    assert reserved("2026-07-03") == (20_000, 17_000)
    assert reserved("2026-07-05") == (20_000, 15_000)
    assert reserved("2026-07-14") == (20_000, 15_000)
    assert reserved("2026-07-16") == (20_000, 0)
    assert reserved("2026-07-19") == (20_000, 0)
    assert reserved("2026-07-20") == (20_000, 20_000)


def test_a_reservation_of_a_lot_held_by_another_account_is_404(kit, reserving):
    elsewhere = kit.funded(1_000)
    lot_id = kit.lots(elsewhere["id"])[0]["id"]
    refused_reservation(kit, reserving, 404, "not_found", credit_class=None, lot_id=lot_id)
