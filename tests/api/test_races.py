"""Issue 21 §4 in process, on SQLite and PostgreSQL: freezes, revocations and voids against the
writes they race with (and a deposit's reversal against a buffer deposited beside it).

A write moving credits out confirms, as its last statement, that the source account is open and
no site of the lots it draws on is frozen; every write confirms its token is not revoked; both
under a lock that a freeze or a revocation must wait for.  On SQLite one writer at a time gives
the same order.  The races over HTTP on a real server are ``tests/system/test_races.py``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select, text
from sqlalchemy.exc import DBAPIError

from bank import (
    access,
    appeals,
    deposit_reversal,
    deposits,
    guarantees,
    money,
    parties,
    reservations,
    transfers,
    withdrawals,
)
from bank.access import SYSTEM
from bank.errors import CapExceeded, Conflict
from bank.rules.deposit_rules import ActionRequest
from bank.rules.ruleset import SEED
from bank.transfers import Transfer
from bank.withdrawals import Withdrawal
from ledger.db import Database
from tests.api.conftest import Api
from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import grant, granted_appeal, noticed_decision, petition
from tests.api.test_money import hold

DAY = "2026-06-08"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def database(app: Flask) -> Database:
    db: Database = app.extensions["wetbank.db"]
    return db


def count(app: Flask, model: Any) -> int:
    with database(app).transaction() as session:
        return int(session.execute(select(func.count()).select_from(model)).scalar_one())


def reserved_for_a_plan(kit: Kit) -> dict[str, Any]:
    """A funded account, an approved plan of 2,500 sq ft at 2:1 and a reservation of 5,000."""
    lgu = kit.lgu()
    funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
    plan = kit.approved_plan(lgu, DAY, area_sqft=2_500, ratio="2")
    held = kit.reserve(funded["id"], plan["id"], funded["unrestricted_class"], 5_000)
    return {"lgu": lgu, "funded": funded, "plan": plan, "reservation": held}


def withdraw(kit: Kit, r: dict[str, Any]) -> Any:
    body = {"reservation_ids": [r["reservation"]["id"]]}
    return kit.api.post(f"/plans/{r['plan']['id']}/withdrawals", body, token=r["lgu"]["token"])


# --- frozen credits are not withdrawn -----------------------------------------------------------


@pytest.mark.parametrize("frozen", ["account", "site"])
def test_reserved_credits_of_a_frozen_account_or_site_are_not_withdrawn(kit, app, frozen):
    with on(DAY):
        r = reserved_for_a_plan(kit)
        funded = r["funded"]
        what = (
            f"/accounts/{funded['id']}"
            if frozen == "account"
            else f"/bank-sites/{funded['site_id']}"
        )
        ok(kit.api.post(f"{what}/freeze"), 200)
        before = (count(app, Withdrawal), kit.balances(funded["id"]))
        problem(withdraw(kit, r), 422, "account_frozen")
        assert (count(app, Withdrawal), kit.balances(funded["id"])) == before
        assert (
            ok(kit.api.get(f"/reservations/{r['reservation']['id']}"), 200)["status"] == "pending"
        )
        ok(kit.api.post(f"{what}/unfreeze"), 200)
        assert ok(withdraw(kit, r))["withdrawn_sqft"] == 5_000


# --- a freeze or a revocation waits for a write that has confirmed --------------------------------


def held_then(
    db: Database, first: Callable[[Any], Any], then: Callable[[Any], Any]
) -> dict[str, Any]:
    """``first(session)`` in a transaction kept open for a moment after it ran, while
    ``then(session)`` runs in a transaction of another thread; whether ``then`` was done before
    ``first`` committed, and both results."""
    out: dict[str, Any] = {}
    ran, committing = threading.Event(), threading.Event()

    def hold() -> None:
        try:
            with db.transaction() as session:
                out["first"] = first(session)
                ran.set()
                time.sleep(1.0)  # ``then`` starts meanwhile
                out["then_done_before_commit"] = "then" in out
                # set before the commit, not after it: ``then``, released by the commit, may
                # finish before this thread runs again
                committing.set()
        finally:
            ran.set()

    def other() -> None:
        ran.wait(10)
        try:
            out["then"] = db.run(then)
        except Exception as error:  # reported to the test
            out["then"] = error
        out["then_after_commit"] = committing.is_set()

    threads = [threading.Thread(target=hold), threading.Thread(target=other)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(40)
    assert not any(thread.is_alive() for thread in threads)
    return out


def test_a_freeze_waits_for_a_transfer_that_has_confirmed_the_account(kit, app):
    db = database(app)
    with on(DAY):
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        target = kit.account(funded["holder"]["id"], 5)
        request = transfers.TransferRequest(
            funded["id"], target, 1_000, credit_class=funded["unrestricted_class"]
        )
        out = held_then(
            db,
            lambda session: transfers.make_transfer(session, SYSTEM, request, None),
            lambda session: (
                parties.set_account_status(session, funded["id"], "frozen", SYSTEM).status
            ),
        )
        assert out["then"] == "frozen"
        assert not out["then_done_before_commit"] and out["then_after_commit"]
        assert kit.balances(target)[funded["unrestricted_class"]]["posted_sqft"] == 1_000
        refused = kit.api.post(
            "/transfers",
            {
                "from_account_id": funded["id"],
                "to_account_id": target,
                "credit_class": funded["unrestricted_class"],
                "amount_sqft": 1_000,
            },
        )
        problem(refused, 422, "account_frozen")


def test_a_site_freeze_waits_for_a_reservation_that_has_confirmed_the_site(kit, app):
    db = database(app)
    with on(DAY):
        lgu = kit.lgu()
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=2_500, ratio="2")
        request = reservations.ReservationRequest(
            funded["id"],
            plan["id"],
            5_000,
            date(2027, 12, 31),
            credit_class=funded["unrestricted_class"],
        )
        out = held_then(
            db,
            lambda session: reservations.reserve(session, SYSTEM, request, None),
            lambda session: (
                parties.set_site_frozen(session, funded["site_id"], True, SYSTEM).frozen
            ),
        )
        assert out["then"] is True
        assert not out["then_done_before_commit"] and out["then_after_commit"]
        assert kit.balances(funded["id"])[funded["unrestricted_class"]]["reserved_sqft"] == 5_000


def test_a_revocation_waits_for_a_write_that_has_confirmed_the_token(kit, app, api):
    db = database(app)
    created = ok(api.post("/tokens", {"role": "board", "name": "in flight"}))
    out = held_then(
        db,
        lambda session: access.confirm_token(session, created["id"]),
        lambda session: access.revoke_token(session, created["id"]),
    )
    assert out["then"] is True
    assert not out["then_done_before_commit"] and out["then_after_commit"]
    # and a write confirming it now is refused
    with pytest.raises(access.TokenRevoked), db.transaction() as session:
        access.confirm_token(session, created["id"])


def test_a_token_revoked_meanwhile_revokes_nothing(app, api):
    """Two board tokens revoking each other: the second to go sees its own token revoked."""
    db = database(app)
    first = ok(api.post("/tokens", {"role": "board", "name": "first"}))
    second = ok(api.post("/tokens", {"role": "board", "name": "second"}))
    with db.transaction() as session:
        access.revoke_token(session, second["id"], by=first["id"])
    with pytest.raises(access.TokenRevoked), db.transaction() as session:
        access.revoke_token(session, first["id"], by=second["id"])
    assert ok(api.get("/me", token=first["token"]), 200)["token_id"] == first["id"]
    # revoking one's own token is allowed (the request was authenticated before it)
    with db.transaction() as session:
        assert access.revoke_token(session, first["id"], by=first["id"]) is True
    # and once revoked it revokes nothing, not even itself again
    with pytest.raises(access.TokenRevoked), db.transaction() as session:
        access.revoke_token(session, first["id"], by=first["id"])


# --- concurrent voids ----------------------------------------------------------------------------


# --- PostgreSQL: a write held in flight by a busy lot ---------------------------------------------


@contextmanager
def busy_lot(app: Flask, backend: str, lot_id: str) -> Iterator[Callable[[], None]]:
    """On PostgreSQL, hold the lot's ledger balance row ``FOR UPDATE`` (as a long transaction
    drawing on it would) until the block ends; yields a wait for a session to queue behind it.
    On SQLite (one writer at a time, no row locks) nothing is held."""
    if backend != "postgresql":
        yield lambda: None
        return
    engine = database(app).engine
    with engine.connect() as holder, engine.connect() as watcher:
        watcher = watcher.execution_options(isolation_level="AUTOCOMMIT")
        pid = holder.execute(text("SELECT pg_backend_pid()")).scalar_one()
        holder.execute(
            text(
                "SELECT 1 FROM ledger_balances AS b JOIN lots AS l "
                "ON l.ledger_account_id = b.account_id WHERE l.id = :lot FOR UPDATE OF b"
            ),
            {"lot": lot_id},
        ).one()
        waiting = text(
            "SELECT count(*) FROM pg_stat_activity WHERE :p = ANY(pg_blocking_pids(pid))"
        )

        def wait_for_a_waiter() -> None:
            deadline = time.monotonic() + 30
            while not watcher.execute(waiting, {"p": pid}).scalar_one():
                assert time.monotonic() < deadline, "nothing came to wait for the lot"
                time.sleep(0.02)

        try:
            yield wait_for_a_waiter
        finally:
            holder.rollback()


def test_a_transfer_waiting_on_a_busy_lot_when_the_account_is_frozen_does_not_commit(
    kit, app, backend
):
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing waits on a lot")
    with on(DAY):
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        target = kit.account(funded["holder"]["id"], 5)
        (lot_id,) = kit.lots_by_id(funded["id"])
        body = {
            "from_account_id": funded["id"],
            "to_account_id": target,
            "credit_class": funded["unrestricted_class"],
            "amount_sqft": 1_000,
        }
        before = count(app, Transfer), posted(kit, funded)

        def freeze() -> None:
            ok(kit.api.post(f"/accounts/{funded['id']}/freeze"), 200)

        token = funded["holder"]["token"]
        answer = sent_while_the_lot_is_busy(app, backend, lot_id, "/transfers", body, token, freeze)
        problem(answer, 422, "account_frozen")
        assert (count(app, Transfer), posted(kit, funded)) == before


def sent_while_the_lot_is_busy(
    app: Flask,
    backend: str,
    lot_id: str,
    path: str,
    body: dict[str, Any],
    token: str,
    meanwhile: Callable[[], None],
) -> Any:
    """The answer to ``POST path`` sent while another transaction holds ``lot_id``, after
    ``meanwhile`` ran as the request waited for the lot (its draw read what was before)."""
    answered: list[Any] = []

    def send() -> None:
        headers = {"Authorization": f"Bearer {token}"}
        answered.append(app.test_client().post(f"/api/v1{path}", json=body, headers=headers))

    sender = threading.Thread(target=send)
    with busy_lot(app, backend, lot_id) as wait_for_a_waiter:
        sender.start()
        wait_for_a_waiter()
        meanwhile()
        assert sender.is_alive()  # the request still waits for the lot
    sender.join(30)
    return answered[0]


def test_a_transfer_refused_at_its_last_word_names_the_accounts_before_the_sites(kit, app, backend):
    """The target closed and the source's site frozen while the transfer waited: it is refused
    for the closed account, as it would be had both been so before it started (the accounts are
    checked before the lots are drawn on); nothing is written.  The target already has its
    receiving lot, emptied, so that the transfer's record statement is the first to see the
    close."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing waits on a lot")
    with on(DAY):
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        target = kit.account(funded["holder"]["id"], 5)
        (lot_id,) = kit.lots_by_id(funded["id"])
        body = {
            "from_account_id": funded["id"],
            "to_account_id": target,
            "credit_class": funded["unrestricted_class"],
            "amount_sqft": 1_000,
        }
        back = dict(body, from_account_id=target, to_account_id=funded["id"])
        for there_and_back in (body, back):
            ok(kit.api.post("/transfers", there_and_back, token=funded["holder"]["token"]), 201)
        before = count(app, Transfer), posted(kit, funded)

        def close_the_target_and_freeze_the_site() -> None:
            ok(kit.api.post(f"/accounts/{target}/close"), 200)
            ok(kit.api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)

        answer = sent_while_the_lot_is_busy(
            app,
            backend,
            lot_id,
            "/transfers",
            body,
            funded["holder"]["token"],
            close_the_target_and_freeze_the_site,
        )
        assert problem(answer, 409, "conflict")["detail"] == "a closed account receives nothing"
        assert (count(app, Transfer), posted(kit, funded)) == before
        # and the same request now, both refusals standing, hears the same
        again = kit.api.post("/transfers", body, token=funded["holder"]["token"])
        assert problem(again, 409, "conflict")["detail"] == "a closed account receives nothing"


