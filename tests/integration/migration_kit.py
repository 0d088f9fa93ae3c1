"""What the tests of one migration share: the migration's module, an app on the database, the
database's revision, a query's rows, a full verify, the first row that disagrees with its seal."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from flask import Flask
from sqlalchemy import create_engine, text

from api import create_app
from bank import audit
from ledger import Database, row_seals

VERSIONS = Path(__file__).parents[2] / "migrations" / "versions"


def migration(number: str) -> Any:
    """The module of migration ``number`` (``"0025"``), to read its statements and tables."""
    (found,) = VERSIONS.glob(f"{number}_*.py")
    spec = importlib.util.spec_from_file_location(f"migration_{number}", found)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def app_on(url: str) -> Flask:
    return create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})


def rows(url: str, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return [tuple(row) for row in connection.execute(text(sql), params)]
    finally:
        engine.dispose()


def execute(url: str, sql: str, **params: Any) -> None:
    """``sql`` in a transaction of its own, committed."""
    engine = create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(text(sql), params)
    finally:
        engine.dispose()


def version(url: str) -> str:
    return str(rows(url, "SELECT version_num FROM alembic_version")[0][0])


def full_verify_ok(url: str) -> bool:
    db = Database.from_url(url)
    try:
        return audit.verify_full(db).ok
    finally:
        db.dispose()


def mismatch(url: str, tables: list[row_seals.SealedTable]) -> row_seals.Mismatch | None:
    """The first row of ``tables`` that disagrees with its seal as ``tables`` seal it."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return row_seals.first_mismatch(connection, tables)
    finally:
        engine.dispose()
