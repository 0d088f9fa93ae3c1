"""Issue 8 §3: crash safety.

During a stream of transfers (each with its own ``Idempotency-Key``), SIGKILL the gunicorn master
and every worker at once, restart, and check: every acknowledged (201) transfer is present, no
write is half present (a transfer row, its ledger transaction with its entries and its
idempotency record exist together or not at all), ``wetbank audit verify`` passes, and retrying
the unacknowledged requests with their keys completes each exactly once.

The PostgreSQL variant stops the database immediately under a running server (which must answer
503 problem details meanwhile) and starts it again (the server must recover without a restart).
It disturbs every other user of the database server, so it runs only in CI (``CI=true``) or in
``make reliability`` (``WETBANK_FULL_RELIABILITY=1``).
"""

from __future__ import annotations

import http.client
import os
import subprocess
import threading
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.system.harness import (
    CREDIT_CLASS,
    FULL,
    Bank,
    Client,
    Server,
    open_account,
    posted,
    scale,
    seed,
    sql_execute,
    sql_rows,
    wetbank,
)

pytestmark = pytest.mark.system

SEEDED = 1_000_000
THREADS = scale(4, 8)
CRASHES = scale(1, 5)
ACKS_BEFORE_CRASH = scale(25, 60)


@dataclass
class Write:
    key: str
    body: dict[str, Any]
    status: int | None = None  # None: sent, no answer (unacknowledged)
    response: Any = None


@dataclass
class Stream:
    """Client threads sending transfers, each with a unique key, recording what was answered."""

    port: int
    token: str
    pairs: list[tuple[str, str]]
    per_thread_limit: int = 2_000
    writes: list[Write] = field(default_factory=list)
    unexpected: list[Any] = field(default_factory=list)
    retry_on_503: bool = False

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._threads = [
            threading.Thread(target=self._run, args=(i,), daemon=True)
            for i in range(len(self.pairs))
        ]

    def start(self) -> Stream:
        for thread in self._threads:
            thread.start()
        return self

    def acked(self) -> int:
        with self._lock:
            return sum(1 for w in self.writes if w.status == 201)

    def stop(self, timeout: float = 60) -> None:
        self._stop.set()
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in self._threads), "a client thread hung"

    def _run(self, index: int) -> None:
        source, target = self.pairs[index]
        client = Client(self.port, self.token, timeout=30)
        deadline = time.monotonic() + 300
        try:
            for n in range(self.per_thread_limit):
                if self._stop.is_set() or time.monotonic() > deadline:
                    return
                key = f"crash-{uuid.uuid4()}"
                body = {
                    "from_account_id": source,
                    "to_account_id": target,
                    "credit_class": CREDIT_CLASS,
                    "amount_sqft": 1 + n % 9,
                    "memo": key,
                }
                write = Write(key, body)
                with self._lock:
                    self.writes.append(write)
                if not self._send(client, write):
                    return  # the server went away: this client stops
        finally:
            client.close()

    def _send(self, client: Client, write: Write) -> bool:
        for _attempt in range(200):
            try:
                status, headers, parsed = client.call(
                    "POST", "/transfers", write.body, headers={"Idempotency-Key": write.key}
                )
            except (OSError, http.client.HTTPException) as error:
                if self.retry_on_503:  # the server stays up: a broken connection is a failure
                    with self._lock:
                        self.unexpected.append(("connection", repr(error)))
                return False
            if status == 503 and self.retry_on_503:
                check_problem(status, headers, parsed, "service_unavailable")
                with self._lock:
                    self.unexpected.append(("503 seen", status))
                time.sleep(0.2)
                continue
            if status != 201:
                with self._lock:
                    self.unexpected.append((status, parsed))
                return False
            write.status, write.response = status, parsed
            return True
        return False


def check_problem(status: int, headers: dict[str, str], body: Any, code: str) -> None:
    assert headers.get("content-type", "").startswith("application/problem+json"), (
        status,
        headers,
        body,
    )
    assert body["code"] == code and body["status"] == status, body


