"""The PostgreSQL hot paths: a posting's statements, and balance reads, sent through psycopg
directly, prepared.

SQLAlchemy's statement building, cache-key generation and result objects cost the writer more CPU
than PostgreSQL spends running the statements, so on PostgreSQL the hot path of every write sends
fixed SQL text through the session's own psycopg connection (the same database transaction),
prepared once per connection:

1. the limited balance rows locked ``FOR UPDATE`` in ascending account id (``lock``);
2. ONE statement (``insert``) that inserts the header (``ON CONFLICT DO NOTHING`` on the
   idempotency key), queues it for sealing, applies every balance delta and inserts the entries
   with each one's balance-after and the account's new version.

Every guarantee stays in the database: the CHECK constraints on the balance rows, the unique
indexes, the deferred balance trigger and the immutability triggers all apply to these rows as
they do to the ORM's.  Errors are re-raised as SQLAlchemy's, so callers (and ``Database.run``'s
retry of deadlocks) see one kind of exception whichever path wrote.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import psycopg
from sqlalchemy import Connection
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

LOCK_SQL = """
SELECT account_id, asset, no_overdraft, no_overcredit,
       debits_posted, credits_posted, debits_pending, credits_pending
FROM ledger_balances
WHERE account_id = ANY(%s::bigint[]) AND (no_overdraft OR no_overcredit)
ORDER BY account_id
FOR UPDATE
"""

# The header, its place in the sealing queue, every balance delta and every entry in one round
# trip.  When the idempotency key is taken (a concurrent twin committed first) the header CTE is
# empty, and so, through it, is everything else: the caller then answers with the replay.
# A transaction changes one slot of each account (the caller picks it; one-slot accounts: 0), so
# the entries join the updated rows by account.
# Deltas and lines arrive as two JSON arrays: psycopg infers and dumps a Python list element by
# element, which costs more than the rest of the statement's client work.  An entry's
# asset is its account's, as the balance row holds it.  The balance-after of a line is the
# account's final posted balance less the posted amounts of the transaction's later lines on that
# account (entry ids follow the lines' order).
WRITE_SQL = """
WITH header AS (
    INSERT INTO ledger_transactions (kind, state, pending, expires_at, reverses_id,
        idempotency_key, request_hash, effective_on, recorded_at, actor, request_id, memo)
    VALUES (%(kind)s, 'sealed', %(pending)s, %(expires_at)s, %(reverses_id)s,
        %(idempotency_key)s, %(request_hash)s, %(effective_on)s, %(recorded_at)s, %(actor)s,
        %(request_id)s, %(memo)s)
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id
), queued AS (
    INSERT INTO ledger_chain_queue (transaction_id) SELECT id FROM header
), balances AS (
    UPDATE ledger_balances AS b SET
        debits_posted = b.debits_posted + v.dp, credits_posted = b.credits_posted + v.cp,
        debits_pending = b.debits_pending + v.dq, credits_pending = b.credits_pending + v.cq,
        version = b.version + 1
    FROM (SELECT (d->>0)::bigint, (d->>1)::smallint, (d->>2)::bigint, (d->>3)::bigint,
                 (d->>4)::bigint, (d->>5)::bigint
          FROM jsonb_array_elements(%(deltas)s::jsonb) AS d) AS v(id, slot, dp, cp, dq, cq)
    WHERE b.account_id = v.id AND b.slot = v.slot AND EXISTS (SELECT FROM header)
      -- the same ids again, as an array the primary key can look up: PostgreSQL guesses 100
      -- rows for any jsonb_array_elements, and joined by hash to a seq scan of every balance
      -- row (O(accounts) per posting)
      AND b.account_id = ANY(ARRAY(
          SELECT (d->>0)::bigint FROM jsonb_array_elements(%(deltas)s::jsonb) AS d))
    RETURNING b.account_id, b.slot, b.asset, b.credits_posted - b.debits_posted AS posted,
              b.version
), lines AS (
    SELECT (x->>0)::bigint AS account_id, (x->>1)::bigint AS amount, x->>2 AS phase,
           (x->>3)::bigint AS resolves_id, x->>4 AS resolution, n
    FROM jsonb_array_elements(%(lines)s::jsonb) WITH ORDINALITY AS l(x, n)
), entries AS (
    INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, balance_after,
        account_version, effective_on, resolves_id, resolution, slot)
    SELECT header.id, l.account_id, b.asset, l.amount, l.phase,
        b.posted - COALESCE(sum(CASE WHEN l.phase = 'posted' THEN l.amount END) OVER later, 0),
        b.version, %(effective_on)s, l.resolves_id, l.resolution, b.slot
    FROM lines AS l JOIN balances AS b USING (account_id) CROSS JOIN header
    WINDOW later AS (PARTITION BY l.account_id ORDER BY l.n
                     ROWS BETWEEN 1 FOLLOWING AND UNBOUNDED FOLLOWING)
    ORDER BY l.n
)
SELECT id FROM header
"""


# A balance as ``ledger.balances`` reads it: the sum of the account's stored slot rows (one,
# unless it is a hot account), less what pending transfers past their expiry still hold in it
# (no sweeper needs to have run).
# The locking variant locks every slot row in (account, slot) order (FOR UPDATE cannot sit
# beside GROUP BY, hence the CTE), then the expired reservations too: a read that waited for a
# writer which expired one sees the row as that writer left it, and must not subtract the
# reservation again from its older snapshot; a reservation row the writer deleted is skipped
# when it is locked (READ COMMITTED re-checks locked rows), never counted.
_BALANCES_SQL = """
WITH rows AS (
    SELECT account_id, asset, debits_posted, credits_posted, debits_pending, credits_pending,
           version
    FROM ledger_balances
    WHERE account_id = ANY(%(ids)s::bigint[])
    ORDER BY account_id, slot
    {lock}
), b AS (
    SELECT account_id, min(asset) AS asset, sum(debits_posted)::bigint AS debits_posted,
           sum(credits_posted)::bigint AS credits_posted,
           sum(debits_pending)::bigint AS debits_pending,
           sum(credits_pending)::bigint AS credits_pending, sum(version)::bigint AS version
    FROM rows GROUP BY account_id
), expired AS (
    SELECT account_id, debits, credits
    FROM ledger_open_pending
    WHERE account_id = ANY(%(ids)s::bigint[]) AND expires_at <= %(now)s
      -- counting b (an InitPlan, run once before any reservation row passes) reads, and so
      -- locks, every balance row first: the order every writer takes them in, whatever else
      -- the plan streams
      AND (SELECT count(*) FROM b) >= 0
    {lock}
)
SELECT b.account_id, b.asset, b.debits_posted, b.credits_posted,
       b.debits_pending - COALESCE(s.debits, 0), b.credits_pending - COALESCE(s.credits, 0),
       b.version
