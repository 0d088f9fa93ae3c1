"""The background sealer on PostgreSQL: it chains what writers queue, and keeps the queue lean."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import text

from ledger import sealer
from tests.integration.ledger_kit import move, open_accounts, scalar, unique


@pytest.fixture(autouse=True)
def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite seals inside each write: there is no background sealer")


def _queue_vacuums(db) -> int:
    with db.engine.connect() as connection:
        connection.execute(text("SELECT pg_stat_clear_snapshot()"))
        return int(
            connection.execute(
                text(
                    "SELECT vacuum_count FROM pg_stat_user_tables "
                    "WHERE relname = 'ledger_chain_queue'"
                )
            ).scalar_one()
        )


def _until(condition, seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


def test_the_background_sealer_chains_every_write_and_vacuums_the_queue_as_the_chain_grows(
    db, monkeypatch
):
    monkeypatch.setattr(sealer, "VACUUM_EVERY", 2)
    issuer, a = open_accounts(db, unique("X"), False, True)
    vacuums = _queue_vacuums(db)
    ids = [move(db, issuer, a, n).transaction_id for n in range(1, 7)]

    def chained() -> bool:
        found = scalar(
            db,
            "SELECT count(*) FROM ledger_chain WHERE transaction_id IN "
            f"({', '.join(str(i) for i in ids)})",
        )
        return bool(found == len(ids))

    assert _until(chained), "the sealer left committed transactions unchained"
    assert _until(lambda: _queue_vacuums(db) > vacuums), "the queue was never vacuumed"
