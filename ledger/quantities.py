"""Quantities stay exact whole numbers on SQLite as they do on PostgreSQL.

SQLite stores the result of integer arithmetic that overflows 64 bits as a REAL
(``9223372036854775807 + 1`` is ``9.223372036854776e18``) whatever type the column declares, and a
column of INTEGER affinity keeps a REAL that is not a whole number.  A balance stored so is no
longer exact: verify fails on it and every later posting to the account stumbles.  PostgreSQL
raises instead (``bigint out of range``).  So on SQLite every quantity column has a BEFORE INSERT
and a BEFORE UPDATE OF trigger that aborts a write whose value is not an integer (NULL passes where
the column allows it): the write fails with an ``IntegrityError`` whose message starts with
``REFUSAL``, and the API answers 422 (``api/problems.py``).  SQLite applies the column's affinity
before the trigger runs, so ``3.0`` or ``'3'`` arrive as the integer 3 and pass.

The quantity columns are the ledger's amounts and balances (``LEDGER_QUANTITIES``) and every column
of any table named ``*_sqft`` or ``*_cents``.  Triggers, not CHECK constraints: SQLite adds a CHECK
only by rebuilding the table, and a rebuild drops the triggers other revisions installed on it.
Migration 0008 installed them on every such column then present; a later revision that adds a
quantity column calls ``install_sqlite`` for it (and ``drop_sqlite`` before dropping it); on
PostgreSQL both do nothing.  The triggers' statements are the SQLite store's
(``ledger.store.sqlite_ddl``).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from sqlalchemy import Connection, text

from ledger import store

#: the start of the message of every write these triggers refuse
REFUSAL: Final = "quantity is not a whole number"

#: the ledger's quantity columns (its tables' names carry no unit)
LEDGER_QUANTITIES: Final = {
    "ledger_entries": ("amount", "balance_after", "account_version"),
    "ledger_balances": (
        "debits_posted",
        "credits_posted",
        "debits_pending",
        "credits_pending",
        "version",
    ),
    "ledger_open_pending": ("debits", "credits"),
}

#: the name ending that makes a column of any table a quantity
UNITS: Final = ("_sqft", "_cents")

#: the start of every guard trigger's name
GUARD_PREFIX: Final = "quantity_"


def is_quantity(table: str, column: str) -> bool:
    """Whether ``table.column`` holds a quantity (and so must hold a whole number)."""
    return column.endswith(UNITS) or column in LEDGER_QUANTITIES.get(table, ())


def trigger_names(table: str, column: str) -> tuple[str, str]:
    """The triggers that guard ``table.column`` where guards are needed: on INSERT, on UPDATE."""
    return f"{GUARD_PREFIX}{table}_{column}_insert", f"{GUARD_PREFIX}{table}_{column}_update"


def install_sqlite(connection: Connection, table: str, columns: Iterable[tuple[str, bool]]) -> None:
    """Guard ``columns`` (``(name, nullable)``) of ``table`` where the database needs it (SQLite;
    nothing on PostgreSQL, whose integer columns never hold anything else)."""
    guarded = list(columns)
    for ident in (table, *(column for column, _ in guarded)):
        if not ident.replace("_", "").isalnum() or not ident.isascii():
            raise ValueError(f"not a plain SQL identifier: {ident!r}")
    ddl = store.of(connection).ddl
    for column, nullable in guarded:
        for statement in ddl.quantity_guards(table, column, nullable=nullable):
            connection.execute(text(statement))


def drop_sqlite(connection: Connection, table: str, columns: Iterable[str]) -> None:
    """Drop the guards of ``columns`` of ``table`` (before a column is dropped)."""
    ddl = store.of(connection).ddl
    for column in columns:
        for statement in ddl.drop_quantity_guards(table, column):
            connection.execute(text(statement))


def install_all_sqlite(connection: Connection) -> None:
    """Guard every quantity column the database has now (migration 0008)."""
    for table, column, nullable in store.of(connection).ddl.quantity_columns(connection):
        install_sqlite(connection, table, [(column, nullable)])


def drop_all_sqlite(connection: Connection) -> None:
    """Drop every quantity guard (migration 0008's downgrade)."""
    for name in store.of(connection).ddl.quantity_guard_names(connection):
        connection.execute(text(f"DROP TRIGGER IF EXISTS {name}"))


def is_refusal(error: Any) -> bool:
    """Whether a database error is one of these triggers refusing a non-integer quantity."""
    return REFUSAL in str(getattr(error, "orig", error))
