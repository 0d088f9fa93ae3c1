"""A real ``wetbank serve`` process on a loopback port, a small HTTP client, and a seeded bank.

Everything here talks to 127.0.0.1 only, and every wait is bounded in time.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[2]
FULL = os.environ.get("WETBANK_FULL_RELIABILITY") == "1"
HOST = "127.0.0.1"
BASE = "/api/v1"
TEST_SECRET_KEY = "system-tests-" + "5" * 51


def scale(quick: int, full: int) -> int:
    """The CI (quick) size of a run, or its ``make reliability`` size."""
    return full if FULL else quick


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


def wetbank_command() -> list[str]:
    """The installed ``wetbank`` script next to this interpreter, else ``python -m api.cli``."""
    script = Path(sys.executable).parent / "wetbank"
    return [str(script)] if script.exists() else [sys.executable, "-m", "api.cli"]


def wetbank(url: str, *args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run a ``wetbank`` subcommand against ``url``."""
    env = dict(os.environ, DATABASE_URL=url)
    return subprocess.run(
        [*wetbank_command(), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def today() -> date:
    """Minnesota's date, as the service computes it."""
    from ledger import clock

    return clock.today()


def days_ago(n: int) -> str:
    return (today() - timedelta(days=n)).isoformat()


# --- the server ---------------------------------------------------------------------------------


class Server:
    """``wetbank serve --workers N`` in its own process group, on a free loopback port."""

    def __init__(
        self,
        url: str,
        workers: int,
        log_path: Path,
        env: dict[str, str] | None = None,
        port: int | None = None,
        command: list[str] | None = None,
        cwd: Path = ROOT,
        base_env: dict[str, str] | None = None,
    ) -> None:
        """``command`` is another ``wetbank`` (an installed one), run in ``cwd`` with
        ``base_env`` (default: this process's environment) under ``env``."""
        self.url, self.workers, self.log_path = url, workers, log_path
        self.extra_env = env or {}
        self.port = port or free_port()
        self.command, self.cwd, self.base_env = command, cwd, base_env
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self, timeout: float = 60) -> Server:
        base = os.environ if self.base_env is None else self.base_env
        env = dict(base, DATABASE_URL=self.url, **self.extra_env)
        env.pop("WETBANK_TEST_PG_URL", None)
        # every worker shares it; on PostgreSQL `wetbank serve` refuses to start without one
        env.setdefault("WETBANK_SECRET_KEY", TEST_SECRET_KEY)
        # the workers' metrics beside the log, not a temporary folder a SIGKILL leaves behind
        env.setdefault(
            "PROMETHEUS_MULTIPROC_DIR", str(self.log_path.parent / f"metrics-{self.port}")
        )
        log = self.log_path.open("ab")
        try:
            self.proc = subprocess.Popen(
                [
                    *(self.command or wetbank_command()),
                    "serve",
                    "--host",
                    HOST,
                    "--port",
                    str(self.port),
                    "--workers",
                    str(self.workers),
                ],
                env=env,
                cwd=self.cwd,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # its own process group: master and workers die together
            )
        finally:
            log.close()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited with {self.proc.returncode}: {self.log()}")
            probe = Client(self.port, timeout=2)
            try:
                status, _h, _b = probe.call("GET", "/health")
                if status == 200:
                    return self
            except (OSError, http.client.HTTPException):
                pass
            finally:
                probe.close()
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"the server did not answer within {timeout} s: {self.log()}")

    def kill(self) -> None:
        """SIGKILL the whole process group (gunicorn master and every worker) at once."""
        if self.proc is None:
            return
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self._wait_group_gone(self.proc.pid)
        self.proc = None

    def stop(self) -> None:
        """Stop gracefully (SIGTERM to gunicorn's master), then SIGKILL what is left.

        SIGTERM, not gunicorn's quick shutdown (SIGINT): gunicorn 27's gthread worker takes the
        master's SIGQUIT in a signal handler that shuts its thread pool down, and when the
        signal lands while the worker's main thread is handing a connection to that pool, the
        handler waits for a lock the interrupted thread holds, for ever (seen in about one stop
        in three right after a request).  A graceful stop takes about half a second.  A worker
        whose thread is reading a connection a browser opened ahead of need (and never used)
        waits for that read to time out; the tests have nothing in flight by then, so five
        seconds is enough to wait."""
        if self.proc is None:
            return
        pid = self.proc.pid
        try:
            os.kill(pid, signal.SIGTERM)
            self.proc.wait(timeout=5)
        except ProcessLookupError:
            pass
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=30)
        self._wait_group_gone(pid)
        self.proc = None

    @staticmethod
    def _wait_group_gone(pgid: int, timeout: float = 10) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.killpg(pgid, 0)
            except ProcessLookupError:
                return
            time.sleep(0.05)

    def assert_never_logged(self, *secrets: str) -> None:
        """The server's whole output (gunicorn's access log included) names no secret."""
        text = self.log_path.read_text(errors="replace")
        assert "POST /api/v1/" in text, "no access log: the check would prove nothing"
        for secret in secrets:
            assert secret not in text, "a token value was logged"

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def __enter__(self) -> Server:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# --- the client ---------------------------------------------------------------------------------


