"""The one write path every ledger write takes, on every database.

1. an idempotency look-up where it matters (same key and request: the original result, nothing
   written);
2. the limited balance rows it touches are locked in ascending account id (``ledger.locks``),
   unless the caller locked them already in this unit of work and hands them over (``held``);
3. pending transfers on those accounts whose expiry has passed are expired first (lazy expiry:
   no sweeper is needed for them to stop reserving);
4. the request is checked against the locked balances and refused with a domain error;
5. the store writes header, entries (each with its balance-after) and balance changes, and queues
   the transaction for sealing; accounts without limits change by increment there, so their row
   lock is brief.

The database re-checks all of it (CHECK constraints, balance triggers, unique indexes); a write it
refuses is answered with the domain error the refusing constraint means.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Any, NoReturn

from sqlalchemy import DateTime, delete, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ledger import clock, locks, pending, store
from ledger.account_cache import AccountRow, accounts_for
from ledger.errors import (
    AlreadyResolved,
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    UnbalancedTransaction,
)
from ledger.lines import Line, Meta, Posted, deltas, request_hash
from ledger.schema import LedgerOpenPending, LedgerTransaction


def write(
    session: Session,
    kind: str,
    lines: list[Line],
    meta: Meta,
    request: dict[str, Any],
    *,
    pending: bool = False,
    expires_at: datetime | None = None,
    reverses_id: int | None = None,
    expire_first: bool = True,
    held: Mapping[int, AccountRow] | None = None,
    now: datetime | None = None,
) -> Posted:
    """Check and write ``lines`` as one transaction of ``kind``, bound to its idempotency key.

    ``held``: rows ``locks.lock_balances`` returned earlier in this unit of work, nothing written
    to their accounts since; when they cover every limited account of ``lines``, they are the
    write's locked balances, and it locks again only after expiring reservations they held.
    ``now``: the instant the write is recorded at and expires reservations as of (the clock's,
    unless the caller judged the lines at an instant of its own).
    """
    bound_to = request_hash(request, meta)
    now = now or clock.utcnow()
    accounts = accounts_for(session, {line.account_id for line in lines}, held)
    check_balanced(lines, accounts)
    locked = still_held(accounts, held) if held is not None else None
    if locked is None:
        locked = locks.lock_balances(session, accounts)
    else:
        accounts.update(locked)
    if expire_first and any(row.debits_pending or row.credits_pending for row in locked.values()):
        # a replay writes nothing, not even the expiries this request would have triggered
        earlier, due = _replay_or_due(session, meta.idempotency_key, bound_to, locked, now)
        if earlier:
            return earlier
        if due:
            _expire(session, due)
            locked = locks.lock_balances(session, accounts)
    try:
        check_limits(lines, locked)
    except InsufficientFunds as refusal:
        # not refused against the balances a replay or its twin already changed
        return replay_or_raise(session, meta.idempotency_key, bound_to, refusal)
    header = dict(_recorded(meta, bound_to, now), kind=kind, pending=pending)
    header.update(expires_at=expires_at, reverses_id=reverses_id)
    try:
        tx_id = store.of(session).write(session, header, lines, accounts)
    except IntegrityError as error:
        raise_refusal(error)
    if tx_id is None:
        # a twin took the idempotency key first (nothing of ours was written)
        earlier = replay(session, meta.idempotency_key, bound_to)
        if earlier is None:
            raise LedgerError("the idempotency key is taken but its transaction is not visible")
        return earlier
    _track_pending(session, tx_id, lines, pending, expires_at)
    return Posted(tx_id, entries=tuple((x.account_id, x.amount, x.phase) for x in lines))


def _recorded(meta: Meta, bound_to: str, now: datetime) -> dict[str, Any]:
    """The header's columns that say who asked, when, and under which key."""
    return {
        "idempotency_key": meta.idempotency_key,
        "request_hash": bound_to,
        "effective_on": meta.effective_on,
        "recorded_at": now,
        "actor": meta.actor,
        "request_id": meta.request_id,
        "memo": meta.memo,
    }


def still_held(
    accounts: dict[int, AccountRow], held: Mapping[int, AccountRow]
) -> dict[int, AccountRow] | None:
    """``held``'s rows of the limited ``accounts`` (as ``locks.lock_balances`` would lock them),
    or ``None`` when one is missing.  A row with a pending side serves too: the write looks for
    reservations past their expiry next, and locks again only after expiring some."""
    locked = {}
    for account_id, row in accounts.items():
        if not row.limited:
            continue
        found = held.get(account_id)
        if found is None:
            return None
        locked[account_id] = found
    return locked


