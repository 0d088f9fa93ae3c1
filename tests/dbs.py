"""Creating and dropping test databases on both backends (SQLite file, PostgreSQL database)."""

from __future__ import annotations

import os
import shutil
import uuid
from pathlib import Path

import pytest
from alembic import command
from alembic.config import Config
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

ROOT = Path(__file__).resolve().parent.parent
PG_ADMIN_URL = os.environ.get(
    "WETBANK_TEST_PG_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"
)
BACKENDS = ("sqlite", "postgresql")


def postgresql_reachable() -> bool:
    try:
        engine = create_engine(PG_ADMIN_URL, connect_args={"connect_timeout": 3})
        with engine.connect():
            pass
        engine.dispose()
        return True
    except Exception:
        return False


def require_postgresql() -> None:
    """Skip locally when PostgreSQL is down; in CI (CI=true) fail instead."""
    if postgresql_reachable():
        return
    message = f"PostgreSQL is unreachable at {PG_ADMIN_URL}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: a missing PostgreSQL fails the run)", pytrace=False)
    pytest.skip(message)


def migrate(url: str) -> None:
    config = Config(str(ROOT / "alembic.ini"))
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    command.upgrade(config, "head")


def _admin_execute(*statements: str) -> None:
    engine = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    with engine.connect() as connection:
        for statement in statements:
            connection.execute(text(statement))
    engine.dispose()


def create_database(backend: str, tmp_dir: Path, template: str | None = None) -> str:
    """A new empty (or copied-from-``template``) database; returns its URL."""
    name = f"wetbank_test_{uuid.uuid4().hex[:12]}"
    if backend == "sqlite":
        path = tmp_dir / f"{name}.sqlite3"
        if template:
            shutil.copyfile(make_url(template).database or "", path)
        return f"sqlite:///{path}"
    require_postgresql()
    clause = f" TEMPLATE {make_url(template).database}" if template else ""
    _admin_execute(f"CREATE DATABASE {name}{clause}")
    return make_url(PG_ADMIN_URL).set(database=name).render_as_string(hide_password=False)


def drop_database(url: str) -> None:
    parsed = make_url(url)
    if parsed.get_backend_name() == "sqlite":
        for suffix in ("", "-wal", "-shm"):
            Path(f"{parsed.database}{suffix}").unlink(missing_ok=True)
        return
    _admin_execute(f"DROP DATABASE IF EXISTS {parsed.database} WITH (FORCE)")
