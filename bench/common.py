"""Shared helpers: a fresh PostgreSQL database, timing, percentiles, worker processes."""

from __future__ import annotations

import multiprocessing as mp
import os
import statistics
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ADMIN_URL = os.environ.get(
    "WETBANK_BENCH_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)


def create_database() -> str:
    """A new empty database; returns its SQLAlchemy URL."""
    name = f"wetbank_bench_{uuid.uuid4().hex[:10]}"
    engine = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f"CREATE DATABASE {name}"))
    engine.dispose()
    return make_url(ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    engine = create_engine(ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        connection.execute(text(f"DROP DATABASE IF EXISTS {make_url(url).database} WITH (FORCE)"))
    engine.dispose()


def autovacuum_is_on(url: str) -> bool:
    import psycopg

    with psycopg.connect(libpq(url)) as conn:
        return bool(first(conn, "SELECT current_setting('autovacuum')::boolean"))


#: tables autovacuum would analyze now: more rows changed since their last analysis than its
#: threshold plus its scale factor times their rows (PostgreSQL's rule, with the server's settings)
_DUE_FOR_ANALYZE = """
SELECT s.relname
FROM pg_stat_user_tables AS s JOIN pg_class AS c ON c.oid = s.relid
WHERE s.n_mod_since_analyze > current_setting('autovacuum_analyze_threshold')::int
    + current_setting('autovacuum_analyze_scale_factor')::float8 * greatest(c.reltuples, 0)
ORDER BY s.relname
"""


def analyze_like_autovacuum(url: str) -> list[str]:
    """ANALYZE the tables autovacuum would analyze now; the tables' names.

    Where PostgreSQL runs with autovacuum off, the planner's statistics stay those of the
    tables' first rows (or none) for the whole run: plans chosen for a one-transaction table
    (hash joins over seq scans) are kept, per connection, while the tables grow to hundreds of
    thousands of rows.  PostgreSQL's default, and any production server, has it on.
    Called before every measured run, outside its window; where autovacuum is on and has kept
    up, no table is due and nothing is analyzed."""
    import psycopg

    with psycopg.connect(libpq(url), autocommit=True) as conn:
        due = [str(row[0]) for row in conn.execute(_DUE_FOR_ANALYZE)]
        for table in due:
            conn.execute(f'ANALYZE "{table}"')
    return due


def first(conn: Any, sql: str, params: Any = None) -> Any:
    """The first column of the first row ``sql`` returns on a psycopg connection (it must return
    one)."""
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise RuntimeError(f"no row from {sql!r}")
    return row[0]


def libpq(url: str) -> str:
    """The psycopg form of a SQLAlchemy URL."""
    return url.replace("postgresql+psycopg://", "postgresql://")


@dataclass
class Result:
    """Throughput and latency of one measured run."""

    label: str
    ops: int
    seconds: float
    latencies_ms: list[float]
    #: cores the whole machine kept busy during the measured window (every process: workers,
    #: PostgreSQL, the sealer), from /proc/stat; None where /proc/stat is unreadable
    busy_cores: float | None = None
    #: percentiles a client measured itself (wrk), where ``latencies_ms`` is not kept
    percentiles_ms: dict[float, float] | None = None

    @property
    def rate(self) -> float:
        return self.ops / self.seconds if self.seconds else 0.0

    def pct(self, p: float) -> float:
        if self.percentiles_ms is not None:
            return self.percentiles_ms[p]
        if not self.latencies_ms:
            return 0.0
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]

    def line(self) -> str:
        return (
            f"{self.label:<34} {self.rate:>9.0f}/s   p50 {self.pct(50):7.2f} ms   "
            f"p99 {self.pct(99):7.2f} ms   (n={self.ops})"
            + (f"   {self.busy_cores:.2f} cores busy" if self.busy_cores is not None else "")
        )


def cpu_times() -> tuple[float, float] | None:
    """The machine's (busy, total) CPU time in clock ticks since boot, from /proc/stat."""
    try:
        with open("/proc/stat") as stat:
            fields = [float(x) for x in stat.readline().split()[1:]]
    except (OSError, ValueError):
        return None
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0.0)  # idle + iowait
    total = sum(fields[:8])  # user nice system idle iowait irq softirq steal (not guest: in user)
    return total - idle, total


def busy_cores(
    before: tuple[float, float] | None, after: tuple[float, float] | None
) -> float | None:
    """How many of the machine's cores were busy, on average, between two ``cpu_times``."""
    if before is None or after is None or after[1] <= before[1]:
        return None
    return (after[0] - before[0]) / (after[1] - before[1]) * (os.cpu_count() or 1)


def _worker(
    target: Callable[..., Any], args: tuple[Any, ...], seconds: float, start: Any, queue: Any
) -> None:
    queue.put(target(*args, seconds, start))


def run_parallel(
    label: str,
    workers: int,
    target: Callable[..., list[float]],
    args: tuple[Any, ...],
    seconds: float,
) -> Result:
    """Run ``target(*args, worker, seconds, start)`` in ``workers`` processes; each returns its
    latencies (ms).

    Each worker sets itself up (imports, connections, a warm-up operation), then waits on the
    barrier ``start`` so that all of them measure the same window: a worker still importing
    SQLAlchemy must not eat into the window of one that is already measuring.
    """
    ctx = mp.get_context("spawn")
    queue = ctx.Queue()
    start = ctx.Barrier(workers + 1)  # and this process, to read the CPU counters at the start
    procs = [
        ctx.Process(target=_worker, args=(target, (*args, i), seconds, start, queue))
        for i in range(workers)
    ]
    for proc in procs:
        proc.start()
    start.wait()
    before = cpu_times()
    time.sleep(seconds)
    after = cpu_times()
    latencies: list[float] = []
    for _ in procs:
        latencies += queue.get()
    for proc in procs:
        proc.join()
    # every worker measures the same window of ``seconds``, after everyone's warm-up
    return Result(label, len(latencies), seconds, latencies, busy_cores(before, after))


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
