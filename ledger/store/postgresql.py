"""PostgreSQL's statements: fixed SQL sent through psycopg directly, prepared once per connection.

SQLAlchemy's statement building, cache-key generation and result objects cost the writer more CPU
than PostgreSQL spends running the statements, so every statement of the hot paths is fixed SQL
text sent through the session's own psycopg connection (the same database transaction):

1. the limited balance rows locked ``FOR UPDATE`` in ascending account id (``LOCK_SQL``);
2. ONE statement (``WRITE_SQL``) that inserts the header (``ON CONFLICT DO NOTHING`` on the
   idempotency key), queues it for sealing, applies every balance change and inserts the entries
   with each one's balance-after and the account's new version.

Every guarantee stays in the database: the CHECK constraints on the balance rows, the unique
indexes, the deferred balance trigger and the immutability triggers all apply to these rows.
Errors are re-raised as SQLAlchemy's, so callers (and ``Database.run``'s retry of deadlocks) see
one kind of exception whichever way a statement was sent.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, cast

import psycopg
from psycopg import pq
from sqlalchemy import URL, Connection, Engine, Table
from sqlalchemy.dialects import postgresql
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Session

from ledger import slots
from ledger.account_cache import AccountRow
from ledger.canonical import ENTRY_COLUMNS, HEADER_COLUMNS
from ledger.chain import SEALER_LOCK_KEY
from ledger.lines import Line, deltas, later_posted
from ledger.store import Ddl, Links, Row, Statement
from ledger.store.postgresql_ddl import PostgresqlDdl

_TUPLES_OK = pq.ExecStatus.TUPLES_OK

if TYPE_CHECKING:
    from ledger.verify_links import Segment
    from ledger.verify_report import Progress

LOCK_SQL = """
SELECT account_id, asset, no_overdraft, no_overcredit,
       debits_posted, credits_posted, debits_pending, credits_pending
FROM ledger_balances
WHERE account_id = ANY(%s::bigint[]) AND (no_overdraft OR no_overcredit)
ORDER BY account_id
FOR UPDATE
"""

# The header, its place in the sealing queue, every balance change and every entry in one round
# trip.  When the idempotency key is taken (a concurrent twin committed first) the header CTE is
# empty, and so, through it, is everything else: the caller then answers with the replay.
# A transaction changes one slot of each account (``ledger.slots``; one-slot accounts: 0), so
# the entries join the updated rows by account.
# Deltas and lines arrive as two JSON arrays: psycopg infers and dumps a Python list element by
# element, which costs more than the rest of the statement's client work.  An entry's asset is
# its account's, as the balance row holds it; its balance-after is the row's posted balance once
# updated, less the posted amounts of the transaction's later lines on that account (each line
# carries that sum, ``ledger.lines.later_posted``).  Entry ids follow the lines' order.
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
           (x->>3)::bigint AS resolves_id, x->>4 AS resolution, (x->>5)::bigint AS later, n
    FROM jsonb_array_elements(%(lines)s::jsonb) WITH ORDINALITY AS l(x, n)
), entries AS (
    INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, balance_after,
        account_version, effective_on, resolves_id, resolution, slot)
    SELECT header.id, l.account_id, b.asset, l.amount, l.phase, b.posted - l.later,
        b.version, %(effective_on)s, l.resolves_id, l.resolution, b.slot
    FROM lines AS l JOIN balances AS b USING (account_id) CROSS JOIN header
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

_LOCK_HEADERS_SQL = """
SELECT id FROM ledger_transactions WHERE id = ANY(%s::bigint[]) ORDER BY id FOR NO KEY UPDATE
"""

# Take a batch off the queue and read the chain head and the batch's content in one statement.
# Only the sealer holding the advisory lock deletes from the queue, and the lock was taken in an
# earlier statement, so this statement's snapshot sees the head the previous sealer committed.
_TAKE_BATCH_SQL = f"""
WITH taken AS (
    DELETE FROM ledger_chain_queue
    WHERE transaction_id IN (
        SELECT transaction_id FROM ledger_chain_queue ORDER BY transaction_id LIMIT %s)
    RETURNING transaction_id
), head AS (
    SELECT seq, hash FROM ledger_chain ORDER BY seq DESC LIMIT 1
)
SELECT (SELECT seq FROM head), (SELECT hash FROM head),
       {", ".join(f"t.{c}" for c in HEADER_COLUMNS)},
       {", ".join(f"e.{c}" for c in ENTRY_COLUMNS)}
