"""Fixtures: every database test runs on SQLite and PostgreSQL (test ids show the backend).

A migrated database is made once per backend per test session and shared (tests create their own
uniquely named data); ``fresh_db`` gives a test a pristine copy of it, for tests that need the
whole ledger to themselves or that tamper with it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from ledger import sealer
from ledger.db import Database
from tests.dbs import BACKENDS, create_database, drop_database, migrate


@pytest.fixture(scope="session", params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(scope="session")
def template_url(backend: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty database migrated to head, copied by ``fresh_db``."""
    url = create_database(backend, tmp_path_factory.mktemp(f"{backend}-template"))
    migrate(url)
    yield url
    drop_database(url)


@pytest.fixture(scope="session")
def database_url(
    backend: str, template_url: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The database shared by this backend's tests."""
    url = create_database(backend, tmp_path_factory.mktemp(f"{backend}-shared"), template_url)
    yield url
    drop_database(url)


def _open(url: str) -> Database:
    db = Database.from_url(url)
    sealer.attach(db)
    return db


@pytest.fixture
def db(database_url: str) -> Iterator[Database]:
    database = _open(database_url)
    yield database
    database.dispose()


@pytest.fixture
def fresh_db_url(backend: str, template_url: str, tmp_path: Path) -> Iterator[str]:
    url = create_database(backend, tmp_path, template_url)
    yield url
    drop_database(url)


@pytest.fixture
def fresh_db(fresh_db_url: str) -> Iterator[Database]:
    database = _open(fresh_db_url)
    yield database
    database.dispose()
