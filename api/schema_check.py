"""Refuse to serve a database whose schema is behind the code's migrations."""

from __future__ import annotations

from pathlib import Path

from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from flask import Flask

from api.problems import ApiProblem
from ledger.db import Database

ROOT = Path(__file__).resolve().parent.parent
UPGRADE_HINT = "run `wetbank db upgrade`"


def alembic_config(url: str) -> Config:
    """Alembic configured in code for ``url`` (no alembic.ini needed)."""
    config = Config()
    config.set_main_option("script_location", str(ROOT / "migrations"))
    config.set_main_option("sqlalchemy.url", url.replace("%", "%%"))
    config.set_main_option("path_separator", "os")
    return config


def schema_problem(db: Database) -> str | None:
    """Why the database cannot be served, or ``None`` if it is at the code's head revision."""
    url = db.engine.url.render_as_string(hide_password=False)
    head = ScriptDirectory.from_config(alembic_config(url)).get_current_head()
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
        if self.ok:
            return
        reason = schema_problem(self.db)
        if reason:
            raise ApiProblem(503, "schema_behind", reason)
        self.ok = True
