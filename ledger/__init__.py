"""A generic multi-asset double-entry ledger engine.  Knows nothing about wetlands.

Python API, used by ``bank``::

    db = Database.from_url(url); sealer.attach(db)
    with db.transaction() as session:            # or db.run(fn) to retry deadlocks
        a = create_account(session, code="a", asset="X", name="A", no_overdraft=True)
        b = create_account(session, code="b", asset="X", name="B", slots=8)  # a hot account
        posted = transfer(session, "deposit", [Leg(b, a, 100)], Meta("key-1", date.today()))
        hold = reserve(session, "reservation", [Leg(a, b, 40)], Meta("key-2", day), expires_at=t)
        post_pending(session, hold.transaction_id, Meta("key-3", day), amount=30)
        void_pending(...); reverse(session, posted.transaction_id, Meta("key-4", day))
    balances(session, [a])[a].available; balances_as_of(session, [a], day)
    lock(session, [a])  # balances read FOR UPDATE, ascending id
    advisory_lock(session, "name")  # one holder at a time until the unit of work ends

An account without limits may keep its balance in several slot rows (``slots``): each write
changes one, so concurrent writers of a hot account do not take turns; its balance is their sum,
and each entry's balance-after is its slot's (``ledger_entries.slot``).
    verify(connection, progress, processes, anchors) -> Report (chain and stored balances
        recomputed, first break named; a long chain checked in segments by worker processes;
        ``report.head``, an ``Anchor`` kept outside the database, given back later, shows that
        no link up to it was removed or rewritten)
"""

from ledger.accounts import (
    Balance,
    account_by_code,
    balances,
    balances_as_of,
    create_account,
    last_effective_on,
    lock,
)
from ledger.db import Database
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
from ledger.locks import advisory_lock
from ledger.pending import pending_states
from ledger.posting import (
    Leg,
    Meta,
    Posted,
    pending_state,
    post_pending,
    reserve,
    resolve_pending,
    reverse,
    transfer,
    void_pending,
)
from ledger.verification import Anchor, Report, verify

__all__ = [
    "AlreadyResolved",
    "AlreadyReversed",
    "Anchor",
    "Balance",
    "Database",
    "IdempotencyConflict",
    "InsufficientFunds",
    "Leg",
    "LedgerError",
    "Meta",
    "PendingExpired",
    "Posted",
    "Report",
    "UnbalancedTransaction",
    "UnknownAccount",
    "UnknownTransaction",
    "account_by_code",
    "advisory_lock",
    "balances",
    "balances_as_of",
    "last_effective_on",
    "create_account",
    "lock",
    "pending_state",
    "pending_states",
    "post_pending",
    "reserve",
    "resolve_pending",
    "reverse",
    "transfer",
    "verify",
    "void_pending",
]
