"""Transfers out of an account that holds many lots, beside transfers between accounts that hold
one to three, through one server: a transfer locks and reads back only the oldest lots that reach
its amount (``bank/draw_sources.py`` ``SOURCES``), so its time should grow little with the
lots its account holds.  The two kinds alternate, ``ROUNDS`` batches of ``BATCH`` each, after one
unmeasured pass over every pair (the first transfer into an account makes its receiving lot)."""

from __future__ import annotations

import time

from bench.common import Result
from bench.server import Server, make_bank

ROUNDS = 6
BATCH = 50
#: a transfer's p50 from the account of many lots, at most this times that from one of few
TARGET = 1.5


def measure(url: str, lots: int, out: list[str], checks: list[tuple[str, bool]]) -> None:
    out += ["", "## Transfers from an account of many lots: POST /transfers"]
    started = time.perf_counter()
    bank = make_bank(url, accounts=lots)
    rich, *others = bank.accounts
    _give_lots(url, bank.credit_class, rich, others)
    out.append(f"(gave one account {lots:,} lots in {time.perf_counter() - started:.0f} s)")
    moves = {
        "few": [
            (source, target) for source, target in zip(others, others[1:] + others[:1], strict=True)
        ],
        "many": [(rich, target) for target in others],
    }
    latencies: dict[str, list[float]] = {kind: [] for kind in moves}
    with Server(url, 1) as server:
        for pairs in moves.values():
            server.time_transfers(bank.token, bank.credit_class, pairs)
        for round_ in range(ROUNDS):
            for kind, pairs in moves.items():
                batch = [pairs[(round_ * BATCH + i) % len(pairs)] for i in range(BATCH)]
                latencies[kind] += server.time_transfers(bank.token, bank.credit_class, batch)
    labels = {"few": "from accounts of 1 to 3 lots", "many": f"from an account of {lots:,} lots"}
    p50s = {}
    for kind, label in labels.items():
        result = Result(label, len(latencies[kind]), 0.0, latencies[kind])
        p50s[kind] = result.pct(50)
        out.append(
            f"{result.label:<34} p50 {result.pct(50):7.2f} ms   p99 {result.pct(99):7.2f} ms   "
            f"(n={result.ops})"
        )
    ratio = p50s["many"] / p50s["few"]
    out.append(f"p50 many/few lots: {ratio:.2f} ({ROUNDS} alternating rounds of {BATCH})")
    checks.append(
        (f"transfer p50 from an account of {lots:,} lots <= {TARGET}x that of few", ratio <= TARGET)
    )


def _give_lots(url: str, credit_class: str, rich: str, others: list[str]) -> None:
    """Each of ``others`` sends ``rich`` 10 sq ft: a lot in ``rich`` for each."""
    from bank import transfers
    from bank.access import SYSTEM
    from ledger.db import Database

    db = Database.from_url(url)
    try:
        for source in others:
            request = transfers.TransferRequest(source, rich, 10, credit_class=credit_class)
            transfers.transfer(db, SYSTEM, request, None)
    finally:
        db.dispose()
