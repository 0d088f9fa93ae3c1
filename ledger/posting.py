"""Writing to the ledger: transfers, pending transfers and their resolution, reversals.

Every write runs inside the caller's unit of work (``Database.transaction``) and follows one path:

1. an idempotency look-up (same key and request: the original result, nothing written);
2. the no-overdraft / no-overcredit balance rows it touches are locked ``FOR UPDATE`` in ascending
   account id, the one global order, so two writers never deadlock on them;
3. pending transfers on those accounts whose expiry has passed are expired first (lazy expiry:
   no sweeper is needed for them to stop reserving);
4. the request is checked against the locked balances and refused with a domain error;
5. header, entries (with balance-after) and balance increments are written; accounts with no
   limit (hot issuance accounts) are updated last, by increment, so their row lock is brief.

The database re-checks all of it (CHECK constraints, balance triggers, unique indexes).
"""

from __future__ import annotations

import hashlib
import json
import random
import weakref
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any, NoReturn, cast

from sqlalchemy import Table, delete, insert, select, update
from sqlalchemy.dialects import sqlite
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from ledger import chain, clock, pg_direct, quantities
from ledger.errors import (
    AlreadyResolved,
    AlreadyReversed,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    PendingExpired,
    UnbalancedTransaction,
    UnknownAccount,
    UnknownTransaction,
)
from ledger.schema import (
    PHASE_PENDING,
    PHASE_POSTED,
    PHASE_RELEASE,
    LedgerAccount,
    LedgerBalance,
    LedgerEntry,
    LedgerOpenPending,
    LedgerTransaction,
)

A = LedgerAccount.__table__.c
B = LedgerBalance.__table__.c
T = LedgerTransaction.__table__.c
_TX = cast(Table, LedgerTransaction.__table__)
_ENTRIES = cast(Table, LedgerEntry.__table__)


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


@dataclass
class _Line:
    account_id: int
    amount: int
    phase: str
    resolves_id: int | None = None
    resolution: str | None = None
    leg: int | None = None  # the index of the Leg this line comes from, if any


def transfer(session: Session, kind: str, legs: Sequence[Leg], meta: Meta) -> Posted:
    """Post ``legs`` as one balanced, all-or-nothing transaction (LEDGER.md guarantees 1, 9)."""
    lines = _lines_for(legs, PHASE_POSTED)
    request = {"op": "transfer", "kind": kind, "legs": _legs_json(legs)}
    return _write(session, kind, lines, meta, request)


def reserve(
    session: Session,
    kind: str,
    legs: Sequence[Leg],
    meta: Meta,
    *,
    expires_at: datetime | None,
) -> Posted:
    """A pending transfer: reserves ``legs`` until posted, voided or expired (guarantee 4)."""
    lines = _lines_for(legs, PHASE_PENDING)
    if len({line.account_id for line in lines}) != len(lines):
        # each account appears once, so each release entry is unique per (pending, account)
        raise UnbalancedTransaction("a pending transfer touches each account at most once")
    expiry = clock.as_utc(expires_at) if expires_at else None
    request = {
        "op": "reserve",
        "kind": kind,
        "legs": _legs_json(legs),
        "expires_at": expiry.isoformat() if expiry else None,
    }
    return _write(session, kind, lines, meta, request, pending=True, expires_at=expiry)


def post_pending(
    session: Session, pending_id: int, meta: Meta, *, amount: int | None = None, kind: str = "post"
) -> Posted:
    """Post a pending transfer in full, or ``amount`` of a one-leg one (the rest is released)."""
    return resolve_pending(session, [(pending_id, "posted", amount)], meta, kind=kind)


def void_pending(session: Session, pending_id: int, meta: Meta, *, kind: str = "void") -> Posted:
    """Release everything a pending transfer reserved."""
    return resolve_pending(session, [(pending_id, "voided", None)], meta, kind=kind)


Resolution = tuple[int, str, int | None]  # (pending id, "posted" | "voided", amount to post)


