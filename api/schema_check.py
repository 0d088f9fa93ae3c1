"""Refuse to serve a database whose schema is behind the code's migrations."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask, request

from api.problems import ApiProblem
from ledger.db import Database

ROOT = Path(__file__).resolve().parent.parent
UPGRADE_HINT = "run `wetbank db upgrade`"
#: the package the wheel installs the top-level ``migrations/`` folder as (setup.py)
MIGRATIONS_PACKAGE = "wetbank_migrations"
#: answered while the schema is behind: liveness answers, readiness reports it, metrics go on
UNGUARDED_PATHS = frozenset({"/api/v1/health", "/api/v1/ready", "/metrics"})


def migrations_location() -> Path:
    """The Alembic scripts: the installed ``wetbank_migrations`` package, else (a checkout not
    reinstalled since) the ``migrations/`` folder beside ``api/``."""
    spec = importlib.util.find_spec(MIGRATIONS_PACKAGE)
    if spec is not None and spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations)))
    return ROOT / "migrations"


def alembic_config(url: str) -> Config:
    """Alembic configured in code for ``url`` (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(migrations_location()))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    return config


@functools.cache
def head_revision() -> str | None:
    """The code's head revision (read once: the scripts do not change while a process runs)."""
    return ScriptDirectory.from_config(alembic_config("sqlite://")).get_current_head()


def schema_problem(db: Database) -> str | None:
    """Why the database cannot be served, or ``None`` if it is at the code's head revision."""
    head = head_revision()
    with db.engine.connect() as connection:
        current = MigrationContext.configure(connection).get_current_revision()
    if current == head:
        return None
    return (
        f"the database schema is at revision {current or 'none'} but the code needs {head}: "
        f"{UPGRADE_HINT}"
    )


class SchemaGuard:
    """Checks once per process, before the first request, and answers 503 while behind."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self.ok = False

    def register(self, app: Flask) -> None:
        app.before_request(self.check)

    def check(self) -> None:
        if self.ok or request.path in UNGUARDED_PATHS:
            return
        reason = schema_problem(self.db)
        if reason:
            raise ApiProblem(503, "schema_behind", reason)
        self.ok = True
