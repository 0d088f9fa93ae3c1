"""Writing to the ledger: transfers, pending transfers and their resolution, reversals.

Every write runs inside the caller's unit of work (``Database.transaction``) and takes the one
write path (``ledger.write``): idempotency, locks in one global order, lazy expiry, the checks,
then the store's statements.  Resolving and reversing first lock the headers they act on, so that
of two concurrent resolvers (or reversers) one waits and then sees the other's result.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

from ledger import clock, locks
from ledger.account_cache import AccountRow, accounts_for
from ledger.errors import (
    AlreadyResolved,
    AlreadyReversed,
    LedgerError,
    UnbalancedTransaction,
    UnknownTransaction,
)
from ledger.lines import Leg, Line, Meta, Posted, legs_json, lines_for, request_hash
from ledger.pending import (
    check_open,
    entries_of,
    pending_entries,
    pending_state,
    posted_part,
    release,
)
from ledger.schema import PHASE_PENDING, PHASE_POSTED, LedgerTransaction
from ledger.write import replay, replay_or_raise, still_held, write

Resolution = tuple[int, str, int | None]  # (pending id, "posted" | "voided", amount to post)


def transfer(
    session: Session,
    kind: str,
    legs: Sequence[Leg],
    meta: Meta,
    *,
    held: Mapping[int, AccountRow] | None = None,
) -> Posted:
    """Post ``legs`` as one balanced, all-or-nothing transaction (docs/reliability.md, guarantees
    1 and 9).

    ``held``: balance rows the caller locked in this unit of work (``ledger.write.write``)."""
    lines = lines_for(legs, PHASE_POSTED)
    request = {"op": "transfer", "kind": kind, "legs": legs_json(legs)}
    return write(session, kind, lines, meta, request, held=held)


def reserve(
    session: Session,
    kind: str,
    legs: Sequence[Leg],
    meta: Meta,
    *,
    expires_at: datetime | None,
    held: Mapping[int, AccountRow] | None = None,
) -> Posted:
    """A pending transfer: reserves ``legs`` until posted, voided or expired (guarantee 4).

    ``held``: as ``transfer``'s."""
    lines = lines_for(legs, PHASE_PENDING)
    if len({line.account_id for line in lines}) != len(lines):
        # each account appears once, so each release entry is unique per (pending, account)
        raise UnbalancedTransaction("a pending transfer touches each account at most once")
    expiry = clock.as_utc(expires_at) if expires_at else None
    request = {
        "op": "reserve",
        "kind": kind,
        "legs": legs_json(legs),
        "expires_at": expiry.isoformat() if expiry else None,
    }
    return write(session, kind, lines, meta, request, pending=True, expires_at=expiry, held=held)


def post_pending(
    session: Session, pending_id: int, meta: Meta, *, amount: int | None = None, kind: str = "post"
) -> Posted:
    """Post a pending transfer in full, or ``amount`` of a one-leg one (the rest is released)."""
    return resolve_pending(session, [(pending_id, "posted", amount)], meta, kind=kind)


def void_pending(
    session: Session,
    pending_id: int,
    meta: Meta,
    *,
    kind: str = "void",
    held: Mapping[int, AccountRow] | None = None,
) -> Posted:
    """Release everything a pending transfer reserved.  ``held``: as ``resolve_pending``'s."""
    return resolve_pending(session, [(pending_id, "voided", None)], meta, kind=kind, held=held)