def test_a_reservation_refused_at_its_last_word_names_the_account_before_the_sites(
    kit, app, backend
):
    """The account and its lot's site frozen while the reservation waited: refused for the
    account, as a reservation from a frozen account is; nothing is reserved."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing waits on a lot")
    with on(DAY):
        lgu = kit.lgu()
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=2_500, ratio="2")
        (lot_id,) = kit.lots_by_id(funded["id"])
        body = {
            "plan_id": plan["id"],
            "credit_class": funded["unrestricted_class"],
            "amount_sqft": 5_000,
            "expires_on": "2027-12-31",
        }

        def freeze_the_account_and_the_site() -> None:
            ok(kit.api.post(f"/accounts/{funded['id']}/freeze"), 200)
            ok(kit.api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)

        answer = sent_while_the_lot_is_busy(
            app,
            backend,
            lot_id,
            f"/accounts/{funded['id']}/reservations",
            body,
            kit.api.token,
            freeze_the_account_and_the_site,
        )
        refused = problem(answer, 422, "account_frozen")
        assert refused.get("account_id") == funded["id"], refused
        assert "bank_site_ids" not in refused
        assert kit.balances(funded["id"])[funded["unrestricted_class"]]["reserved_sqft"] == 0


def test_an_appeal_reversing_withdrawals_from_two_lots_waits_for_the_lower_lot_first(
    kit, app, backend
):
    """A plan's two withdrawals drew on two lots, the first on the newer one (the higher
    ledger account id).  Reversed on appeal while another transaction holds the older lot, the
    reversal waits for it holding neither lot, as a transfer or a reservation drawing on both
    locks them (ascending account id): none of them can hold one lot while waiting for the
    other, so none deadlocks.  Once the older lot is free, both withdrawals are reversed and
    the credits are back in their lots.  On SQLite (one writer at a time) only the outcome is
    checked."""
    lgu = kit.lgu()
    with on("2026-08-20"):
        older = kit.funded_account(day="2026-08-20", service_area=5, unrestricted=1_600)
        newer = kit.funded_account(day="2026-08-20", service_area=5, unrestricted=18_000)
        (older_lot,), (newer_lot,) = kit.lots_by_id(older["id"]), kit.lots_by_id(newer["id"])
    assert ledger_account(app, older_lot) < ledger_account(app, newer_lot)
    plan = noticed_decision(kit, lgu)  # 9,000 sq ft at 2:1, approved, noticed 2026-09-04
    path = f"/plans/{plan['id']}"
    with on("2026-09-04"):
        first = kit.reserve(newer["id"], plan["id"], newer["unrestricted_class"], 18_000)
        body = {"reservation_ids": [first["id"]]}
        ok(kit.api.post(f"{path}/withdrawals", body, token=lgu["token"]))
    with on("2026-09-08"):
        # 9,800 sq ft, less than 10% larger: the same application, 19,600 sq ft required
        body = {"area_sqft": 9_800, "displacement_ft": 0, "received_on": "2026-09-08"}
        ok(kit.api.post(f"{path}/revisions", body, token=lgu["token"]))
        second = kit.reserve(older["id"], plan["id"], older["unrestricted_class"], 1_600)
        body = {"reservation_ids": [second["id"]]}
        ok(kit.api.post(f"{path}/withdrawals", body, token=lgu["token"]))
        withdrawn = kit.available_by_lot(older["id"]) | kit.available_by_lot(newer["id"])
    assert withdrawn == {older_lot: 0, newer_lot: 0}
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    with on("2026-10-20"):
        answer, free = reverse_while_held(kit, app, backend, appeal, older_lot, [newer_lot])
        newer_was_free = free[newer_lot]
        assert ok(answer)["decision"]["outcome"] == "plan_reversed"
        shown = kit.get_plan(plan["id"])
        back = kit.available_by_lot(older["id"]) | kit.available_by_lot(newer["id"])
    assert newer_was_free, "the reversal held the newer lot while it waited for the older one"
    assert all(w["reversal_transaction_id"] for w in shown["withdrawals"])
    assert len(shown["withdrawals"]) == 2
    assert back == {older_lot: 1_600, newer_lot: 18_000}


def test_an_appeal_voiding_reservations_and_reversing_a_withdrawal_waits_for_the_lowest_lot_first(
    kit, app, backend
):
    """Three lots, by ledger account id: a plan's withdrawal drew on the middle one, and two of
    its reservations still pending hold credits in the highest (reserved first) and the lowest.
    Reversed on appeal while another transaction holds the lowest lot, the decision waits for it
    holding neither of the others: the lots of the withdrawal it reverses and of the
    reservations it voids are locked together, ascending, as a transfer or a reservation drawing
    on them locks them, so none deadlocks.  Once the lowest lot is free, the withdrawal is
    reversed, both reservations are voided and every credit is back in its lot.  On SQLite (one
    writer at a time) only the outcome is checked."""
    lgu = kit.lgu()
    with on("2026-08-20"):
        funded = [
            kit.funded_account(day="2026-08-20", service_area=5, unrestricted=sqft)
            for sqft in (1_000, 18_000, 2_000)
        ]
        low, middle, high = funded
        (low_lot,), (middle_lot,), (high_lot,) = (kit.lots_by_id(f["id"]) for f in funded)
    accounts = [ledger_account(app, lot) for lot in (low_lot, middle_lot, high_lot)]
    assert accounts == sorted(accounts)
    plan = noticed_decision(kit, lgu)  # 9,000 sq ft at 2:1, approved, noticed 2026-09-04
    with on("2026-09-04"):
        # reserved before the withdrawal met the requirement (none is taken after it)
        first = kit.reserve(high["id"], plan["id"], high["unrestricted_class"], 2_000)
        second = kit.reserve(low["id"], plan["id"], low["unrestricted_class"], 1_000)
        used = kit.reserve(middle["id"], plan["id"], middle["unrestricted_class"], 18_000)
        body = {"reservation_ids": [used["id"]]}
        ok(kit.api.post(f"/plans/{plan['id']}/withdrawals", body, token=lgu["token"]))
    with on("2026-09-08"):
        taken = {lot: n for f in funded for lot, n in kit.available_by_lot(f["id"]).items()}
    assert taken == {low_lot: 0, middle_lot: 0, high_lot: 0}
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    with on("2026-10-20"):
        answer, free = reverse_while_held(
            kit, app, backend, appeal, low_lot, [middle_lot, high_lot]
        )
        assert ok(answer)["decision"]["outcome"] == "plan_reversed"
        shown = kit.get_plan(plan["id"])
        voided = [ok(kit.api.get(f"/reservations/{r['id']}"), 200) for r in (first, second)]
        back = {lot: n for f in funded for lot, n in kit.available_by_lot(f["id"]).items()}
    assert free == {middle_lot: True, high_lot: True}, "it held a lot while it waited"
    assert [w["reversal_transaction_id"] is not None for w in shown["withdrawals"]] == [True]
    assert [r["status"] for r in voided] == ["voided", "voided"]
    assert back == {low_lot: 1_000, middle_lot: 18_000, high_lot: 2_000}


def reverse_while_held(
    kit: Kit, app: Flask, backend: str, appeal: dict[str, Any], held: str, others: list[str]
) -> tuple[Any, dict[str, bool]]:
    """The board reverses the plan on appeal (decided 2026-10-20) while another transaction holds
    lot ``held``: the decision's answer once that lot is free, and for each lot of ``others``
    whether it was free while the decision waited (on SQLite, one writer at a time, nothing is
    checked: all count as free)."""
    answered: list[Any] = []

    def reverse() -> None:
        headers = {"Authorization": f"Bearer {kit.api.token}"}
        body = {"outcome": "plan_reversed", "decided_on": "2026-10-20"}
        path = f"/api/v1/appeals/{appeal['id']}/decision"
        answered.append(app.test_client().post(path, json=body, headers=headers))

    reversal = threading.Thread(target=reverse)
    with busy_lot(app, backend, held) as wait_for_a_waiter:
        reversal.start()
        wait_for_a_waiter()
        free = {lot: backend != "postgresql" or lot_is_free(app, lot) for lot in others}
        assert backend != "postgresql" or reversal.is_alive()  # waiting for the held lot
    reversal.join(30)
    return answered[0], free


def ledger_account(app: Flask, lot_id: str) -> int:
    with database(app).transaction() as session:
        found = session.execute(
            text("SELECT ledger_account_id FROM lots WHERE id = :lot"), {"lot": lot_id}
        )
        return int(found.scalar_one())


def lot_is_free(app: Flask, lot_id: str) -> bool:
    """On PostgreSQL, whether no transaction holds the lot's balance row (asked without
    waiting, and let go at once)."""
    with database(app).engine.connect() as probe:
        probe = probe.execution_options(isolation_level="AUTOCOMMIT")
        try:
            probe.execute(
                text(
                    "SELECT 1 FROM ledger_balances AS b JOIN lots AS l "
                    "ON l.ledger_account_id = b.account_id WHERE l.id = :lot "
                    "FOR UPDATE OF b NOWAIT"
                ),
                {"lot": lot_id},
            ).one()
        except DBAPIError as error:
            if getattr(error.orig, "sqlstate", None) == "55P03":  # lock_not_available
                return False
            raise
        return True


def posted(kit: Kit, funded: dict[str, Any]) -> int:
    return int(kit.balances(funded["id"])[funded["unrestricted_class"]]["posted_sqft"])


def test_two_decisions_on_one_appeal_at_once_the_second_is_a_conflict(kit, app):
    """The board reverses a plan on appeal while a second decision on the same appeal (upheld)
    waits for the plan: the second sees the first and is refused; the reversal stands."""
    db = database(app)
    lgu = kit.lgu()
    _plan, appeal = granted_appeal(kit, lgu)
    day = date(2026, 10, 20)

    def decide(outcome: str) -> Callable[[Any], Any]:
        return lambda _session: appeals.decide_appeal(
            db, SYSTEM, appeal["id"], outcome, day, None, None
        )

    with on("2026-10-20"):
        out = held_then(db, decide("plan_reversed"), decide("plan_upheld"))
        shown = ok(kit.api.get(f"/appeals/{appeal['id']}"), 200)
    assert out["first"].decision.outcome == "plan_reversed", out["first"]
    assert isinstance(out["then"], Conflict), out["then"]
    assert not out["then_done_before_commit"]
    assert shown["decision"]["outcome"] == "plan_reversed"


def test_a_reservation_for_a_plan_being_reversed_on_appeal_waits_and_is_refused(kit, app):
    """A holder reserves credits for a plan while the board's reversal of it on appeal is being
    written: the reservation waits for the plan and is refused as for a denied plan, rather than
    slipping in after the reversal voided the plan's reservations; available is unchanged."""
    db = database(app)
    lgu = kit.lgu()
    plan, appeal = granted_appeal(kit, lgu)
    with on("2026-10-07"):
        funded = kit.funded_account(day="2026-10-07", service_area=5, unrestricted=10_000)
    request = reservations.ReservationRequest(
        funded["id"],
        plan["id"],
        1_000,
        date(2027, 12, 31),
        credit_class=funded["unrestricted_class"],
    )
    with on("2026-10-20"):
        out = held_then(
            db,
            lambda _session: appeals.decide_appeal(
                db, SYSTEM, appeal["id"], "plan_reversed", date(2026, 10, 20), None, None
            ),
            lambda _session: reservations.reserve_for_plan(db, SYSTEM, request, None),
        )
        assert isinstance(out["then"], Conflict), out["then"]
        assert not out["then_done_before_commit"]
        held = kit.balances(funded["id"])[funded["unrestricted_class"]]
    assert (held["reserved_sqft"], held["available_sqft"]) == (0, 10_000)


