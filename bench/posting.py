"""Posting throughput: hand-written SQL (the database's limit) vs the engine vs the bank's transfer
in process vs the HTTP API."""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable
from datetime import date
from typing import Any

import psycopg

from bench.common import libpq

BASELINE_DDL = """
CREATE TABLE IF NOT EXISTS bench_balances (id bigint PRIMARY KEY, debits bigint NOT NULL DEFAULT 0,
    credits bigint NOT NULL DEFAULT 0, version bigint NOT NULL DEFAULT 0,
    CHECK (debits <= credits));
CREATE TABLE IF NOT EXISTS bench_transactions (id bigserial PRIMARY KEY, key text UNIQUE NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now());
CREATE TABLE IF NOT EXISTS bench_entries (id bigserial PRIMARY KEY, transaction_id bigint NOT NULL
    REFERENCES bench_transactions, account_id bigint NOT NULL, amount bigint NOT NULL,
    balance_after bigint NOT NULL);
"""


def setup_baseline(url: str, accounts: int, seed_amount: int) -> None:
    with psycopg.connect(libpq(url), autocommit=True) as conn:
        conn.execute(BASELINE_DDL)
        conn.execute("TRUNCATE bench_entries, bench_transactions, bench_balances")
        conn.execute(
            "INSERT INTO bench_balances (id, credits) SELECT g, %s FROM generate_series(1, %s) g",
            (seed_amount, accounts),
        )


def pick_pair(rng: random.Random, accounts: list[int], hot: list[int] | None) -> tuple[int, int]:
    """Two distinct accounts; with ``hot``, 80% of transfers touch a hot account."""
    if hot and rng.random() < 0.8:
        a = rng.choice(hot)
        b = rng.choice([x for x in accounts if x != a])
        return (a, b) if rng.random() < 0.5 else (b, a)
    a, b = rng.sample(accounts, 2)
    return a, b


def measure(op: Callable[[], None], seconds: float, start: Any, warm_up: int = 3) -> list[float]:
    """``op``'s latencies (ms) over ``seconds``, after ``warm_up`` unmeasured calls (prepared
    statements, pools) and once every worker is ready (the barrier ``start``)."""
    for _ in range(warm_up):
        op()
    start.wait()
    latencies: list[float] = []
    end = time.perf_counter() + seconds
    while time.perf_counter() < end:
        started = time.perf_counter()
        op()
        latencies.append((time.perf_counter() - started) * 1000)
    return latencies


def baseline_worker(
    url: str, accounts: int, hot: bool, worker: int, seconds: float, start: Any
) -> list[float]:
    """Lock both balance rows in id order, insert the transaction and its two entries, update both
    balances, commit: what the engine does, without its guarantees' extra work."""
    rng = random.Random(worker)
    ids = list(range(1, accounts + 1))
    hot_ids = ids[:2] if hot else None
    with psycopg.connect(libpq(url)) as conn:

        def one() -> None:
            src, dst = pick_pair(rng, ids, hot_ids)
            for _attempt in range(10):
                try:
                    _baseline_transfer(conn, src, dst)
                    return
                except psycopg.errors.DeadlockDetected:
                    conn.rollback()

        return measure(one, seconds, start)


def _baseline_transfer(conn: psycopg.Connection, src: int, dst: int) -> None:
    with conn.transaction():
        rows = conn.execute(
            "SELECT id, credits - debits FROM bench_balances WHERE id = ANY(%s) "
            "ORDER BY id FOR UPDATE",
            ([src, dst],),
        ).fetchall()
        balance: dict[int, int] = dict(rows)
        inserted = conn.execute(
            "INSERT INTO bench_transactions (key) VALUES (%s) RETURNING id", (uuid.uuid4().hex,)
        ).fetchone()
        assert inserted is not None
        tx = inserted[0]
        conn.execute(
            "INSERT INTO bench_entries (transaction_id, account_id, amount, balance_after) "
            "VALUES (%s, %s, -1, %s), (%s, %s, 1, %s)",
            (tx, src, balance[src] - 1, tx, dst, balance[dst] + 1),
        )
        conn.execute(
            "UPDATE bench_balances SET debits = debits + 1, version = version + 1 WHERE id = %s",
            (src,),
        )
        conn.execute(
            "UPDATE bench_balances SET credits = credits + 1, version = version + 1 WHERE id = %s",
            (dst,),
        )


def setup_engine(url: str, accounts: int, seed_amount: int) -> list[int]:
    """``accounts`` no-overdraft ledger accounts seeded from one unlimited issuance account
    (with 8 balance slots, as the bank gives each credit class's issuance account)."""
    import ledger
    from ledger import sealer
    from ledger.db import Database

    db = Database.from_url(url)
    sealer.attach(db)
    with db.transaction() as session:
        # a hot system account, as the bank's issuance accounts are: spread over balance slots
        issuer = ledger.create_account(
            session, code="bench:issuer", asset="X", name="issuer", slots=8
        )
        ids = [
            ledger.create_account(
                session, code=f"bench:{i}", asset="X", name=f"a{i}", no_overdraft=True
            )
            for i in range(accounts)
        ]
        ledger.transfer(
            session,
            "seed",
            [ledger.Leg(issuer, a, seed_amount) for a in ids],
            ledger.Meta("bench:seed", date.today()),
        )
    db.dispose()
    return [issuer, *ids]


