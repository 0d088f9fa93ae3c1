"""Migration 0019 on both databases: ``wetbank db upgrade`` guards a database holding a bank from
0018 and keeps every row; down to 0018 the guards are gone; stored rows that already break a
guard stop the upgrade, named."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.exc import IntegrityError

from api.cli import main
from api.schema_check import alembic_config
from ledger import Database, Leg, Meta, create_account, reverse, transfer, verify
from ledger.sealer import seal_all
from tests.dbs import create_database, drop_database
from tests.integration.ledger_kit import insert_raw_entry

DAY = date(2026, 3, 2)
TABLES = (
    "ledger_transactions",
    "ledger_entries",
    "ledger_chain",
    "lots",
    "payments",
    "audit_events",
)
AUDIT_UPDATE = "UPDATE audit_events SET status = 200"


def _counts(url: str) -> dict[str, int]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
                for table in TABLES
            }
    finally:
        engine.dispose()


def _version(url: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return str(connection.execute(text("SELECT version_num FROM alembic_version")).scalar())
    finally:
        engine.dispose()


def _run(db: Database, statement: str, **params: object) -> None:
    with db.engine.begin() as connection:
        connection.execute(text(statement), params)


def _book(url: str) -> tuple[int, int, int, int]:
    """At 0018: a bank (``make_bank``), two accounts, a transfer, a payment of it compensated by
    its reversal, and an audit event.  Returns (issuer, holder, the transfer, its reversal)."""
    from bench.server import make_bank

    make_bank(url, accounts=2)
    db = Database.from_url(url)
    try:
        with db.transaction() as session:
            issuer = create_account(session, code="i", asset="X", name="issuer")
            holder = create_account(session, code="h", asset="X", name="h", no_overdraft=True)
            # keyed as the bank keys a payment's transaction (0032 ties the payment's amount
            # to what it posted)
            paid = transfer(session, "t", [Leg(issuer, holder, 5)], Meta("payment:pay-1", DAY))
            # a refund, as the bank books one (0026 ties a payment's status to its kind)
            refund = reverse(session, paid.transaction_id, Meta("k2", DAY), kind="payment_refunded")
        _payment(db, "pay-1", paid.transaction_id, refund.transaction_id)
        _run(
            db,
            "INSERT INTO audit_events (at, actor, kind, path, request_id, status) "
            "VALUES (CURRENT_TIMESTAMP, NULL, 'unauthorized', '/api/v1/accounts', 'r-1', 401)",
        )
        seal_all(db)
    finally:
        db.dispose()
    return issuer, holder, paid.transaction_id, refund.transaction_id


def _payment(db: Database, payment_id: str, transaction_id: int, compensation: int) -> None:
    _run(
        db,
        "INSERT INTO payments (id, kind, amount_cents, payer, received_on, transaction_id, "
        "status, compensation_transaction_id, ruleset, created_at, actor) VALUES (:id, "
        "'processing_fee', 5, 'p', CURRENT_DATE, :t, 'refunded', :c, 'seed', "
        "CURRENT_TIMESTAMP, 'x')",
        id=payment_id,
        t=transaction_id,
        c=compensation,
    )


def _add_a_pair(db: Database, transaction_id: int, a: int, b: int) -> None:
    """A balanced pair of entries added with raw SQL to a committed transaction."""
    with db.engine.begin() as connection:
        insert_raw_entry(connection, transaction_id, a, "X", -1)
        insert_raw_entry(connection, transaction_id, b, "X", 1)


def test_0019_guards_a_database_holding_a_bank_and_goes_down_to_0018_keeping_every_row(
    backend: str, tmp_path: Path
) -> None:
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0018")
        issuer, holder, paid, _refund = _book(url)
        before = _counts(url)
        upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
        assert upgraded.exit_code == 0, upgraded.output
        assert _counts(url) == before
        db = Database.from_url(url)
        with db.engine.connect() as connection:
            assert verify(connection).ok
        with pytest.raises(IntegrityError, match="audit events are append-only"):
            _run(db, AUDIT_UPDATE)
        with pytest.raises(IntegrityError, match="compensation_transaction_id is set once"):
            _run(db, "UPDATE payments SET compensation_transaction_id = :t", t=paid)
        with pytest.raises(IntegrityError, match="sealed or missing|only by the database"):
            _add_a_pair(db, paid, issuer, holder)
        with db.transaction() as session:
            transfer(session, "t", [Leg(issuer, holder, 2)], Meta("k3", DAY))
        seal_all(db)
        with db.engine.connect() as connection:
            assert verify(connection).ok
        db.dispose()
        command.downgrade(config, "0018")
        db = Database.from_url(url)
        _run(db, AUDIT_UPDATE)  # the guards are gone
        with db.transaction() as session:  # under 0018's deferred check
            transfer(session, "t", [Leg(holder, issuer, 1)], Meta("k4", DAY))
        db.dispose()
        assert _counts(url)["ledger_entries"] == before["ledger_entries"] + 4
        command.upgrade(config, "head")
    finally:
        drop_database(url)


def test_0019_refuses_a_database_whose_rows_already_break_a_guard(
    backend: str, tmp_path: Path
) -> None:
    """Before 0019 a raw UPDATE could point a payment's compensation at any transaction, and on
    PostgreSQL a raw INSERT could add a balanced pair of entries to a committed transaction; such
    a database stops the upgrade, naming the rows, and stays at 0018."""
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0018")
        issuer, holder, paid, _refund = _book(url)
        db = Database.from_url(url)
        with db.transaction() as session:
            other = transfer(session, "t", [Leg(issuer, holder, 1)], Meta("k5", DAY))
        _payment(db, "pay-2", other.transaction_id, paid)  # compensated by an unrelated one
        named = "payments row pay-2 "
        if backend == "postgresql":
            _add_a_pair(db, paid, issuer, holder)
            named += f".*ledger_transactions row {paid} "
        db.dispose()
        with pytest.raises(RuntimeError, match=named):
            command.upgrade(config, "head")
        assert _version(url) == "0018"
    finally:
        drop_database(url)
