"""Connections, units of work and retries for both dialects (LEDGER.md "Concurrency").

``Database.transaction()`` opens one unit of work; nested calls on the same thread join the outer
one, so a caller (the HTTP layer's idempotency record, a batch) can widen a use case's transaction
without the use case knowing.  ``Database.run(fn)`` retries the whole unit of work on a deadlock,
a serialization failure or a busy SQLite database, with bounded jittered backoff.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

from sqlalchemy import Connection, Engine, create_engine, event
from sqlalchemy.exc import DBAPIError, DisconnectionError, OperationalError
from sqlalchemy.orm import Session, sessionmaker

from ledger import store

P = ParamSpec("P")
T = TypeVar("T")

RETRYABLE_SQLSTATES = frozenset({"40001", "40P01"})  # serialization failure, deadlock
MAX_ATTEMPTS = 8
#: execution option of a connection that only reads (``Database.reader``)
READ_ONLY = "ledger_read_only"


def make_engine(url: str, *, prepared_statements: bool = True, **kwargs: Any) -> Engine:
    """An engine configured for the ledger: WAL and ``BEGIN IMMEDIATE`` on SQLite.

    On PostgreSQL, ``prepared_statements=False`` sends every statement unprepared (psycopg's
    ``prepare_threshold=None``, which ``ledger.store.postgresql`` follows too): a pooler in
    transaction mode (PgBouncer before 1.21) hands each transaction whichever server
    connection is free, where a statement this client prepared does not exist, or one of the
    same name prepared by another client does.
    """
    if url.startswith("sqlite"):
        engine = create_engine(url, connect_args={"timeout": 30}, **kwargs)
        _configure_sqlite(engine)
        return engine
    if "poolclass" not in kwargs:
        kwargs.setdefault("pool_size", 10)
        kwargs.setdefault("max_overflow", 20)
    if not prepared_statements:
        kwargs["connect_args"] = {**kwargs.get("connect_args", {}), "prepare_threshold": None}
    engine = create_engine(url, **kwargs)
    if not kwargs.get("pool_pre_ping"):
        _ping_idle_connections(engine)
    return engine


#: a pooled connection idle for longer than this is pinged before it is handed out
PING_AFTER_IDLE_SECONDS = 1.0


def _ping_idle_connections(engine: Engine) -> None:
    """Ping a pooled connection before use only when it sat idle (SQLAlchemy's pessimistic
    disconnect recipe, with a threshold).

    ``pool_pre_ping`` pings on every checkout: a round trip per unit of work, measurable on a
    busy writer.  A connection in steady use was just seen to work; one idle
    for a while may have been closed by a server restart or a firewall, so it is checked, and
    the pool replaces it if dead.  A connection that dies between two close uses fails its
    statement instead, which the API answers with 503 and a Retry-After (and the client's
    retry, under the same idempotency key, is exactly-once).
    """

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection: Any, record: Any) -> None:
        record.info["ledger_idle_since"] = time.monotonic()

    @event.listens_for(engine, "checkout")
    def _on_checkout(dbapi_connection: Any, record: Any, _proxy: Any) -> None:
        idle_since = record.info.get("ledger_idle_since")
        if idle_since is None or time.monotonic() - idle_since < PING_AFTER_IDLE_SECONDS:
            return
        try:
            engine.dialect.do_ping(dbapi_connection)
        except Exception as error:
            # the pool discards this connection and hands out another (or a new one)
            raise DisconnectionError("a pooled connection was found closed") from error


def _configure_sqlite(engine: Engine) -> None:
    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # Take transaction control from the driver so that BEGIN IMMEDIATE is ours to emit.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA busy_timeout=30000")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: Any) -> None:
        if connection.get_execution_options().get(READ_ONLY):
            # A deferred transaction: a WAL snapshot that takes no write lock, so a long read
            # (a streamed export a slow client downloads) never holds up the writers.
            connection.exec_driver_sql("BEGIN")
            return
        # One writer at a time, decided at BEGIN, so no transaction upgrades its lock and deadlocks.
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def is_retryable(error: BaseException) -> bool:
    """Deadlocks, serialization failures and a busy SQLite file are worth one more try."""
    if not isinstance(error, DBAPIError):
        return False
    sqlstate = getattr(error.orig, "sqlstate", None)
    if sqlstate in RETRYABLE_SQLSTATES:
        return True
    return isinstance(error, OperationalError) and "database is locked" in str(error.orig)


class Database:
    """An engine, its session factory and the current unit of work of each thread."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.dialect = store.of(engine).name
        self.sessions = sessionmaker(engine, expire_on_commit=False)
        self._local = threading.local()
        self._after_commit: list[Callable[[Database], None]] = []
        self._on_dispose: list[Callable[[], None]] = []

    @classmethod
    def from_url(cls, url: str, **kwargs: Any) -> Database:
        """Build a Database for ``url`` (``sqlite:///...`` or ``postgresql+psycopg://...``)."""
        return cls(make_engine(url, **kwargs))

    def on_commit(self, hook: Callable[[Database], None]) -> None:
        """Run ``hook(db)`` after every outermost commit (the hash-chain sealer uses it)."""
        self._after_commit.append(hook)

    @property
    def in_transaction(self) -> bool:
        """Whether this thread is inside a unit of work."""
        return getattr(self._local, "session", None) is not None

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """One unit of work: commit at the end of the outermost block, roll back on any error."""
        current: Session | None = getattr(self._local, "session", None)
        if current is not None:
            yield current
            return
        session = self.sessions()
        self._local.session = session
        try:
            with session.begin():
                yield session
        finally:
            self._local.session = None
            session.close()
        for hook in self._after_commit:
            hook(self)

    def run(self, fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        """Call ``fn(session, *args, **kwargs)`` in a unit of work, retrying transient failures.

        Nested inside another unit of work it simply joins it: the outermost ``run`` retries.
        """
        if self.in_transaction:
            with self.transaction() as session:
                return fn(session, *args, **kwargs)
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                with self.transaction() as session:
                    return fn(session, *args, **kwargs)
            except DBAPIError as error:
                if attempt == MAX_ATTEMPTS or not is_retryable(error):
                    raise
                time.sleep(random.uniform(0, 0.005 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def reader(self) -> Connection:
        """A connection for a long read-only pass, such as a streamed export: on SQLite its
        transaction is a snapshot that does not take the write lock (``BEGIN IMMEDIATE``)."""
        return self.engine.connect().execution_options(**{READ_ONLY: True})

    def on_dispose(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` before the engine is disposed (background threads stop there)."""
        self._on_dispose.append(hook)

    def dispose(self) -> None:
        """Stop background work and close every pooled connection."""
        for hook in self._on_dispose:
            hook()
        self.engine.dispose()
