"""What still pointed at the wrong transaction after 0016 (migration 0018), from an ordinary role
with plain SQL, on SQLite and PostgreSQL: the index of open reservations edited behind the
engine fails ``verify``; a transaction left open is neither queued nor chained; a withdrawal's
or a deposit's reversal is a transaction reversing its own; a release releases a pending entry
of its account.  The engine's and the bank's own writes go through beside each refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import event, text
from sqlalchemy.exc import IntegrityError

from api import create_app
from bank.access import SYSTEM
from bank.withdrawals import reverse_for_plan
from ledger import (
    Database,
    Leg,
    checkpoint,
    reserve,
    reverse,
    verification,
    verify_pending,
    void_pending,
)
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.api.test_audit import D4, Workload, workload
from tests.integration.ledger_kit import (
    balance,
    insert_raw_entry,
    insert_raw_header,
    meta,
    move,
    open_accounts,
    row_counts,
    scalar,
    seal_raw,
    unique,
)


def _run(db: Database, statement: str, **params: Any) -> None:
    with db.engine.begin() as connection:
        connection.execute(text(statement), params)


def _full(db: Database) -> verification.Report:
    seal_all(db)
    with db.engine.connect() as connection:
        return verification.verify(connection)


# --- 1. verify checks the index of open reservations ----------------------------------------------

LATER = datetime(2030, 1, 1, tzinfo=UTC)

#: (what is done to the reservation's row of the holder's account, what verify then says)
EDITS = {
    "expired_early": (
        "UPDATE ledger_open_pending SET expires_at = :past WHERE transaction_id = :t "
        "AND account_id = :a",
        "expiry",
    ),
    "debits": (
        "UPDATE ledger_open_pending SET debits = debits - 1 WHERE transaction_id = :t "
        "AND account_id = :a",
        "debits",
    ),
    "removed": (
        "DELETE FROM ledger_open_pending WHERE transaction_id = :t AND account_id = :a",
        "has no row",
    ),
    "added": (
        "INSERT INTO ledger_open_pending (transaction_id, account_id, debits, credits, "
        "expires_at) VALUES (:done, :a, 0, 0, :past)",
        "no unresolved pending transfer",
    ),
}


@dataclass
class Reserved:
    holder: int
    pending: int
    done: int  # a transfer, no pending transfer at all


def _reserved(db: Database) -> Reserved:
    """A holder holding 50 with 30 reserved until ``LATER``; a reservation voided and one
    without expiry beside it, which the index must not confuse with it."""
    asset = unique("X")
    issuer, holder, other = open_accounts(db, asset, False, True, True)
    done = move(db, issuer, holder, 50).transaction_id
    with db.transaction() as session:
        held = reserve(session, "hold", [Leg(holder, other, 30)], meta(), expires_at=LATER)
        voided = reserve(session, "hold", [Leg(holder, other, 5)], meta(), expires_at=LATER)
        void_pending(session, voided.transaction_id, meta())
        reserve(session, "hold", [Leg(issuer, other, 7)], meta(), expires_at=None)
    return Reserved(holder, held.transaction_id, done)


@pytest.mark.parametrize("edit", list(EDITS))
def test_verify_finds_the_open_reservations_index_edited_and_names_the_transfer(fresh_db, edit):
    book = _reserved(fresh_db)
    assert _full(fresh_db).ok  # what the engine keeps in the index verifies
    assert balance(fresh_db, book.holder).available == 20
    statement, said = EDITS[edit]
    past = datetime(2020, 1, 1, tzinfo=UTC)
    _run(fresh_db, statement, t=book.pending, a=book.holder, done=book.done, past=past)
    if edit == "expired_early":  # the hole: the reservation no longer holds the credits
        assert balance(fresh_db, book.holder).available == 50
    report = _full(fresh_db)
    assert report.first_broken is not None, edit
    assert report.first_broken.kind == "open_pending"
    named = book.done if edit == "added" else book.pending
    assert report.first_broken.transaction_id == named
    assert report.first_broken.account_id == book.holder
    assert said in report.first_broken.detail


@pytest.mark.parametrize("edit", ["expired_early", "debits", "added"])
def test_a_check_since_the_checkpoint_finds_the_open_reservations_index_edited(fresh_db, edit):
    book = _reserved(fresh_db)
    report = _full(fresh_db)
    assert report.ok
    with fresh_db.engine.begin() as connection:
        checkpoint.record(connection, report)
    statement, _said = EDITS[edit]
    past = datetime(2020, 1, 1, tzinfo=UTC)
    _run(fresh_db, statement, t=book.pending, a=book.holder, done=book.done, past=past)
    with fresh_db.engine.connect() as connection:
        latest = checkpoint.latest(connection)
        assert latest is not None
        since = verification.verify_since(connection, latest)
    assert since.first_broken is not None and since.first_broken.kind == "open_pending"


def test_a_reservation_made_after_the_checkpoint_missing_from_the_index_is_found(fresh_db):
    _reserved(fresh_db)
    report = _full(fresh_db)
    with fresh_db.engine.begin() as connection:
        checkpoint.record(connection, report)
    book = _reserved(fresh_db)  # written since
    seal_all(fresh_db)
    with fresh_db.engine.connect() as connection:
        quiet = verification.verify_since(connection, checkpoint.latest(connection))
    assert quiet.ok, quiet.first_broken
    _run(fresh_db, EDITS["removed"][0], t=book.pending, a=book.holder)
    with fresh_db.engine.connect() as connection:
        since = verification.verify_since(connection, checkpoint.latest(connection))
    assert since.first_broken is not None
    assert (since.first_broken.kind, since.first_broken.transaction_id) == (
        "open_pending",
        book.pending,
    )


def test_the_index_check_is_one_statement_whatever_the_number_of_reservations(fresh_db):
    """Set-based: the pass over the index is one statement, with no work per row in Python."""
    book = _reserved(fresh_db)
    for _ in range(20):
        with fresh_db.transaction() as session:
            reserve(
                session, "hold", [Leg(book.holder, book.holder + 1, 1)], meta(), expires_at=LATER
            )
    statements: list[str] = []

    def count(_conn, _cursor, statement, *_args):  # type: ignore[no-untyped-def]
        if not statement.startswith("BEGIN"):
            statements.append(statement)

    with fresh_db.engine.connect() as connection:
        event.listen(connection, "before_cursor_execute", count)
        assert verify_pending.first_wrong(connection) is None
    assert len(statements) == 1


# --- 2. a transaction is queued or chained only sealed -------------------------------------------

ONLY_SEALED = "open or missing: INSERT on ledger_chain_queue|inserted sealed"


def test_a_transaction_left_open_is_neither_queued_nor_chained(fresh_db):
    """SQLite checks balance when a transaction is sealed: one left open (here with a single
    entry) was never checked, and is refused a place in the queue or the chain.  PostgreSQL
    inserts headers sealed and refuses an open one at COMMIT."""
    asset = unique("X")
    a, b = open_accounts(fresh_db, asset, False, False)
    before = row_counts(fresh_db)
    for table in ("ledger_chain_queue", "ledger_chain"):
        with pytest.raises(IntegrityError, match=f"on {table}|inserted sealed"):
            with fresh_db.engine.begin() as connection:
                tx_id = insert_raw_header(connection, "open")
                insert_raw_entry(connection, tx_id, a, asset, -5)
                if fresh_db.dialect == "postgresql":  # balanced: only the state is wrong
                    insert_raw_entry(connection, tx_id, b, asset, 5)
                _link(connection, table, tx_id)
    assert row_counts(fresh_db) == before
    # sealed (on SQLite by the update that checks its balance), it is queued
    with fresh_db.engine.begin() as connection:
        tx_id = insert_raw_header(
            connection, "sealed" if fresh_db.dialect == "postgresql" else "open"
        )
        insert_raw_entry(connection, tx_id, a, asset, -5)
        insert_raw_entry(connection, tx_id, b, asset, 5)
        if fresh_db.dialect == "sqlite":
            seal_raw(connection, tx_id)
        _link(connection, "ledger_chain_queue", tx_id)
    seal_all(fresh_db)
    assert scalar(fresh_db, "SELECT count(*) FROM ledger_chain WHERE transaction_id = :t", t=tx_id)


def _link(connection: Any, table: str, tx_id: int) -> None:
    if table == "ledger_chain_queue":
        connection.execute(text("INSERT INTO ledger_chain_queue VALUES (:t)"), {"t": tx_id})
        return
    connection.execute(
        text(
            "INSERT INTO ledger_chain (seq, transaction_id, prev_hash, hash, chained_at) VALUES "
            "((SELECT coalesce(max(seq), 0) + 1 FROM ledger_chain), :t, :h, :h, CURRENT_TIMESTAMP)"
        ),
        {"t": tx_id, "h": "0" * 64},
    )


# --- 3. a reversal is a transaction reversing its own ---------------------------------------------


@dataclass
class Bank:
    app: Flask
    kit: Kit
    work: Workload

    @property
    def db(self) -> Database:
        return self.app.extensions["wetbank.db"]  # type: ignore[no-any-return]


@pytest.fixture
def bank(fresh_db_url: str) -> Iterator[Bank]:
    """A fresh database holding the audit workload: deposits, a transfer, a withdrawal."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    kit = Kit(Api(application.test_client(), make_token(application, "board")), application)
    yield Bank(application, kit, workload(kit))
    application.extensions["wetbank.db"].dispose()


