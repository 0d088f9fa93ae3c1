"""Two first transfers from one lot into one account, at once (PostgreSQL): they share one
receiving lot, however the race falls."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from bank import credits, transfers
from bank.access import SYSTEM
from bench.server import make_bank


@pytest.fixture(autouse=True)
def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite serializes every writer")


def _request(source: str, target: str, code: str) -> transfers.TransferRequest:
    return transfers.TransferRequest(source, target, 5, credit_class=code)


def test_a_transfer_waiting_on_the_lot_reuses_the_receiving_lot_the_first_one_created(
    db, database_url
):
    bank = make_bank(database_url, accounts=2)
    source, target = bank.accounts
    created, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def first() -> None:
        with db.transaction() as session:
            outcome["first"] = transfers.make_transfer(
                session, SYSTEM, _request(source, target, bank.credit_class), None
            )
            created.set()
            release.wait(10)  # hold the source lot's lock, the new child lot uncommitted

    def second() -> None:
        created.wait(10)
        try:
            outcome["second"] = db.run(
                lambda session: transfers.make_transfer(
                    session, SYSTEM, _request(source, target, bank.credit_class), None
                )
            )
        except Exception as error:  # reported below
            outcome["second"] = error

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)  # the second transfer is now waiting for the source lot's lock
    release.set()
    for thread in threads:
        thread.join(30)
    first, second = outcome["first"], outcome["second"]
    assert isinstance(second, transfers.TransferView), second
    assert isinstance(first, transfers.TransferView)
    assert first.lots[0].to_lot_id == second.lots[0].to_lot_id
    with db.transaction() as session:
        children = session.execute(
            select(func.count()).where(credits.Lot.account_id == target)
        ).scalar_one()
    assert children == 2  # its own deposited lot and the one receiving lot
