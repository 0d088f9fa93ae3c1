"""A request whose unit of work conflicts with concurrent writes on every attempt (a deadlock, a
serialization failure, a busy SQLite file, retried by ``Database.run``) is 503
``service_unavailable`` saying the service is busy, not that the database is unreachable; and
nothing of it is written."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from flask import Flask
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import DBAPIError

from api import create_app
from bank.transfers import Transfer
from ledger.db import MAX_ATTEMPTS, Database
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, problem

DAY = "2026-06-08"
BUSY = "The service is busy"


@pytest.fixture
def own_app(fresh_db_url: str) -> Iterator[Flask]:
    """An app on a database of its own: the test adds a trigger no other test should meet."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


def _contended_error(backend: str, url: str, tmp_path: Path) -> DBAPIError:
    """A real retryable error from each database: PostgreSQL's deadlock (raised by the server,
    SQLSTATE 40P01), SQLite's busy file (another connection holds the write lock)."""
    if backend == "postgresql":
        engine = create_engine(url)
        try:
            with engine.connect() as connection:
                connection.execute(
                    text(
                        "DO $$ BEGIN RAISE EXCEPTION 'deadlock detected' "
                        "USING ERRCODE = 'deadlock_detected'; END $$"
                    )
                )
        except DBAPIError as error:
            return error
        finally:
            engine.dispose()
        raise AssertionError("no error")
    path = tmp_path / "busy.sqlite"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t (x)")
    holder.execute("BEGIN EXCLUSIVE")
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 0})
    try:
        with engine.begin() as connection:
            connection.execute(text("INSERT INTO t VALUES (1)"))
    except DBAPIError as error:
        return error
    finally:
        engine.dispose()
        holder.close()
    raise AssertionError("no error")


def test_a_contended_error_is_503_busy_not_unreachable(
    backend: str, fresh_db_url: str, tmp_path: Path
) -> None:
    error = _contended_error(backend, fresh_db_url, tmp_path)
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})

    @app.get("/contended")
    def contended() -> str:
        raise error

    try:
        response = app.test_client().get("/contended")
    finally:
        app.extensions["wetbank.db"].dispose()
    body = problem(response, 503, "service_unavailable")
    assert response.headers["Retry-After"] == "1"
    assert body["detail"].startswith(BUSY)
    assert "unavailable" not in body["detail"]


def test_a_transfer_deadlocked_on_every_attempt_is_503_busy_and_writes_nothing(
    backend: str, own_app: Flask
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite's writers take turns: no deadlock, and a busy file waits 30 s a try")
    kit = Kit(Api(own_app.test_client(), make_token(own_app, "board")), own_app)
    funded = kit.funded_account(day=DAY, service_area=5, unrestricted=10_000)
    target = kit.account(kit.holder("Buyer")["id"])
    db: Database = own_app.extensions["wetbank.db"]
    with db.engine.begin() as connection:
        # each attempt's INSERT of the transfer is refused as PostgreSQL refuses a deadlock
        connection.execute(
            text(
                """CREATE FUNCTION test_deadlock() RETURNS trigger LANGUAGE plpgsql AS $$
                BEGIN
                    PERFORM nextval('test_attempts');
                    RAISE EXCEPTION 'deadlock detected' USING ERRCODE = 'deadlock_detected';
                END $$"""
            )
        )
        connection.execute(text("CREATE SEQUENCE test_attempts"))  # not rolled back
        connection.execute(
            text(
                "CREATE TRIGGER test_deadlock BEFORE INSERT ON transfers "
                "FOR EACH ROW EXECUTE FUNCTION test_deadlock()"
            )
        )
    body = {
        "from_account_id": funded["id"],
        "to_account_id": target,
        "credit_class": funded["unrestricted_class"],
        "amount_sqft": 100,
    }
    response = kit.api.post("/transfers", body, headers={"Idempotency-Key": "k-1"})
    found = problem(response, 503, "service_unavailable")
    assert found["detail"].startswith(BUSY)
    assert response.headers["Retry-After"] == "1"
    with db.transaction() as session:
        assert session.execute(select(func.count()).select_from(Transfer)).scalar_one() == 0
        # every attempt reached the insert (and was rolled back with it)
        attempts = session.execute(text("SELECT last_value FROM test_attempts")).scalar_one()
        assert attempts == MAX_ATTEMPTS
    assert kit.available(funded["id"], funded["unrestricted_class"]) == 10_000

    # once the conflict clears, the client's retry with its key is written, once
    with db.engine.begin() as connection:
        connection.execute(text("DROP TRIGGER test_deadlock ON transfers"))
    retried = kit.api.post("/transfers", body, headers={"Idempotency-Key": "k-1"})
    assert retried.status_code == 201, retried.get_data(as_text=True)
    assert "Idempotent-Replayed" not in retried.headers
