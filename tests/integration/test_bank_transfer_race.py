"""Transfers at once from and into the same accounts (PostgreSQL): two first transfers from one
lot share one receiving lot, however the race falls; a transfer locks only the lots it draws on,
and one that finds them drained by the time it holds them draws on the next."""

from __future__ import annotations

import threading
from dataclasses import dataclass

import pytest
from sqlalchemy import func, select

from bank import credits, transfers
from bank.access import SYSTEM
from bank.errors import InsufficientCredits
from bank.parties import BankAccount
from bench.server import make_bank
from ledger.db import Database


@pytest.fixture(autouse=True)
def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite serializes every writer")


def _request(source: str, target: str, code: str, amount: int = 5) -> transfers.TransferRequest:
    return transfers.TransferRequest(source, target, amount, credit_class=code)


@dataclass
class _Race:
    """What two transfers gave (a ``TransferView`` or the error raised), and whether the second
    finished while the first still held its locks."""

    first: object
    second: object
    second_done_while_first_held: bool


def _race(
    db: Database, first: transfers.TransferRequest, second: transfers.TransferRequest
) -> _Race:
    """``first`` made and held uncommitted; ``second`` started meanwhile (retried as a unit of
    work); ``first`` committed two seconds later, or as soon as ``second`` is done."""
    holding, release = threading.Event(), threading.Event()
    outcome: dict[str, object] = {}

    def run_first() -> None:
        with db.transaction() as session:
            outcome["first"] = transfers.make_transfer(session, SYSTEM, first, None)
            holding.set()
            release.wait(10)

    def run_second() -> None:
        holding.wait(10)
        try:
            outcome["second"] = db.run(
                lambda session: transfers.make_transfer(session, SYSTEM, second, None)
            )
        except Exception as error:  # reported to the test
            outcome["second"] = error

    threads = [threading.Thread(target=run_first), threading.Thread(target=run_second)]
    for thread in threads:
        thread.start()
    holding.wait(10)
    threads[1].join(2)  # a second transfer that waits for the first's locks is still waiting
    done_while_held = not threads[1].is_alive()
    release.set()
    for thread in threads:
        thread.join(30)
    return _Race(outcome["first"], outcome["second"], done_while_held)


def test_a_transfer_waiting_on_the_lot_reuses_the_receiving_lot_the_first_one_created(
    db, database_url
):
    bank = make_bank(database_url, accounts=2)
    source, target = bank.accounts
    request = _request(source, target, bank.credit_class)
    race = _race(db, request, request)
    assert not race.second_done_while_first_held  # it waited for the source lot's lock
    first, second = race.first, race.second
    assert isinstance(second, transfers.TransferView), second
    assert isinstance(first, transfers.TransferView)
    assert first.lots[0].to_lot_id == second.lots[0].to_lot_id
    with db.transaction() as session:
        children = session.execute(
            select(func.count()).where(credits.Lot.account_id == target)
        ).scalar_one()
    assert children == 2  # its own deposited lot and the one receiving lot


def _lots_left(db: Database, account_id: str) -> dict[str, int]:
    with db.transaction() as session:
        account = session.get(BankAccount, account_id)
        return {held.lot.id: held.available_sqft for held in credits.lots_of(session, account)}


def test_a_transfer_that_finds_the_oldest_lot_drained_while_it_waited_draws_on_the_next(
    db, database_url
):
    """The transfer locks the oldest lot that looked enough; when the lot is drained by the
    time the lock is granted, it takes the next one rather than refusing."""
    bank = make_bank(database_url, accounts=3)
    source, giver, target = bank.accounts
    code = bank.credit_class
    # the source's second lot, newer than its deposited one: 100 sq ft from another account
    transfers.transfer(db, SYSTEM, _request(giver, source, code, 100), None)
    with db.transaction() as session:
        deposited, received = credits.lots_of(session, session.get(BankAccount, source))
    assert deposited.lot.parent_lot_id is None and received.lot.parent_lot_id is not None
    # the first takes the whole deposited lot; the second, waiting for it, asks for 50
    race = _race(db, _request(source, target, code, 10**9), _request(source, target, code, 50))
    assert isinstance(race.first, transfers.TransferView), race.first
    assert isinstance(race.second, transfers.TransferView), race.second
    assert not race.second_done_while_first_held
    drawn = [(lot.from_lot_id, lot.amount_sqft) for lot in race.first.lots]
    assert drawn == [(deposited.lot.id, 10**9)]
    drawn = [(lot.from_lot_id, lot.amount_sqft) for lot in race.second.lots]
    assert drawn == [(received.lot.id, 50)]
    assert _lots_left(db, source) == {deposited.lot.id: 0, received.lot.id: 50}


def test_a_transfer_locks_only_the_lots_it_draws_on(db, database_url):
    """While a transfer from an account holds the lot it draws on, a transfer into that account
    from the source of its other lot goes through: the first did not lock that lot."""
    bank = make_bank(database_url, accounts=3)
    holder, giver, target = bank.accounts
    code = bank.credit_class
    # the holder's second lot descends from the giver's: a transfer from the giver to the
    # holder adds to it (and locks it)
    transfers.transfer(db, SYSTEM, _request(giver, holder, code, 100), None)
    race = _race(db, _request(holder, target, code), _request(giver, holder, code, 7))
    assert isinstance(race.first, transfers.TransferView), race.first
    assert isinstance(race.second, transfers.TransferView), race.second
    assert race.second_done_while_first_held


def test_a_refused_transfer_does_not_wait_for_an_emptied_lot(db, database_url):
    """A transfer the account cannot cover is refused from the lots that could give credits,
    without locking the account's emptied lot, which another transfer is crediting meanwhile: as
    if it came first (the credits arriving would not cover it anyway)."""
    bank = make_bank(database_url, accounts=3)
    holder, giver, target = bank.accounts
    code = bank.credit_class
    transfers.transfer(db, SYSTEM, _request(giver, holder, code, 100), None)
    with db.transaction() as session:
        account = session.get(BankAccount, holder)
        assert account is not None
        received = [lot.lot for lot in credits.lots_of(session, account) if lot.lot.parent_lot_id]
    (emptied,) = received
    spend = transfers.TransferRequest(holder, target, 100, lot_id=emptied.id)
    transfers.transfer(db, SYSTEM, spend, None)
    too_much = _request(holder, target, code, 10**9 + 100)
    race = _race(db, _request(giver, holder, code, 7), too_much)
    assert isinstance(race.first, transfers.TransferView), race.first
    assert isinstance(race.second, InsufficientCredits), race.second
    assert race.second_done_while_first_held