def resolve_pending(
    session: Session, items: Sequence[Resolution], meta: Meta, *, kind: str
) -> Posted:
    """Post (in full or in part) or void several pending transfers as ONE transaction.

    Each pending transfer resolves at most once (a unique index on its release entries); one that
    has expired reserves nothing and cannot be resolved (``PendingExpired``).
    """
    request = {"op": "resolve", "kind": kind, "items": [list(item) for item in items]}
    replay = _replay(session, meta.idempotency_key, _hash(request, meta))
    if replay:
        return replay
    pending = {pending_id: _pending_lines(session, pending_id) for pending_id, _, _ in items}
    _lock(session, {e.account_id for lines in pending.values() for e in lines})
    # a concurrent resolver of the same pending transfer commits first; we then see it resolved
    # (an account with no limit takes no lock above, so the header is what serializes us)
    _lock_headers(session, pending)
    lines: list[_Line] = []
    for pending_id, resolution, amount in items:
        if resolution not in ("posted", "voided"):
            raise LedgerError(f"unknown resolution {resolution}")
        try:
            _check_open(session, pending_id)
        except AlreadyResolved:
            # a twin under our key that committed while we waited is answered with its result
            replay = _replay(session, meta.idempotency_key, _hash(request, meta))
            if replay:
                return replay
            raise
        lines += _release(pending[pending_id], pending_id, resolution)
        if resolution == "posted":
            lines += _posted_part(pending[pending_id], amount)
    return _write(session, kind, lines, meta, request)


def reverse(session: Session, transaction_id: int, meta: Meta, *, kind: str = "reversal") -> Posted:
    """A compensating transaction for a posted one; a transaction is reversed at most once."""
    request = {"op": "reverse", "transaction_id": transaction_id, "kind": kind}
    replay = _replay(session, meta.idempotency_key, _hash(request, meta))
    if replay:
        return replay
    original = session.get(LedgerTransaction, transaction_id)
    if original is None:
        raise UnknownTransaction(f"transaction {transaction_id} does not exist")
    if original.pending:
        raise LedgerError(
            "a pending transfer is voided, not reversed", transaction_id=transaction_id
        )
    lines = [
        _Line(e.account_id, -e.amount, PHASE_POSTED)
        for e in _entries_of(session, transaction_id)
        if e.phase == PHASE_POSTED
    ]
    if not lines:
        raise LedgerError("the transaction moved nothing to reverse", transaction_id=transaction_id)
    # a concurrent reversal commits first; we then see it (and not its effect on the limits)
    _lock(session, {line.account_id for line in lines})
    _lock_headers(session, [transaction_id])
    if _reversed_by(session, transaction_id) is not None:
        # a twin under our key that committed while we waited is answered with its result
        replay = _replay(session, meta.idempotency_key, _hash(request, meta))
        if replay:
            return replay
        raise AlreadyReversed(f"transaction {transaction_id} was already reversed")
    return _write(session, kind, lines, meta, request, reverses_id=transaction_id)


def pending_state(session: Session, pending_id: int, now: datetime | None = None) -> str:
    """``pending``, ``posted``, ``voided`` or ``expired`` (expired the moment its expiry passes)."""
    resolution = session.execute(
        select(LedgerEntry.resolution).where(LedgerEntry.resolves_id == pending_id).limit(1)
    ).scalar_one_or_none()
    if resolution:
        return str(resolution)
    header = session.get(LedgerTransaction, pending_id)
    if header is None or not header.pending:
        raise UnknownTransaction(f"pending transfer {pending_id} does not exist")
    if _is_expired(header.expires_at, now or clock.utcnow()):
        return "expired"
    return "pending"


# --- resolution -------------------------------------------------------------------------------


def _pending_lines(session: Session, pending_id: int) -> list[LedgerEntry]:
    header = session.get(LedgerTransaction, pending_id)
    if header is None or not header.pending:
        raise UnknownTransaction(f"pending transfer {pending_id} does not exist")
    return [e for e in _entries_of(session, pending_id) if e.phase == PHASE_PENDING]