def seeded_pairs(client: Client, url: str) -> tuple[Bank, list[tuple[str, str]]]:
    bank = seed(client, url, [])
    pairs = [
        (open_account(client, bank, SEEDED), open_account(client, bank, 0)) for _ in range(THREADS)
    ]
    return bank, pairs


def wait_until(predicate: Any, timeout: float, step: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step)
    return predicate()


def check_store(url: str, writes: list[Write], client: Client, bank: Bank) -> set[str]:
    """Every acknowledged write is there once, nothing is half there; the keys present."""
    keys = {w.key for w in writes}
    transfers = sql_rows(
        url,
        "SELECT t.memo, t.id, t.transaction_id, t.amount_sqft, "
        "  (SELECT count(*) FROM ledger_entries e WHERE e.transaction_id = t.transaction_id), "
        "  (SELECT count(*) FROM transfer_lots l WHERE l.transfer_id = t.id), "
        "  (SELECT count(*) FROM ledger_transactions x WHERE x.id = t.transaction_id) "
        "FROM transfers t",
    )
    memos = Counter(row[0] for row in transfers)
    assert all(count == 1 for count in memos.values()), "a transfer was written twice"
    present = set(memos)
    assert present <= keys, "a transfer nobody sent"
    for memo, _id, _tx, _amount, entries, lots, ledger_rows in transfers:
        assert (entries >= 2, lots >= 1, ledger_rows) == (True, True, 1), memo
    # the transfer and its ledger transaction commit together
    ledger_transfers = sql_rows(
        url, "SELECT count(*) FROM ledger_transactions WHERE kind = 'transfer'"
    )[0][0]
    assert ledger_transfers == len(transfers)
    # ... and with the stored result under the key (the holder's keys are exactly these)
    records = sql_rows(
        url,
        "SELECT r.key, r.status, r.body IS NOT NULL FROM idempotency_records r "
        "JOIN api_tokens t ON t.id = r.token_id WHERE t.holder_id = :h",
        h=bank.holder_id,
    )
    assert {r[0] for r in records} == present
    assert all(r[1] == 201 and r[2] for r in records)
    # acknowledged writes are all there, with the id the client was told
    by_memo = {row[0]: row[1] for row in transfers}
    for write in writes:
        if write.status == 201:
            assert by_memo.get(write.key) == write.response["id"], write.key
    # balances moved by exactly the transfers present
    moved = Counter[str]()
    for write in writes:
        if write.key in present:
            moved[write.body["from_account_id"]] += write.body["amount_sqft"]
    for source, target in {(w.body["from_account_id"], w.body["to_account_id"]) for w in writes}:
        assert posted(client, source, bank.board) == SEEDED - moved[source]
        assert posted(client, target, bank.board) == moved[source]
    return present


def audit_verify(url: str) -> None:
    result = wetbank(url, "audit", "verify")
    assert result.returncode == 0, result.stdout + result.stderr


def retry_unacknowledged(client: Client, bank: Bank, writes: list[Write], present: set[str]) -> int:
    """Retry each unanswered write with its key: each completes exactly once."""
    replays = 0
    for write in writes:
        if write.status == 201:
            continue
        status, headers, parsed = client.call(
            "POST",
            "/transfers",
            write.body,
            token=bank.holder_token,
            headers={"Idempotency-Key": write.key},
        )
        assert status == 201, parsed
        # committed before the crash though never answered: the retry replays it
        assert (headers.get("idempotent-replayed") == "true") == (write.key in present)
        replays += write.key in present
        write.status, write.response = status, parsed
    return replays


