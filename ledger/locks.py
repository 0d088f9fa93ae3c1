"""The locks a write takes, always in one global order, so that two writers never deadlock.

1. balance rows of limited accounts (no overdraft, no overcredit), ascending account id, before
   the write checks them against its lines; accounts without limits are changed by increment and
   take their row lock only when the write itself runs;
2. transaction headers being resolved or reversed, ascending id: a second resolver of the same
   pending transfer waits, then sees it resolved;
3. named advisory locks, for a caller's own first-time creations (``advisory_lock``);
4. last of all, as the unit commits: the access trail's lock (``bank.access.AUDIT_TRAIL_LOCK``),
   after which a writer waits for nothing but its INSERT and COMMIT.

What a lock is is the store's: on SQLite one writer holds the whole database from its first
statement, and these cost nothing.  A caller's own fixed statement (``store.Statement``) may take
the first kind in the same round trip as its reads: ``held_cte`` and ``held_rows``.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from typing import Any

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


#: the columns of ``held_cte``'s rows, in ``AccountRow``'s order
HELD_COLUMNS = (
    "account_id",
    "asset",
    "no_overdraft",
    "no_overcredit",
    "debits_posted",
    "credits_posted",
    "debits_pending",
    "credits_pending",
)


def held_cte(account_ids: str, condition: str = "1 = 1") -> str:
    """A CTE ``held`` for a ``store.Statement``: the limited balance rows of the accounts the
    subquery ``account_ids`` names, locked as ``lock_balances`` locks them (ascending id), if
    ``condition`` holds.  The statement must read every row of ``held`` (``WHERE (SELECT
    count(*) FROM held) >= 0`` does), so that all are locked before it answers; its rows
    (``HELD_COLUMNS``) are then what ``lock_balances`` would have returned (``held_rows``)."""
    return f"""held AS (
    SELECT {", ".join(HELD_COLUMNS)}
    FROM ledger_balances
    WHERE account_id IN ({account_ids}) AND (no_overdraft OR no_overcredit) AND {condition}
    ORDER BY account_id
    {{for_update}}
)"""


def held_rows(rows: Iterable[Sequence[Any]]) -> dict[int, AccountRow]:
    """``held_cte``'s rows (``HELD_COLUMNS`` each, all-NULL ones skipped) as ``lock_balances``
    returns them."""
    return {int(r[0]): AccountRow(*r) for r in rows if r[0] is not None}