class Client:
    """One HTTP/1.1 connection to the server; JSON in, ``(status, headers, body)`` out."""

    def __init__(self, port: int, token: str | None = None, timeout: float = 30) -> None:
        self.port, self.token, self.timeout = port, token, timeout
        self.conn = http.client.HTTPConnection(HOST, port, timeout=timeout)

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        token: str | None = None,
        headers: dict[str, str] | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, dict[str, str], Any]:
        sent = dict(headers or {})
        chosen = token if token is not None else self.token
        if chosen:
            sent["Authorization"] = f"Bearer {chosen}"
        payload = raw
        if payload is None and body is not None:
            payload = json.dumps(body).encode()
            sent.setdefault("Content-Type", "application/json")
        try:
            self.conn.request(method, BASE + path, body=payload, headers=sent)
            response = self.conn.getresponse()
            data = response.read()
        except (OSError, http.client.HTTPException):
            # a broken keep-alive connection must not poison the next call
            self.conn.close()
            self.conn = http.client.HTTPConnection(HOST, self.port, timeout=self.timeout)
            raise
        out_headers = {k.lower(): v for k, v in response.getheaders()}
        if response.status >= 500 or "json" in out_headers.get("content-type", ""):
            try:
                parsed: Any = json.loads(data) if data else None
            except ValueError:
                parsed = data
        else:
            parsed = data
        return response.status, out_headers, parsed

    def ok(self, method: str, path: str, body: Any = None, status: int = 201, **kw: Any) -> Any:
        got, _headers, parsed = self.call(method, path, body, **kw)
        assert got == status, (method, path, got, parsed)
        return parsed


def run_together(
    count: int, prepare: Callable[[int], Any], act: Callable[[int, Any], Any], timeout: float = 60
) -> list[Any]:
    """``prepare(i)`` on ``count`` threads (e.g. open a connection), then release them together
    with a barrier to ``act(i, prepared)``; returns the results by index (an exception in its slot).
    """
    barrier = threading.Barrier(count, timeout=timeout)
    results: list[Any] = [None] * count

    def runner(i: int) -> None:
        try:
            prepared = prepare(i)
            barrier.wait()
            results[i] = act(i, prepared)
        except BaseException as error:  # reported to the test in the thread's slot
            results[i] = error

    threads = [threading.Thread(target=runner, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    assert not any(t.is_alive() for t in threads), "some clients did not finish in time"
    return results


# --- a seeded bank ------------------------------------------------------------------------------


CREDIT_CLASS = "BSA5-T2-U"


@dataclass
class Bank:
    """What ``seed`` made: tokens, parties and funded accounts (ids)."""

    board: str
    lgu_id: str
    lgu_token: str
    holder_id: str
    holder_token: str
    site_id: str
    accounts: list[str] = field(default_factory=list)


def board_token(url: str) -> str:
    """A board token, made in-process (as ``wetbank token create`` would)."""
    from bank import access
    from ledger.db import Database

    db = Database.from_url(url)
    try:
        with db.transaction() as session:
            _row, secret = access.create_token(session, role="board", name="system tests")
    finally:
        db.dispose()
    return secret


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:8]}"


def seed(client: Client, url: str, funded: list[int]) -> Bank:
    """A holder and an LGU with tokens, a bank site, and one account per ``funded`` amount,
    each holding exactly that many sq ft of ``CREDIT_CLASS`` (deposited through the API)."""
    board = board_token(url)
    client.token = board
    lgu = client.ok("POST", "/lgus", {"name": unique("LGU"), "kind": "county"})
    holder = client.ok("POST", "/holders", {"name": unique("Holder")})
    lgu_token = client.ok("POST", "/tokens", {"role": "lgu", "name": "lgu", "lgu_id": lgu["id"]})
    holder_token = client.ok(
        "POST", "/tokens", {"role": "holder", "name": "holder", "holder_id": holder["id"]}
    )
    site = client.ok(
        "POST",
        "/bank-sites",
        {
            "name": unique("Site"),
            "holder_id": holder["id"],
            "service_area": 5,
            "county": "Lyon",
            # every account of the bank is funded from this one restoration
            "credit_areas": [{"category": "replacement_wetland", "area_sqft": 10**11}],
        },
    )
    bank = Bank(
        board, lgu["id"], lgu_token["token"], holder["id"], holder_token["token"], site["id"]
    )
    for amount in funded:
        bank.accounts.append(open_account(client, bank, amount))
    return bank


def open_account(client: Client, bank: Bank, amount: int) -> str:
    """A new account of the bank's holder holding ``amount`` sq ft (none if 0)."""
    account = client.ok(
        "POST",
        "/accounts",
        {"holder_id": bank.holder_id, "service_area": 5, "county": "Lyon"},
        token=bank.board,
    )
    if amount:
        client.ok(
            "POST",
            f"/accounts/{account['id']}/deposits",
            {
                "bank_site_id": bank.site_id,
                "effective_on": days_ago(0),  # not before the account was opened, today
                "banking_plan": {
                    "reference": unique("BP"),
                    "approved_on": days_ago(20),
                    "lgu_id": bank.lgu_id,
                },
                "wetland_type": "2",
                "completed_on": days_ago(10),
                "designated_for_replacement": True,
                "paid_by_performer": True,
                "actions": [
                    {"category": "replacement_wetland", "area_sqft": amount, "credit_sqft": amount}
                ],
            },
            token=bank.board,
        )
    return str(account["id"])


