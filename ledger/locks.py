"""The locks a write takes, always in one global order, so that two writers never deadlock.

1. balance rows of limited accounts (no overdraft, no overcredit), ascending account id, before
   the write checks them against its lines; accounts without limits are changed by increment and
   take their row lock only when the write itself runs;
2. transaction headers being resolved or reversed, ascending id: a second resolver of the same
   pending transfer waits, then sees it resolved;
3. named advisory locks, for a caller's own first-time creations (``advisory_lock``).

What a lock is is the store's: on SQLite one writer holds the whole database from its first
statement, and these cost nothing.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable

from sqlalchemy.orm import Session

from ledger import store
from ledger.account_cache import AccountRow


def lock_balances(
    session: Session, accounts: Iterable[int] | dict[int, AccountRow]
) -> dict[int, AccountRow]:
    """Lock the limited accounts among ``accounts`` in ascending id and read their balances.

    Given a dict of ``AccountRow``, its limited accounts' rows are replaced by the locked ones.
    """
    ids = sorted(accounts)
    if not ids:
        return {}
    rows = store.of(session).lock_balances(session, ids)
    locked = {int(r[0]): AccountRow(*r) for r in rows}
    if isinstance(accounts, dict):
        accounts.update(locked)
    return locked


def lock_headers(session: Session, transaction_ids: Iterable[int]) -> None:
    """Lock transaction headers in ascending id; rows that merely reference them are not
    blocked (PostgreSQL's ``FOR NO KEY UPDATE``)."""
    store.of(session).lock_headers(session, sorted(transaction_ids))


def advisory_lock(session: Session, name: str) -> None:
    """Hold a lock named ``name`` until the unit of work ends: one holder at a time.

    For first-time creators of a named thing (an account on first use): the second waits, then
    finds what the first created.
    """
    key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:7], "big")
    store.of(session).advisory_lock(session, key)
