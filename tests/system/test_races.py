"""Issue 21 §4: races close, against ``wetbank serve`` (4 workers) on PostgreSQL.

Each write is held in flight the way a busy lot holds it: a separate connection locks the lot's
ledger balance row ``FOR UPDATE`` (as a long transaction drawing on that lot would), the write is
sent and waits for that lock, and then the freeze or the revocation is sent.  It answers while
the write still waits; the lock is released; the write does not commit, and no row is written.
Of 30 concurrent voids of one reservation (each with its own ``Idempotency-Key``), held behind a
busy lot the same way, exactly one answers 200 and 29 answer 409 ``conflict``.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import create_engine, text

from tests.system.harness import (
    COUNTED_TABLES,
    CREDIT_CLASS,
    Bank,
    Client,
    Server,
    approved_plan,
    available,
    days_ago,
    open_account,
    posted,
    run_together,
    scale,
    seed,
    sql_scalar,
)

pytestmark = pytest.mark.system

HOLDING = 10_000
#: reserved, then withdrawn for a plan of 2,500 sq ft at 2:1
RESERVED = 5_000
VOIDERS = 30
ROUNDS = scale(1, 5)
WAIT = 30.0  # seconds: the bound of every wait below


# --- a busy lot --------------------------------------------------------------------------------


class BusyLot:
    """A connection of its own holding a lot's ledger balance row ``FOR UPDATE``, as a long
    transaction drawing on the lot would, until ``release``; and one that watches who waits."""

    def __init__(self, url: str, lot_id: str) -> None:
        self.engine = create_engine(url)
        # pg_stat_activity is read once per transaction: the watcher reads it outside one
        self.watcher = self.engine.connect().execution_options(isolation_level="AUTOCOMMIT")
        self.connection = self.engine.connect()
        self.connection.begin()
        self.pid = self.connection.execute(text("SELECT pg_backend_pid()")).scalar_one()
        locked = self.connection.execute(
            text(
                "SELECT b.account_id FROM ledger_balances AS b "
                "JOIN lots AS l ON l.ledger_account_id = b.account_id "
                "WHERE l.id = :lot FOR UPDATE OF b"
            ),
            {"lot": lot_id},
        ).all()
        assert len(locked) == 1, locked

    def waiters(self) -> int:
        """How many sessions wait for this lot."""
        return int(
            self.watcher.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity WHERE :pid = ANY(pg_blocking_pids(pid))"
                ),
                {"pid": self.pid},
            ).scalar_one()
        )

    def waiting_behind_waiters(self) -> int:
        """How many sessions wait for a lock held by a session that waits for this lot."""
        return int(
            self.watcher.execute(
                text(
                    "SELECT count(*) FROM pg_stat_activity AS w WHERE EXISTS ("
                    " SELECT FROM pg_stat_activity AS h"
                    " WHERE :pid = ANY(pg_blocking_pids(h.pid))"
                    " AND h.pid = ANY(pg_blocking_pids(w.pid)))"
                ),
                {"pid": self.pid},
            ).scalar_one()
        )

    def wait_until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + WAIT
        while not condition():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    def wait_for_a_waiter(self) -> None:
        self.wait_until(lambda: self.waiters() >= 1, "no write came to wait for the busy lot")

    def release(self) -> None:
        if self.connection.in_transaction():
            self.connection.rollback()
        self.connection.close()
        self.watcher.close()
        self.engine.dispose()


@contextmanager
def busy_lot(url: str, lot_id: str) -> Iterator[BusyLot]:
    lot = BusyLot(url, lot_id)
    try:
        yield lot
    finally:
        lot.release()


def send(
    pool: ThreadPoolExecutor, port: int, token: str, method: str, path: str, body: Any = None
) -> Future[tuple[int, Any]]:
    """The request, sent on a connection of its own from another thread."""

    def call() -> tuple[int, Any]:
        with Client(port, token, timeout=2 * WAIT) as client:
            status, _headers, parsed = client.call(method, path, body)
            return status, parsed

    return pool.submit(call)


def row_counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
                for table in (*COUNTED_TABLES, "transfer_lots", "reservation_lots")
            }
    finally:
        engine.dispose()


# --- the writes held in flight -----------------------------------------------------------------


@dataclass
class Scene:
    """A funded account (one lot, from a site of its own) and a write out of it, ready to send."""

    bank: Bank
    source: str
    lot_id: str
    token: str
    path: str
    body: dict[str, Any]


def scene(client: Client, url: str, write: str) -> Scene:
    bank = seed(client, url, [HOLDING])
    source = bank.accounts[0]
    lots = client.ok("GET", f"/accounts/{source}/lots", status=200, token=bank.board)["items"]
    assert len(lots) == 1
    lot_id = lots[0]["id"]
    if write == "transfer":
        target = open_account(client, bank, 0)
        body = {
            "from_account_id": source,
            "to_account_id": target,
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 1_000,
        }
        return Scene(bank, source, lot_id, bank.holder_token, "/transfers", body)
    plan = approved_plan(client, bank, area_sqft=RESERVED // 2)
    reservation = {
        "plan_id": plan["id"],
        "credit_class": CREDIT_CLASS,
        "amount_sqft": RESERVED,
        "expires_on": days_ago(-30),
    }
    path = f"/accounts/{source}/reservations"
    if write == "reservation":
        return Scene(bank, source, lot_id, bank.holder_token, path, reservation)
    held = client.ok("POST", path, reservation, token=bank.holder_token)
    body = {"reservation_ids": [held["id"]]}
    return Scene(bank, source, lot_id, bank.lgu_token, f"/plans/{plan['id']}/withdrawals", body)


def freeze_path(s: Scene, what: str) -> str:
    if what == "account":
        return f"/accounts/{s.source}/freeze"
    return f"/bank-sites/{s.bank.site_id}/freeze"


@pytest.mark.parametrize("write", ["transfer", "reservation", "withdrawal"])
def test_a_write_in_flight_when_a_freeze_answers_does_not_commit(
    pg_url: str, tmp_path: Path, write: str
) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
        ThreadPoolExecutor(4) as pool,
    ):
        for frozen in ("account", "site"):
            s = scene(client, pg_url, write)
            before = row_counts(pg_url)
            posted_before = posted(client, s.source, s.bank.board)
            with busy_lot(pg_url, s.lot_id) as lot:
                pending = send(pool, server.port, s.token, "POST", s.path, s.body)
                lot.wait_for_a_waiter()
                freeze = send(pool, server.port, s.bank.board, "POST", freeze_path(s, frozen))
                status, body = freeze.result(WAIT)
                assert status == 200, body
                assert not pending.done(), pending.result()  # the write still waits for the lot
            status, body = pending.result(WAIT)
            assert (status, body["code"]) == (422, "account_frozen"), (write, frozen, body)
            assert row_counts(pg_url) == before, (write, frozen)
            assert posted(client, s.source, s.bank.board) == posted_before

        verify = client.ok("GET", "/audit/verify", status=200, token=s.bank.board)
        assert verify["ok"], verify


def holder_token(client: Client, s: Scene, name: str) -> dict[str, Any]:
    return dict(
        client.ok(
            "POST",
            "/tokens",
            {"role": "holder", "name": name, "holder_id": s.bank.holder_id},
            token=s.bank.board,
        )
    )


def test_a_write_in_flight_when_its_token_is_revoked_does_not_commit(
    pg_url: str, tmp_path: Path
) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
        ThreadPoolExecutor(4) as pool,
    ):
        s = scene(client, pg_url, "transfer")
        token = holder_token(client, s, "revoked in flight")
        # in use a moment ago (a token's use is recorded at most once a minute)
        client.ok("GET", "/me", status=200, token=token["token"])
        before = row_counts(pg_url)
        with busy_lot(pg_url, s.lot_id) as lot:
            pending = send(pool, server.port, token["token"], "POST", s.path, s.body)
            lot.wait_for_a_waiter()
            revoke = send(pool, server.port, s.bank.board, "DELETE", f"/tokens/{token['id']}")
            status, body = revoke.result(WAIT)
            assert status == 204, body
            assert not pending.done(), pending.result()
        status, body = pending.result(WAIT)
        assert (status, body["code"]) == (401, "unauthorized"), body
        assert row_counts(pg_url) == before
        assert posted(client, s.source, s.bank.board) == HOLDING
        status, _h, body = client.call("POST", s.path, s.body, token=token["token"])
        assert (status, body["code"]) == (401, "unauthorized")

        verify = client.ok("GET", "/audit/verify", status=200, token=s.bank.board)
        assert verify["ok"], verify


def test_a_revocation_waits_for_a_write_recording_its_tokens_use(
    pg_url: str, tmp_path: Path
) -> None:
    """A token's first use in a minute is recorded in the write's own transaction, which keeps
    the token's row locked until it ends: the revocation answers only after the write has
    committed, and every later request with the token is refused."""
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
        ThreadPoolExecutor(4) as pool,
    ):
        s = scene(client, pg_url, "transfer")
        token = holder_token(client, s, "first use")
        with busy_lot(pg_url, s.lot_id) as lot:
            pending = send(pool, server.port, token["token"], "POST", s.path, s.body)
            lot.wait_for_a_waiter()
            revoke = send(pool, server.port, s.bank.board, "DELETE", f"/tokens/{token['id']}")
            # the revocation waits for the write, which waits for the lot
            lot.wait_until(lambda: lot.waiting_behind_waiters() >= 1, "the revocation ran")
            assert not revoke.done(), revoke.result()
        status, body = pending.result(WAIT)
        assert status == 201, body
        assert revoke.result(WAIT)[0] == 204
        assert posted(client, s.source, s.bank.board) == HOLDING - 1_000
        status, _h, body = client.call("POST", s.path, s.body, token=token["token"])
        assert (status, body["code"]) == (401, "unauthorized")


def test_30_concurrent_voids_of_one_reservation_one_200_and_29_conflict(
    pg_url: str, tmp_path: Path
) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        for _round in range(ROUNDS):
            s = scene(client, pg_url, "reservation")
            reservation = client.ok("POST", s.path, s.body, token=s.bank.holder_token)
            assert available(client, s.source, s.bank.board) == HOLDING - RESERVED
            results = void_at_once(pg_url, server.port, s, reservation["id"])
            errors = [r for r in results if isinstance(r, BaseException)]
            assert not errors, errors[:3]
            outcomes = Counter(
                200 if status == 200 else (status, parsed["code"]) for status, parsed in results
            )
            assert outcomes == Counter({200: 1, (409, "conflict"): VOIDERS - 1}), outcomes
            # one ledger transaction released the reservation's one pending transfer
            releases = sql_scalar(
                pg_url,
                "SELECT count(DISTINCT e.transaction_id) FROM ledger_entries AS e "
                "JOIN reservation_lots AS r ON r.pending_transaction_id = e.resolves_id "
                "WHERE r.reservation_id = :id",
                id=reservation["id"],
            )
            assert releases == 1
            shown = client.ok(
                "GET", f"/reservations/{reservation['id']}", status=200, token=s.bank.board
            )
            assert shown["status"] == "voided"
            assert available(client, s.source, s.bank.board) == HOLDING
            assert posted(client, s.source, s.bank.board) == HOLDING

        verify = client.ok("GET", "/audit/verify", status=200, token=s.bank.board)
        assert verify["ok"], verify


def void_at_once(url: str, port: int, s: Scene, reservation_id: str) -> list[Any]:
    """``VOIDERS`` voids of the reservation at once, each with its own key, one connection each,
    released together while the reservation's lot is busy, then the lot freed."""
    path = f"/reservations/{reservation_id}/void"

    def prepare(_i: int) -> Client:
        voider = Client(port, s.bank.holder_token, timeout=4 * WAIT)
        voider.conn.connect()
        return voider

    def act(_i: int, voider: Client) -> tuple[int, Any]:
        try:
            key = {"Idempotency-Key": uuid.uuid4().hex}
            status, _headers, parsed = voider.call("POST", path, headers=key)
            return status, parsed
        finally:
            voider.close()

    results: list[Any] = []

    def run() -> None:
        results.extend(run_together(VOIDERS, prepare, act, timeout=4 * WAIT))

    runner = threading.Thread(target=run, daemon=True)
    with busy_lot(url, s.lot_id) as lot:
        runner.start()
        lot.wait_for_a_waiter()
        time.sleep(0.5)  # the others pile up behind the first
    runner.join(5 * WAIT)
    assert not runner.is_alive()
    return results
