"""``POST /transfers`` driven by wrk, a load generator written in C.

The Python clients of ``bench.posting.http_worker`` cost about a quarter of a millisecond of CPU
per request, on the same two cores as the server and PostgreSQL: beside a peer measured in
process (django-hordak, with no client at all) that cost is the bench's, not the service's.  wrk
costs a few hundredths of a millisecond per request, so its rate is the server's own.  The
request is the Python clients' (the same token, accounts, class and amount; a source and a
target drawn at random from a list made once), over the same number of keep-alive connections.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import tempfile
from pathlib import Path

from bench.common import Result, busy_cores, cpu_times

#: how many (source, target) bodies the script cycles through
BODIES = 2000
#: each connection's first requests, unmeasured: the server's threads and pooled connections
#: warm up (their first requests import code and prepare statements)
WARM_UP_SECONDS = 1

_SCRIPT = """
bodies = {%(bodies)s}
local threads = 0
function setup(thread)
  thread:set("offset", threads * 997)
  threads = threads + 1
end
function init(args)
  i = offset
end
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer %(token)s"
function request()
  i = i %% #bodies + 1
  return wrk.format(nil, "/api/v1/transfers", nil, bodies[i])
end
function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '{"requests": %%d, "micros": %%d, "p50": %%d, "p99": %%d, "failed": %%d}\\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def executable() -> str | None:
    return shutil.which("wrk")


def run(
    port: int,
    token: str,
    accounts: list[str],
    credit_class: str,
    connections: int,
    seconds: float,
    label: str,
) -> Result | None:
    """``connections`` keep-alive connections posting transfers of 1 sq ft for ``seconds``
    (whole seconds, at least one), after a warm-up; ``None`` where wrk is not installed.  An
    answer of 400 or more (wrk's count of bad statuses), or a failed connection, fails the
    run."""
    program = executable()
    if program is None:
        return None
    rng = random.Random(3000 + connections)
    bodies = []
    for _ in range(BODIES):
        source, target = rng.sample(accounts, 2)
        body = {
            "from_account_id": source,
            "to_account_id": target,
            "credit_class": credit_class,
            "amount_sqft": 1,
        }
        bodies.append("[==[" + json.dumps(body) + "]==]")
    with tempfile.TemporaryDirectory(prefix="wetbank-wrk-") as tmp:
        script = Path(tmp) / "transfers.lua"
        script.write_text(_SCRIPT % {"bodies": ",".join(bodies), "token": token})

        def wrk(window: int) -> dict[str, int]:
            command = [
                program,
                f"--threads={min(connections, os.cpu_count() or 1)}",
                f"--connections={connections}",
                f"--duration={window}s",
                f"--script={script}",
                f"http://127.0.0.1:{port}",
            ]
            done = subprocess.run(command, capture_output=True, text=True, check=True)
            summary: dict[str, int] = json.loads(done.stdout.strip().splitlines()[-1])
            if summary["failed"]:
                raise RuntimeError(f"wrk: {summary['failed']} requests failed or were refused")
            return summary

        wrk(WARM_UP_SECONDS)
        before = cpu_times()
        summary = wrk(max(1, round(seconds)))
        after = cpu_times()
    return Result(
        label,
        summary["requests"],
        summary["micros"] / 1e6,
        [],
        busy_cores(before, after),
        percentiles_ms={50: summary["p50"] / 1000, 99: summary["p99"] / 1000},
    )