FROM b
LEFT JOIN LATERAL (
    SELECT sum(p.debits)::bigint AS debits, sum(p.credits)::bigint AS credits
    FROM expired AS p
    WHERE p.account_id = b.account_id
) AS s ON true
ORDER BY b.account_id
"""
BALANCES_SQL = _BALANCES_SQL.format(lock="")
BALANCES_FOR_UPDATE_SQL = _BALANCES_SQL.format(lock="FOR UPDATE")


def read_balances(
    session: Session, account_ids: Sequence[int], now: Any, *, for_update: bool
) -> list[tuple[Any, ...]]:
    """Stored balance rows net of expired reservations, ascending id (locked if ``for_update``)."""
    sql = BALANCES_FOR_UPDATE_SQL if for_update else BALANCES_SQL
    return execute(session, sql, {"ids": list(account_ids), "now": now}).fetchall()


def is_postgresql(session: Session) -> bool:
    """Whether the session's database is PostgreSQL (where these hot paths apply)."""
    return session.bind is not None and session.bind.dialect.name == "postgresql"


def lock(session: Session, account_ids: Sequence[int]) -> list[tuple[Any, ...]]:
    """Lock the limited balance rows among ``account_ids`` in ascending id; return them."""
    return execute(session, LOCK_SQL, (list(account_ids),)).fetchall()


def insert(session: Session, params: dict[str, Any]) -> int | None:
    """Run ``WRITE_SQL``; the new transaction's id, or ``None`` when its key was taken."""
    row = execute(session, WRITE_SQL, params).fetchone()
    return None if row is None else int(row[0])


def execute(session: Session, sql: str, params: Any) -> psycopg.Cursor[Any]:
    """Run ``sql`` prepared on the session's own psycopg connection, inside its transaction."""
    return execute_on(session.connection(), sql, params)


def execute_on(connection: Connection, sql: str, params: Any) -> psycopg.Cursor[Any]:
    """Run ``sql`` prepared on ``connection``'s psycopg connection, inside its transaction.

    A psycopg error is re-raised as SQLAlchemy's (``IntegrityError``, ``OperationalError``...),
    so the retry of deadlocks and the API's 503 for a lost database work as for any statement.
    """
    raw = cast(psycopg.Connection[Any], connection.connection.driver_connection)
    # prepared, unless the engine turned server-side prepares off (``prepare_threshold=None``,
    # ``ledger.db.make_engine``): behind a pooler in transaction mode they would collide
    prepare = raw.prepare_threshold is not None
    try:
        return raw.execute(sql, params, prepare=prepare)
    except psycopg.Error as error:
        lost = raw.broken
        if lost:
            # a lost connection must not go back to the pool
            connection.invalidate(error)
        raise DBAPIError.instance(
            sql, params, error, psycopg.Error, connection_invalidated=lost
        ) from error
