"""Transfers at once from and into the same accounts (PostgreSQL): two first transfers from one
lot share one receiving lot, however the race falls; a transfer locks only the lots it draws on,
and one that finds them drained by the time it holds them draws on the next."""

from __future__ import annotations

import threading
import time

import pytest
from sqlalchemy import func, select

from bank import credits, transfers
from bank.access import SYSTEM
from bank.parties import BankAccount
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


def test_a_transfer_that_finds_the_oldest_lot_drained_while_it_waited_draws_on_the_next(
    db, database_url
):
    """The transfer locks the oldest lot that looked enough; when the lot is drained by the
    time the lock is granted, it takes the next one rather than refusing."""
    bank = make_bank(database_url, accounts=3)
    source, giver, target = bank.accounts
    code = bank.credit_class
    # the source's second lot, newer than its deposited one: 100 sq ft from another account
    db.run(
        lambda session: transfers.make_transfer(
            session, SYSTEM, transfers.TransferRequest(giver, source, 100, credit_class=code), None
        )
    )
    with db.transaction() as session:
        deposited, received = credits.lots_of(session, session.get(BankAccount, source))
    assert deposited.lot.parent_lot_id is None and received.lot.parent_lot_id is not None
    drained, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def first() -> None:  # the whole deposited lot, held uncommitted
        with db.transaction() as session:
            outcome["first"] = transfers.make_transfer(
                session,
                SYSTEM,
                transfers.TransferRequest(source, target, 10**9, credit_class=code),
                None,
            )
            drained.set()
            release.wait(10)

    def second() -> None:
        drained.wait(10)
        try:
            outcome["second"] = db.run(
                lambda session: transfers.make_transfer(
                    session,
                    SYSTEM,
                    transfers.TransferRequest(source, target, 50, credit_class=code),
                    None,
                )
            )
        except Exception as error:  # reported below
            outcome["second"] = error

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    time.sleep(0.5)  # the second transfer now waits for the deposited lot's lock
    release.set()
    for thread in threads:
        thread.join(30)
    first_done, second_done = outcome["first"], outcome["second"]
    assert isinstance(first_done, transfers.TransferView)
    assert isinstance(second_done, transfers.TransferView), second_done
    assert [(lot.from_lot_id, lot.amount_sqft) for lot in first_done.lots] == [
        (deposited.lot.id, 10**9)
    ]
    assert [(lot.from_lot_id, lot.amount_sqft) for lot in second_done.lots] == [
        (received.lot.id, 50)
    ]
    with db.transaction() as session:
        left = {
            held.lot.id: held.available_sqft
            for held in credits.lots_of(session, session.get(BankAccount, source))
        }
    assert left == {deposited.lot.id: 0, received.lot.id: 50}


def test_a_transfer_locks_only_the_lots_it_draws_on(db, database_url):
    """While a transfer from an account holds the lot it draws on, a transfer into that account
    from the source of its other lot goes through: the first did not lock that lot."""
    bank = make_bank(database_url, accounts=3)
    holder, giver, target = bank.accounts
    code = bank.credit_class
    # the holder's second lot descends from the giver's: a transfer from the giver to the
    # holder adds to it (and locks it)
    db.run(
        lambda session: transfers.make_transfer(
            session, SYSTEM, transfers.TransferRequest(giver, holder, 100, credit_class=code), None
        )
    )
    holding, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def first() -> None:  # from the holder's oldest lot, held uncommitted
        with db.transaction() as session:
            outcome["first"] = transfers.make_transfer(
                session,
                SYSTEM,
                transfers.TransferRequest(holder, target, 5, credit_class=code),
                None,
            )
            holding.set()
            release.wait(10)

    def second() -> None:
        holding.wait(10)
        try:
            outcome["second"] = db.run(
                lambda session: transfers.make_transfer(
                    session,
                    SYSTEM,
                    transfers.TransferRequest(giver, holder, 7, credit_class=code),
                    None,
                )
            )
        except Exception as error:  # reported below
            outcome["second"] = error

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    threads[1].join(5)  # the first still holds its lock
    finished_while_held = not threads[1].is_alive()
    release.set()
    for thread in threads:
        thread.join(30)
    assert isinstance(outcome["first"], transfers.TransferView), outcome["first"]
    assert isinstance(outcome["second"], transfers.TransferView), outcome["second"]
    assert finished_while_held