WITHDRAWAL_REFUSED = "reversal_transaction_id is set once, to a transaction reversing its own"


def test_a_withdrawal_is_reversed_only_by_a_transaction_reversing_its_own(bank):
    db, work = bank.db, bank.work
    withdrawal = scalar(
        db, "SELECT id FROM withdrawals WHERE transaction_id = :t", t=work.withdrawal
    )
    unrelated = int(work.transfer)
    set_reversal = "UPDATE withdrawals SET reversal_transaction_id = :r WHERE id = :w"
    with pytest.raises(IntegrityError, match=WITHDRAWAL_REFUSED):
        _run(db, set_reversal, r=unrelated, w=withdrawal)
    with pytest.raises(IntegrityError, match=WITHDRAWAL_REFUSED):  # nor inserted reversed
        _run(
            db,
            "INSERT INTO withdrawals (id, plan_id, transaction_id, reversal_transaction_id, "
            "withdrawn_sqft, created_at, actor, external_refs) SELECT 'w-forged', plan_id, "
            "transaction_id, :r, withdrawn_sqft, created_at, actor, external_refs "
            "FROM withdrawals WHERE id = :w",
            r=unrelated,
            w=withdrawal,
        )
    assert (
        scalar(db, "SELECT count(*) FROM withdrawals WHERE reversal_transaction_id IS NOT NULL")
        == 0
    )
    # the bank's own reversal (an appeal reversed the approval) goes through
    with on(D4), db.transaction() as session:
        reverse_for_plan(session, work.plan["id"], SYSTEM, None)
    reversal = scalar(
        db, "SELECT reversal_transaction_id FROM withdrawals WHERE id = :w", w=withdrawal
    )
    assert scalar(db, "SELECT reverses_id FROM ledger_transactions WHERE id = :r", r=reversal) == (
        int(work.withdrawal)
    )
    # once set, it does not move, nor go back to NULL; the same value again is no change
    _run(db, set_reversal, r=reversal, w=withdrawal)
    for other in (unrelated, None):
        with pytest.raises(IntegrityError, match=WITHDRAWAL_REFUSED):
            _run(db, set_reversal, r=other, w=withdrawal)


