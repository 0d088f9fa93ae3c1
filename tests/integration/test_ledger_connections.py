"""Pooled connections on PostgreSQL: one the server closed while it sat idle is replaced, unseen;
one unit of work after another uses the same connection."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from ledger import db as ledger_db
from ledger.db import Database
from tests.integration.ledger_kit import balance, move, open_accounts, unique


@pytest.fixture(autouse=True)
def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite has no server to close a connection")


def _backend_pid(database: Database) -> int:
    with database.transaction() as session:
        return int(session.execute(text("SELECT pg_backend_pid()")).scalar_one())


def _terminate(database_url: str, pid: int) -> None:
    other = Database.from_url(database_url)
    try:
        with other.transaction() as session:
            killed = session.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid})
            assert killed.scalar_one() is True
    finally:
        other.dispose()


@pytest.fixture
def one_connection(database_url: str):
    """A Database whose pool holds a single connection, so the next unit of work reuses it."""
    database = Database.from_url(database_url, pool_size=1, max_overflow=0)
    yield database
    database.dispose()


def test_a_connection_the_server_closed_while_idle_is_replaced_before_a_write_uses_it(
    one_connection, database_url, monkeypatch
):
    monkeypatch.setattr(ledger_db, "PING_AFTER_IDLE_SECONDS", 0.2)
    issuer, a = open_accounts(one_connection, unique("X"), False, True)
    pid = _backend_pid(one_connection)
    # the pool's only connection is killed while idle (a server restart, a firewall)
    _terminate(database_url, pid)
    time.sleep(0.3)
    move(one_connection, issuer, a, 5)
    assert balance(one_connection, a).posted == 5
    assert _backend_pid(one_connection) != pid


def test_a_connection_lost_in_steady_use_fails_one_write_which_nothing_records_and_the_next_works(
    one_connection, database_url, monkeypatch
):
    monkeypatch.setattr(ledger_db, "PING_AFTER_IDLE_SECONDS", 1000)
    issuer, a = open_accounts(one_connection, unique("X"), False, True)
    move(one_connection, issuer, a, 5)  # the accounts are known: the next write goes raw at once
    _terminate(database_url, _backend_pid(one_connection))
    with pytest.raises(OperationalError) as lost:
        move(one_connection, issuer, a, 7)
    # the API answers this with 503 + Retry-After; the pool has dropped the dead connection
    assert lost.value.connection_invalidated
    move(one_connection, issuer, a, 11)
    assert balance(one_connection, a).posted == 16


def test_units_of_work_one_after_another_reuse_the_connection_used_last(database_url):
    """The pool hands out the connection checked in last: after a moment that needed three, a
    process running one unit of work at a time keeps to one server backend."""
    database = Database.from_url(database_url, pool_size=3, max_overflow=0)
    try:
        held = [database.engine.connect() for _ in range(3)]
        opened = {int(c.execute(text("SELECT pg_backend_pid()")).scalar_one()) for c in held}
        for connection in held:
            connection.close()
        used = [_backend_pid(database) for _ in range(6)]
        assert len(opened) == 3
        assert len(set(used)) == 1, used
    finally:
        database.dispose()