def _appeal_payment(db: Database, appeal: dict[str, Any], kind: str, cents: int) -> Any:
    request = money.PaymentRequest(
        kind, cents, "Petitioner", date(2026, 9, 24), appeal_id=appeal["id"]
    )
    return lambda _session: money.receive_payment(db, SEED, SYSTEM, request, None)


def test_two_filing_fees_for_one_appeal_at_once_the_second_is_a_conflict(kit, app):
    """The board books the $200 fee twice at once: the second waits for the first and is
    refused; one fee is booked (the fee is never refunded, so a second would stay)."""
    db = database(app)
    lgu = kit.lgu()
    appeal = ok(petition(kit, noticed_decision(kit, lgu)))
    with on("2026-09-24"):
        fee = _appeal_payment(db, appeal, "appeal_filing_fee", 20_000)
        out = held_then(db, fee, fee)
        booked = [
            p
            for p in ok(kit.api.get(f"/payments?plan_id={appeal['plan_id']}"), 200)["items"]
            if p["kind"] == "appeal_filing_fee"
        ]
    assert isinstance(out["then"], Conflict), out["then"]
    assert not out["then_done_before_commit"]
    assert [p["amount_cents"] for p in booked] == [20_000]


def test_security_posted_while_the_petition_is_granted_waits_and_is_refused(kit, app):
    """Security booked while the grant is being written: it waits for the grant and is refused
    (security is posted before the decision), rather than staying unreturned after it."""
    db = database(app)
    lgu = kit.lgu()
    appeal = ok(petition(kit, noticed_decision(kit, lgu)))
    with on("2026-09-25"):
        ok(
            kit.api.post(
                "/payments",
                {
                    "kind": "appeal_filing_fee",
                    "amount_cents": 20_000,
                    "payer": "Petitioner",
                    "received_on": "2026-09-24",
                    "appeal_id": appeal["id"],
                },
            )
        )
        grant = appeals.PetitionDecision(granted=True, decided_on=date(2026, 9, 25))
        out = held_then(
            db,
            lambda _session: appeals.decide_petition(db, SYSTEM, appeal["id"], grant, None),
            _appeal_payment(db, appeal, "appeal_security", 30_000),
        )
        kept = [
            p
            for p in ok(kit.api.get(f"/payments?plan_id={appeal['plan_id']}"), 200)["items"]
            if p["kind"] == "appeal_security" and p["status"] == "received"
        ]
    assert isinstance(out["then"], Conflict), out["then"]
    assert kept == []


