"""Issue 26 item 3: the board closes an account that holds nothing (a closed account takes no
deposit and sends and receives nothing), and an account's holder sees the reservations held
against it with the plan each is for (project, LGU, status), not the whole plan."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from bank import parties
from bank.access import SYSTEM
from tests.api.kit import Kit, ok, problem


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def transfer_body(source: str, target: str, amount: int, credit_class: str) -> dict[str, Any]:
    return {
        "from_account_id": source,
        "to_account_id": target,
        "amount_sqft": amount,
        "credit_class": credit_class,
    }


# --- closing ----------------------------------------------------------------------------------


def test_the_board_closes_an_empty_account_once(api, kit):
    holder = kit.holder()
    account = kit.account(holder["id"])
    closed = ok(api.post(f"/accounts/{account}/close"), 200)
    assert closed["status"] == "closed" and closed["id"] == account
    assert ok(api.get(f"/accounts/{account}"), 200)["status"] == "closed"
    problem(api.post(f"/accounts/{account}/close"), 409, "conflict")
    problem(api.post(f"/accounts/{account}/freeze"), 409, "conflict")
    problem(api.post(f"/accounts/{account}/unfreeze"), 409, "conflict")


def test_an_account_holding_credits_cannot_be_closed(api, kit):
    funded = kit.funded(5_000)
    refused = problem(api.post(f"/accounts/{funded['id']}/close"), 409, "conflict")
    assert refused["posted_sqft"] == 5_000
    assert kit.account_body(funded["id"])["status"] == "open"


def test_an_account_with_credits_reserved_cannot_be_closed(api, kit):
    funded = kit.funded(5_000)
    plan = kit.board_plan(kit.lgu()["id"])
    body = kit.reservation_body(plan["id"], funded["unrestricted"], 5_000)
    ok(api.post(f"/accounts/{funded['id']}/reservations", body))
    problem(api.post(f"/accounts/{funded['id']}/close"), 409, "conflict")
    assert kit.account_body(funded["id"])["status"] == "open"


def test_an_account_emptied_by_transfer_closes_and_then_takes_nothing(api, kit):
    funded = kit.funded(5_000)
    holder = funded["holder"]
    spare = kit.account(holder["id"])
    klass = funded["unrestricted"]
    ok(api.post("/transfers", transfer_body(funded["id"], spare, 5_000, klass)))
    assert ok(api.post(f"/accounts/{funded['id']}/close"), 200)["status"] == "closed"
    back = transfer_body(spare, funded["id"], 1_000, klass)
    problem(api.post("/transfers", back), 409, "conflict")
    deposit = kit.deposit_body(
        funded["site_id"],
        funded["lgu"]["id"],
        [{"category": "replacement_wetland", "area_sqft": 100, "credit_sqft": 100}],
    )
    problem(api.post(f"/accounts/{funded['id']}/deposits", deposit), 409, "conflict")
    assert kit.available(spare, klass) == 5_000
    assert kit.account_body(funded["id"])["balances"] == [] or all(
        row["posted_sqft"] == 0 for row in kit.account_body(funded["id"])["balances"]
    )


def test_only_the_board_closes_and_an_unknown_account_is_404(api, kit, lgu):
    holder = kit.holder()
    account = kit.account(holder["id"])
    problem(api.post(f"/accounts/{account}/close", token=holder["token"]), 403, "forbidden")
    problem(api.post(f"/accounts/{account}/close", token=lgu["token"]), 403, "forbidden")
    problem(api.post(f"/accounts/{account}/close", token=""), 401, "unauthorized")
    assert kit.account_body(account)["status"] == "open"
    problem(api.post("/accounts/acct_nope/close"), 404, "not_found")


# --- reservations held against an account -----------------------------------------------------


@pytest.fixture
def reserved(kit: Kit) -> dict[str, Any]:
    """A funded account with two reservations for one plan, one of them voided."""
    funded = kit.funded(30_000)
    lgu = kit.lgu()
    plan = kit.board_plan(lgu["id"], project="Highway 23 widening")
    path = f"/accounts/{funded['id']}/reservations"
    kept = ok(kit.api.post(path, kit.reservation_body(plan["id"], funded["unrestricted"], 9_000)))
    voided = ok(kit.api.post(path, kit.reservation_body(plan["id"], funded["unrestricted"], 1_000)))
    ok(kit.api.post(f"/reservations/{voided['id']}/void"), 200)
    lgu_name = ok(kit.api.get(f"/lgus/{lgu['id']}"), 200)["name"]
    return {
        "funded": funded,
        "plan": plan,
        "lgu_name": lgu_name,
        "kept": kept,
        "voided": voided,
    }


def test_the_holder_sees_its_reservations_with_the_plan_each_is_for(api, kit, reserved):
    funded = reserved["funded"]
    path = f"/accounts/{funded['id']}/reservations"
    body = ok(api.get(path, token=funded["holder"]["token"]), 200)
    by_id = {item["id"]: item for item in body["items"]}
    assert list(by_id) == [reserved["kept"]["id"], reserved["voided"]["id"]]
    kept = by_id[reserved["kept"]["id"]]
    assert kept["amount_sqft"] == 9_000 and kept["status"] == "pending"
    assert kept["credit_class"]["code"] == funded["unrestricted"]
    assert kept["expires_on"] == "2099-12-31"
    assert kept["plan"] == {
        "id": reserved["plan"]["id"],
        "project": "Highway 23 widening",
        "lgu_name": reserved["lgu_name"],
        "status": reserved["plan"]["status"],
    }
    assert by_id[reserved["voided"]["id"]]["status"] == "voided"
    # the summary is all the holder learns of the plan
    problem(
        api.get(f"/plans/{reserved['plan']['id']}", token=funded["holder"]["token"]),
        403,
        "forbidden",
    )
    assert ok(api.get(path), 200) == body  # the board sees the same


def test_an_account_without_reservations_lists_none(api, kit):
    holder = kit.holder()
    account = kit.account(holder["id"])
    path = f"/accounts/{account}/reservations"
    assert ok(api.get(path, token=holder["token"]), 200) == {"items": [], "next_cursor": None}


def test_another_holders_account_reservations_are_404_and_an_lgu_is_refused(
    api, kit, reserved, lgu
):
    path = f"/accounts/{reserved['funded']['id']}/reservations"
    stranger = kit.holder()
    problem(api.get(path, token=stranger["token"]), 404, "not_found")
    problem(api.get(path, token=lgu["token"]), 403, "forbidden")
    problem(api.get(path, token=""), 401, "unauthorized")
    problem(api.get("/accounts/acct_nope/reservations"), 404, "not_found")


# --- a deposit racing a close (PostgreSQL: row locks) -------------------------------------------


def test_a_deposit_waiting_while_the_account_is_closed_does_not_land(api, app, kit, backend):
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: a deposit never waits on a close")
    funded = kit.funded(1_000)
    holder = funded["holder"]
    empty = kit.account(holder["id"])
    body = kit.deposit_body(
        funded["site_id"],
        funded["lgu"]["id"],
        [{"category": "replacement_wetland", "area_sqft": 100, "credit_sqft": 100}],
    )
    answered: list[Any] = []

    def deposit() -> None:
        client = app.test_client()
        headers = {"Authorization": f"Bearer {api.token}"}
        answered.append(
            client.post(f"/api/v1/accounts/{empty}/deposits", json=body, headers=headers)
        )

    engine = app.extensions["wetbank.db"].engine
    depositor = threading.Thread(target=deposit)
    with engine.connect() as closer, engine.connect() as watcher:
        watcher = watcher.execution_options(isolation_level="AUTOCOMMIT")
        pid = closer.execute(text("SELECT pg_backend_pid()")).scalar_one()
        # a close in flight, as the service makes one (its history row too: the database is
        # shared, and a later test's verify ties every status to its last change): the
        # account's row held FOR UPDATE and its status set, not committed
        closing = Session(bind=closer)
        parties.set_account_status(closing, empty, "closed", SYSTEM)
        closing.flush()
        depositor.start()
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity WHERE :p = ANY(pg_blocking_pids(pid))"
        )
        deadline = time.monotonic() + 30
        while not watcher.execute(waiting, {"p": pid}).scalar_one():
            assert time.monotonic() < deadline, "the deposit never waited for the account"
            time.sleep(0.02)
        closer.commit()
    depositor.join(30)
    problem(answered[0], 409, "conflict")
    after = kit.account_body(empty)
    assert after["status"] == "closed" and after["balances"] == []
    assert kit.lots(empty) == []
