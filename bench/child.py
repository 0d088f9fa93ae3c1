"""Measured in a child process so that peak memory (ru_maxrss) is the measured work's alone.

``python -m bench.child verify URL`` · ``python -m bench.child verify-since URL N A B ASSET``
· ``python -m bench.child export URL ROWS``
Prints one JSON line: seconds, rows, maxrss_kb (the peak resident set of this process).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time


def verify(url: str) -> dict[str, object]:
    """The full pass ``wetbank audit verify`` runs, recording its checkpoint."""
    from bank import audit
    from ledger.db import Database

    db = Database.from_url(url)
    started = time.perf_counter()
    report = audit.verify_full(db, processes=os.cpu_count() or 1)
    return {
        "seconds": time.perf_counter() - started,
        "rows": report.transactions_checked,
        "ok": report.ok,
        "checkpoint": report.checkpoint is not None,
        # the segment workers' peak, where they are processes (SQLite; PostgreSQL's are threads)
        "worker_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }


def verify_since(
    url: str, count: int, account_a: int, account_b: int, asset: str
) -> dict[str, object]:
    """``count`` new transactions, then the check ``GET /audit/verify`` runs, since the
    checkpoint the full pass recorded."""
    from bank import audit
    from bench import bulk
    from ledger.db import Database

    bulk.load_pairs(url, account_a, account_b, count, f"since{time.time_ns()}", asset)
    db = Database.from_url(url)
    started = time.perf_counter()
    report = audit.verify_now(db)
    return {
        "seconds": time.perf_counter() - started,
        "rows": report.transactions_checked,
        "ok": report.ok,
        "mode": report.mode,
    }


def export(url: str, rows: int) -> dict[str, object]:
    """The journal as ``GET /audit/journal`` sends it as CSV, the first ``rows`` transactions."""
    from itertools import islice

    from api.pagination import csv_chunks
    from api.views.audit import JOURNAL_FIELDS
    from bank import audit
    from bank.access import SYSTEM
    from ledger.db import Database

    db = Database.from_url(url)
    started = time.perf_counter()
    with open(os.devnull, "w") as sink:
        stream = audit.journal_export(db, SYSTEM, audit.JournalFilter())
        for chunk in csv_chunks(JOURNAL_FIELDS, islice(stream, rows)):
            sink.write(chunk)
        stream.close()  # type: ignore[attr-defined]  # a generator: its connection closes now
    return {"seconds": time.perf_counter() - started, "rows": rows}


def peak_rss_kb() -> int:
    """This process's own peak resident set (VmHWM).  Not ru_maxrss: Linux carries that over
    from the parent through fork and exec, so a big parent would hide a small child."""
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)


def main() -> None:
    command, url, *rest = sys.argv[1:]
    if command == "verify":
        result = verify(url)
    elif command == "verify-since":
        result = verify_since(url, int(rest[0]), int(rest[1]), int(rest[2]), rest[3])
    else:
        result = export(url, int(rest[0]))
    result["maxrss_kb"] = peak_rss_kb()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