def _check_open(session: Session, pending_id: int) -> None:
    state = pending_state(session, pending_id)
    if state == "expired":
        raise PendingExpired(f"pending transfer {pending_id} expired", pending_id=pending_id)
    if state != "pending":
        raise AlreadyResolved(f"pending transfer {pending_id} was already {state}", state=state)


def _release(pending_lines: Sequence[LedgerEntry], pending_id: int, resolution: str) -> list[_Line]:
    return [
        _Line(e.account_id, e.amount, PHASE_RELEASE, pending_id, resolution) for e in pending_lines
    ]


def _posted_part(pending_lines: Sequence[LedgerEntry], amount: int | None) -> list[_Line]:
    if amount is None:
        return [_Line(e.account_id, e.amount, PHASE_POSTED) for e in pending_lines]
    if len(pending_lines) != 2:
        raise LedgerError("only a one-leg pending transfer can be posted in part")
    full = abs(pending_lines[0].amount)
    if not 0 < amount <= full:
        raise LedgerError(
            f"a partial post must be between 1 and {full}",
            amount=amount,
            pending_amount=full,
        )
    return [
        _Line(e.account_id, amount if e.amount > 0 else -amount, PHASE_POSTED)
        for e in pending_lines
    ]


def _expire_due(session: Session, account_ids: Iterable[int], now: datetime) -> int:
    """Expire, with a resolution transaction each, the due pending transfers on these accounts."""
    P = LedgerOpenPending.__table__.c
    due = session.execute(
        select(P.transaction_id)
        .where(P.account_id.in_(list(account_ids)), P.expires_at <= now)
        .distinct()
        .order_by(P.transaction_id)
    ).scalars()
    due_ids = list(due)
    for pending_id in due_ids:
        header = session.get(LedgerTransaction, pending_id)
        assert header is not None and header.expires_at is not None
        lines = _release(_pending_lines(session, pending_id), pending_id, "expired")
        # it stopped reserving at the end of its last day: that day is the expiry's business date
        expired_on = clock.business_date(
            clock.as_utc(header.expires_at) - timedelta(microseconds=1)
        )
        meta = Meta(idempotency_key=f"ledger:expire:{pending_id}", effective_on=expired_on)
        request = {"op": "expire", "pending_id": pending_id}
        _write(
            session,
            "expire",
            lines,
            meta,
            request,
            expire_first=False,
        )
    return len(due_ids)


# --- the one write path -----------------------------------------------------------------------


def _write(
    session: Session,
    kind: str,
    lines: list[_Line],
    meta: Meta,
    request: dict[str, Any],
    *,
    pending: bool = False,
    expires_at: datetime | None = None,
    reverses_id: int | None = None,
    expire_first: bool = True,
) -> Posted:
    request_hash = _hash(request, meta)
    now = clock.utcnow()
    balances = _balances_for(session, {line.account_id for line in lines})
    _check_balanced(lines, balances)
    locked = _lock(session, balances)
    if expire_first and any(row.debits_pending or row.credits_pending for row in locked.values()):
        # a replay writes nothing, not even the expiries this request would have triggered
        replay = _replay(session, meta.idempotency_key, request_hash)
        if replay:
            return replay
        if _expire_due(session, locked, now):
            locked = _lock(session, balances)
    try:
        _check_limits(lines, locked)
    except InsufficientFunds:
        # a replay, or a concurrent twin that committed while we waited for the locks, is
        # answered with its result, not refused against the balances it already changed
        replay = _replay(session, meta.idempotency_key, request_hash)
        if replay:
            return replay
        raise
    header = {
        "kind": kind,
        "pending": pending,
        "expires_at": expires_at,
        "reverses_id": reverses_id,
        "idempotency_key": meta.idempotency_key,
        "request_hash": request_hash,
        "effective_on": meta.effective_on,
        "recorded_at": now,
        "actor": meta.actor,
        "request_id": meta.request_id,
        "memo": meta.memo,
    }
    if pg_direct.is_postgresql(session):
        tx_id = _insert_at_once(session, header, lines, _slots(session, lines, balances))
    else:
        tx_id = _insert_one_by_one(session, header, lines, balances)
    if tx_id is None:
        # a twin took the idempotency key first (on PostgreSQL, nothing of ours was written)
        replay = _replay(session, meta.idempotency_key, request_hash)
        if replay is None:
            raise LedgerError("the idempotency key is taken but its transaction is not visible")
        return replay
    _track_pending(session, tx_id, lines, pending, expires_at)
    return Posted(tx_id, entries=tuple((x.account_id, x.amount, x.phase) for x in lines))


