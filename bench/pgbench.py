"""The database's own limit for a two-account transfer, measured by PostgreSQL's C client.

``pgbench`` runs the hand-written transfer of ``bench.posting`` (lock both balance rows in id
order, insert the transaction and its two entries with their balance-after, update both balances,
commit) with prepared statements and no Python on the client side, so the HTTP path and the
psycopg baseline can be reported against what the server alone allows on this machine.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from glob import glob
from pathlib import Path

from bench.common import Result, busy_cores, cpu_times, libpq

#: the same statements as ``bench.posting._baseline_transfer``, one round trip each
SCRIPT = r"""
\set src random(1, :accounts)
\set dst random(1, :accounts - 1)
\if :dst >= :src
\set dst :dst + 1
\endif
BEGIN;
SELECT max(b) FILTER (WHERE id = :src) AS src_balance,
       max(b) FILTER (WHERE id = :dst) AS dst_balance
  FROM (SELECT id, credits - debits AS b FROM bench_balances
         WHERE id IN (:src, :dst) ORDER BY id FOR UPDATE) locked \gset
INSERT INTO bench_transactions (key) VALUES (gen_random_uuid()::text) RETURNING id AS tx \gset
INSERT INTO bench_entries (transaction_id, account_id, amount, balance_after)
VALUES (:tx, :src, -1, :src_balance - 1), (:tx, :dst, 1, :dst_balance + 1);
UPDATE bench_balances SET debits = debits + 1, version = version + 1 WHERE id = :src;
UPDATE bench_balances SET credits = credits + 1, version = version + 1 WHERE id = :dst;
COMMIT;
"""


def executable() -> str | None:
    """pgbench from PATH, or from the server's own bin directory (Debian keeps it there)."""
    found = shutil.which("pgbench")
    if found:
        return found
    candidates = sorted(glob("/usr/lib/postgresql/*/bin/pgbench"))
    return candidates[-1] if candidates else None


def run(url: str, accounts: int, workers: int, seconds: float, label: str) -> Result | None:
    """``workers`` pgbench clients transferring among ``accounts`` for ``seconds`` (whole
    seconds, at least one); ``None`` where pgbench is not installed.  Latencies come from
    pgbench's per-transaction log, so p50 and p99 are the same measure as the other lines'."""
    program = executable()
    if program is None:
        return None
    window = max(1, round(seconds))
    with tempfile.TemporaryDirectory(prefix="wetbank-pgbench-") as tmp:
        script = Path(tmp) / "transfer.sql"
        script.write_text(SCRIPT)
        command = [
            program,
            "--no-vacuum",
            "--protocol=prepared",
            f"--client={workers}",
            f"--jobs={min(workers, os.cpu_count() or 1)}",
            f"--time={window}",
            f"--define=accounts={accounts}",
            f"--file={script}",
            "--log",
            f"--log-prefix={tmp}/log",
            libpq(url),
        ]
        before = cpu_times()
        done = subprocess.run(command, capture_output=True, text=True, cwd=tmp)
        after = cpu_times()
        if done.returncode != 0:
            raise RuntimeError(f"pgbench failed: {done.stderr.strip() or done.stdout.strip()}")
        latencies = _latencies_ms(Path(tmp))
    return Result(label, len(latencies), float(window), latencies, busy_cores(before, after))


def _latencies_ms(folder: Path) -> list[float]:
    """Each transaction's latency from pgbench's logs: the third field, in microseconds."""
    latencies: list[float] = []
    for log in folder.glob("log.*"):
        for line in log.read_text().splitlines():
            fields = line.split()
            if len(fields) > 2:
                latencies.append(int(fields[2]) / 1000)
    return latencies
