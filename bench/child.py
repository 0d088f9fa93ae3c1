"""Measured in a child process so that peak memory (ru_maxrss) is the measured work's alone.

``python -m bench.child verify URL`` · ``python -m bench.child export URL ROWS``
Prints one JSON line: seconds, rows, maxrss_kb (the peak resident set of this process).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time


def verify(url: str) -> dict[str, object]:
    from ledger import sealer, verification
    from ledger.db import Database

    db = Database.from_url(url)
    sealer.seal_all(db)
    started = time.perf_counter()
    with db.engine.connect() as connection:
        report = verification.verify(connection, processes=os.cpu_count() or 1)
    return {
        "seconds": time.perf_counter() - started,
        "rows": report.transactions_checked,
        "ok": report.ok,
        # the segment workers have exited and been waited for: the largest one's peak
        "worker_maxrss_kb": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,
    }


def export(url: str, rows: int) -> dict[str, object]:
    """The journal as ``GET /audit/journal`` sends it as CSV, the first ``rows`` transactions."""
    from itertools import islice

    from sqlalchemy.orm import Session

    from api.pagination import csv_chunks
    from api.views.audit import JOURNAL_FIELDS
    from bank import audit
    from ledger.db import Database

    db = Database.from_url(url)
    started = time.perf_counter()
    with (
        open(os.devnull, "w") as sink,
        db.engine.connect() as connection,
        Session(bind=connection) as session,
    ):
        journal = islice(audit.journal_all(session, audit.JournalFilter()), rows)
        for chunk in csv_chunks(JOURNAL_FIELDS, journal):
            sink.write(chunk)
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
    result = verify(url) if command == "verify" else export(url, int(rest[0]))
    result["maxrss_kb"] = peak_rss_kb()
    print(json.dumps(result))


if __name__ == "__main__":
    main()