# Before a write on accounts that hold reservations: the earlier write under its idempotency key
# (if any), and the reservations on those accounts whose expiry has passed, in one round trip.
# The account ids travel as one JSON array (as a list, psycopg would dump them one by one).
_REPLAY_OR_DUE = store.Statement(
    postgresql="""
SELECT id, request_hash, NULL::bigint FROM ledger_transactions WHERE idempotency_key = :key
UNION ALL
SELECT DISTINCT NULL::bigint, NULL, transaction_id FROM ledger_open_pending
WHERE account_id = ANY(ARRAY(SELECT jsonb_array_elements_text(:account_ids::jsonb)::bigint))
  AND expires_at <= :now
""",
    sqlite="""
SELECT id, request_hash, NULL FROM ledger_transactions WHERE idempotency_key = :key
UNION ALL
SELECT DISTINCT NULL, NULL, transaction_id FROM ledger_open_pending
WHERE account_id IN (SELECT value FROM json_each(:account_ids)) AND expires_at <= :now
""",
    types={"now": DateTime(timezone=True)},
)


def _replay_or_due(
    session: Session, key: str, bound_to: str, account_ids: Iterable[int], now: datetime
) -> tuple[Posted | None, list[int]]:
    """``replay``'s answer, and the pending transfers on ``account_ids`` due to expire at
    ``now`` (ascending)."""
    params = {"key": key, "account_ids": json.dumps(sorted(account_ids)), "now": now}
    rows = store.of(session).run(session, _REPLAY_OR_DUE, params)
    due = sorted(int(row[2]) for row in rows if row[2] is not None)
    for row in rows:
        if row[0] is not None:
            return _replayed(key, bound_to, int(row[0]), row[1]), due
    return None, due


def _expire(session: Session, due_ids: Iterable[int]) -> None:
    """Expire these pending transfers, each with a resolution transaction of its own."""
    for pending_id in due_ids:
        header = pending.pending_header(session, pending_id)
        if header.expires_at is None:
            raise LedgerError("an open reservation has no expiry", pending_id=pending_id)
        lines = pending.release(pending.pending_entries(session, pending_id), pending_id, "expired")
        meta = Meta(
            idempotency_key=f"ledger:expire:{pending_id}",
            effective_on=pending.expired_on(header.expires_at),
        )
        request = {"op": "expire", "pending_id": pending_id}
        write(session, "expire", lines, meta, request, expire_first=False)


def replay(session: Session, key: str, bound_to: str) -> Posted | None:
    """The earlier write under ``key`` (``None``: there is none); ``IdempotencyConflict`` if it
    was a different request."""
    row = session.execute(
        select(LedgerTransaction.id, LedgerTransaction.request_hash).where(
            LedgerTransaction.idempotency_key == key
        )
    ).one_or_none()
    if row is None:
        return None
    return _replayed(key, bound_to, row.id, row.request_hash)


def _replayed(key: str, bound_to: str, transaction_id: int, request_hash: str) -> Posted:
    """The earlier write ``transaction_id`` under ``key``, if it was this request (its
    ``request_hash`` is ``bound_to``); else ``IdempotencyConflict``."""
    if request_hash != bound_to:
        raise IdempotencyConflict(
            "this idempotency key was used for a different request", idempotency_key=key
        )
    return Posted(transaction_id, replayed=True)


def replay_or_raise(session: Session, key: str, bound_to: str, refusal: LedgerError) -> Posted:
    """The earlier write under ``key``, else ``refusal`` raised: a request refused once its
    locks are held may be a replay, or a concurrent twin under the same key that committed
    while it waited, and is answered with that write's result."""
    earlier = replay(session, key, bound_to)
    if earlier:
        return earlier
    raise refusal


def check_balanced(lines: list[Line], accounts: dict[int, AccountRow]) -> None:
    """Refuse lines that do not balance per asset and phase, or a leg across two assets."""
    if len(lines) < 2:
        raise UnbalancedTransaction("a transaction needs at least two entries")
    sums: dict[tuple[str, str], int] = defaultdict(int)
    leg_assets: dict[int, set[str]] = defaultdict(set)
    for line in lines:
        if line.leg is not None:
            leg_assets[line.leg].add(accounts[line.account_id].asset)
        if line.amount == 0:
            raise UnbalancedTransaction("an entry cannot move zero")
        sums[(accounts[line.account_id].asset, line.phase)] += line.amount
    for index, assets in leg_assets.items():
        if len(assets) > 1:
            raise UnbalancedTransaction(
                "a leg moves between accounts of different assets", leg=index, assets=sorted(assets)
            )
    unbalanced = {f"{asset}/{phase}": s for (asset, phase), s in sums.items() if s}
    if unbalanced:
        raise UnbalancedTransaction("debits and credits differ", sums=unbalanced)


