"""Connections, units of work and retries on every database.

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
#: PostgreSQL's read_only_sql_transaction: a hot standby (a failover under way or just done), or
#: a database or role set ``default_transaction_read_only``, refusing a write
READ_ONLY_SQLSTATE = "25006"
MAX_ATTEMPTS = 8


def make_engine(url: str, *, prepared_statements: bool = True, **kwargs: Any) -> Engine:
    """An engine configured for the ledger by its database's store (``Store.engine_options``,
    ``Store.configure_engine``): WAL and ``BEGIN IMMEDIATE`` on SQLite, say.

    ``prepared_statements=False`` sends every statement unprepared, for a server behind a pooler
    in transaction mode (PgBouncer before 1.21), where a statement this client prepared on one
    server connection is not found on the next.
    """
    chosen = store.for_url(url)
    options = chosen.engine_options(kwargs, prepared_statements=prepared_statements)
    engine = create_engine(url, **options)
    chosen.configure_engine(engine)
    if not chosen.embedded and not kwargs.get("pool_pre_ping"):
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
    retry, under the same idempotency key, is exactly-once).  Only a server's connections are
    pinged: nothing outside this process closes an embedded database's.
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


def is_retryable(error: BaseException) -> bool:
    """Deadlocks, serialization failures and a busy SQLite file are worth one more try."""
    if not isinstance(error, DBAPIError):
        return False
    sqlstate = getattr(error.orig, "sqlstate", None)
    if sqlstate in RETRYABLE_SQLSTATES:
        return True
    return isinstance(error, OperationalError) and "database is locked" in str(error.orig)


def refuses_writes(error: BaseException) -> bool:
    """Whether the database refused a write because it takes none now (``READ_ONLY_SQLSTATE``):
    retrying at once is no use, as it is with a deadlock; it may take writes again later."""
    return (
        isinstance(error, DBAPIError)
        and getattr(error.orig, "sqlstate", None) == READ_ONLY_SQLSTATE
    )


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
        return self.engine.connect().execution_options(**{store.READ_ONLY: True})

    def on_dispose(self, hook: Callable[[], None]) -> None:
        """Run ``hook()`` before the engine is disposed (background threads stop there)."""
        self._on_dispose.append(hook)

    def dispose(self) -> None:
        """Stop background work and close every pooled connection."""
        for hook in self._on_dispose:
            hook()
        self.engine.dispose()