_JSON = json.JSONEncoder(separators=(",", ":"))
_DELTA_COLUMNS = ("debits_posted", "credits_posted", "debits_pending", "credits_pending")


def _insert_at_once(
    session: Session, header: dict[str, Any], lines: list[_Line], slots: dict[int, int]
) -> int | None:
    """PostgreSQL: header, sealing queue, balances and entries in one prepared statement.
    ``slots``: the slot changed per account that has several (others: slot 0)."""
    deltas = _deltas(lines)
    params = dict(
        header,
        deltas=_JSON.encode(
            [
                [a, slots.get(a, 0), *(d[column] for column in _DELTA_COLUMNS)]
                for a, d in sorted(deltas.items())
            ]
        ),
        lines=_JSON.encode(
            [[x.account_id, x.amount, x.phase, x.resolves_id, x.resolution] for x in lines]
        ),
    )
    try:
        return pg_direct.insert(session, params)
    except IntegrityError as error:
        _raise_refusal(error)


def _insert_one_by_one(
    session: Session,
    header: dict[str, Any],
    lines: list[_Line],
    balances: dict[int, LedgerBalanceRow],
) -> int | None:
    """SQLite: the header inserted ``open``, balances and entries, then sealed and chained."""
    tx_id = _insert_header(session, dict(header, state="open"))
    if tx_id is None:
        return None
    _insert_entries(session, tx_id, lines, header["effective_on"], balances)
    session.execute(update(LedgerTransaction).where(T.id == tx_id).values(state="sealed"))
    chain.enqueue(session, tx_id)
    return tx_id


_REVERSED_ONCE = ("uq_ledger_transactions_reverses_id", "ledger_transactions.reverses_id")
_RESOLVED_ONCE = ("uq_ledger_entries_resolves_once", "ledger_entries.resolves_id")


def _refusal(error: IntegrityError) -> Exception | None:
    """The domain error a refused write means, by the constraint that refused it (``None``: not
    one the engine expects)."""
    # PostgreSQL names the constraint; SQLite names a unique index's columns
    message = str(error.orig)
    if any(m in message for m in _REVERSED_ONCE):
        return AlreadyReversed("the transaction was already reversed")
    if any(m in message for m in _RESOLVED_ONCE):
        return AlreadyResolved("the pending transfer was already resolved")
    if "ck_ledger_balances" in message:
        return InsufficientFunds("a balance would break its account's limit")
    return None


def _raise_refusal(error: IntegrityError) -> NoReturn:
    refusal = _refusal(error)
    if refusal is None:
        raise error
    raise refusal from error


def _insert_header(session: Session, values: dict[str, Any]) -> int | None:
    """SQLite: insert a header; ``None`` when a twin took its idempotency key."""
    stmt = (
        sqlite.insert(_TX)
        .values(**values)
        .on_conflict_do_nothing(index_elements=["idempotency_key"])
        .returning(T.id)
    )
    try:
        return session.connection().execute(stmt).scalar_one_or_none()
    except IntegrityError as error:
        _raise_refusal(error)


def _insert_entries(
    session: Session,
    tx_id: int,
    lines: list[_Line],
    effective_on: date,
    balances: dict[int, LedgerBalanceRow],
) -> None:
    """SQLite: apply each account's delta, then insert the entries with their balance-after."""
    deltas = _deltas(lines)
    after = {a: _apply_delta(session, a, deltas[a]) for a in sorted(deltas)}
    remaining = {a: after[a][0] for a in after}
    # balance-after per line: walk each account's lines backwards from its final balance
    per_line: list[int] = [0] * len(lines)
    for index in range(len(lines) - 1, -1, -1):
        line = lines[index]
        per_line[index] = remaining[line.account_id]
        if line.phase == PHASE_POSTED:
            remaining[line.account_id] -= line.amount
    rows = [
        {
            "transaction_id": tx_id,
            "account_id": line.account_id,
            "asset": balances[line.account_id].asset,
            "amount": line.amount,
            "phase": line.phase,
            "balance_after": per_line[index],
            "account_version": after[line.account_id][1],
            "effective_on": effective_on,
            "resolves_id": line.resolves_id,
            "resolution": line.resolution,
        }
        for index, line in enumerate(lines)
    ]
    try:
        session.connection().execute(insert(_ENTRIES), rows)
    except IntegrityError as error:
        _raise_refusal(error)


