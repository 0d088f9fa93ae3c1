"""What a transfer's first statement (``bank.draw_sources.SOURCES``) reads back: the oldest
lots that reach the amount, leaving out emptied ones and those reservations hold in full (until
they expire), and every candidate when asked for all."""

from __future__ import annotations

from datetime import datetime, timedelta

import pytest
from freezegun import freeze_time
from sqlalchemy import select

import ledger
from bank import credits, transfers
from bank.access import SYSTEM
from bank.draw_sources import SOURCES
from bank.errors import InsufficientCredits
from bank.parties import BankAccount
from bench.server import make_bank
from ledger import clock, store
from ledger.db import Database
from ledger.schema import LedgerTransaction


def _drawn(
    db: Database,
    source: str,
    target: str,
    code: str,
    reach: int | None,
    now: datetime | None = None,
) -> tuple[list[str], int]:
    """The lot ids ``SOURCES`` sends back, and the number of candidates it counts as able to give
    credits."""
    params = {
        "from_account_id": source,
        "to_account_id": target,
        "credit_class": code,
        "lot_id": None,
        "reach_sqft": reach,
        "now": now or clock.utcnow(),
        "board": True,
        "holder_id": None,
    }
    with db.transaction() as session:
        rows = store.of(session).run(session, SOURCES, params)
    return [row[6] for row in rows if row[6] is not None], rows[0][33]


def test_the_first_statement_reads_the_oldest_lots_that_reach_the_amount_past_emptied_ones(
    db, database_url
):
    bank = make_bank(database_url, accounts=4)
    holder, first_giver, second_giver, target = bank.accounts
    code = bank.credit_class
    for giver in (first_giver, second_giver):  # two newer lots, 100 sq ft each
        transfers.transfer(
            db, SYSTEM, transfers.TransferRequest(giver, holder, 100, credit_class=code), None
        )
    with db.transaction() as session:
        deposited, older, newer = (
            held.lot.id for held in credits.lots_of(session, session.get(BankAccount, holder))
        )
    assert _drawn(db, holder, target, code, 5) == ([deposited], 3)
    assert _drawn(db, holder, target, code, 10**9 + 50) == ([deposited, older], 3)
    assert _drawn(db, holder, target, code, None) == ([deposited, older, newer], 3)
    # the deposited lot emptied: it is left out, the next one is enough; nor is it counted among
    # the lots that could give credits (a draw they cannot cover is refused without it)
    transfers.transfer(
        db, SYSTEM, transfers.TransferRequest(holder, target, 10**9, credit_class=code), None
    )
    assert _drawn(db, holder, target, code, 5) == ([older], 2)
    assert _drawn(db, holder, target, code, 150) == ([older, newer], 2)
    assert _drawn(db, holder, target, code, None) == ([deposited, older, newer], 2)
    # and a transfer still draws oldest first, across lots
    done = transfers.transfer(
        db, SYSTEM, transfers.TransferRequest(holder, target, 150, credit_class=code), None
    )
    assert [(lot.from_lot_id, lot.amount_sqft) for lot in done.lots] == [(older, 100), (newer, 50)]
    # an emptied lot named by id is still found: the transfer is refused for want of credits
    request = transfers.TransferRequest(holder, target, 1, lot_id=deposited)
    with pytest.raises(InsufficientCredits):
        transfers.transfer(db, SYSTEM, request, None)


def test_a_lot_held_in_full_by_a_reservation_is_left_out_until_the_reservation_expires(
    db, database_url
):
    bank = make_bank(database_url, accounts=3)
    holder, giver, target = bank.accounts
    code = bank.credit_class
    transfers.transfer(
        db, SYSTEM, transfers.TransferRequest(giver, holder, 100, credit_class=code), None
    )
    expiry = clock.utcnow() + timedelta(days=2)
    with db.transaction() as session:
        deposited, received = credits.lots_of(session, session.get(BankAccount, holder))
        klass = session.get(credits.CreditClass, code)
        assert klass is not None
        # every credit of the deposited lot held, as a reservation holds them
        leg = ledger.Leg(deposited.lot.ledger_account_id, klass.withdrawn_account_id, 10**9)
        meta = ledger.Meta("test:hold-the-deposited-lot", clock.today())
        ledger.reserve(session, "reservation", [leg], meta, expires_at=expiry)
    assert _drawn(db, holder, target, code, 5) == ([received.lot.id], 1)
    assert _drawn(db, holder, target, code, 150) == ([received.lot.id], 1)
    # past its expiry the reservation holds nothing: the deposited lot is the oldest again
    later = expiry + timedelta(seconds=1)
    assert _drawn(db, holder, target, code, 5, later) == ([deposited.lot.id], 2)
    # and the transfer draws on the lot with credits left
    done = transfers.transfer(
        db, SYSTEM, transfers.TransferRequest(holder, target, 60, credit_class=code), None
    )
    assert [(lot.from_lot_id, lot.amount_sqft) for lot in done.lots] == [(received.lot.id, 60)]


def test_a_transfer_takes_what_a_reservation_held_once_the_reservation_has_expired(
    db, database_url
):
    # the draw locks the lot's balance row with the reservation still on it; the write finds the
    # reservation past its expiry, records the expiry, reads the row again, then moves credits
    bank = make_bank(database_url, accounts=2)
    source, target = bank.accounts
    code = bank.credit_class
    expiry = clock.utcnow() + timedelta(days=2)
    with db.transaction() as session:
        (deposited,) = credits.lots_of(session, session.get(BankAccount, source))
        klass = session.get(credits.CreditClass, code)
        assert klass is not None
        leg = ledger.Leg(deposited.lot.ledger_account_id, klass.withdrawn_account_id, 10**9 - 100)
        meta = ledger.Meta("test:hold-all-but-100", clock.today())
        hold = ledger.reserve(session, "reservation", [leg], meta, expires_at=expiry)
    request = transfers.TransferRequest(source, target, 150, credit_class=code)
    with pytest.raises(InsufficientCredits):
        transfers.transfer(db, SYSTEM, request, None)
    with freeze_time(expiry + timedelta(seconds=1)):
        done = transfers.transfer(db, SYSTEM, request, None)
        with db.transaction() as session:
            assert ledger.pending_state(session, hold.transaction_id) == "expired"
            key = f"ledger:expire:{hold.transaction_id}"
            expiry_id = session.execute(
                select(LedgerTransaction.id).where(LedgerTransaction.idempotency_key == key)
            ).scalar_one()
            assert expiry_id < int(done.transaction_id)
            lot_account = deposited.lot.ledger_account_id
            assert ledger.balances(session, [lot_account])[lot_account].posted == 10**9 - 150