def resolve_pending(
    session: Session,
    items: Sequence[Resolution],
    meta: Meta,
    *,
    kind: str,
    held: Mapping[int, AccountRow] | None = None,
) -> Posted:
    """Post (in full or in part) or void several pending transfers as ONE transaction.

    Each pending transfer resolves at most once (a unique index on its release entries); one that
    has expired reserves nothing and cannot be resolved (``PendingExpired``).

    ``held``: as ``reverse``'s.  A caller resolving pending transfers along with other writes in
    one unit of work locks the balance rows of them all at once, in the global order, and hands
    them over: the resolution then waits for nothing but its headers.
    """
    request = {"op": "resolve", "kind": kind, "items": [list(item) for item in items]}
    bound_to = request_hash(request, meta)
    earlier = replay(session, meta.idempotency_key, bound_to)
    if earlier:
        return earlier
    entries = {pending_id: pending_entries(session, pending_id) for pending_id, _, _ in items}
    touched = {e.account_id for found in entries.values() for e in found}
    locked = still_held(accounts_for(session, touched), held) if held is not None else None
    if locked is None:
        locks.lock_balances(session, touched)
    # a concurrent resolver of the same pending transfer commits first; we then see it resolved
    # (an account with no limit takes no lock above, so the header is what serializes us)
    locks.lock_headers(session, entries)
    # one instant for the check and the write: were the write to read the clock again, a
    # pending transfer that expired in between would be expired by the write's own due expiries
    # and then released a second time, which the balance row's CHECK refuses as an error
    now = clock.utcnow()
    lines: list[Line] = []
    for pending_id, resolution, amount in items:
        if resolution not in ("posted", "voided"):
            raise LedgerError(f"unknown resolution {resolution}")
        try:
            check_open(session, pending_id, now)
        except AlreadyResolved as refusal:
            return replay_or_raise(session, meta.idempotency_key, bound_to, refusal)
        lines += release(entries[pending_id], pending_id, resolution)
        if resolution == "posted":
            lines += posted_part(entries[pending_id], amount)
    return write(session, kind, lines, meta, request, now=now, held=locked)


def reverse(
    session: Session,
    transaction_id: int,
    meta: Meta,
    *,
    kind: str = "reversal",
    held: Mapping[int, AccountRow] | None = None,
) -> Posted:
    """A compensating transaction for a posted one; a transaction is reversed at most once.

    ``held``: as ``transfer``'s.  A caller reversing several transactions in one unit of work
    locks the balance rows of them all at once, in the global order, and hands them over: each
    reversal then waits for nothing but its header."""
    request = {"op": "reverse", "transaction_id": transaction_id, "kind": kind}
    bound_to = request_hash(request, meta)
    earlier = replay(session, meta.idempotency_key, bound_to)
    if earlier:
        return earlier
    original = session.get(LedgerTransaction, transaction_id)
    if original is None:
        raise UnknownTransaction(f"transaction {transaction_id} does not exist")
    if original.pending:
        raise LedgerError(
            "a pending transfer is voided, not reversed", transaction_id=transaction_id
        )
    lines = [
        Line(e.account_id, -e.amount, PHASE_POSTED)
        for e in entries_of(session, transaction_id)
        if e.phase == PHASE_POSTED
    ]
    if not lines:
        raise LedgerError("the transaction moved nothing to reverse", transaction_id=transaction_id)
    # a concurrent reversal commits first; we then see it (and not its effect on the limits)
    touched = {line.account_id for line in lines}
    locked = still_held(accounts_for(session, touched), held) if held is not None else None
    if locked is None:
        locks.lock_balances(session, touched)
    locks.lock_headers(session, [transaction_id])
    if _reversed_by(session, transaction_id) is not None:
        refusal = AlreadyReversed(f"transaction {transaction_id} was already reversed")
        return replay_or_raise(session, meta.idempotency_key, bound_to, refusal)
    return write(session, kind, lines, meta, request, reverses_id=transaction_id, held=locked)


def _reversed_by(session: Session, transaction_id: int) -> int | None:
    return session.execute(
        select(LedgerTransaction.id).where(LedgerTransaction.reverses_id == transaction_id)
    ).scalar_one_or_none()


__all__ = [
    "Leg",
    "Meta",
    "Posted",
    "Resolution",
    "pending_state",
    "post_pending",
    "reserve",
    "resolve_pending",
    "reverse",
    "transfer",
    "void_pending",
]