def test_sigkill_of_every_server_process_loses_no_acknowledged_write(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = Server(pg_url, workers=4, log_path=tmp_path / "server.log")
    server.start()
    try:
        with Client(server.port) as client:
            bank, pairs = seeded_pairs(client, pg_url)
        writes: list[Write] = []
        for crash in range(CRASHES):
            stream = Stream(server.port, bank.holder_token, pairs).start()
            try:
                assert wait_until(lambda s=stream: s.acked() >= ACKS_BEFORE_CRASH, 60)
                server.kill()  # SIGKILL to the process group: master and workers at once
            finally:
                stream.stop()
            assert not stream.unexpected, stream.unexpected[:5]
            writes.extend(stream.writes)
            unanswered = [w for w in stream.writes if w.status is None]
            assert unanswered, "the kill should interrupt requests in flight"

            server.start()
            with Client(server.port) as client:
                present = check_store(pg_url, writes, client, bank)
                audit_verify(pg_url)
                replays = retry_unacknowledged(client, bank, writes, present)
                assert check_store(pg_url, writes, client, bank) == {w.key for w in writes}
                audit_verify(pg_url)
            with capsys.disabled():
                print(
                    f"\n  crash {crash + 1}: {len(stream.writes)} sent, "
                    f"{len(stream.writes) - len(unanswered)} acknowledged, "
                    f"{len(unanswered)} unanswered ({replays} of them had committed)"
                )
        server.assert_never_logged(bank.board, bank.holder_token, bank.lgu_token)
    finally:
        server.stop()


def test_a_restarted_server_seals_what_a_crash_left_queued_before_any_request(
    pg_url: str, tmp_path: Path
) -> None:
    """A transaction committed by a process killed before its sealer ran stays queued.  The
    server started afterwards seals it with no write and no readiness probe (its start polls
    ``/health`` only, which touches no database), and then reports ready."""
    from ledger.db import Database
    from tests.integration.ledger_kit import move, open_accounts

    crashed = Database.from_url(pg_url)  # no sealer attached: as if killed right after commit
    try:
        source, target = open_accounts(crashed, "sqft", False, False)
        move(crashed, source, target, 5)
    finally:
        crashed.dispose()

    def queued() -> int:
        return int(sql_rows(pg_url, "SELECT count(*) FROM ledger_chain_queue")[0][0])

    assert queued() == 1
    with Server(pg_url, workers=2, log_path=tmp_path / "server.log") as server:
        assert wait_until(lambda: queued() == 0, 10, step=0.2), server.log()
        assert int(sql_rows(pg_url, "SELECT count(*) FROM ledger_chain")[0][0]) == 1
        with Client(server.port) as client:
            assert client.call("GET", "/ready")[0] == 200
    assert "sealing the hash chain failed" not in server.log_path.read_text()
    audit_verify(pg_url)


# --- PostgreSQL stopped and started under a running server ---------------------------------------


def _pg_version() -> str | None:
    try:
        versions = sorted(os.listdir("/etc/postgresql"))
    except OSError:
        return None
    return versions[-1] if versions else None


def _pg_ctl(action: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["pg_ctlcluster", "--skip-systemctl-redirect", str(_pg_version()), "main", action, *extra],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _pg_ready() -> bool:
    result = subprocess.run(
        ["pg_isready", "-q", "-h", "127.0.0.1", "-p", "5432"], timeout=10, check=False
    )
    return result.returncode == 0


DISRUPTIVE_ALLOWED = FULL or os.environ.get("CI", "").lower() == "true"


@pytest.mark.skipif(
    not DISRUPTIVE_ALLOWED,
    reason="stops the shared PostgreSQL: only with CI=true or WETBANK_FULL_RELIABILITY=1",
)
def test_postgresql_stop_and_start_under_a_running_server(
    pg_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if _pg_version() is None or subprocess.run(["which", "pg_ctlcluster"], check=False).returncode:
        pytest.skip("no pg_ctlcluster cluster to stop on this machine")
    server = Server(pg_url, workers=2, log_path=tmp_path / "server.log")
    server.start()
    try:
        with Client(server.port) as client:
            bank, pairs = seeded_pairs(client, pg_url)
        stream = Stream(server.port, bank.holder_token, pairs[:3], retry_on_503=True).start()
        during: list[tuple[int, dict[str, str], Any]] = []
        try:
            assert wait_until(lambda: stream.acked() >= 15, 60)
            sql_execute(pg_url, "CHECKPOINT")  # less WAL to replay: a shorter outage for everyone
            outage_began = time.monotonic()
            stopped = _pg_ctl("stop", "-m", "immediate")
            try:
                assert stopped.returncode == 0, stopped.stderr
                phases = [("stop", time.monotonic() - outage_began)]
                with Client(server.port, bank.board, timeout=10) as probe:
                    for path in ("/health", f"/accounts/{pairs[0][0]}"):
                        during.append(probe.call("GET", path))
                    during.append(
                        probe.call(
                            "POST",
                            "/holders",
                            {"name": "during the outage"},
                            headers={"Idempotency-Key": f"outage-{uuid.uuid4()}"},
                        )
                    )
                phases.append(("probes", time.monotonic() - outage_began))
            finally:
                started = _pg_ctl("start")
                phases.append(("start", time.monotonic() - outage_began))
                ready = wait_until(_pg_ready, 60, step=0.2)
            outage = time.monotonic() - outage_began
            assert started.returncode == 0, started.stderr
            assert ready, "PostgreSQL did not come back"
            # the same server process answers again, without a restart
            with Client(server.port, bank.board, timeout=10) as probe:

                def healthy() -> bool:
                    try:
                        return probe.call("GET", "/health")[0] == 200
                    except (OSError, http.client.HTTPException):
                        return False

                assert wait_until(healthy, 30, step=0.2)
            recovered = time.monotonic() - outage_began
            assert server.proc is not None and server.proc.poll() is None
            acked_before = stream.acked()
            assert wait_until(lambda: stream.acked() >= acked_before + 15, 60)
        finally:
            stream.stop()
        for status, headers, body in during:
            assert status == 503, (status, body)
            check_problem(status, headers, body, "service_unavailable")
            assert int(headers["retry-after"]) >= 1
        assert all(u[0] == "503 seen" for u in stream.unexpected), stream.unexpected[:5]
        with Client(server.port) as client:
            present = check_store(pg_url, stream.writes, client, bank)
            retry_unacknowledged(client, bank, stream.writes, present)
            assert check_store(pg_url, stream.writes, client, bank) == {
                w.key for w in stream.writes
            }
        audit_verify(pg_url)
        with capsys.disabled():
            print(
                f"\n  PostgreSQL down for {outage:.1f} s; the server answered again after "
                f"{recovered:.1f} s; {len(stream.writes)} transfers, "
                f"{sum(1 for u in stream.unexpected if u[0] == '503 seen')} 503s retried; "
                + ", ".join(f"{name} done at {at:.1f} s" for name, at in phases)
            )
    finally:
        if not _pg_ready():  # never leave the shared database server down
            _pg_ctl("start")
            wait_until(_pg_ready, 60, step=0.2)
        server.stop()


def test_an_unreachable_database_is_503_problem_details() -> None:
    """The mapping the PostgreSQL variant relies on, checked without stopping anything: a
    database that refuses connections is 503 ``service_unavailable`` with ``Retry-After``."""
    from api import create_app

    app = create_app(
        {
            "DATABASE_URL": "postgresql+psycopg://postgres@127.0.0.1:9/nowhere?connect_timeout=2",
            "PROPAGATE_EXCEPTIONS": False,
        }
    )
    try:
        client = app.test_client()
        for method, path in (("GET", "/api/v1/health"), ("POST", "/api/v1/holders")):
            response = client.open(
                path, method=method, json={"name": "x"}, headers={"Authorization": "Bearer wbt_x"}
            )
            assert response.status_code == 503, response.data
            assert response.mimetype == "application/problem+json"
            assert response.json["code"] == "service_unavailable"
            assert int(response.headers["Retry-After"]) >= 1
    finally:
        app.extensions["wetbank.db"].dispose()
