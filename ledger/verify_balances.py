"""Stored balances against the entries: every balance in a full pass, or since a checkpoint.

A full pass sums every entry per account and balance slot, compares the sums with the stored
balance rows, and checks every balance-after against the running posted total.  In the same
statement it sums the entries of the transactions chained after the head the pass verified (or
still queued): the sums less those are the balances the verified chain implies, which a
checkpoint records (``ledger.checkpoint``).  A check since a checkpoint compares every stored
balance with the checkpoint's plus the entries written since, in one statement.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from sqlalchemy import (
    BigInteger,
    Boolean,
    Connection,
    String,
    case,
    cast,
    func,
    literal,
    null,
    select,
    union,
    union_all,
)
from sqlalchemy.exc import DBAPIError

from ledger.schema import (
    PHASE_POSTED,
    PHASE_RELEASE,
    LedgerAccount,
    LedgerBalance,
    LedgerChainLink,
    LedgerChainQueue,
    LedgerEntry,
)
from ledger.verify_report import Break

E = LedgerEntry.__table__.c
A = LedgerAccount.__table__.c
B = LedgerBalance.__table__.c
C = LedgerChainLink.__table__.c
Q = LedgerChainQueue.__table__.c

#: (account id, slot, debits posted, credits posted, debits pending, credits pending)
BalanceRow = tuple[int, int, int, int, int, int]
STORED = (B.debits_posted, B.credits_posted, B.debits_pending, B.credits_pending)


def _entry_sums() -> list[Any]:
    """Per group of entries: debits and credits posted, then pending (a release entry undoes
    a pending one), summed."""
    sign = case((E.phase == PHASE_RELEASE, -1), else_=1)
    debit = case((E.amount < 0, -E.amount), else_=0)
    credit = case((E.amount > 0, E.amount), else_=0)
    posted = E.phase == PHASE_POSTED
    parts = [
        case((posted, debit), else_=0),
        case((posted, credit), else_=0),
        case((posted, 0), else_=debit * sign),
        case((posted, 0), else_=credit * sign),
    ]
    return [func.coalesce(func.sum(part), 0) for part in parts]


def _later(seq: int) -> Any:
    """Transactions chained after link ``seq``, or queued: what a checkpoint at ``seq`` lacks."""
    return union(select(C.transaction_id).where(C.seq > seq), select(Q.transaction_id)).subquery()


def _by_side(tag: str, only: Any = None) -> Any:
    """Entries summed per account, slot, phase and side (a credit or not): few groups, one sum
    each, where the database would otherwise sum four expressions per entry."""
    side = E.amount > 0
    query = select(literal(tag), E.account_id, E.slot, E.phase, side, func.sum(E.amount))
    if only is not None:
        query = query.where(only)
    return query.group_by(E.account_id, E.slot, E.phase, side)


def check_all(connection: Connection, head_seq: int) -> tuple[Break | None, int, list[BalanceRow]]:
    """Every stored balance and balance-after against the entries: the first break, the number
    of accounts, and the balances the chain up to ``head_seq`` implies (what the entries of the
    transactions chained up to it sum to).  The stored balances, every entry's sum and the sums
    of the entries written after ``head_seq`` are read by one statement, as of one moment."""
    later = select(_later(head_seq).c.transaction_id)
    stored = select(
        literal("stored"),
        B.account_id,
        B.slot,
        cast(null(), String),
        cast(null(), Boolean),
        *STORED,
    )
    pad = [literal(0)] * 3
    rows = connection.execute(
        union_all(
            stored,
            _by_side("total").add_columns(*pad),
            _by_side("later", E.transaction_id.in_(later)).add_columns(*pad),
        )
    ).all()
    balances: dict[tuple[int, int], list[int]] = {}
    sums: dict[str, dict[tuple[int, int], list[int]]] = {"total": {}, "later": {}}
    for tag, account, slot, phase, credit, *values in rows:
        if tag == "stored":
            balances[(account, slot)] = [int(v) for v in values]
        else:
            _add(sums[tag].setdefault((account, slot), [0, 0, 0, 0]), phase, credit, values[0])
    found: Break | None = None
    implied: list[BalanceRow] = []
    for key in sorted(balances.keys() | sums["total"].keys()):
        total = sums["total"].get(key, [0, 0, 0, 0])
        have = balances.get(key)
        if found is None and have is not None and have != total:
            found = _wrong(*key, have, total)
        chained = [t - x for t, x in zip(total, sums["later"].get(key, [0] * 4), strict=True)]
        if any(chained):
            implied.append((*key, *chained))  # type: ignore[arg-type]
    orphan = min(sums["total"].keys() - balances.keys(), default=None)
    if found is None and orphan is not None:
        found = Break(
            "stored_balance",
            f"entries of account {orphan[0]} name a balance slot it does not have",
            account_id=orphan[0],
        )
    accounts = len({account for account, _slot in balances})
    return found or _first_drift(connection), accounts, implied


def _add(target: list[int], phase: str, credit: Any, amount: Any) -> None:
    """Add the sum of a group of entries of one phase and side to (debits posted, credits
    posted, debits pending, credits pending)."""
    magnitude = int(amount or 0) if credit else -int(amount or 0)
    if phase == PHASE_POSTED:
        target[1 if credit else 0] += magnitude
    else:
        target[3 if credit else 2] += -magnitude if phase == PHASE_RELEASE else magnitude


def _wrong(account: int, slot: int, have: list[Any], expected: list[int]) -> Break:
    where = f"account {account}" + (f" (slot {slot})" if slot else "")
    return Break(
        "stored_balance",
        f"{where} stores {list(have)} but its entries sum to {expected}",
        account_id=account,
    )


def _first_drift(connection: Connection) -> Break | None:
    """The first entry (by id) whose balance-after is not its slot's running posted total.

    An account of one slot is walked in the order of its index on (account, id), with no sort;
    only the entries of accounts with several slots are sorted by slot."""
    found = [_drift(connection, by_slot=False), _drift(connection, by_slot=True)]
    drift = min((row for row in found if row is not None), key=lambda row: row.id, default=None)
    if drift is None:
        return None
    return Break(
        "balance_after",
        f"an entry of transaction {drift.transaction_id} says the balance after it is "
        f"{drift.balance_after}, the entries say {drift.expected}",
        drift.transaction_id,
        account_id=drift.account_id,
    )


class Drift(NamedTuple):
    """An entry whose balance-after is not what the entries before it in its slot say."""

    id: int
    account_id: int
    transaction_id: int
    balance_after: int
    expected: int


def _drift(connection: Connection, *, by_slot: bool) -> Drift | None:
    """The first drifting entry of the accounts with several slots (``by_slot``), or of the
    others: one whose balance-after less its posted amount is not the balance-after of the entry
    before it in its slot (0 for the first)."""
    posted = case((E.phase == PHASE_POSTED, E.amount), else_=0)
    partition = [E.account_id, E.slot] if by_slot else [E.account_id]
    several = select(A.id).where(A.slots > 1)
    # inside: an account's entries are all in its own partition, so leaving others out first
    # changes nothing the window computes
    ours = E.account_id.in_(several) if by_slot else E.account_id.not_in(several)
    steps = (
        select(
            E.id,
            E.account_id,
            E.transaction_id,
            E.balance_after,
            posted.label("amount"),
            (E.balance_after - posted).label("before"),
            func.lag(E.balance_after, 1, cast(0, BigInteger))
            .over(partition_by=partition, order_by=E.id)
            .label("prev"),
        ).where(ours)
    ).subquery()
    query = select(steps).where(steps.c.before != steps.c.prev).order_by(steps.c.id).limit(1)
    try:
        with connection.begin_nested():
            row = connection.execute(query).first()
    except DBAPIError:  # a balance-after so far out that subtracting overflows 64 bits
        return _drift_exactly(connection, partition, ours)
    return None if row is None else Drift(row[0], row[1], row[2], row[3], row.prev + row.amount)


def _drift_exactly(connection: Connection, partition: list[Any], ours: Any) -> Drift | None:
    """``_drift`` for values beyond 64-bit arithmetic: the running posted total, summed exactly."""
    posted = case((E.phase == PHASE_POSTED, E.amount), else_=0)
    steps = (
        select(
            E.id,
            E.account_id,
            E.transaction_id,
            E.balance_after,
            posted.label("amount"),
            func.sum(posted)
            .over(partition_by=partition, order_by=E.id, rows=(None, 0))
            .label("running"),
        ).where(ours)
    ).subquery()
    row = connection.execute(
        select(steps).where(steps.c.balance_after != steps.c.running).order_by(steps.c.id).limit(1)
    ).first()
    return None if row is None else Drift(row[0], row[1], row[2], row[3], row.running)


def check_since(connection: Connection, checkpoint: Any, seq: int) -> tuple[Break | None, int]:
    """Every stored balance against the checkpoint's (rows of ``checkpoint``, a table with the
    stored balance columns, already narrowed to one checkpoint) plus the entries of the
    transactions chained after link ``seq`` or queued: the first break, and the number of
    accounts."""
    later = _later(seq)
    delta = (
        select(E.account_id, E.slot, *_entry_sums())
        .where(E.transaction_id.in_(select(later.c.transaction_id)))
        .group_by(E.account_id, E.slot)
        .subquery()
    )
    keys = union(
        select(B.account_id, B.slot),
        select(checkpoint.c.account_id, checkpoint.c.slot),
        select(delta.c.account_id, delta.c.slot),
    ).subquery()
    d, k, cp = list(delta.c)[2:], keys.c, checkpoint.c
    start = [cp.debits_posted, cp.credits_posted, cp.debits_pending, cp.credits_pending]
    expected = [func.coalesce(a, 0) + func.coalesce(b, 0) for a, b in zip(start, d, strict=True)]

    def same(other: Any) -> Any:
        return (k.account_id == other.account_id) & (k.slot == other.slot)

    wrong = connection.execute(
        select(k.account_id, k.slot, B.account_id.is_not(None), *STORED, *expected)
        .select_from(
            keys.outerjoin(LedgerBalance.__table__, same(B))
            .outerjoin(checkpoint, same(cp))
            .outerjoin(delta, same(delta.c))
        )
        .where(
            B.account_id.is_(None)
            | (B.debits_posted != expected[0])
            | (B.credits_posted != expected[1])
            | (B.debits_pending != expected[2])
            | (B.credits_pending != expected[3])
        )
        .order_by(k.account_id, k.slot)
        .limit(1)
    ).first()
    accounts = int(
        connection.execute(select(func.count(func.distinct(B.account_id)))).scalar() or 0
    )
    if wrong is None:
        return None, accounts
    account, slot, stored = wrong[0], wrong[1], wrong[2]
    if not stored:
        return Break(
            "stored_balance",
            f"account {account} has no balance row for slot {slot}, which its entries name",
            account_id=account,
        ), accounts
    return _wrong(account, slot, list(wrong[3:7]), [int(v) for v in wrong[7:11]]), accounts
