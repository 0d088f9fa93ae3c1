"""What a write is made of: legs asked for, the lines they become, and what lines change.

A ``Leg`` moves an amount between two accounts; a write turns legs (or a pending transfer's
entries) into ``Line``s, one per entry, in the order the entries are stored.  From the lines alone
follow each account's balance change (``deltas``) and what each entry's balance-after is short of
its account's final balance (``later_posted``): both database stores write exactly these.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any

from ledger.errors import UnbalancedTransaction
from ledger.schema import PHASE_PENDING, PHASE_POSTED


@dataclass(frozen=True)
class Leg:
    """``amount`` moves from ``debit_account_id`` to ``credit_account_id`` (same asset)."""

    debit_account_id: int
    credit_account_id: int
    amount: int


@dataclass(frozen=True)
class Meta:
    """What every write records besides its entries."""

    idempotency_key: str
    effective_on: date
    memo: str | None = None
    actor: str | None = None
    request_id: str | None = None


@dataclass(frozen=True)
class Posted:
    """The result of a write: its transaction id, and whether it was a replay of an earlier one."""

    transaction_id: int
    replayed: bool = False
    entries: tuple[tuple[int, int, str], ...] = field(default=())  # (account, amount, phase)


@dataclass(frozen=True)
class Line:
    """One entry to write: ``amount`` (credit > 0, debit < 0) on ``account_id`` in ``phase``."""

    account_id: int
    amount: int
    phase: str
    resolves_id: int | None = None
    resolution: str | None = None
    leg: int | None = None  # the index of the Leg this line comes from, if any


#: the balance columns a write changes, in the order of a ``deltas`` value
DELTA_COLUMNS = ("debits_posted", "credits_posted", "debits_pending", "credits_pending")


def lines_for(legs: Sequence[Leg], phase: str) -> list[Line]:
    """A debit line and a credit line per leg, in the legs' order."""
    lines: list[Line] = []
    for index, leg in enumerate(legs):
        if leg.amount <= 0:
            raise UnbalancedTransaction("a leg moves a positive amount", amount=leg.amount)
        if leg.debit_account_id == leg.credit_account_id:
            raise UnbalancedTransaction("a leg moves between two different accounts")
        lines.append(Line(leg.debit_account_id, -leg.amount, phase, leg=index))
        lines.append(Line(leg.credit_account_id, leg.amount, phase, leg=index))
    return lines


def deltas(lines: Iterable[Line]) -> dict[int, list[int]]:
    """Per account, ascending id: what its balance row gains, in ``DELTA_COLUMNS`` order.

    A posted line adds to the posted side, a pending one to the pending side, and a release
    (a pending transfer resolved) takes back from the pending side what its pending line added.
    """
    found: dict[int, list[int]] = {}
    for line in lines:
        change = found.setdefault(line.account_id, [0, 0, 0, 0])
        side = 1 if line.amount > 0 else 0  # credits, debits
        magnitude = abs(line.amount)
        if line.phase == PHASE_POSTED:
            change[side] += magnitude
        elif line.phase == PHASE_PENDING:
            change[2 + side] += magnitude
        else:
            change[2 + side] -= magnitude
    return dict(sorted(found.items()))


def later_posted(lines: Sequence[Line]) -> list[int]:
    """Per line: the posted amount of the lines after it on the same account.

    An entry's balance-after is its account's posted balance once the whole transaction is
    written, less this: the balance as it stood right after that entry, entries taken in order.
    """
    later: list[int] = [0] * len(lines)
    running: dict[int, int] = {}
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        later[index] = running.get(line.account_id, 0)
        if line.phase == PHASE_POSTED:
            running[line.account_id] = later[index] + line.amount
    return later


def legs_json(legs: Sequence[Leg]) -> list[list[int]]:
    """Legs as they enter a request's hash."""
    return [[leg.debit_account_id, leg.credit_account_id, leg.amount] for leg in legs]


def request_hash(request: dict[str, Any], meta: Meta) -> str:
    """The hash an idempotency key is bound to: the request and the meta it records."""
    body = dict(request, effective_on=meta.effective_on.isoformat(), memo=meta.memo)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()