def test_a_draw_on_a_security_of_a_plan_being_reversed_on_appeal_waits_and_is_refused(kit, app):
    """The LGU draws on the security of a project-specific replacement while the board's reversal
    of the plan on appeal is being written: the draw waits for the plan and is refused as for a
    plan no longer approved; nothing is drawn."""
    db = database(app)
    lgu = kit.lgu()
    with on("2026-09-01"):
        plan = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000, method="project_specific")
        path = f"/plans/{plan['id']}"
        kit.mail_summary(lgu, plan, "2026-09-01")
        ok(kit.api.post(f"{path}/decision", decision_body("approved", "2026-09-01")))
    with on("2026-09-04"):
        ok(
            kit.api.post(
                f"{path}/decision-notice", mailing("2026-09-04", plan=plan), token=lgu["token"]
            )
        )
    security = ok(hold(kit, plan, token=lgu["token"], issued_on="2026-09-05"))
    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    with on("2026-10-20"):
        out = held_then(
            db,
            lambda _session: appeals.decide_appeal(
                db, SYSTEM, appeal["id"], "plan_reversed", date(2026, 10, 20), None, None
            ),
            lambda _session: guarantees.draw(
                db, SYSTEM, security["id"], date(2026, 10, 20), 1_000, None
            ),
        )
        shown = ok(kit.api.get(f"/securities/{security['id']}"), 200)
    assert isinstance(out["then"], Conflict), out["then"]
    assert not out["then_done_before_commit"]
    assert (shown["status"], shown["drawn_cents"], shown["draws"]) == ("held", None, [])


