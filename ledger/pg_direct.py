"""Fixed SQL sent through psycopg on the session's own connection, prepared: the PostgreSQL
store's ``execute`` (``ledger.store.postgresql``), for the bank's fixed statements."""

from __future__ import annotations

from typing import Any

import psycopg
from sqlalchemy.orm import Session

from ledger import store
from ledger.store.postgresql import execute as execute_on

__all__ = ["execute", "execute_on", "is_postgresql"]


def is_postgresql(session: Session) -> bool:
    """Whether the session's store is PostgreSQL's (where fixed SQL goes through psycopg)."""
    return store.of(session).name == "postgresql"


def execute(session: Session, sql: str, params: Any) -> psycopg.Cursor[Any]:
    """Run ``sql`` prepared on the session's own psycopg connection, inside its transaction."""
    return execute_on(session.connection(), sql, params)
