"""Transfers and reservations drawing on an account that holds many lots, beside the same from
accounts that hold one to three, through one server: a draw locks and reads back only the oldest
lots that reach its amount (``bank/draw_sources.py``), so its time should grow little with the
lots its account holds.  For each, the two kinds alternate, ``ROUNDS`` batches of ``BATCH`` each,
after one unmeasured pass over every account (the first transfer into an account makes its
receiving lot)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from datetime import date, timedelta
from typing import TypeVar

from bench.common import Result
from bench.server import Server, make_bank

ROUNDS = 6
BATCH = 50
#: a draw's p50 from the account of many lots, at most this times that from one of few
TARGET = 1.5

_Move = TypeVar("_Move")


def measure(url: str, lots: int, out: list[str], checks: list[tuple[str, bool]]) -> None:
    out += ["", "## Drawing on an account of many lots: POST /transfers, POST /reservations"]
    started = time.perf_counter()
    bank = make_bank(url, accounts=lots)
    rich, *others = bank.accounts
    _give_lots(url, bank.credit_class, rich, others)
    plan_id = _plan(url)
    out.append(f"(gave one account {lots:,} lots in {time.perf_counter() - started:.0f} s)")
    transfers = {
        "few": list(zip(others, others[1:] + others[:1], strict=True)),
        "many": [(rich, target) for target in others],
    }
    reservations = {"few": others, "many": [rich] * len(others)}
    with Server(url, 1) as server:

        def transfer(pairs: list[tuple[str, str]]) -> list[float]:
            return server.time_transfers(bank.token, bank.credit_class, pairs)

        def reserve(accounts: list[str]) -> list[float]:
            return server.time_reservations(bank.token, plan_id, bank.credit_class, accounts)

        timed = {
            "transfer": _alternate(transfers, transfer),
            "reservation": _alternate(reservations, reserve),
        }
    for what, latencies in timed.items():
        labels = {
            "few": f"{what}s from accounts of 1 to 3 lots",
            "many": f"{what}s from an account of {lots:,} lots",
        }
        p50s = {}
        for kind, label in labels.items():
            result = Result(label, len(latencies[kind]), 0.0, latencies[kind])
            p50s[kind] = result.pct(50)
            out.append(
                f"{result.label:<42} p50 {result.pct(50):7.2f} ms   p99 {result.pct(99):7.2f} ms"
                f"   (n={result.ops})"
            )
        ratio = p50s["many"] / p50s["few"]
        out.append(
            f"{what} p50 many/few lots: {ratio:.2f} ({ROUNDS} alternating rounds of {BATCH})"
        )
        checks.append(
            (
                f"{what} p50 from an account of {lots:,} lots <= {TARGET}x that of few",
                ratio <= TARGET,
            )
        )


def _alternate(
    moves: dict[str, list[_Move]], time_batch: Callable[[list[_Move]], Sequence[float]]
) -> dict[str, list[float]]:
    """Latencies by kind: one unmeasured pass over each kind's moves, then ``ROUNDS`` batches of
    ``BATCH`` of each kind in turn."""
    for items in moves.values():
        time_batch(items)
    latencies: dict[str, list[float]] = {kind: [] for kind in moves}
    for round_ in range(ROUNDS):
        for kind, items in moves.items():
            batch = [items[(round_ * BATCH + i) % len(items)] for i in range(BATCH)]
            latencies[kind] += time_batch(batch)
    return latencies


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


def _plan(url: str) -> str:
    """A replacement plan in ``make_bank``'s service area to reserve credits for."""
    from bank import parties, plans
    from bank.access import SYSTEM
    from bank.rules.ruleset import SEED
    from ledger.db import Database

    db = Database.from_url(url)
    try:
        lgu = parties.create_lgu(db, SYSTEM, name="bench plans", kind="county")
        with db.transaction() as session:
            plan = plans.create_plan(
                session,
                SEED,
                plans.PlanRequest(
                    lgu_id=lgu.id,
                    applicant="bench",
                    project="bench reservations",
                    received_on=date.today() - timedelta(days=1),
                    area_sqft=10**6,
                    wetland_type="2",
                    service_area=5,
                    county="Lyon",
                    on_agricultural_land=False,
                    replacement_ratio="2",
                    method="bank_credits",
                ),
            )
            return plan.id
    finally:
        db.dispose()
