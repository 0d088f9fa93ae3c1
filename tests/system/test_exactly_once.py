"""Issue 8 §2: exactly once with ``Idempotency-Key``, against ``wetbank serve`` with 4 workers.

16 clients send the same write with the same key at once: one write happens, and all 16 get the
same 201 body (15 of them marked ``Idempotent-Replayed: true``).  The same key with another body
is 409 ``idempotency_conflict``; keys are scoped to the token.
"""

from __future__ import annotations

import uuid
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
    sql_scalar,
)

pytestmark = pytest.mark.system

CLIENTS = 16
ROUNDS = scale(1, 10)


def same_request_at_once(
    port: int, token: str, path: str, body: dict[str, Any], key: str
) -> list[tuple[int, dict[str, str], Any]]:
    def prepare(_i: int) -> Client:
        client = Client(port, token, timeout=60)
        client.conn.connect()
        return client

    def act(_i: int, client: Client) -> tuple[int, dict[str, str], Any]:
        try:
            return client.call("POST", path, body, headers={"Idempotency-Key": key})
        finally:
            client.close()

    results = run_together(CLIENTS, prepare, act, timeout=120)
    errors = [r for r in results if isinstance(r, BaseException)]
    assert not errors, errors[:3]
    return results


def assert_once(results: list[tuple[int, dict[str, str], Any]]) -> dict[str, Any]:
    """All 201 with one identical body; exactly one original, the rest replays."""
    assert Counter(status for status, _h, _b in results) == Counter({201: CLIENTS}), [
        (s, b) for s, _h, b in results if s != 201
    ]
    bodies = [body for _s, _h, body in results]
    assert all(body == bodies[0] for body in bodies), bodies
    replayed = Counter(headers.get("idempotent-replayed") for _s, headers, _b in results)
    assert replayed == Counter({None: 1, "true": CLIENTS - 1}), replayed
    return dict(bodies[0])


def test_16_identical_writes_with_one_key_write_once(pg_url: str, tmp_path: Path) -> None:
    with (
        Server(pg_url, workers=4, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [])
        for _round in range(ROUNDS):
            source = open_account(client, bank, 10_000)
            target = open_account(client, bank, 0)
            key = f"transfer-{uuid.uuid4()}"
            body = {
                "from_account_id": source,
                "to_account_id": target,
                "credit_class": CREDIT_CLASS,
                "amount_sqft": 700,
                "memo": key,
            }
            transfer = assert_once(
                same_request_at_once(server.port, bank.holder_token, "/transfers", body, key)
            )
            assert posted(client, source, bank.board) == 10_000 - 700
            assert posted(client, target, bank.board) == 700
            assert sql_scalar(pg_url, "SELECT count(*) FROM transfers WHERE memo = :m", m=key) == 1
            assert (
                sql_scalar(
                    pg_url,
                    "SELECT count(*) FROM ledger_transactions WHERE id = :t",
                    t=int(transfer["transaction_id"]),
                )
                == 1
            )

            # the same key with a different body is refused and writes nothing
            status, headers, problem = client.call(
                "POST",
                "/transfers",
                {**body, "amount_sqft": 701},
                token=bank.holder_token,
                headers={"Idempotency-Key": key},
            )
            assert status == 409 and problem["code"] == "idempotency_conflict", problem
            assert headers["content-type"].startswith("application/problem+json")
            # a later replay still answers the original result
            status, headers, again = client.call(
                "POST",
                "/transfers",
                body,
                token=bank.holder_token,
                headers={"Idempotency-Key": key},
            )
            assert (status, headers.get("idempotent-replayed"), again) == (201, "true", transfer)
            assert posted(client, source, bank.board) == 10_000 - 700

            # keys are scoped to the token: the board's use of the same key is its own write
            status, headers, other = client.call(
                "POST", "/transfers", body, token=bank.board, headers={"Idempotency-Key": key}
            )
            assert status == 201 and "idempotent-replayed" not in headers, other
            assert other["id"] != transfer["id"]
            assert posted(client, source, bank.board) == 10_000 - 1_400

            # and a reservation, a pending (two-phase) write
            plan = approved_plan(client, bank)
            key = f"reserve-{uuid.uuid4()}"
            reservation = {
                "plan_id": plan["id"],
                "credit_class": CREDIT_CLASS,
                "amount_sqft": 900,
                "expires_on": days_ago(-30),
            }
            held = assert_once(
                same_request_at_once(
                    server.port,
                    bank.holder_token,
                    f"/accounts/{source}/reservations",
                    reservation,
                    key,
                )
            )
            assert available(client, source, bank.board) == 10_000 - 1_400 - 900
            plan_now = client.ok("GET", f"/plans/{plan['id']}", status=200, token=bank.board)
            assert [r["id"] for r in plan_now["reservations"]] == [held["id"]]

        verify = client.ok("GET", "/audit/verify", status=200, token=bank.board)
        assert verify["ok"], verify
        server.assert_never_logged(bank.board, bank.holder_token, bank.lgu_token)
