"""Issue 25 §3: ``/metrics`` scraped during a short load shows the counters moving, summed over
every gunicorn worker, and the access log is one JSON line per request.

Clients post transfers (each on a new connection, so that both workers take some) and a few
that must be refused, while another scrapes ``/metrics`` over and over.  The scrapes see the
transfer count rise while the load runs; once it is over, the counts equal exactly what the
clients were answered, though two processes served them.
"""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.system.harness import CREDIT_CLASS, Client, Server, run_together, scale, seed

pytestmark = pytest.mark.system

CLIENTS = 6
#: enough transfers that a load lasts several scrapes, however fast the service answers
EACH = scale(40, 60)
TRANSFERS = "/api/v1/transfers"


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``GET /metrics``, parsed: (sample name, sorted labels) -> value."""
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("GET", "/metrics")
        response = conn.getresponse()
        text = response.read().decode()
    finally:
        conn.close()
    assert response.status == 200, text
    out = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def transfers_posted(samples: dict[Any, float], status: str = "201") -> float:
    return value(
        samples, "wetbank_http_requests_total", method="POST", route=TRANSFERS, status=status
    )


def test_metrics_move_during_a_short_load_and_add_up_over_the_workers(
    pg_url: str, tmp_path: Path
) -> None:
    with (
        Server(pg_url, workers=2, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [10**6, 0])
        before = scrape(server.port)

        seen: list[float] = []
        done = threading.Event()

        def scraper() -> None:
            deadline = time.monotonic() + 120
            while not done.is_set() and time.monotonic() < deadline:
                seen.append(transfers_posted(scrape(server.port)))
                time.sleep(0.05)

        watcher = threading.Thread(target=scraper, daemon=True)
        watcher.start()

        def act(i: int, _prepared: None) -> list[int]:
            statuses = []
            for n in range(EACH):
                # a new connection each time: the workers take turns accepting them
                with Client(server.port, token=bank.holder_token) as own:
                    amount = 10**9 if n == 0 else 1  # the first of each is more than there is
                    status, _h, _b = own.call(
                        "POST",
                        "/transfers",
                        {
                            "from_account_id": bank.accounts[0],
                            "to_account_id": bank.accounts[1],
                            "credit_class": CREDIT_CLASS,
                            "amount_sqft": amount,
                        },
                    )
                statuses.append(status)
            return statuses

        try:
            results = run_together(CLIENTS, lambda _i: None, act, timeout=180)
        finally:
            done.set()
            watcher.join(30)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert not errors, errors[:3]
        statuses = [s for share in results for s in share]
        created, refused = statuses.count(201), statuses.count(422)
        assert (created, refused) == (CLIENTS * (EACH - 1), CLIENTS)

        after = scrape(server.port)
        # while the load ran, the scrapes saw the count rise
        during = sorted(set(seen))
        assert len(during) >= 3, seen
        assert seen == sorted(seen), "a counter went down"
        # afterwards, every worker's requests are counted, exactly once
        assert transfers_posted(after) - transfers_posted(before) == created
        assert transfers_posted(after, "422") - transfers_posted(before, "422") == refused
        problems = "wetbank_http_problems_total"
        moved = value(after, problems, code="insufficient_credits", status="422") - value(
            before, problems, code="insufficient_credits", status="422"
        )
        assert moved == refused
        latency = "wetbank_http_request_duration_seconds_count"
        assert value(after, latency, method="POST", route=TRANSFERS) - value(
            before, latency, method="POST", route=TRANSFERS
        ) == len(statuses)
        written = "wetbank_ledger_transactions_total"
        assert value(after, written) - value(before, written) == created
        assert value(after, "wetbank_database_up") == 1
        assert ("wetbank_chain_queue_length", ()) in after
        assert ("wetbank_chain_queue_oldest_age_seconds", ()) in after

    access = [
        json.loads(line)
        for line in server.log_path.read_text().splitlines()
        if line.startswith("{") and '"wetbank.access"' in line
    ]
    posted = [a for a in access if a["path"] == TRANSFERS]
    assert len(posted) == len(statuses)
    assert {a["status"] for a in posted} == {201, 422}
    assert all(a["request_id"] and a["actor"] and a["duration_ms"] >= 0 for a in posted)
    # two workers served them: the totals above added up across processes
    assert len({a["process"] for a in posted}) == 2