#: everyone Subd. 6 and 7 name, for a plan no member of the public asked a copy of; the
#: applicant and the watershed district named as the plan records them (``mailing``)
RECIPIENTS = [
    {"name": "Ann Board", "address": "520 Lafayette Rd N, St. Paul, MN", "role": "tep_member"},
    {"name": "Sam Swcd", "address": "311 Brighton Ave S, Buffalo, MN", "role": "tep_member"},
    {"name": "Lee Lgu", "address": "10 2nd St NW, Buffalo, MN", "role": "tep_member"},
    {"name": "Commissioner", "address": "500 Lafayette Rd, St. Paul", "role": "dnr_commissioner"},
    {"name": "Managers", "address": "1 Watershed Way, Marshall", "role": "watershed_district"},
    {"name": "The applicant", "address": "1 Main St, Marshall, MN", "role": "applicant"},
]


def mailing(mailed_on: str, plan: dict[str, Any] | None = None) -> dict[str, Any]:
    """A notice (of application or of decision) mailed to everyone the statute names: the
    applicant and watershed district as ``plan`` (as the API shows it) names them."""
    names = {} if plan is None else {"applicant": plan["applicant"]}
    if plan is not None and plan.get("watershed_district"):
        names["watershed_district"] = plan["watershed_district"]
    recipients = [{**r, "name": names.get(r["role"], r["name"])} for r in RECIPIENTS]
    return {"mailed_on": mailed_on, "recipients": recipients}


def plan_body(lgu_id: str | None, area_sqft: int, received_on: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "applicant": unique("Applicant"),
        "project": unique("Project"),
        "location": "Section 14, Lyon County",
        "received_on": received_on,
        "impact": {
            "area_sqft": area_sqft,
            "wetland_type": "2",
            "service_area": 5,
            "county": "Lyon",
            "on_agricultural_land": False,
        },
        "replacement_ratio": "2",
        "method": "bank_credits",
    }
    if lgu_id:
        body["lgu_id"] = lgu_id
    return body


def approved_plan(
    client: Client, bank: Bank, area_sqft: int = 4_000, **extra: Any
) -> dict[str, Any]:
    """A small plan (no comment period) of the bank's LGU, noticed and approved in the past;
    ``extra`` fields of its body replace the default ones (its ``method``, ...)."""
    body = {**plan_body(bank.lgu_id, area_sqft, days_ago(5)), **extra}
    plan = client.ok("POST", "/plans", body, token=bank.board)
    client.ok("POST", f"/plans/{plan['id']}/notices", mailing(days_ago(4)), token=bank.board)
    return dict(
        client.ok(
            "POST",
            f"/plans/{plan['id']}/decision",
            {
                "outcome": "approved",
                "decided_on": days_ago(1),
                "resolution": {"number": unique("Res."), "adopted_on": days_ago(1)},
            },
            token=bank.board,
        )
    )


def available(client: Client, account_id: str, token: str) -> int:
    """The account's available sq ft of ``CREDIT_CLASS``."""
    body = client.ok("GET", f"/accounts/{account_id}", status=200, token=token)
    rows = [r for r in body["balances"] if r["credit_class"]["code"] == CREDIT_CLASS]
    return int(rows[0]["available_sqft"]) if rows else 0


def posted(client: Client, account_id: str, token: str) -> int:
    body = client.ok("GET", f"/accounts/{account_id}", status=200, token=token)
    return sum(
        int(r["posted_sqft"]) for r in body["balances"] if r["credit_class"]["code"] == CREDIT_CLASS
    )


# --- SQL ----------------------------------------------------------------------------------------


def sql_scalar(url: str, statement: str, **params: Any) -> Any:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return connection.execute(text(statement), params).scalar()
    finally:
        engine.dispose()


def sql_execute(url: str, statement: str) -> None:
    """Run one statement outside a transaction (e.g. ``CHECKPOINT``)."""
    engine = create_engine(url, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as connection:
            connection.execute(text(statement))
    finally:
        engine.dispose()


def sql_rows(url: str, statement: str, **params: Any) -> list[Any]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(text(statement), params).all())
    finally:
        engine.dispose()


COUNTED_TABLES = (
    "ledger_transactions",
    "ledger_entries",
    "holders",
    "lgus",
    "bank_sites",
    "bank_accounts",
    "deposits",
    "lots",
    "transfers",
    "reservations",
    "plans",
    "withdrawals",
    "payments",
    "securities",
    "appeals",
    "api_tokens",
    "idempotency_records",
)


def row_counts(url: str, tables: tuple[str, ...] = COUNTED_TABLES) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar())
                for table in tables
            }
    finally:
        engine.dispose()
