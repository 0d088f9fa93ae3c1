"""Quantities stay exact whole numbers in the database itself.

SQLite stores integer arithmetic that overflows 64 bits as a REAL; its guards
(``ledger.quantities``, migration 0008) refuse such a write on every quantity column, where
PostgreSQL's BIGINT raises.
PostgreSQL also holds each quantity a request states to the API's bound with a CHECK, and its
32-bit counters are BIGINT.  Migration 0008 goes up and down on both databases.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest
from alembic import command
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DataError, IntegrityError

import bank.tables  # noqa: F401  (registers every bank table on the metadata)
from api.schema_check import alembic_config
from ledger import Database, quantities
from ledger.schema import Base
from tests.dbs import create_database, drop_database
from tests.integration.ledger_kit import (
    insert_raw_header,
    move,
    open_accounts,
    stored_rows,
    unique,
)

INT64_MAX = 2**63 - 1


def _migration_0008() -> ModuleType:
    path = Path(__file__).parents[2] / "migrations" / "versions" / "0008_bounds.py"
    spec = importlib.util.spec_from_file_location("migration_0008", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


BOUNDS = _migration_0008()


def _metadata_quantities() -> list[tuple[str, str]]:
    return [
        (table.name, column.name)
        for table in Base.metadata.sorted_tables
        for column in table.columns
        if quantities.is_quantity(table.name, column.name)
    ]


def test_every_quantity_column_of_the_schema_is_guarded_on_sqlite(
    backend: str, db: Database
) -> None:
    if backend != "sqlite":
        pytest.skip("PostgreSQL's integer columns hold nothing but integers")
    with db.engine.connect() as connection:
        triggers = set(
            connection.execute(
                text("SELECT name FROM sqlite_master WHERE type = 'trigger'")
            ).scalars()
        )
    expected = _metadata_quantities()
    assert ("ledger_entries", "amount") in expected
    assert ("ledger_balances", "credits_pending") in expected
    assert ("securities", "amount_cents") in expected
    for table, column in expected:
        on_insert, on_update = quantities.trigger_names(table, column)
        assert {on_insert, on_update} <= triggers, f"{table}.{column} is not guarded"


def test_sqlite_refuses_to_insert_a_non_integer_into_any_quantity_column(
    backend: str, db: Database
) -> None:
    """The guard runs before every other check, so a row of nothing but the quantity shows it."""
    if backend != "sqlite":
        pytest.skip("PostgreSQL's integer columns hold nothing but integers")
    every = _metadata_quantities()
    for table, column in every:
        # the table's other quantities whole, so that this column's guard is the one to refuse
        others = [c for t, c in every if t == table and c != column]
        names = ", ".join([column, *others])
        values = ", ".join([":value", *("0" for _ in others)])
        for value in (0.5, 1e19, float(INT64_MAX) * 2):
            with pytest.raises(IntegrityError) as refused, db.engine.begin() as connection:
                connection.execute(
                    text(f"INSERT INTO {table} ({names}) VALUES ({values})"), {"value": value}
                )
            assert quantities.is_refusal(refused.value), refused.value
            assert f"{table}.{column}" in str(refused.value.orig)


def test_a_balance_that_would_overflow_is_refused_and_stays_exact(
    backend: str, db: Database
) -> None:
    """The report: a balance pushed past 2^63 became a REAL on SQLite.  Now the posting fails on
    both databases (SQLite's guard, PostgreSQL's BIGINT) and the stored balance is unchanged."""
    asset = unique("X")
    source, target = open_accounts(db, asset, False, False)
    move(db, source, target, 5)
    with db.engine.begin() as connection:
        connection.execute(
            text("UPDATE ledger_balances SET credits_posted = :near WHERE account_id = :id"),
            {"near": INT64_MAX - 1, "id": target},
        )
    before = stored_rows(db, [source, target])
    expected = IntegrityError if backend == "sqlite" else DataError
    with pytest.raises(expected) as refused:
        move(db, source, target, 5)
    if backend == "sqlite":
        assert quantities.is_refusal(refused.value)
    # and a raw UPDATE doing the same arithmetic is refused too
    with pytest.raises(expected), db.engine.begin() as connection:
        connection.execute(
            text(
                "UPDATE ledger_balances SET credits_posted = credits_posted + 5 "
                "WHERE account_id = :id"
            ),
            {"id": target},
        )
    assert stored_rows(db, [source, target]) == before
    if backend == "sqlite":
        with db.engine.connect() as connection:
            kinds = connection.execute(
                text("SELECT DISTINCT typeof(credits_posted) FROM ledger_balances")
            ).scalars()
            assert set(kinds) == {"integer"}


def test_sqlite_refuses_an_entry_whose_amount_is_not_an_integer(backend: str, db: Database) -> None:
    if backend != "sqlite":
        pytest.skip("PostgreSQL's integer columns hold nothing but integers")
    asset = unique("X")
    (account,) = open_accounts(db, asset, False)
    with pytest.raises(IntegrityError) as refused, db.engine.begin() as connection:
        tx_id = insert_raw_header(connection, "open")
        connection.execute(
            text(
                "INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, "
                "balance_after, account_version, effective_on) VALUES (:tx, :account, :asset, "
                "2.5, 'posted', 0, 0, CURRENT_DATE)"
            ),
            {"tx": tx_id, "account": account, "asset": asset},
        )
    assert "ledger_entries.amount" in str(refused.value.orig)


# --- migration 0008 -----------------------------------------------------------------------------


def _insert_plan(connection: object, plan_id: str, area_sqft: int) -> None:
    lgu_id = unique("lgu")[:40]
    connection.execute(  # type: ignore[attr-defined]
        text(
            "INSERT INTO lgus (id, name, kind, observes_indigenous_peoples_day, "
            "observes_friday_after_thanksgiving, created_at) "
            "VALUES (:id, 'County', 'county', false, false, CURRENT_TIMESTAMP)"
        ),
        {"id": lgu_id},
    )
    connection.execute(  # type: ignore[attr-defined]
        text(
            "INSERT INTO plans (id, lgu_id, applicant, project, received_on, first_received_on, "
            "impact_area_sqft, impact_wetland_type, impact_service_area, impact_county, "
            "on_agricultural_land, replacement_ratio, method, replacement_outside_service_area, "
            "ruleset, extension_days, created_at, version) VALUES (:id, :lgu, 'a', 'p', "
            "CURRENT_DATE, CURRENT_DATE, :area, '2', 5, 'Lyon', false, '2', 'bank_credits', "
            "false, 'seed', 30, CURRENT_TIMESTAMP, 7)"
        ),
        {"id": plan_id, "lgu": lgu_id, "area": area_sqft},
    )


def _sqlite_guards(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return set(
                connection.execute(
                    text(
                        "SELECT name FROM sqlite_master WHERE type = 'trigger' "
                        "AND name LIKE 'quantity%'"
                    )
                ).scalars()
            )
    finally:
        engine.dispose()


def _pg_state(url: str) -> tuple[dict[str, str], set[str]]:
    """The widened columns' types (those present) and the bound CHECKs present."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            # a later revision may move a widened column (0010 moves plans.extension_days
            # into a table of its own): only the columns still there have a type
            found = {
                f"{table}.{column}": connection.execute(
                    text(
                        "SELECT data_type FROM information_schema.columns "
                        "WHERE table_name = :t AND column_name = :c"
                    ),
                    {"t": table, "c": column},
                ).scalar()
                for table, column in BOUNDS.WIDENED
            }
            types = {name: kind for name, kind in found.items() if kind is not None}
            checks = set(
                connection.execute(
                    text("SELECT conname FROM pg_constraint WHERE conname LIKE 'ck\\_%\\_max'")
                ).scalars()
            )
            return types, checks
    finally:
        engine.dispose()


