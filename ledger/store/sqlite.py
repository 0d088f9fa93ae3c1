"""SQLite's statements: SQLAlchemy Core, one writer at a time.

Every write transaction begins with ``BEGIN IMMEDIATE`` (``SqliteStore.configure_engine``), so
one writer holds the whole database from its first statement to its commit: row locks and advisory
locks have nothing left to do, and each write seals its own chain link before it commits.  A
transaction is inserted ``open``, its balances changed and entries inserted, then ``sealed``, when
a trigger checks that it balances (``ledger.store.sqlite_ddl``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import (
    URL,
    Connection,
    CursorResult,
    Engine,
    Executable,
    Table,
    bindparam,
    delete,
    event,
    func,
    insert,
    select,
    text,
    update,
)
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

from ledger import chain, verify_links
from ledger.account_cache import AccountRow
from ledger.canonical import ENTRY_COLUMNS, HEADER_COLUMNS
from ledger.lines import Line, deltas, later_posted
from ledger.schema import (
    LedgerBalance,
    LedgerChainLink,
    LedgerChainQueue,
    LedgerEntry,
    LedgerOpenPending,
    LedgerTransaction,
)
from ledger.store import READ_ONLY, Ddl, Links, Row, Statement
from ledger.store.sqlite_ddl import SqliteDdl
from ledger.verify_links import Segment
from ledger.verify_report import Progress

_TRANSACTIONS = cast(Table, LedgerTransaction.__table__)
_ENTRIES = cast(Table, LedgerEntry.__table__)
_BALANCES = cast(Table, LedgerBalance.__table__)
_OPEN_PENDING = cast(Table, LedgerOpenPending.__table__)
_QUEUE = cast(Table, LedgerChainQueue.__table__)
_CHAIN = cast(Table, LedgerChainLink.__table__)
_balance = _BALANCES.c

_LIMITED = (
    select(
        _balance.account_id,
        _balance.asset,
        _balance.no_overdraft,
        _balance.no_overcredit,
        _balance.debits_posted,
        _balance.credits_posted,
        _balance.debits_pending,
        _balance.credits_pending,
    )
    .where(
        _balance.account_id.in_(bindparam("ids", expanding=True)),
        _balance.no_overdraft | _balance.no_overcredit,
    )
    .order_by(_balance.account_id)
)

_INSERT_HEADER = (
    sqlite.insert(_TRANSACTIONS)
    .on_conflict_do_nothing(index_elements=["idempotency_key"])
    .returning(_TRANSACTIONS.c.id)
)
_SEAL_HEADER = (
    update(_TRANSACTIONS).where(_TRANSACTIONS.c.id == bindparam("tx_id")).values(state="sealed")
)
# SQLite's writers take turns, so it writes slot 0 only
_APPLY_DELTA = (
    update(_BALANCES)
    .where(_balance.account_id == bindparam("account"), _balance.slot == 0)
    .values(
        debits_posted=_balance.debits_posted + bindparam("dp"),
        credits_posted=_balance.credits_posted + bindparam("cp"),
        debits_pending=_balance.debits_pending + bindparam("dq"),
        credits_pending=_balance.credits_pending + bindparam("cq"),
        version=_balance.version + 1,
    )
    .returning(_balance.credits_posted - _balance.debits_posted, _balance.version)
)


def _expired(column: Any) -> Any:
    """What reservations past their expiry still hold in an account's stored rows."""
    return (
        select(func.coalesce(func.sum(column), 0))
        .where(
            _OPEN_PENDING.c.account_id == _balance.account_id,
            _OPEN_PENDING.c.expires_at <= bindparam("now"),
        )
        .scalar_subquery()
    )


_READ_BALANCES = (
    select(
        _balance.account_id,
        func.min(_balance.asset),
        func.sum(_balance.debits_posted),
        func.sum(_balance.credits_posted),
        func.sum(_balance.debits_pending) - _expired(_OPEN_PENDING.c.debits),
        func.sum(_balance.credits_pending) - _expired(_OPEN_PENDING.c.credits),
        func.sum(_balance.version),
    )
    .where(_balance.account_id.in_(bindparam("ids", expanding=True)))
    .group_by(_balance.account_id)
    .order_by(_balance.account_id)
)

