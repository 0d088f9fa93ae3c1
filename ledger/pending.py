"""Pending transfers: their state, and the lines that resolve them (post, void or expire).

A pending transfer's entries reserve amounts (phase ``pending``).  Resolving it writes one
``release`` line per pending entry, undoing the reservation and naming the resolution, and, when
it is posted, posted lines moving the amount (all of it, or part of a one-leg transfer).  A unique
index on release entries lets each pending transfer resolve once.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from datetime import date, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from ledger import clock
from ledger.errors import AlreadyResolved, LedgerError, PendingExpired, UnknownTransaction
from ledger.lines import Line
from ledger.schema import PHASE_PENDING, PHASE_POSTED, PHASE_RELEASE, LedgerEntry, LedgerTransaction
from ledger.slices import slices


def pending_state(session: Session, pending_id: int, now: datetime | None = None) -> str:
    """``pending``, ``posted``, ``voided`` or ``expired`` (expired the moment its expiry passes);
    ``UnknownTransaction`` if there is no such pending transfer."""
    return pending_states(session, [pending_id], now)[pending_id]


def pending_states(
    session: Session, pending_ids: Collection[int], now: datetime | None = None
) -> dict[int, str]:
    """``pending_state`` of each of ``pending_ids``, read with two queries per ``SLICE`` of
    them."""
    resolved: dict[int, str] = {}
    headers: dict[int, datetime | None] = {}
    for ids in slices(sorted(set(pending_ids))):
        for resolves_id, resolution in session.execute(
            select(LedgerEntry.resolves_id, LedgerEntry.resolution)
            .where(LedgerEntry.resolves_id.in_(ids), LedgerEntry.resolution.is_not(None))
            .distinct()
        ):
            resolved[int(resolves_id or 0)] = str(resolution)
        for header_id, expires_at in session.execute(
            select(LedgerTransaction.id, LedgerTransaction.expires_at).where(
                LedgerTransaction.id.in_(ids), LedgerTransaction.pending.is_(True)
            )
        ):
            headers[header_id] = expires_at
    moment = now or clock.utcnow()
    states = {}
    for pending_id in pending_ids:
        if pending_id in resolved:
            states[pending_id] = str(resolved[pending_id])
        elif pending_id not in headers:
            raise UnknownTransaction(f"pending transfer {pending_id} does not exist")
        else:
            states[pending_id] = "expired" if is_expired(headers[pending_id], moment) else "pending"
    return states


def pending_header(session: Session, pending_id: int) -> LedgerTransaction:
    """The header of pending transfer ``pending_id``; ``UnknownTransaction`` if there is none."""
    header = session.get(LedgerTransaction, pending_id)
    if header is None or not header.pending:
        raise UnknownTransaction(f"pending transfer {pending_id} does not exist")
    return header


def pending_entries(session: Session, pending_id: int) -> list[LedgerEntry]:
    """The entries that reserve what pending transfer ``pending_id`` holds."""
    pending_header(session, pending_id)
    return [e for e in entries_of(session, pending_id) if e.phase == PHASE_PENDING]


def check_open(session: Session, pending_id: int, now: datetime | None = None) -> None:
    """Refuse unless the pending transfer still reserves at ``now`` (not resolved, not expired)."""
    state = pending_state(session, pending_id, now)
    if state == "expired":
        raise PendingExpired(f"pending transfer {pending_id} expired", pending_id=pending_id)
    if state != "pending":
        raise AlreadyResolved(f"pending transfer {pending_id} was already {state}", state=state)


def release(entries: Sequence[LedgerEntry], pending_id: int, resolution: str) -> list[Line]:
    """The lines that undo what ``entries`` reserve, naming how they were resolved."""
    return [Line(e.account_id, e.amount, PHASE_RELEASE, pending_id, resolution) for e in entries]


def posted_part(entries: Sequence[LedgerEntry], amount: int | None) -> list[Line]:
    """The posted lines of a pending transfer posted in full (``amount`` None) or in part."""
    if amount is None:
        return [Line(e.account_id, e.amount, PHASE_POSTED) for e in entries]
    if len(entries) != 2:
        raise LedgerError("only a one-leg pending transfer can be posted in part")
    full = abs(entries[0].amount)
    if not 0 < amount <= full:
        raise LedgerError(
            f"a partial post must be between 1 and {full}",
            amount=amount,
            pending_amount=full,
        )
    return [Line(e.account_id, amount if e.amount > 0 else -amount, PHASE_POSTED) for e in entries]


def entries_of(session: Session, transaction_id: int) -> list[LedgerEntry]:
    """A transaction's entries in the order they were written."""
    of_transaction = select(LedgerEntry).where(LedgerEntry.transaction_id == transaction_id)
    return list(session.scalars(of_transaction.order_by(LedgerEntry.id)))


def is_expired(expires_at: datetime | None, now: datetime) -> bool:
    """Whether an expiry has passed at ``now`` (no expiry: never)."""
    return expires_at is not None and clock.as_utc(expires_at) <= now


def expired_on(expires_at: datetime) -> date:
    """The effective date of a pending transfer's expiry: the business date of the last instant
    it reserved (an ``expires_on`` ends at midnight, so the expiry is dated that day, not the
    next, whose first instant ``expires_at`` is)."""
    return clock.business_date(clock.as_utc(expires_at) - timedelta(microseconds=1))