def _apply_delta(session: Session, account_id: int, d: dict[str, int]) -> tuple[int, int]:
    stmt = (
        update(LedgerBalance)
        .where(B.account_id == account_id, B.slot == 0)  # SQLite writes slot 0 only
        .values(
            debits_posted=B.debits_posted + d["debits_posted"],
            credits_posted=B.credits_posted + d["credits_posted"],
            debits_pending=B.debits_pending + d["debits_pending"],
            credits_pending=B.credits_pending + d["credits_pending"],
            version=B.version + 1,
        )
        .returning(B.credits_posted - B.debits_posted, B.version)
    )
    try:
        row = session.execute(stmt).one()
    except IntegrityError as error:
        if quantities.is_refusal(error):
            raise  # the balance would overflow 64 bits: not an overdraft
        raise InsufficientFunds(
            "the balance would break its account's limit", account_id=account_id
        ) from error
    return int(row[0]), int(row[1])


def _deltas(lines: Iterable[_Line]) -> dict[int, dict[str, int]]:
    deltas: dict[int, dict[str, int]] = defaultdict(
        lambda: dict.fromkeys(
            ("debits_posted", "credits_posted", "debits_pending", "credits_pending"), 0
        )
    )
    for line in lines:
        side = "credits" if line.amount > 0 else "debits"
        magnitude = abs(line.amount)
        if line.phase == PHASE_POSTED:
            deltas[line.account_id][f"{side}_posted"] += magnitude
        elif line.phase == PHASE_PENDING:
            deltas[line.account_id][f"{side}_pending"] += magnitude
        else:
            deltas[line.account_id][f"{side}_pending"] -= magnitude
    return deltas


def _track_pending(
    session: Session,
    tx_id: int,
    lines: list[_Line],
    pending: bool,
    expires_at: datetime | None,
) -> None:
    resolved = sorted({line.resolves_id for line in lines if line.resolves_id is not None})
    if resolved:
        session.execute(
            delete(LedgerOpenPending).where(LedgerOpenPending.transaction_id.in_(resolved))
        )
    if not pending:
        return
    per_account: dict[int, dict[str, Any]] = {}
    for line in lines:
        row = per_account.setdefault(
            line.account_id,
            {
                "transaction_id": tx_id,
                "account_id": line.account_id,
                "debits": 0,
                "credits": 0,
                "expires_at": expires_at,
            },
        )
        row["credits" if line.amount > 0 else "debits"] += abs(line.amount)
    session.execute(insert(LedgerOpenPending), list(per_account.values()))


# --- balances, locks and checks ---------------------------------------------------------------


@dataclass
class LedgerBalanceRow:
    """A balance row as read (and, for limited accounts, locked) by a writer."""

    account_id: int
    asset: str
    no_overdraft: bool
    no_overcredit: bool
    debits_posted: int = 0
    credits_posted: int = 0
    debits_pending: int = 0
    credits_pending: int = 0
    slots: int = 1

    @property
    def limited(self) -> bool:
        return self.no_overdraft or self.no_overcredit


#: accounts are immutable, so their asset, flags and slots are cached per engine (PostgreSQL
#: only: SQLite may reuse the id of an account whose creation rolled back)
_ACCOUNT_META: weakref.WeakKeyDictionary[Any, dict[int, tuple[str, bool, bool, int]]] = (
    weakref.WeakKeyDictionary()
)