def test_a_reservation_waits_for_a_withdrawal_meeting_the_plans_requirement_and_is_refused(
    kit, app
):
    """A reservation for a plan arrives while the withdrawal that meets the plan's whole
    requirement is being written: it waits for the plan and is refused, nothing being left to
    withdraw for it (``conflict``); nothing is reserved."""
    db = database(app)
    lgu = kit.lgu()
    with on(DAY):
        funded = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        code = funded["unrestricted_class"]
        plan = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1")
        used = kit.reserve(funded["id"], plan["id"], code, 1_000)
        request = reservations.ReservationRequest(
            funded["id"], plan["id"], 500, date(2027, 12, 31), credit_class=code
        )
        out = held_then(
            db,
            lambda _session: withdrawals.withdraw(db, SYSTEM, plan["id"], [used["id"]], None),
            lambda _session: reservations.reserve_for_plan(db, SYSTEM, request, None),
        )
        shown = kit.get_plan(plan["id"])
        available = kit.available(funded["id"], code)
    assert isinstance(out["first"], withdrawals.WithdrawalView), out["first"]
    assert isinstance(out["then"], Conflict), out["then"]
    assert "met" in str(out["then"])
    assert not out["then_done_before_commit"]
    assert [r["id"] for r in shown["reservations"]] == [used["id"]]
    assert available == 19_000