FROM taken
JOIN ledger_transactions AS t ON t.id = taken.transaction_id
LEFT JOIN ledger_entries AS e ON e.transaction_id = t.id
ORDER BY t.id, e.id
"""

_HEAD_SEQ_SQL = "SELECT coalesce(max(seq), 0) FROM ledger_chain"

_INSERT_LINKS_SQL = """
INSERT INTO ledger_chain (seq, transaction_id, prev_hash, hash, chained_at)
SELECT v.seq, v.transaction_id, v.prev_hash, v.hash, %s
FROM unnest(%s::bigint[], %s::bigint[], %s::text[], %s::text[])
    AS v(seq, transaction_id, prev_hash, hash)
"""

_SETTINGS_SQL = "SELECT name, setting FROM pg_settings WHERE name = ANY(%s)"

_LOCK_CLAUSES = {
    "for_update": "FOR UPDATE",
    "for_no_key_update": "FOR NO KEY UPDATE",
    "for_key_share": "FOR KEY SHARE",
}
_JSON = json.JSONEncoder(separators=(",", ":"))
#: ``:name`` (not ``::type``) -> psycopg's ``%(name)s``
_PARAMETER = re.compile(r"(?<![:\w]):([A-Za-z_]\w*)")


class PostgresqlStore:
    """The ledger's statements on PostgreSQL."""

    name = "postgresql"
    ids_are_never_reused = True
    seals_in_background = True
    embedded = False
    hashes_in_database = True
    ddl: Ddl = PostgresqlDdl()

    def engine_options(
        self, options: Mapping[str, Any], *, prepared_statements: bool
    ) -> dict[str, Any]:
        chosen = dict(options)
        if "poolclass" not in chosen:
            chosen.setdefault("pool_size", 10)
            chosen.setdefault("max_overflow", 20)
            # the connection checked in last goes out first: a process that runs one unit of
            # work at a time keeps using one connection (one server backend, its caches warm)
            # instead of rotating through every connection its busiest moment opened; those
            # wait idle, and are pinged before their next use (``ledger.db``)
            chosen.setdefault("pool_use_lifo", True)
        if not prepared_statements:
            # psycopg's ``prepare_threshold=None``, which ``execute`` below follows too: a
            # pooler in transaction mode (PgBouncer before 1.21) hands each transaction
            # whichever server connection is free, where a statement this client prepared
            # does not exist, or one of the same name prepared by another client does
            chosen["connect_args"] = {**chosen.get("connect_args", {}), "prepare_threshold": None}
        return chosen

    def configure_engine(self, engine: Engine) -> None:
        return None  # psycopg's defaults serve

    def snapshot(self, connection: Connection) -> Connection:
        return connection.execution_options(isolation_level="REPEATABLE READ")

    def reopens(self, url: URL) -> bool:
        return True

    def check_segment(
        self, connection: Connection, first: int, last: int, progress: Progress | None
    ) -> Segment:
        # imported here: the link checks send their statements through ``execute`` below
        from ledger.store.postgresql_verify import sql_segment

        return sql_segment(connection, first, last, progress)

    def lock_balances(self, session: Session, account_ids: Sequence[int]) -> Sequence[Row]:
        return execute(session.connection(), LOCK_SQL, (list(account_ids),)).fetchall()

    def lock_headers(self, session: Session, transaction_ids: Sequence[int]) -> None:
        execute(session.connection(), _LOCK_HEADERS_SQL, (list(transaction_ids),)).fetchall()

    def write(
        self,
        session: Session,
        header: Mapping[str, Any],
        lines: Sequence[Line],
        accounts: Mapping[int, AccountRow],
    ) -> int | None:
        chosen = slots.choose(session, lines, accounts)
        changes = [[a, chosen.get(a, 0), *change] for a, change in deltas(lines).items()]
        later = later_posted(lines)
        entries = [
            [x.account_id, x.amount, x.phase, x.resolves_id, x.resolution, later[index]]
            for index, x in enumerate(lines)
        ]
        params = dict(header, deltas=_JSON.encode(changes), lines=_JSON.encode(entries))
        row = execute(session.connection(), WRITE_SQL, params).fetchone()
        return None if row is None else int(row[0])

    def read_balances(
        self, session: Session, account_ids: Sequence[int], now: datetime, *, for_update: bool
    ) -> Sequence[Row]:
        sql = BALANCES_FOR_UPDATE_SQL if for_update else BALANCES_SQL
        params = {"ids": list(account_ids), "now": now}
        return execute(session.connection(), sql, params).fetchall()

    def advisory_lock(self, session: Session, key: int, *, shared: bool = False) -> None:
        sql = (
            "SELECT pg_advisory_xact_lock_shared(%s)"
            if shared
            else "SELECT pg_advisory_xact_lock(%s)"
        )
        execute(session.connection(), sql, (key,)).fetchall()

    def run(
        self, bind: Session | Connection, statement: Statement, params: Mapping[str, Any]
    ) -> list[Row]:
        connection = bind.connection() if isinstance(bind, Session) else bind
        for text in _psycopg_texts(statement, self.name):
            cursor = execute(connection, text, params)
        # whether rows came back, from the result's status: ``cursor.description`` would build
        # an object per column first (25 us of client CPU for a transfer's 34-column SOURCES)
        result = cursor.pgresult
        return cursor.fetchall() if result and result.status == _TUPLES_OK else []

    def insert(self, table: Table) -> Any:
        return postgresql.insert(table)

    def take_sealer_lock(self, connection: Connection, *, wait: bool) -> bool:
        if wait:
            execute(connection, "SELECT pg_advisory_xact_lock(%s)", (SEALER_LOCK_KEY,))
            return True
        sql = "SELECT pg_try_advisory_xact_lock(%s)"
        got = execute(connection, sql, (SEALER_LOCK_KEY,)).fetchone()
        return bool(got and got[0])

    def take_batch(self, connection: Connection, limit: int) -> tuple[Row | None, list[Row]]:
        rows = execute(connection, _TAKE_BATCH_SQL, (limit,)).fetchall()
        if not rows:
            return None, []
        head = None if rows[0][0] is None else (rows[0][0], rows[0][1])
        return head, [row[2:] for row in rows]

    def head_seq(self, connection: Connection) -> int:
        found = execute(connection, _HEAD_SEQ_SQL, ()).fetchone()
        return int(found[0]) if found else 0

    def insert_links(self, connection: Connection, links: Links) -> None:
        params = (
            links.chained_at,
            links.seqs,
            links.transaction_ids,
            links.prev_hashes,
            links.hashes,
        )
        execute(connection, _INSERT_LINKS_SQL, params)

    def server_settings(self, connection: Connection, names: Sequence[str]) -> dict[str, str]:
        rows = execute(connection, _SETTINGS_SQL, (list(names),)).fetchall()
        return {str(name): str(value) for name, value in rows}


@functools.cache
def _psycopg_texts(statement: Statement, store: str) -> tuple[str, ...]:
    """A ``Statement``'s texts in psycopg's terms, made once per statement."""
    return tuple(_psycopg_text(text) for text in statement.texts(store))


def _psycopg_text(sql: str) -> str:
    """A ``Statement`` text in psycopg's terms: row locks filled in, ``%(name)s`` parameters."""
    for placeholder, clause in _LOCK_CLAUSES.items():
        sql = sql.replace("{" + placeholder + "}", clause)
    return _PARAMETER.sub(r"%(\1)s", sql.replace("%", "%%"))


def execute(connection: Connection, sql: str, params: Any) -> psycopg.Cursor[Any]:
    """Run ``sql`` prepared on ``connection``'s psycopg connection, inside its transaction.

    A psycopg error is re-raised as SQLAlchemy's (``IntegrityError``, ``OperationalError``...),
    so the retry of deadlocks and the API's 503 for a lost database work as for any statement.
    """
    raw = cast(psycopg.Connection[Any], connection.connection.driver_connection)
    # prepared, unless the engine turned server-side prepares off (``prepare_threshold=None``,
    # ``PostgresqlStore.engine_options``): behind a pooler in transaction mode they would collide
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