def test_0008_upgrades_and_downgrades_keeping_every_row(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    checks = {f"ck_{t}_{c}_max" for t, c, _bound in BOUNDS.BOUNDED}
    try:
        command.upgrade(config, "0007")
        engine = create_engine(url)
        with engine.begin() as connection:
            _insert_plan(connection, "plan_kept", 9_000)
        engine.dispose()

        command.upgrade(config, "0008")
        if backend == "sqlite":
            guards = _sqlite_guards(url)
            assert set(quantities.trigger_names("plans", "impact_area_sqft")) <= guards
            assert set(quantities.trigger_names("ledger_balances", "debits_posted")) <= guards
        else:
            types, present = _pg_state(url)
            assert set(types.values()) == {"bigint"}
            assert checks <= present
        engine = create_engine(url)
        over = (
            "UPDATE plans SET impact_area_sqft = impact_area_sqft + 0.5"
            if backend == "sqlite"
            else f"UPDATE plans SET impact_area_sqft = {BOUNDS.MAX_SQFT + 1}"
        )
        with pytest.raises(IntegrityError), engine.begin() as connection:
            connection.execute(text(over))
        with engine.connect() as connection:
            row = connection.execute(
                text("SELECT impact_area_sqft, version, extension_days FROM plans")
            ).one()
        assert tuple(row) == (9_000, 7, 30)
        engine.dispose()

        command.downgrade(config, "0007")
        if backend == "sqlite":
            assert _sqlite_guards(url) == set()
        else:
            types, present = _pg_state(url)
            assert set(types.values()) == {"integer"}
            assert not (checks & present)
        command.upgrade(config, "head")
        if backend == "sqlite":
            assert set(quantities.trigger_names("plans", "impact_area_sqft")) <= _sqlite_guards(url)
        else:
            assert checks <= _pg_state(url)[1]
    finally:
        drop_database(url)


def test_0008_refuses_to_bound_a_postgresql_database_that_already_exceeds_a_bound(
    backend: str, tmp_path: Path
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite gets no bound constraints: its tables cannot gain a CHECK in place")
    url = create_database(backend, tmp_path)
    config = alembic_config(url)
    try:
        command.upgrade(config, "0007")
        engine = create_engine(url)
        with engine.begin() as connection:
            _insert_plan(connection, "plan_huge", BOUNDS.MAX_SQFT + 1)
        with pytest.raises(RuntimeError, match="plans.impact_area_sqft"):
            command.upgrade(config, "0008")
        with engine.connect() as connection:
            revision = connection.execute(text("SELECT version_num FROM alembic_version")).scalar()
        engine.dispose()
        assert revision == "0007"
    finally:
        drop_database(url)