_QUEUED = (
    select(_QUEUE.c.transaction_id).order_by(_QUEUE.c.transaction_id).limit(bindparam("limit"))
)
_HEAD = select(_CHAIN.c.seq, _CHAIN.c.hash).order_by(_CHAIN.c.seq.desc()).limit(1)
_HEAD_SEQ = select(func.coalesce(func.max(_CHAIN.c.seq), 0))
_CONTENT = (
    select(
        *[_TRANSACTIONS.c[c] for c in HEADER_COLUMNS],
        *[_ENTRIES.c[c].label(f"e_{c}") for c in ENTRY_COLUMNS],
    )
    .select_from(_TRANSACTIONS.outerjoin(_ENTRIES, _ENTRIES.c.transaction_id == _TRANSACTIONS.c.id))
    .where(_TRANSACTIONS.c.id.in_(bindparam("ids", expanding=True)))
    .order_by(_TRANSACTIONS.c.id, _ENTRIES.c.id)
)
_UNQUEUE = delete(_QUEUE).where(_QUEUE.c.transaction_id.in_(bindparam("ids", expanding=True)))

_LOCK_PLACEHOLDERS = ("{for_update}", "{for_no_key_update}", "{for_key_share}")


class SqliteStore:
    """The ledger's statements on SQLite."""

    name = "sqlite"
    ids_are_never_reused = False
    seals_in_background = False
    embedded = True
    hashes_in_database = False
    ddl: Ddl = SqliteDdl()

    def engine_options(
        self, options: Mapping[str, Any], *, prepared_statements: bool
    ) -> dict[str, Any]:
        # a writer waits up to 30 s for the one writer before it (``busy_timeout`` below too)
        connect_args = {"timeout": 30, **options.get("connect_args", {})}
        return {**options, "connect_args": connect_args}

    def configure_engine(self, engine: Engine) -> None:
        event.listen(engine, "connect", _on_connect)
        event.listen(engine, "begin", _on_begin)

    def snapshot(self, connection: Connection) -> Connection:
        return connection  # a reader's deferred transaction is a WAL snapshot already

    def reopens(self, url: URL) -> bool:
        return url.database not in (None, "", ":memory:")

    def check_segment(
        self, connection: Connection, first: int, last: int, progress: Progress | None
    ) -> Segment:
        return verify_links.python_segment(connection, first, last, progress)

    def lock_balances(self, session: Session, account_ids: Sequence[int]) -> Sequence[Row]:
        return session.execute(_LIMITED, {"ids": list(account_ids)}).all()

    def lock_headers(self, session: Session, transaction_ids: Sequence[int]) -> None:
        return None  # the writer holds the whole database

    def write(
        self,
        session: Session,
        header: Mapping[str, Any],
        lines: Sequence[Line],
        accounts: Mapping[int, AccountRow],
    ) -> int | None:
        connection = session.connection()
        tx_id = connection.execute(_INSERT_HEADER, dict(header, state="open")).scalar()
        if tx_id is None:
            return None
        after = {}
        for account, (dp, cp, dq, cq) in deltas(lines).items():
            params = {"account": account, "dp": dp, "cp": cp, "dq": dq, "cq": cq}
            after[account] = connection.execute(_APPLY_DELTA, params).one()
        later = later_posted(lines)
        entries = [
            {
                "transaction_id": tx_id,
                "account_id": line.account_id,
                "asset": accounts[line.account_id].asset,
                "amount": line.amount,
                "phase": line.phase,
                "balance_after": after[line.account_id][0] - later[index],
                "account_version": after[line.account_id][1],
                "effective_on": header["effective_on"],
                "resolves_id": line.resolves_id,
                "resolution": line.resolution,
            }
            for index, line in enumerate(lines)
        ]
        connection.execute(insert(_ENTRIES), entries)
        connection.execute(_SEAL_HEADER, {"tx_id": tx_id})
        connection.execute(insert(_QUEUE), {"transaction_id": tx_id})
        chain.seal(connection)
        return int(tx_id)

    def read_balances(
        self, session: Session, account_ids: Sequence[int], now: datetime, *, for_update: bool
    ) -> Sequence[Row]:
        return session.execute(_READ_BALANCES, {"ids": list(account_ids), "now": now}).all()

    def advisory_lock(self, session: Session, key: int, *, shared: bool = False) -> None:
        return None  # the writer holds the whole database

    def run(
        self, bind: Session | Connection, statement: Statement, params: Mapping[str, Any]
    ) -> list[Row]:
        for clause in _clauses(statement, self.name):
            result = cast(CursorResult[Any], bind.execute(clause, params))
        return list(result.all()) if result.returns_rows else []

    def insert(self, table: Table) -> Any:
        return sqlite.insert(table)

    def take_sealer_lock(self, connection: Connection, *, wait: bool) -> bool:
        return True  # the writer holds the whole database

    def take_batch(self, connection: Connection, limit: int) -> tuple[Row | None, list[Row]]:
        ids = list(connection.execute(_QUEUED, {"limit": limit}).scalars())
        if not ids:
            return None, []
        head = connection.execute(_HEAD).one_or_none()
        rows: list[Row] = [tuple(row) for row in connection.execute(_CONTENT, {"ids": ids})]
        connection.execute(_UNQUEUE, {"ids": ids})
        return (None if head is None else tuple(head)), rows

    def head_seq(self, connection: Connection) -> int:
        return int(connection.execute(_HEAD_SEQ).scalar_one())

    def insert_links(self, connection: Connection, links: Links) -> None:
        rows = [
            {
                "seq": seq,
                "transaction_id": tx_id,
                "prev_hash": prev,
                "hash": digest,
                "chained_at": links.chained_at,
            }
            for seq, tx_id, prev, digest in zip(
                links.seqs, links.transaction_ids, links.prev_hashes, links.hashes, strict=True
            )
        ]
        connection.execute(insert(_CHAIN), rows)

    def server_settings(self, connection: Connection, names: Sequence[str]) -> dict[str, str]:
        return {}  # an embedded database has no server to configure


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    # Take transaction control from the driver so that BEGIN IMMEDIATE is ours to emit.
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    cursor.execute("PRAGMA foreign_keys=ON")
    cursor.execute("PRAGMA journal_mode=WAL")
    cursor.execute("PRAGMA busy_timeout=30000")
    cursor.execute("PRAGMA synchronous=NORMAL")
    cursor.close()
    # SQLite's own lower() folds ASCII letters only, so a search "in any case" (``icontains``:
    # lower(name) LIKE lower(?)) missed "Ödegaard" for "ödegaard", where PostgreSQL's ILIKE
    # finds it.  Python's folds every script.  No index, constraint or trigger uses lower(), so
    # nothing stored depends on which one a connection has.
    dbapi_connection.create_function("lower", 1, _lower, deterministic=True)


