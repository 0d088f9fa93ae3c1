"""Verified checkpoints: what a full verify found intact, so that later checks need not redo it.

A full pass that finds everything ok records (``record``) the chain head it verified, the
largest transaction id it saw, where the registry's seals stood (``seal_mark``), when it ran and
how long it took, and the balances the verified chain implies per account and slot.  The whole
record is hashed (``digest``: SHA-256 over a canonical text), so an edit of any of it that does
not also recompute the hash is found by the next check since it.  Someone able to recompute the
hash can forge a checkpoint, as they could rewrite the chain itself: the full pass, which trusts
no checkpoint, and anchors kept outside the database are the answer to that.

The latest ``KEEP`` checkpoints are kept; older ones are deleted as newer ones are recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import Connection, delete, insert, select, text

from ledger import clock
from ledger.row_seals import position_column
from ledger.schema import LedgerVerifyBalance, LedgerVerifyCheckpoint
from ledger.verify_balances import BalanceRow
from ledger.verify_report import Anchor, Break, Report

CP = LedgerVerifyCheckpoint.__table__
VB = LedgerVerifyBalance.__table__

#: checkpoints kept (the newest); a check since one needs only the latest
KEEP = 3
#: how far below the newest seal a checkpoint looks for positions not yet visible
GAP_WINDOW = 10_000
_FORMAT = b"wetbank verify checkpoint 1\n"


@dataclass(frozen=True)
class Implied:
    """What a full pass that found everything ok implies, for its checkpoint."""

    started_at: datetime
    head: Anchor
    max_transaction_id: int
    seal_position: int
    seal_gaps: tuple[int, ...]
    balances: list[BalanceRow]


@dataclass(frozen=True)
class Checkpoint:
    """A recorded checkpoint (its balances are read apart: ``balances``)."""

    id: int
    seq: int
    head_hash: str
    max_transaction_id: int
    seal_position: int
    seal_gaps: tuple[int, ...]
    ran_at: datetime
    duration_ms: int
    transactions: int
    accounts: int
    hash: str

    def as_dict(self) -> dict[str, Any]:
        """When the full pass ran, the chain head it verified, and how much it checked."""
        return {"at": self.ran_at, "seq": self.seq, "transactions": self.transactions}


def digest(fields: dict[str, Any], balances: Iterable[Sequence[int]]) -> str:
    """SHA-256 over a checkpoint's canonical text: its fields as sorted JSON on one line, then
    one line per balance (account, slot, the four totals), in account and slot order."""
    head = dict(fields, ran_at=_instant(fields["ran_at"]), seal_gaps=list(fields["seal_gaps"]))
    sha = hashlib.sha256(_FORMAT)
    sha.update(json.dumps(head, sort_keys=True, separators=(",", ":")).encode() + b"\n")
    for row in balances:
        sha.update(",".join(str(int(v)) for v in row).encode() + b"\n")
    return sha.hexdigest()


def _instant(moment: datetime) -> str:
    return clock.as_utc(moment).replace(tzinfo=None).isoformat(timespec="microseconds")


_FIELDS = (
    "seq",
    "head_hash",
    "max_transaction_id",
    "seal_position",
    "seal_gaps",
    "ran_at",
    "duration_ms",
    "transactions",
    "accounts",
)


def record(connection: Connection, report: Report) -> Checkpoint:
    """Record the checkpoint of ``report``, a full pass that found everything ok; delete all
    but the newest ``KEEP`` checkpoints."""
    implied = report.implied
    if not report.ok or implied is None:
        raise ValueError("only a full pass that found everything intact is a checkpoint")
    fields: dict[str, Any] = {
        "seq": implied.head.seq,
        "head_hash": implied.head.hash,
        "max_transaction_id": implied.max_transaction_id,
        "seal_position": implied.seal_position,
        "seal_gaps": implied.seal_gaps,
        "ran_at": implied.started_at,
        "duration_ms": round(report.seconds * 1000),
        "transactions": report.transactions_checked,
        "accounts": report.accounts_checked,
    }
    balances = sorted(implied.balances)
    values = dict(fields, seal_gaps=_gaps_text(implied.seal_gaps))
    values["hash"] = digest(fields, balances)
    new_id = connection.execute(
        insert(LedgerVerifyCheckpoint).values(**values).returning(CP.c.id)
    ).scalar_one()
    if balances:
        names = ("account_id", "slot", *(c.name for c in _TOTALS))
        rows = [dict(zip(names, row, strict=True), checkpoint_id=new_id) for row in balances]
        connection.execute(insert(LedgerVerifyBalance), rows)
    _prune(connection)
    return Checkpoint(id=new_id, **dict(fields, hash=values["hash"]))


def _gaps_text(gaps: Sequence[int]) -> str:
    return ",".join(str(g) for g in gaps)


_TOTALS = (VB.c.debits_posted, VB.c.credits_posted, VB.c.debits_pending, VB.c.credits_pending)


def _prune(connection: Connection) -> None:
    kept = select(CP.c.id).order_by(CP.c.id.desc()).limit(KEEP).subquery()
    old = select(CP.c.id).where(CP.c.id.not_in(select(kept.c.id)))
    connection.execute(delete(LedgerVerifyBalance).where(VB.c.checkpoint_id.in_(old)))
    connection.execute(delete(LedgerVerifyCheckpoint).where(CP.c.id.in_(old)))


def latest(connection: Connection) -> Checkpoint | None:
    """The newest checkpoint, or ``None`` when no full pass has recorded one."""
    row = connection.execute(select(CP).order_by(CP.c.id.desc()).limit(1)).mappings().first()
    if row is None:
        return None
    gaps = tuple(int(g) for g in str(row["seal_gaps"] or "").split(",") if g.strip())
    values = {name: row[name] for name in _FIELDS}
    values["ran_at"] = clock.as_utc(values["ran_at"])  # SQLite hands back naive UTC
    return Checkpoint(id=row["id"], hash=row["hash"], **dict(values, seal_gaps=gaps))


def balances_table(checkpoint_id: int) -> Any:
    """The checkpoint's balance rows, as a subquery with the stored balance columns."""
    return select(VB).where(VB.c.checkpoint_id == checkpoint_id).subquery()