DEPOSIT_REFUSED = "a deposit reversal is a transaction reversing the deposit's"


def test_a_deposit_reversal_is_a_transaction_reversing_the_deposit(bank):
    db, work = bank.db, bank.work
    insert = (
        "INSERT INTO deposit_reversals (deposit_id, transaction_id, effective_on, reason, "
        "recorded_at, actor) VALUES (:d, :t, CURRENT_DATE, 'forged', CURRENT_TIMESTAMP, 'x')"
    )
    deposit = work.a["deposit"]
    # the deposit's own transaction, another deposit's, a transfer: none reverses it
    for unrelated in (deposit["transaction_id"], work.deposits[1], work.transfer):
        with pytest.raises(IntegrityError, match=DEPOSIT_REFUSED):
            _run(db, insert, d=deposit["id"], t=int(unrelated))
    # nor does a reversal of another transaction
    with db.transaction() as session:
        other = reverse(session, int(work.transfer), meta()).transaction_id
    with pytest.raises(IntegrityError, match=DEPOSIT_REFUSED):
        _run(db, insert, d=deposit["id"], t=other)
    assert scalar(db, "SELECT count(*) FROM deposit_reversals") == 0
    # the bank's reversal of a mistaken deposit goes through
    with on(D4):
        fresh = bank.kit.funded_account(day=D4, service_area=5, unrestricted=1_000)
        done = ok(
            bank.kit.api.post(
                f"/deposits/{fresh['deposit']['id']}/reverse",
                {"effective_on": D4, "reason": "entered twice"},
            )
        )
    assert done["reversal"]["transaction_id"]
    assert scalar(db, "SELECT count(*) FROM deposit_reversals") == 1


