"""System tests: each starts its own ``wetbank serve`` against its own fresh PostgreSQL database.

``WETBANK_FULL_RELIABILITY=1`` (``make reliability``) makes every run bigger.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.dbs import create_database, drop_database, migrate, require_postgresql


@pytest.fixture(scope="session")
def system_template(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """An empty PostgreSQL database migrated to head, copied by ``pg_url``."""
    require_postgresql()
    url = create_database("postgresql", tmp_path_factory.mktemp("system-template"))
    migrate(url)
    yield url
    drop_database(url)


@pytest.fixture
def pg_url(system_template: str, tmp_path: Path) -> Iterator[str]:
    """A fresh PostgreSQL database of this test's own, dropped at the end."""
    require_postgresql()
    url = create_database("postgresql", tmp_path, system_template)
    yield url
    drop_database(url)