def engine_worker(
    url: str, ids: list[int], hot: bool, mode: str, worker: int, seconds: float, start: Any
) -> list[float]:
    """The engine in-process with every guarantee on: idempotency key, overdraft check, hash
    chain, balance-after.  ``mode`` "deposit" credits from the one issuance account."""
    import ledger
    from ledger import sealer
    from ledger.db import Database

    db = Database.from_url(url, pool_size=2, max_overflow=0)
    sealer.attach(db)
    rng = random.Random(1000 + worker)
    issuer, accounts = ids[0], ids[1:]
    hot_ids = accounts[:2] if hot else None
    today = date.today()

    def one() -> None:
        if mode == "deposit":
            src, dst = issuer, rng.choice(accounts)
        else:
            src, dst = pick_pair(rng, accounts, hot_ids)
        meta = ledger.Meta(f"bench:{worker}:{uuid.uuid4().hex}", today)
        db.run(lambda s: ledger.transfer(s, "transfer", [ledger.Leg(src, dst, 1)], meta))

    try:
        return measure(one, seconds, start)
    finally:
        db.dispose()


def held_worker(
    url: str,
    ids: list[int],
    hold: float,
    serialize: bool,
    workers: int,
    worker: int,
    seconds: float,
    start: Any,
) -> list[float]:
    """The engine's transfer, each transaction held open ``hold`` seconds after its writes (the
    round trips to a database on another host), among accounts no other worker touches.

    Nothing is shared, and the machine's cores are mostly idle, so N workers do N times the work
    of one unless the engine serializes unrelated transfers somewhere (a global lock, a chain
    head every writer updates).  ``serialize``: the control, which takes one global lock first,
    shows that the measure catches such a point."""
    from sqlalchemy import text

    import ledger
    from ledger import sealer
    from ledger.db import Database

    db = Database.from_url(url, pool_size=2, max_overflow=0)
    sealer.attach(db)
    rng = random.Random(2000 + worker)
    mine = ids[1:][worker::workers]
    today = date.today()

    def one() -> None:
        src, dst = rng.sample(mine, 2)
        meta = ledger.Meta(f"held:{worker}:{uuid.uuid4().hex}", today)

        def work(session: Any) -> None:
            if serialize:
                session.execute(text("SELECT pg_advisory_xact_lock(7)"))
            ledger.transfer(session, "transfer", [ledger.Leg(src, dst, 1)], meta)
            session.execute(text("SELECT pg_sleep(:hold)"), {"hold": hold})

        db.run(work)

    try:
        return measure(one, seconds, start)
    finally:
        db.dispose()


def bank_worker(
    url: str,
    token: str,
    accounts: list[str],
    credit_class: str,
    worker: int,
    seconds: float,
    start: Any,
) -> list[float]:
    """The bank's transfer in process: what ``POST /transfers`` does in its unit of work, with no
    HTTP (the token checked, the oldest lots picked and locked, the receiving lots made, the
    transfer posted and recorded with its lots under a request id, the token confirmed last), the
    same request as the HTTP clients'; each process seals after commit as a server's worker
    does.  Between the engine's rate and HTTP's, it splits what the bank's registry costs from
    what serving it over HTTP does."""
    from bank import access, transfers
    from ledger import sealer
    from ledger.db import Database

    db = Database.from_url(url, pool_size=2, max_overflow=0)
    sealer.attach(db)
    rng = random.Random(2000 + worker)

    def one() -> None:
        src, dst = rng.sample(accounts, 2)
        request = transfers.TransferRequest(
            from_account_id=src, to_account_id=dst, credit_class=credit_class, amount_sqft=1
        )

        def unit(session: Any) -> None:
            who = access.authenticate(session, token)
            if who is None:
                raise RuntimeError("the bench's token was refused")
            transfers.make_transfer(session, who, request, uuid.uuid4().hex)
            access.confirm_token(session, who.token_id)

        db.run(unit)

    try:
        return measure(one, seconds, start)
    finally:
        db.dispose()


def http_worker(
    port: int,
    token: str,
    accounts: list[str],
    credit_class: str,
    worker: int,
    seconds: float,
    start: Any,
) -> list[float]:
    """POST /api/v1/transfers over one keep-alive connection."""
    import http.client
    import json

    rng = random.Random(2000 + worker)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def one() -> None:
        src, dst = rng.sample(accounts, 2)
        body = json.dumps(
            {
                "from_account_id": src,
                "to_account_id": dst,
                "credit_class": credit_class,
                "amount_sqft": 1,
            }
        )
        conn.request("POST", "/api/v1/transfers", body=body, headers=headers)
        response = conn.getresponse()
        response.read()
        if response.status != 201:
            raise RuntimeError(f"POST /transfers answered {response.status}")

    try:
        # a server's worker threads and pooled connections warm up too (their first requests
        # import code and prepare statements): a short --quick window would otherwise measure them
        return measure(one, seconds, start, warm_up=25)
    finally:
        conn.close()