def _lower(value: Any) -> Any:
    return value.lower() if isinstance(value, str) else value


def _on_begin(connection: Any) -> None:
    if connection.get_execution_options().get(READ_ONLY):
        # A deferred transaction: a WAL snapshot that takes no write lock, so a long read
        # (a streamed export a slow client downloads) never holds up the writers.
        connection.exec_driver_sql("BEGIN")
        return
    # One writer at a time, decided at BEGIN, so no transaction upgrades its lock and deadlocks.
    connection.exec_driver_sql("BEGIN IMMEDIATE")


@functools.cache
def _clauses(statement: Statement, store: str) -> tuple[Executable, ...]:
    """A ``Statement``'s texts as SQLAlchemy clauses, made once per statement: row locks left
    out, parameters and the last text's result columns typed as ``statement.types`` says."""
    texts = list(statement.texts(store))
    clauses: list[Executable] = []
    for index, sql in enumerate(texts):
        for placeholder in _LOCK_PLACEHOLDERS:
            sql = sql.replace(placeholder, "")
        clause: Any = text(sql)
        typed = [
            bindparam(k, type_=t)
            for k, t in statement.types.items()
            if re.search(rf"(?<![:\w]):{k}\b", sql)
        ]
        if typed:
            clause = clause.bindparams(*typed)
        if index == len(texts) - 1 and statement.columns:
            clause = clause.columns(**statement.columns)
        clauses.append(clause)
    return tuple(clauses)