def _balances_for(session: Session, account_ids: set[int]) -> dict[int, LedgerBalanceRow]:
    engine = session.get_bind().engine
    cacheable = engine.dialect.name == "postgresql"
    cache = _ACCOUNT_META.setdefault(engine, {}) if cacheable else {}
    found = {a: _meta_row(a, cache[a]) for a in account_ids if a in cache}
    wanted = account_ids - set(found)
    if wanted:
        rows = session.execute(
            select(A.id, A.asset, A.no_overdraft, A.no_overcredit, A.slots).where(
                A.id.in_(sorted(wanted))
            )
        ).all()
        for r in rows:
            meta = (r.asset, r.no_overdraft, r.no_overcredit, r.slots)
            found[r.id] = _meta_row(r.id, meta)
            if cacheable:
                cache[r.id] = meta
    missing = account_ids - set(found)
    if missing:
        raise UnknownAccount(f"unknown ledger account(s) {sorted(missing)}")
    return found


def _meta_row(account_id: int, meta: tuple[str, bool, bool, int]) -> LedgerBalanceRow:
    asset, no_overdraft, no_overcredit, slots = meta
    return LedgerBalanceRow(account_id, asset, no_overdraft, no_overcredit, slots=slots)


_SLOTS_TAKEN = "ledger.slots_taken"  # session.info: the slot each hot account uses in this unit


def _slots(
    session: Session, lines: list[_Line], balances: dict[int, LedgerBalanceRow]
) -> dict[int, int]:
    """The slot this transaction changes, per account with more than one: a random one, so
    that concurrent writers of a hot account rarely wait for each other.  Pending and release
    lines go to slot 0, where the reservation they make or undo is held (a slot's pending
    columns never go negative).  SQLite has one writer at a time: always slot 0.

    One slot per account for the whole unit of work: two writes in one database transaction
    taking two slots of an account could take them in the opposite order to another's, and
    deadlock.  The first slot it takes is the one it keeps; at most it adds slot 0 after it
    for a reservation, and no unit holding slot 0 then asks for another.
    """
    spread = {a for a, row in balances.items() if row.slots > 1}
    if not spread or not pg_direct.is_postgresql(session):
        return {}
    taken: dict[int, int] = session.info.setdefault(_SLOTS_TAKEN, {})
    reserving = {line.account_id for line in lines if line.phase != PHASE_POSTED}
    chosen = {}
    for account in sorted(spread):
        if account in reserving:
            chosen[account] = 0
            taken.setdefault(account, 0)  # later postings of this unit stay in slot 0 too
        else:
            if account not in taken:
                taken[account] = random.randrange(balances[account].slots)
            chosen[account] = taken[account]
    return chosen


def _lock(
    session: Session, accounts: Iterable[int] | dict[int, LedgerBalanceRow]
) -> dict[int, LedgerBalanceRow]:
    """Lock the limited accounts among ``accounts`` in ascending id and read their balances."""
    ids = sorted(accounts)
    if not ids:
        return {}
    rows: Iterable[Sequence[Any]]
    if pg_direct.is_postgresql(session):
        rows = pg_direct.lock(session, ids)
    else:
        rows = session.execute(
            select(
                B.account_id,
                B.asset,
                B.no_overdraft,
                B.no_overcredit,
                B.debits_posted,
                B.credits_posted,
                B.debits_pending,
                B.credits_pending,
            )
            .where(B.account_id.in_(ids), (B.no_overdraft | B.no_overcredit))
            .order_by(B.account_id)
        ).all()
    locked = {int(r[0]): LedgerBalanceRow(*r) for r in rows}
    if isinstance(accounts, dict):
        accounts.update(locked)
    return locked


def _lock_headers(session: Session, transaction_ids: Iterable[int]) -> None:
    """Lock transaction headers in ascending id (PostgreSQL; SQLite has one writer anyway).

    ``FOR NO KEY UPDATE``: rows that merely reference these headers are not blocked by it.
    """
    if pg_direct.is_postgresql(session):
        session.execute(
            select(T.id)
            .where(T.id.in_(sorted(transaction_ids)))
            .order_by(T.id)
            .with_for_update(key_share=True)
        ).all()


