"""The background sealer on PostgreSQL: it chains what writers queue, and keeps the queue lean."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import text

from ledger import Database, sealer
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


def test_the_sealers_of_two_busy_processes_run_about_as_often_as_one(fresh_db_url):
    """Each Database stands for a process (its own pool and sealer).  With a fixed pace each
    sealer would run every 50 ms, twice the runs of one busy process for the same links;
    instead a sealer that finds the other's links since its last run slows down, and every
    committed write is chained.  One busy process is measured first, in the same test, as the
    yardstick: how often a sealer runs follows the machine's speed."""
    solo = Database.from_url(fresh_db_url)
    pair = [Database.from_url(fresh_db_url) for _ in range(2)]
    databases = [solo, *pair]
    sealers = {id(database): sealer.attach(database) for database in databases}
    try:
        issuer, a = open_accounts(solo, unique("X"), False, True)
        written: list[int] = []
        seconds = 3.0

        def write(database: Database) -> None:
            end = time.monotonic() + seconds
            while time.monotonic() < end:
                written.append(move(database, issuer, a, 1).transaction_id)

        def busy(group: list[Database]) -> int:
            """Sealing runs while every database of ``group`` writes for ``seconds``."""
            before = sum(_runs(sealers[id(d)]) for d in group)
            writers = [threading.Thread(target=write, args=(d,)) for d in group]
            for writer in writers:
                writer.start()
            for writer in writers:
                writer.join()
            return sum(_runs(sealers[id(d)]) for d in group) - before

        alone = busy([solo])
        solo.dispose()  # its sealer stops
        together = busy(pair)
        # a fixed 50 ms pace: about 2 x 3 s / 50 ms = 120 runs, twice one process's
        assert together <= 1.3 * alone, f"{together} sealing runs against {alone} alone"

        def all_chained() -> bool:
            chained = scalar(
                pair[0],
                "SELECT count(*) FROM ledger_chain WHERE transaction_id = ANY(:ids)",
                ids=written,
            )
            return bool(chained == len(written))

        assert _until(all_chained), "committed writes were left unchained"
    finally:
        for database in databases:
            database.dispose()


def _runs(background: sealer.BackgroundSealer | None) -> int:
    assert background is not None  # PostgreSQL
    return background.runs


def test_vacuuming_the_queue_does_not_wait_for_a_writer_holding_it(db):
    """The sealer's VACUUM of its queue leaves the emptied pages in place: truncating them would
    need the table alone, and with writers always holding it VACUUM would wait for that (up to
    5 s, the sealer's thread stalled), then block every writer while it truncates."""
    issuer, a = open_accounts(db, unique("X"), False, True)
    ids = [move(db, issuer, a, n).transaction_id for n in range(1, 6)]

    def sealed() -> bool:
        return bool(scalar(db, "SELECT count(*) FROM ledger_chain_queue") == 0) and bool(
            scalar(
                db,
                "SELECT count(*) FROM ledger_chain WHERE transaction_id = ANY(:ids)",
                ids=ids,
            )
            == len(ids)
        )

    assert _until(sealed), "the sealer left committed transactions unchained"
    background = sealer.BackgroundSealer(db)
    with db.engine.connect() as writer:
        # what every writer's INSERT into the queue holds until it commits
        writer.execute(text("LOCK TABLE ledger_chain_queue IN ROW EXCLUSIVE MODE"))
        vacuum = threading.Thread(target=background._vacuum_queue)
        vacuum.start()
        vacuum.join(timeout=3.0)
        done = not vacuum.is_alive()
        writer.rollback()
    vacuum.join()
    assert done, "VACUUM of the queue waited for a writer's lock"
