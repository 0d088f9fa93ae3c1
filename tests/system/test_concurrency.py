"""Issue 8 §1: no double spend under concurrency, against ``wetbank serve`` with 4 workers.

32 clients at once (one connection each, released by a barrier) ask for 1,000 sq ft each of an
account holding exactly 10,000: exactly 10 succeed, 22 get ``insufficient_credits``, and the
account's available balance, polled throughout, is never negative and ends at 0.  The same for
transfers out; and 8 concurrent withdrawals of one plan post exactly once.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.system.harness import (
    CREDIT_CLASS,
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
)

pytestmark = pytest.mark.system

CLIENTS = 32
EACH = 1_000
HOLDING = 10_000
WINNERS = HOLDING // EACH
ROUNDS = scale(1, 5)


class Poller:
    """Reads an account's available balance over and over while the clients run (bounded)."""

    def __init__(self, port: int, account_id: str, token: str, limit: int = 5_000) -> None:
        self.port, self.account_id, self.token, self.limit = port, account_id, token, limit
        self.seen: list[int] = []
        self.errors: list[Any] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Poller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(30)
        assert not self._thread.is_alive()

    def _run(self) -> None:
        client = Client(self.port, self.token)
        deadline = time.monotonic() + 120
        try:
            while (
                not self._stop.is_set()
                and len(self.seen) < self.limit
                and time.monotonic() < deadline
            ):
                try:
                    self.seen.append(available(client, self.account_id, self.token))
                except Exception as error:  # noqa: BLE001 - checked by the test
                    self.errors.append(error)
                    return
        finally:
            client.close()


def hammer(port: int, token: str, method: str, path: str, body: dict[str, Any]) -> list[Any]:
    """``CLIENTS`` identical requests at once, one connection each; ``(status, body)`` each."""

    def prepare(_i: int) -> Client:
        client = Client(port, token, timeout=60)
        client.conn.connect()
        return client

    def act(_i: int, client: Client) -> tuple[int, Any]:
        try:
            status, _headers, parsed = client.call(method, path, body)
            return status, parsed
        finally:
            client.close()

    return run_together(CLIENTS, prepare, act, timeout=120)


def outcome_codes(results: list[Any]) -> Counter[Any]:
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    return Counter(
        201 if status == 201 else (status, parsed.get("code"), parsed.get("type") is not None)
        for status, parsed in results
    )


def expected_outcomes() -> Counter[Any]:
    return Counter({201: WINNERS, (422, "insufficient_credits", True): CLIENTS - WINNERS})


def test_32_concurrent_reservations_of_10_000_sqft_and_8_concurrent_withdrawals(
    pg_url: str, tmp_path: Path
) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [])
        for _round in range(ROUNDS):
            account = open_account(client, bank, HOLDING)
            # impact 5,000 sq ft at 2:1 needs exactly the 10,000 the winners reserve
            plan = approved_plan(client, bank, area_sqft=5_000)
            body = {
                "plan_id": plan["id"],
                "credit_class": CREDIT_CLASS,
                "amount_sqft": EACH,
                "expires_on": days_ago(-30),
            }
            with Poller(server.port, account, bank.board) as poller:
                path = f"/accounts/{account}/reservations"
                results = hammer(server.port, bank.holder_token, "POST", path, body)
            assert outcome_codes(results) == expected_outcomes()
            assert not poller.errors, poller.errors
            assert poller.seen and min(poller.seen) >= 0, poller.seen
            assert available(client, account, bank.board) == 0
            assert posted(client, account, bank.board) == HOLDING

            won = [parsed["id"] for status, parsed in results if status == 201]
            assert len(set(won)) == WINNERS
            assert all(parsed["amount_sqft"] == EACH for s, parsed in results if s == 201)
            plan_now = client.ok("GET", f"/plans/{plan['id']}", status=200, token=bank.board)
            pending = [r for r in plan_now["reservations"] if r["status"] == "pending"]
            assert sorted(r["id"] for r in pending) == sorted(won)

            # 8 concurrent withdrawals of the same plan with the same reservations: one posts
            def prepare(_i: int) -> Client:
                c = Client(server.port, bank.lgu_token, timeout=60)
                c.conn.connect()
                return c

            def act(
                _i: int, c: Client, plan_id: str = plan["id"], ids: list[str] = won
            ) -> tuple[int, Any]:
                try:
                    status, _h, parsed = c.call(
                        "POST", f"/plans/{plan_id}/withdrawals", {"reservation_ids": ids}
                    )
                    return status, parsed
                finally:
                    c.close()

            withdrawn = run_together(8, prepare, act, timeout=120)
            assert outcome_codes(withdrawn) == Counter({201: 1, (409, "conflict", True): 7})
            assert posted(client, account, bank.board) == 0
            assert available(client, account, bank.board) == 0
            plan_now = client.ok("GET", f"/plans/{plan['id']}", status=200, token=bank.board)
            assert len(plan_now["withdrawals"]) == 1
            assert plan_now["withdrawals"][0]["withdrawn_sqft"] == HOLDING
            assert {r["status"] for r in plan_now["reservations"]} == {"posted"}

        verify = client.ok("GET", "/audit/verify", status=200, token=bank.board)
        assert verify["ok"], verify
        server.assert_never_logged(bank.board, bank.holder_token, bank.lgu_token)


def test_32_concurrent_transfers_out_of_10_000_sqft(pg_url: str, tmp_path: Path) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [])
        for _round in range(ROUNDS):
            source = open_account(client, bank, HOLDING)
            target = open_account(client, bank, 0)
            body = {
                "from_account_id": source,
                "to_account_id": target,
                "credit_class": CREDIT_CLASS,
                "amount_sqft": EACH,
            }
            with Poller(server.port, source, bank.board) as poller:
                results = hammer(server.port, bank.holder_token, "POST", "/transfers", body)
            assert outcome_codes(results) == expected_outcomes()
            assert not poller.errors, poller.errors
            assert poller.seen and min(poller.seen) >= 0, poller.seen
            assert available(client, source, bank.board) == 0
            assert posted(client, source, bank.board) == 0
            assert posted(client, target, bank.board) == HOLDING
            assert available(client, target, bank.board) == HOLDING

        verify = client.ok("GET", "/audit/verify", status=200, token=bank.board)
        assert verify["ok"], verify
        server.assert_never_logged(bank.board, bank.holder_token, bank.lgu_token)