def check_hash(connection: Connection, checkpoint: Checkpoint) -> Break | None:
    """The checkpoint and its balances still hash to what was recorded."""
    rows = connection.execute(
        select(VB.c.account_id, VB.c.slot, *_TOTALS)
        .where(VB.c.checkpoint_id == checkpoint.id)
        .order_by(VB.c.account_id, VB.c.slot)
    )
    fields = {name: getattr(checkpoint, name) for name in _FIELDS}
    if digest(fields, rows) == checkpoint.hash:
        return None
    return Break(
        "checkpoint",
        f"checkpoint {checkpoint.id} (the full pass of {_instant(checkpoint.ran_at)}) differs "
        "from what was recorded: run a full pass (`wetbank audit verify`)",
        seq=checkpoint.seq,
    )


def seal_mark(connection: Connection) -> tuple[int, tuple[int, ...]]:
    """The newest seal's position, and the positions within ``GAP_WINDOW`` below it that no
    visible seal holds (their writers were still open, or rolled back): one statement."""
    position = position_column(connection)
    present = list(
        connection.execute(
            text(
                f"SELECT {position} FROM ledger_row_seals WHERE {position} > "
                f"(SELECT coalesce(max({position}), 0) FROM ledger_row_seals) - :window "
                "ORDER BY 1"
            ),
            {"window": GAP_WINDOW},
        ).scalars()
    )
    if not present:
        return 0, ()
    top = int(present[-1])
    seen = {int(p) for p in present}
    return top, tuple(p for p in range(max(top - GAP_WINDOW, 0) + 1, top) if p not in seen)