def check_limits(lines: list[Line], locked: dict[int, AccountRow]) -> None:
    """Refuse lines that would take a locked account past its limit (pending counted)."""
    changes = deltas(lines)
    for account_id, row in locked.items():
        change = changes.get(account_id)
        if change is None:
            continue
        debits_posted, credits_posted, debits_pending, credits_pending = change
        debits = row.debits_posted + debits_posted + row.debits_pending + debits_pending
        if row.no_overdraft and debits > row.credits_posted + credits_posted:
            available = row.credits_posted - row.debits_posted - row.debits_pending
            raise InsufficientFunds(
                f"account {account_id} has {available} available",
                account_id=account_id,
                available=available,
                requested=debits_posted + debits_pending - credits_posted,
            )
        credits = row.credits_posted + credits_posted + row.credits_pending + credits_pending
        if row.no_overcredit and credits > row.debits_posted + debits_posted:
            raise InsufficientFunds(
                f"account {account_id} would be credited past its debits",
                account_id=account_id,
            )


# A refused write's constraint, as PostgreSQL names it and as SQLite names a unique index's columns
_REVERSED_ONCE = ("uq_ledger_transactions_reverses_id", "ledger_transactions.reverses_id")
_RESOLVED_ONCE = ("uq_ledger_entries_resolves_once", "ledger_entries.resolves_id")
_BALANCE_LIMIT = "ck_ledger_balances"


def raise_refusal(error: IntegrityError) -> NoReturn:
    """Raise the domain error a refused write means, by the constraint that refused it; any
    other refusal (a quantity that would not stay exact, say) as it is."""
    message = str(error.orig)
    if any(marker in message for marker in _REVERSED_ONCE):
        raise AlreadyReversed("the transaction was already reversed") from error
    if any(marker in message for marker in _RESOLVED_ONCE):
        raise AlreadyResolved("the pending transfer was already resolved") from error
    if _BALANCE_LIMIT in message:
        raise InsufficientFunds("a balance would break its account's limit") from error
    raise error


# A new pending transfer's rows of ``ledger_open_pending`` (one per account: its debits and
# credits there) in one statement: a Core insert of several rows costs the writer more than
# the database spends on it.  The rows travel as one JSON array, [account, debits, credits].
_OPEN_PENDING = store.Statement(
    postgresql="""
INSERT INTO ledger_open_pending (transaction_id, account_id, debits, credits, expires_at)
SELECT CAST(:transaction_id AS bigint), (r->>0)::bigint, (r->>1)::bigint, (r->>2)::bigint,
    CAST(:expires_at AS timestamptz)
FROM jsonb_array_elements(:rows::jsonb) AS r
""",
    sqlite="""
INSERT INTO ledger_open_pending (transaction_id, account_id, debits, credits, expires_at)
SELECT :transaction_id, json_extract(r.value, '$[0]'), json_extract(r.value, '$[1]'),
    json_extract(r.value, '$[2]'), :expires_at
FROM json_each(:rows) AS r
""",
    types={"expires_at": DateTime(timezone=True)},
)


def _track_pending(
    session: Session,
    tx_id: int,
    lines: list[Line],
    is_pending: bool,
    expires_at: datetime | None,
) -> None:
    """Keep ``ledger_open_pending`` to the reservations still open: one row per account of a
    new pending transfer, none for one just resolved."""
    resolved = sorted({line.resolves_id for line in lines if line.resolves_id is not None})
    if resolved:
        session.execute(
            delete(LedgerOpenPending).where(LedgerOpenPending.transaction_id.in_(resolved))
        )
    if not is_pending:
        return
    per_account: dict[int, list[int]] = {}
    for line in lines:
        sides = per_account.setdefault(line.account_id, [0, 0])
        sides[1 if line.amount > 0 else 0] += abs(line.amount)
    rows = [[account_id, debits, credits] for account_id, (debits, credits) in per_account.items()]
    params = {"transaction_id": tx_id, "rows": json.dumps(rows), "expires_at": expires_at}
    store.of(session).run(session, _OPEN_PENDING, params)