def test_of_8_concurrent_voids_of_one_reservation_one_is_200_and_7_conflict(kit, app, backend):
    with on(DAY):
        r = reserved_for_a_plan(kit)
        (lot_id,) = kit.lots_by_id(r["funded"]["id"])
        # in use a moment ago: no void records its use (which would lock the token's row)
        ok(kit.api.get("/me", token=r["funded"]["holder"]["token"]), 200)
        with busy_lot(app, backend, lot_id) as wait_for_a_waiter:
            finish = start_voids(app, r, 8)
            wait_for_a_waiter()
            time.sleep(0.3)  # the others queue behind the first
        results = finish()
        assert Counter(results) == Counter({(200, None): 1, (409, "conflict"): 7}), results
        shown = ok(kit.api.get(f"/reservations/{r['reservation']['id']}"), 200)
        assert shown["status"] == "voided"
        balances = kit.balances(r["funded"]["id"])
    assert balances[r["funded"]["unrestricted_class"]]["reserved_sqft"] == 0


def start_voids(
    app: Flask, r: dict[str, Any], clients: int
) -> Callable[[], list[tuple[int, str | None]]]:
    """Start ``clients`` voids of the reservation, released together, each with its own key;
    returns what waits for their answers."""
    token = r["funded"]["holder"]["token"]
    path = f"/api/v1/reservations/{r['reservation']['id']}/void"
    barrier = threading.Barrier(clients, timeout=30)
    results: list[Any] = [None] * clients

    def void(i: int) -> None:
        client = app.test_client()
        headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": uuid.uuid4().hex}
        barrier.wait()
        response = client.post(path, headers=headers)
        code = None if response.status_code == 200 else response.json["code"]
        results[i] = (response.status_code, code)

    threads = [threading.Thread(target=void, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()

    def finish() -> list[tuple[int, str | None]]:
        for thread in threads:
            thread.join(60)
        assert not any(thread.is_alive() for thread in threads)
        return results

    return finish


def holder_with_two_lots(kit: Kit) -> dict[str, Any]:
    """A funded account (10,000 sq ft deposited) with a newer second lot of the same class,
    100 sq ft transferred from another holder's account (``giver``)."""
    funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
    giver = kit.funded_account(day=DAY, service_area=5, unrestricted=1_000)
    code = funded["unrestricted_class"]
    assert giver["unrestricted_class"] == code
    ok(
        kit.api.post(
            "/transfers",
            {
                "from_account_id": giver["id"],
                "to_account_id": funded["id"],
                "credit_class": code,
                "amount_sqft": 100,
            },
        )
    )
    deposited, received = kit.lots(funded["id"])  # oldest first
    assert received["parent_lot_id"] is not None
    return {**funded, "giver": giver, "deposited": deposited["id"], "received": received["id"]}


def reservation_for(kit: Kit, funded: dict[str, Any], amount: int) -> Any:
    plan = kit.approved_plan(kit.lgu(), DAY, area_sqft=2_500, ratio="2")
    return reservations.ReservationRequest(
        funded["id"],
        plan["id"],
        amount,
        date(2027, 12, 31),
        credit_class=funded["unrestricted_class"],
    )


def test_a_reservation_locks_only_the_lots_it_draws_on(kit, app, backend):
    """While a reservation holds the lot it draws on, a transfer into its account that adds to
    the account's other lot goes through: the reservation did not lock that lot."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing waits on a lot")
    with on(DAY):
        funded = holder_with_two_lots(kit)
        request = reservation_for(kit, funded, 500)
        more = transfers.TransferRequest(
            funded["giver"]["id"], funded["id"], 7, credit_class=funded["unrestricted_class"]
        )
        out = held_then(
            database(app),
            lambda session: reservations.reserve(session, SYSTEM, request, None),
            lambda session: transfers.make_transfer(session, SYSTEM, more, None),
        )
        assert isinstance(out["first"], reservations.ReservationView), out["first"]
        assert isinstance(out["then"], transfers.TransferView), out["then"]
        assert out["then_done_before_commit"]
        assert [(lot.lot_id, lot.amount_sqft) for lot in out["first"].lots] == [
            (funded["deposited"], 500)
        ]
        assert kit.available_by_lot(funded["id"]) == {
            funded["deposited"]: 9_500,
            funded["received"]: 107,
        }


def test_a_reservation_that_finds_the_oldest_lot_drained_while_it_waited_draws_on_the_next(
    kit, app, backend
):
    """The reservation locks the oldest lot that looked enough; drained by the time the lock is
    granted, it holds the next one rather than refusing."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time: nothing waits on a lot")
    with on(DAY):
        funded = holder_with_two_lots(kit)
        target = kit.account(funded["holder"]["id"], 5)
        drain = transfers.TransferRequest(
            funded["id"], target, 10_000, credit_class=funded["unrestricted_class"]
        )
        request = reservation_for(kit, funded, 50)
        out = held_then(
            database(app),
            lambda session: transfers.make_transfer(session, SYSTEM, drain, None),
            lambda session: reservations.reserve(session, SYSTEM, request, None),
        )
        assert isinstance(out["first"], transfers.TransferView), out["first"]
        assert isinstance(out["then"], reservations.ReservationView), out["then"]
        assert not out["then_done_before_commit"]
        assert [(lot.from_lot_id, lot.amount_sqft) for lot in out["first"].lots] == [
            (funded["deposited"], 10_000)
        ]
        assert [(lot.lot_id, lot.amount_sqft) for lot in out["then"].lots] == [
            (funded["received"], 50)
        ]
        assert kit.available_by_lot(funded["id"]) == {
            funded["deposited"]: 0,
            funded["received"]: 50,
        }


@pytest.mark.parametrize("first", ["void", "reversal"])
def test_a_holders_void_beside_a_reversal_on_appeal_ends_as_one_release(kit, app, first):
    """The holder voids a reservation for a plan while the board's reversal of it on appeal,
    which voids the plan's pending reservations, is being written.  Whichever comes first
    releases it; the other waits for it: a reversal then goes through (the reservation is no
    longer pending), a void is ``conflict`` (it is voided), never the ledger's
    ``idempotency_conflict`` of two releases of one hold made with different memos."""
    db = database(app)
    lgu = kit.lgu()
    plan, appeal = granted_appeal(kit, lgu)
    with on("2026-10-07"):
        funded = kit.funded_account(day="2026-10-07", service_area=5, unrestricted=10_000)
        held = kit.reserve(funded["id"], plan["id"], funded["unrestricted_class"], 5_000)

    def reverse(_session: Any) -> Any:
        return appeals.decide_appeal(
            db, SYSTEM, appeal["id"], "plan_reversed", date(2026, 10, 20), None, None
        )

    def void(_session: Any) -> Any:
        return reservations.void(db, SYSTEM, held["id"], None)

    with on("2026-10-20"):
        out = held_then(db, void, reverse) if first == "void" else held_then(db, reverse, void)
        if first == "void":
            assert out["then"].decision.outcome == "plan_reversed", out["then"]
        else:
            assert isinstance(out["then"], Conflict), out["then"]
            assert "voided" in str(out["then"])
        assert not out["then_done_before_commit"]
        assert ok(kit.api.get(f"/reservations/{held['id']}"), 200)["status"] == "voided"
        assert kit.get_plan(plan["id"])["outcome"] == "denied"
        balance = kit.balances(funded["id"])[funded["unrestricted_class"]]
    assert (balance["reserved_sqft"], balance["available_sqft"]) == (0, 10_000)


# --- a deposit's reversal and a buffer deposited beside its wetland -----------------------------


def test_a_wetlands_reversal_waits_for_a_buffer_deposited_beside_it_and_is_refused(kit, app):
    """The board deposits a buffer beside the site's only wetland deposit while the wetland's
    reversal is asked: the reversal takes the site's lock as a deposit does, so it waits for the
    buffer's deposit, sees its credit and is refused (``cap_exceeded``) rather than leaving the
    buffer credited beside no wetland."""
    db = database(app)
    holder = kit.holder()
    lgu = kit.lgu()
    site = kit.site(holder["id"], wetland_sqft=None)
    account = kit.account(holder["id"])
    wetland = [{"category": "replacement_wetland", "area_sqft": 10_000, "credit_sqft": 10_000}]
    with on(DAY):
        first = ok(
            kit.api.post(
                f"/accounts/{account}/deposits", kit.deposit_body(site, lgu["id"], wetland)
            )
        )
    buffer = deposits.DepositRequest(
        account_id=account,
        bank_site_id=site,
        effective_on=date(2026, 6, 1),
        banking_plan_reference="BP-buffer",
        banking_plan_approved_on=date(2026, 5, 1),
        banking_plan_lgu_id=lgu["id"],
        wetland_type="2",
        completed_on=date(2026, 4, 14),
        federally_approved=False,
        designated_for_replacement=True,
        paid_by_performer=True,
        paid_back_with_interest=False,
        actions=(ActionRequest("upland_buffer", 8_000, 7_500, established_on=date(2026, 4, 14)),),
    )
    with on(DAY):
        out = held_then(
            db,
            lambda session: deposits.make_deposit(session, SEED, SYSTEM, buffer, None),
            lambda _session: deposit_reversal.reverse_deposit(
                db,
                SEED,
                SYSTEM,
                first["id"],
                effective_on=date(2026, 6, 8),
                reason="x",
                request_id=None,
            ),
        )
        assert isinstance(out["then"], CapExceeded), out["then"]
        assert not out["then_done_before_commit"]
        shown = ok(kit.api.get(f"/deposits/{first['id']}"), 200)
        held = kit.balances(account)
    assert shown["reversal"] is None
    assert {code: row["posted_sqft"] for code, row in held.items()} == {
        "BSA5-T2-U": 10_000,
        "BSA5-T2-R": 7_500,
    }