def _check_balanced(lines: list[_Line], balances: dict[int, LedgerBalanceRow]) -> None:
    if len(lines) < 2:
        raise UnbalancedTransaction("a transaction needs at least two entries")
    sums: dict[tuple[str, str], int] = defaultdict(int)
    leg_assets: dict[int, set[str]] = defaultdict(set)
    for line in lines:
        if line.leg is not None:
            leg_assets[line.leg].add(balances[line.account_id].asset)
        if line.amount == 0:
            raise UnbalancedTransaction("an entry cannot move zero")
        sums[(balances[line.account_id].asset, line.phase)] += line.amount
    for index, assets in leg_assets.items():
        if len(assets) > 1:
            raise UnbalancedTransaction(
                "a leg moves between accounts of different assets", leg=index, assets=sorted(assets)
            )
    unbalanced = {f"{asset}/{phase}": s for (asset, phase), s in sums.items() if s}
    if unbalanced:
        raise UnbalancedTransaction("debits and credits differ", sums=unbalanced)


def _check_limits(lines: list[_Line], locked: dict[int, LedgerBalanceRow]) -> None:
    deltas = _deltas(lines)
    for account_id, row in locked.items():
        d = deltas.get(account_id)
        if d is None:
            continue
        debits = row.debits_posted + d["debits_posted"] + row.debits_pending + d["debits_pending"]
        credits = row.credits_posted + d["credits_posted"]
        if row.no_overdraft and debits > credits:
            available = row.credits_posted - row.debits_posted - row.debits_pending
            raise InsufficientFunds(
                f"account {account_id} has {available} available",
                account_id=account_id,
                available=available,
                requested=d["debits_posted"] + d["debits_pending"] - d["credits_posted"],
            )
        over = row.credits_posted + d["credits_posted"] + row.credits_pending + d["credits_pending"]
        if row.no_overcredit and over > row.debits_posted + d["debits_posted"]:
            raise InsufficientFunds(
                f"account {account_id} would be credited past its debits",
                account_id=account_id,
            )


# --- helpers ----------------------------------------------------------------------------------


def _lines_for(legs: Sequence[Leg], phase: str) -> list[_Line]:
    lines: list[_Line] = []
    for index, leg in enumerate(legs):
        if leg.amount <= 0:
            raise UnbalancedTransaction("a leg moves a positive amount", amount=leg.amount)
        if leg.debit_account_id == leg.credit_account_id:
            raise UnbalancedTransaction("a leg moves between two different accounts")
        lines.append(_Line(leg.debit_account_id, -leg.amount, phase, leg=index))
        lines.append(_Line(leg.credit_account_id, leg.amount, phase, leg=index))
    return lines


def _legs_json(legs: Sequence[Leg]) -> list[list[int]]:
    return [[leg.debit_account_id, leg.credit_account_id, leg.amount] for leg in legs]


def _hash(request: dict[str, Any], meta: Meta) -> str:
    body = dict(request, effective_on=meta.effective_on.isoformat(), memo=meta.memo)
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(canonical.encode()).hexdigest()


def _replay(session: Session, key: str, request_hash: str) -> Posted | None:
    row = session.execute(
        select(T.id, T.request_hash).where(T.idempotency_key == key)
    ).one_or_none()
    if row is None:
        return None
    if row.request_hash != request_hash:
        raise IdempotencyConflict(
            "this idempotency key was used for a different request", idempotency_key=key
        )
    return Posted(row.id, replayed=True)


def _entries_of(session: Session, tx_id: int) -> list[LedgerEntry]:
    return list(
        session.execute(
            select(LedgerEntry).where(LedgerEntry.transaction_id == tx_id).order_by(LedgerEntry.id)
        ).scalars()
    )


def _reversed_by(session: Session, tx_id: int) -> int | None:
    return session.execute(select(T.id).where(T.reverses_id == tx_id)).scalar_one_or_none()


def _is_expired(expires_at: datetime | None, now: datetime) -> bool:
    return expires_at is not None and clock.as_utc(expires_at) <= now