# --- 4. a release releases a pending entry of its account ----------------------------------------

RELEASE_REFUSED = "a release entry releases a pending entry of its account"


def _raw_release(db: Database, pending_id: int, lines: list[tuple[int, str, int]]) -> None:
    postgresql = db.dialect == "postgresql"
    with db.engine.begin() as connection:
        tx_id = insert_raw_header(connection, "sealed" if postgresql else "open")
        for account_id, asset, amount in lines:
            connection.execute(
                text(
                    "INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, "
                    "balance_after, account_version, effective_on, resolves_id, resolution) "
                    "VALUES (:tx, :a, :asset, :amount, 'release', 0, 0, CURRENT_DATE, :p, "
                    "'voided')"
                ),
                {"tx": tx_id, "a": account_id, "asset": asset, "amount": amount, "p": pending_id},
            )
        if not postgresql:
            seal_raw(connection, tx_id)


def test_a_release_must_release_a_pending_entry_of_its_account(fresh_db):
    asset = unique("X")
    issuer, a, b, c = open_accounts(fresh_db, asset, False, True, True, True)
    move(fresh_db, issuer, a, 50)
    done = move(fresh_db, issuer, c, 5).transaction_id
    with fresh_db.transaction() as session:
        held = reserve(session, "hold", [Leg(a, b, 30)], meta(), expires_at=LATER).transaction_id
    before = row_counts(fresh_db)
    for pending_id, lines in (
        (held, [(a, asset, -3), (b, asset, 3)]),  # part of what it holds
        (held, [(c, asset, -30), (issuer, asset, 30)]),  # accounts it holds nothing on
        (done, [(issuer, asset, 5), (c, asset, -5)]),  # no pending transfer
    ):
        with pytest.raises(IntegrityError, match=RELEASE_REFUSED):
            _raw_release(fresh_db, pending_id, lines)
    assert row_counts(fresh_db) == before
    with fresh_db.transaction() as session:
        void_pending(session, held, meta())
    assert balance(fresh_db, a).available == 50
    assert _full(fresh_db).ok
