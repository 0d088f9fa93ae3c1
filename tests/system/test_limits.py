"""Issue 8 item 6: with a write limit configured, one client flooding writes gets 429 with
Retry-After, and reads from another client stay responsive meanwhile."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from tests.system.harness import Client, Server, scale, seed

pytestmark = pytest.mark.system


def test_a_client_flooding_writes_is_limited_and_reads_stay_responsive(
    pg_url: str, tmp_path: Path
) -> None:
    env = {"WETBANK_WRITE_RATE_LIMIT": "20/minute"}
    with Server(pg_url, 2, tmp_path / "server.log", env=env) as server:
        with Client(server.port) as setup:
            bank = seed(setup, pg_url, [10_000])
        flood_seconds = scale(4, 15)
        statuses: list[int] = []
        retry_after: list[str] = []
        stop = threading.Event()

        def flood() -> None:
            with Client(server.port, bank.holder_token) as writer:
                end = time.monotonic() + flood_seconds
                while time.monotonic() < end and not stop.is_set():
                    status, headers, _ = writer.call(
                        "POST", "/holders", {"name": "flood"}, token=bank.board
                    )
                    statuses.append(status)
                    if status == 429:
                        retry_after.append(headers.get("retry-after", ""))

        flooder = threading.Thread(target=flood)
        flooder.start()
        latencies = []
        with Client(server.port, bank.holder_token) as reader:
            while flooder.is_alive():
                started = time.monotonic()
                status, _h, body = reader.call("GET", f"/accounts/{bank.accounts[0]}")
                latencies.append(time.monotonic() - started)
                assert status == 200, body
        stop.set()
        flooder.join()
    # 20 writes a minute per token, per worker: at most 2 × 20 get through in the window
    assert statuses.count(201) <= 40
    assert statuses.count(429) > 0 and all(int(value) >= 1 for value in retry_after)
    assert set(statuses) <= {201, 429}
    latencies.sort()
    assert latencies and latencies[len(latencies) // 2] < 0.5  # reads answered promptly
