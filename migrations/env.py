"""Alembic environment: migrates the ledger and bank tables (never imports the Flask app)."""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import pool

import bank.tables  # noqa: F401  (registers every bank table on the shared metadata)
from ledger.db import make_engine
from ledger.schema import Base

config = context.config
target_metadata = Base.metadata


def _url() -> str:
    url = config.get_main_option("sqlalchemy.url") or os.environ.get("DATABASE_URL")
    if not url:
        raise RuntimeError("set DATABASE_URL (or sqlalchemy.url) to migrate a database")
    return url


def _include(
    obj: object, name: str | None, type_: str, reflected: bool, compare_to: object
) -> bool:
    """``alembic -x tables=PREFIX revision --autogenerate`` limits a new revision to some tables."""
    prefix = context.get_x_argument(as_dictionary=True).get("tables")
    if not prefix or type_ != "table":
        return True
    return bool(name and name.startswith(prefix))


def run_migrations_offline() -> None:
    context.configure(url=_url(), target_metadata=target_metadata, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(_url(), poolclass=pool.NullPool)
    with engine.connect() as conn:
        _run(conn)
    engine.dispose()


def _run(connection: object) -> None:
    context.configure(
        connection=connection,  # type: ignore[arg-type]
        target_metadata=target_metadata,
        include_object=_include,
        render_as_batch=True,  # SQLite alters tables by copying them
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
