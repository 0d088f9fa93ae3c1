"""A real server process (``wetbank serve``) and a small bank to drive it."""

from __future__ import annotations

import http.client
import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from types import TracebackType

from bench.common import Result

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``wetbank serve --workers N`` on a free loopback port, stopped on exit."""

    def __init__(self, url: str, workers: int) -> None:
        self.url, self.workers, self.port = url, workers, free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Server:
        # on PostgreSQL `wetbank serve` needs a secret key every worker shares
        env = dict(os.environ, DATABASE_URL=self.url)
        env.setdefault("WETBANK_SECRET_KEY", "bench-" + "7" * 58)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "api.cli",
                "serve",
                "--port",
                str(self.port),
                "--workers",
                str(self.workers),
            ],
            env=env,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/api/v1/health")
                if conn.getresponse().status == 200:
                    return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def __exit__(self, *exc: object | TracebackType) -> None:
        if self.proc:
            self.proc.terminate()
            self.proc.wait(timeout=30)

    def time_gets(self, path: str, token: str, count: int) -> Result:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": f"Bearer {token}"}
        latencies = []
        for _ in range(20):  # warm up
            conn.request("GET", path, headers=headers)
            conn.getresponse().read()
        started = time.perf_counter()
        for _ in range(count):
            t = time.perf_counter()
            conn.request("GET", path, headers=headers)
            response = conn.getresponse()
            response.read()
            assert response.status == 200, response.status
            latencies.append((time.perf_counter() - t) * 1000)
        return Result(path, count, time.perf_counter() - started, latencies)

    def time_transfers(
        self, token: str, credit_class: str, moves: list[tuple[str, str]]
    ) -> list[float]:
        """Latencies in ms of ``POST /transfers`` of 1 sq ft for each (source, target), in
        turn over one keep-alive connection."""
        posts = [
            (
                "/api/v1/transfers",
                {
                    "from_account_id": source,
                    "to_account_id": target,
                    "credit_class": credit_class,
                    "amount_sqft": 1,
                },
            )
            for source, target in moves
        ]
        return self._time_posts(token, posts)

    def time_reservations(
        self, token: str, plan_id: str, credit_class: str, accounts: list[str]
    ) -> list[float]:
        """Latencies in ms of ``POST /accounts/{id}/reservations`` of 1 sq ft for ``plan_id``
        from each account in turn, over one keep-alive connection."""
        body = {
            "plan_id": plan_id,
            "credit_class": credit_class,
            "amount_sqft": 1,
            "expires_on": (date.today() + timedelta(days=365)).isoformat(),
        }
        posts = [(f"/api/v1/accounts/{account}/reservations", body) for account in accounts]
        return self._time_posts(token, posts)

    def _time_posts(self, token: str, posts: list[tuple[str, dict[str, object]]]) -> list[float]:
        """Latencies in ms of each (path, JSON body) posted in turn over one keep-alive
        connection, each answered 201."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
        latencies = []
        for path, body in posts:
            started = time.perf_counter()
            conn.request("POST", path, body=json.dumps(body), headers=headers)
            response = conn.getresponse()
            response.read()
            if response.status != 201:
                raise RuntimeError(f"POST {path} answered {response.status}")
            latencies.append((time.perf_counter() - started) * 1000)
        conn.close()
        return latencies


@dataclass
class Bank:
    token: str
    accounts: list[str]
    credit_class: str
    asset: str
    lot_ledger_ids: list[int] = field(default_factory=list)
    issuer_ids: list[int] = field(default_factory=list)


def make_bank(url: str, accounts: int) -> Bank:
    """A holder with ``accounts`` accounts, each holding one deposited lot of 10^9 sq ft."""
    import ledger
    from bank import access, credits, deposits, parties, site_register
    from bank.access import SYSTEM
    from bank.rules.deposit_rules import ActionRequest
    from bank.rules.ruleset import SEED
    from ledger.db import Database

    db = Database.from_url(url)
    day = date.today() - timedelta(days=1)
    with db.transaction() as session:
        holder = parties.create_holder(db, SYSTEM, name="bench", email=None, address=None)
        lgu = parties.create_lgu(db, SYSTEM, name="bench lgu", kind="county")
        # the site's register covers every account's deposit (Subd. 12 (c) caps the site)
        site = site_register.register_site(
            db,
            SEED,
            SYSTEM,
            credit_areas=[{"category": "replacement_wetland", "area_sqft": accounts * 10**9}],
            name="bench",
            holder_id=holder.id,
            service_area=5,
            county="Lyon",
        )
        ids, lots, partners = [], [], []
        for i in range(accounts):
            account = parties.open_account(
                session, SEED, holder_id=holder.id, service_area=5, county="Lyon"
            )
            deposits.make_deposit(
                session,
                SEED,
                SYSTEM,
                deposits.DepositRequest(
                    account.id,
                    site.id,
                    day,
                    f"BP-{i}",
                    day,
                    lgu.id,
                    "2",
                    day,
                    False,
                    True,
                    True,
                    False,
                    (ActionRequest("replacement_wetland", 10**9, 10**9),),
                ),
                None,
            )
            ids.append(account.id)
            lot = credits.lots_of(session, account)[0].lot
            lots.append(lot.ledger_account_id)
            partners.append(
                ledger.create_account(
                    session,
                    code=f"bench:partner:{account.id}",
                    asset=credits.asset_of(lot.credit_class),
                    name="bench partner",
                )
            )
        _row, token = access.create_token(session, role="board", name="bench")
        code = credits.class_code(5, "2", False)
    db.dispose()
    return Bank(token, ids, code, credits.asset_of(code), lots, partners)
