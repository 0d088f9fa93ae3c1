"""Tamper evidence (docs/reliability.md, guarantee 8): verify recomputes the hash chain and every
stored balance from the entries and names the first break.

Each test builds a small ledger on a private database, tampers with it the way someone with
direct database access could (triggers dropped first), and expects ``verify`` to notice.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest
from sqlalchemy import text

from ledger import Anchor, Leg, reserve, reverse, transfer, verify, void_pending
from ledger.ddl import drop_triggers
from ledger.sealer import seal_all
from tests.integration.ledger_kit import (
    meta,
    move,
    open_accounts,
    scalar,
    unique,
    write_raw_transaction,
)


@dataclass
class Ledger:
    asset: str
    issuer: int
    a: int
    b: int
    transactions: list[int]


@pytest.fixture
def ledger(fresh_db) -> Ledger:
    """A dozen transactions of every kind, all sealed into the chain."""
    asset = unique("X")
    issuer, a, b = open_accounts(fresh_db, asset, False, True, True)
    ids = [
        move(fresh_db, issuer, a, 500).transaction_id,
        move(fresh_db, a, b, 120).transaction_id,
        move(fresh_db, b, a, 20).transaction_id,
    ]
    with fresh_db.transaction() as session:
        ids.append(
            transfer(session, "batch", [Leg(a, b, 5), Leg(issuer, b, 7)], meta()).transaction_id
        )
        hold = reserve(session, "hold", [Leg(a, b, 30)], meta(), expires_at=None)
        ids.append(hold.transaction_id)
    ids.append(fresh_db.run(lambda s: void_pending(s, hold.transaction_id, meta())).transaction_id)
    ids.append(fresh_db.run(lambda s: reverse(s, ids[2], meta())).transaction_id)
    ids += [move(fresh_db, issuer, b, n).transaction_id for n in (1, 2, 3)]
    seal_all(fresh_db)
    return Ledger(asset, issuer, a, b, ids)


def _verify(db):
    seal_all(db)
    with db.engine.connect() as connection:
        return verify(connection)


def _tamper(db, *statements, **params):
    with db.engine.begin() as connection:
        drop_triggers(connection)
        for statement in statements:
            connection.execute(text(statement), params)


def test_verify_passes_on_a_clean_ledger(fresh_db, ledger):
    report = _verify(fresh_db)
    assert report.ok, report.first_broken
    assert report.first_broken is None
    assert report.transactions_checked == len(ledger.transactions)
    assert report.accounts_checked == 3


def test_verify_names_the_transaction_whose_entry_amount_was_edited(fresh_db, ledger):
    edited = ledger.transactions[3]
    _tamper(
        fresh_db,
        "UPDATE ledger_entries SET amount = amount + 1 WHERE id = "
        "(SELECT min(id) FROM ledger_entries WHERE transaction_id = :t)",
        t=edited,
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.transaction_id == edited
    assert report.first_broken.kind == "hash_mismatch"


def test_verify_names_the_transaction_whose_balanced_entries_were_both_edited(fresh_db, ledger):
    edited = ledger.transactions[1]
    _tamper(
        fresh_db,
        "UPDATE ledger_entries SET amount = amount * 2 WHERE transaction_id = :t",
        t=edited,
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.transaction_id == edited


def test_verify_names_a_transaction_whose_header_was_edited(fresh_db, ledger):
    edited = ledger.transactions[5]
    _tamper(
        fresh_db, "UPDATE ledger_transactions SET memo = 'nothing to see' WHERE id = :t", t=edited
    )
    report = _verify(fresh_db)
    assert (report.ok, report.first_broken.transaction_id) == (False, edited)


def test_verify_catches_an_edited_stored_balance_and_names_the_account(fresh_db, ledger):
    _tamper(
        fresh_db,
        "UPDATE ledger_balances SET credits_posted = credits_posted + 7 WHERE account_id = :a",
        a=ledger.b,
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.kind == "stored_balance"
    assert report.first_broken.account_id == ledger.b


def test_verify_catches_an_edited_pending_balance(fresh_db, ledger):
    _tamper(
        fresh_db,
        "UPDATE ledger_balances SET credits_pending = credits_pending + 3 WHERE account_id = :a",
        a=ledger.a,
    )
    report = _verify(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "stored_balance")
    assert report.first_broken.account_id == ledger.a


def test_verify_catches_an_edited_balance_after_on_an_entry(fresh_db, ledger):
    edited = ledger.transactions[2]
    _tamper(
        fresh_db,
        "UPDATE ledger_entries SET balance_after = balance_after + 1 WHERE transaction_id = :t",
        t=edited,
    )
    report = _verify(fresh_db)
    assert (report.ok, report.first_broken.transaction_id) == (False, edited)


def test_verify_catches_a_transaction_deleted_with_its_entries_and_chain_link(fresh_db, ledger):
    deleted = ledger.transactions[1]
    _tamper(
        fresh_db,
        "DELETE FROM ledger_chain WHERE transaction_id = :t",
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
        t=deleted,
    )
    assert (
        scalar(fresh_db, "SELECT count(*) FROM ledger_transactions WHERE id = :t", t=deleted) == 0
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.kind == "chain_gap"


def test_verify_catches_the_newest_transaction_deleted_with_its_chain_link(fresh_db, ledger):
    deleted = ledger.transactions[-1]
    _tamper(
        fresh_db,
        "DELETE FROM ledger_chain WHERE transaction_id = :t",
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
        t=deleted,
    )
    report = _verify(fresh_db)
    assert not report.ok
    # the chain itself ends cleanly one link earlier: the balances give it away
    assert report.first_broken.kind == "stored_balance"
    assert report.first_broken.account_id in (ledger.issuer, ledger.b)


def test_verify_names_a_transaction_whose_header_and_entries_were_deleted(fresh_db, ledger):
    deleted = ledger.transactions[1]
    statements = (
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
    )
    if fresh_db.dialect == "postgresql":
        # session_replication_role = replica skips foreign keys (and every trigger)
        with fresh_db.engine.begin() as connection:
            connection.execute(text("SET LOCAL session_replication_role = replica"))
            for statement in statements:
                connection.execute(text(statement), {"t": deleted})
    else:
        with fresh_db.engine.connect() as connection:
            raw = connection.connection.driver_connection
            raw.execute("PRAGMA foreign_keys = OFF")  # no-op inside a transaction: do it first
            try:
                with connection.begin():
                    drop_triggers(connection)
                    for statement in statements:
                        connection.execute(text(statement), {"t": deleted})
            finally:
                raw.execute("PRAGMA foreign_keys = ON")
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.kind == "missing_transaction"
    assert report.first_broken.transaction_id == deleted


def test_verify_catches_a_transaction_inserted_behind_the_engines_back(fresh_db, ledger):
    inserted = write_raw_transaction(
        fresh_db, [(ledger.issuer, ledger.asset, -9), (ledger.b, ledger.asset, 9)]
    )
    # even with the stored balances made to agree with it
    _tamper(
        fresh_db,
        "UPDATE ledger_balances SET debits_posted = debits_posted + 9 WHERE account_id = :i",
        "UPDATE ledger_balances SET credits_posted = credits_posted + 9 WHERE account_id = :b",
        i=ledger.issuer,
        b=ledger.b,
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.kind == "unchained_transaction"
    assert report.first_broken.transaction_id == inserted


@pytest.mark.parametrize("tx_id", [0, -7], ids=str)
def test_verify_catches_a_transaction_inserted_with_an_id_below_every_other(
    fresh_db, ledger, tx_id
):
    """Ids need not come from the sequence: the full pass looks at every transaction."""
    inserted = write_raw_transaction(
        fresh_db, [(ledger.issuer, ledger.asset, -9), (ledger.b, ledger.asset, 9)], tx_id=tx_id
    )
    _tamper(
        fresh_db,
        "UPDATE ledger_balances SET debits_posted = debits_posted + 9 WHERE account_id = :i",
        "UPDATE ledger_balances SET credits_posted = credits_posted + 9 WHERE account_id = :b",
        i=ledger.issuer,
        b=ledger.b,
    )
    report = _verify(fresh_db)
    assert not report.ok
    assert (report.first_broken.kind, report.first_broken.transaction_id) == (
        "unchained_transaction",
        inserted,
    )


def test_verify_catches_an_entry_inserted_into_a_sealed_transaction(fresh_db, ledger):
    target = ledger.transactions[4]
    _tamper(
        fresh_db,
        "INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, "
        "balance_after, account_version, effective_on) "
        "SELECT transaction_id, account_id, asset, amount, phase, balance_after, "
        "account_version, effective_on FROM ledger_entries WHERE transaction_id = :t",
        t=target,
    )
    report = _verify(fresh_db)
    assert (report.ok, report.first_broken.transaction_id) == (False, target)


# Verified in parallel (worker processes, one segment of two links each), a ledger gives the
# same answer as verified by one process: the same count, the same first break.
PARALLEL_TAMPERING = {
    "clean": [],
    "edited entry in a later segment": [
        "UPDATE ledger_entries SET amount = amount + 1 WHERE id = (SELECT min(id) FROM "
        "ledger_entries WHERE transaction_id = (SELECT transaction_id FROM ledger_chain "
        "WHERE seq = 6))"
    ],
    "a segment's first link deleted": ["DELETE FROM ledger_chain WHERE seq = 5"],
    "a segment's last link deleted": ["DELETE FROM ledger_chain WHERE seq = 4"],
    "a segment's first link re-pointed": ["UPDATE ledger_chain SET prev_hash = hash WHERE seq = 7"],
    "two breaks, the earlier wins": [
        "UPDATE ledger_chain SET prev_hash = hash WHERE seq = 9",
        "UPDATE ledger_transactions SET memo = 'x' WHERE id = "
        "(SELECT transaction_id FROM ledger_chain WHERE seq = 3)",
    ],
}


@pytest.mark.parametrize("tampering", PARALLEL_TAMPERING, ids=list(PARALLEL_TAMPERING))
def test_parallel_verify_finds_what_one_process_finds(fresh_db, ledger, monkeypatch, tampering):
    from ledger import verification

    if PARALLEL_TAMPERING[tampering]:
        _tamper(fresh_db, *PARALLEL_TAMPERING[tampering])
    seal_all(fresh_db)
    with fresh_db.engine.connect() as connection:
        alone = verify(connection)
    monkeypatch.setattr(verification, "PARALLEL_FROM", 1)  # segments of 2 links
    seen: list[int] = []
    with fresh_db.engine.connect() as connection:
        parallel = verify(connection, seen.append, processes=2)
    assert parallel.ok is alone.ok is (tampering == "clean")
    assert parallel.first_broken == alone.first_broken
    assert parallel.transactions_checked == alone.transactions_checked
    assert seen == sorted(seen) and len(seen) > 1  # progress after each segment, in order


def test_parallel_verify_expects_the_genesis_hash_before_link_one(fresh_db, ledger, monkeypatch):
    from ledger import verification

    _tamper(fresh_db, "UPDATE ledger_chain SET prev_hash = hash WHERE seq = 1")
    monkeypatch.setattr(verification, "PARALLEL_FROM", 1)
    with fresh_db.engine.connect() as connection:
        report = verify(connection, processes=2)
    assert (report.first_broken.kind, report.first_broken.seq) == ("chain_link", 1)


def test_dropping_the_triggers_waits_for_a_running_sealer(fresh_db, ledger):
    """A sealer holds the chain head while DROP TRIGGER locks table after table: the two could
    deadlock (a tamper test once did).  Dropping the triggers takes the sealer's lock first."""
    import threading

    from ledger.chain import SEALER_LOCK_KEY

    if fresh_db.dialect != "postgresql":
        pytest.skip("SQLite has no background sealer")
    with fresh_db.engine.connect() as sealer:
        sealer.execute(text("SELECT pg_advisory_lock(:k)"), {"k": SEALER_LOCK_KEY})
        sealer.commit()
        done = threading.Event()

        def drop() -> None:
            with fresh_db.engine.begin() as connection:
                drop_triggers(connection)
            done.set()

        worker = threading.Thread(target=drop)
        worker.start()
        try:
            assert not done.wait(1.0), "dropped the triggers while a sealer held its lock"
            waiting = sealer.execute(
                text(
                    "SELECT l.locktype FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid "
                    "WHERE NOT l.granted AND a.datname = current_database()"
                )
            ).scalars()
            assert list(waiting) == ["advisory"]  # waiting before it locked any table
        finally:
            sealer.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": SEALER_LOCK_KEY})
            sealer.commit()
            worker.join(10)
    assert done.is_set()


# --- anchors: a head recorded outside the database -------------------------------------------


def _verify_with(db, *anchors):
    seal_all(db)
    with db.engine.connect() as connection:
        return verify(connection, anchors=anchors)


def test_verify_reports_the_chain_head_and_accepts_it_back_as_an_anchor(fresh_db, ledger):
    report = _verify(fresh_db)
    last = scalar(fresh_db, "SELECT max(seq) FROM ledger_chain")
    assert (report.head.seq, report.head.hash) == (
        last,
        scalar(fresh_db, "SELECT hash FROM ledger_chain WHERE seq = :s", s=last),
    )
    assert Anchor.parse(str(report.head)) == report.head
    # later writes extend the chain; the old head is still in it
    move(fresh_db, ledger.issuer, ledger.a, 4)
    later = _verify_with(fresh_db, report.head)
    assert later.ok, later.first_broken
    assert later.head.seq == report.head.seq + 1


def test_an_anchor_catches_the_newest_transaction_removed_cleanly(fresh_db, ledger):
    anchor = _verify(fresh_db).head
    newest = ledger.transactions[-1]  # issuer -> b, 3
    _tamper(
        fresh_db,
        "DELETE FROM ledger_chain WHERE transaction_id = :t",
        "DELETE FROM ledger_entries WHERE transaction_id = :t",
        "DELETE FROM ledger_transactions WHERE id = :t",
        "UPDATE ledger_balances SET debits_posted = debits_posted - 3 WHERE account_id = :i",
        "UPDATE ledger_balances SET credits_posted = credits_posted - 3 WHERE account_id = :b",
        t=newest,
        i=ledger.issuer,
        b=ledger.b,
    )
    # with the balances made to agree, nothing inside the database shows the removal
    assert _verify(fresh_db).ok
    report = _verify_with(fresh_db, anchor)
    assert not report.ok
    assert (report.first_broken.kind, report.first_broken.seq) == ("anchor", anchor.seq)
    assert "removed from its end" in report.first_broken.detail


def test_an_anchor_catches_a_chain_rewritten_after_an_edit(fresh_db, ledger):
    anchor = _verify(fresh_db).head
    edited = ledger.transactions[2]
    seq = scalar(fresh_db, "SELECT seq FROM ledger_chain WHERE transaction_id = :t", t=edited)
    # edit a sealed transaction, then have the sealer chain it and every later one again
    _tamper(
        fresh_db,
        "UPDATE ledger_transactions SET memo = 'rewritten' WHERE id = :t",
        "INSERT INTO ledger_chain_queue (transaction_id) "
        "SELECT transaction_id FROM ledger_chain WHERE seq >= :s",
        "DELETE FROM ledger_chain WHERE seq >= :s",
        t=edited,
        s=seq,
    )
    rewritten = _verify(fresh_db)
    assert rewritten.ok  # a consistent chain: the hashes alone cannot tell
    assert rewritten.head.seq == anchor.seq and rewritten.head.hash != anchor.hash
    report = _verify_with(fresh_db, anchor)
    assert (report.ok, report.first_broken.kind) == (False, "anchor")
    assert "rewritten" in report.first_broken.detail
    # an anchor taken before the edited link still holds
    earlier = Anchor(
        seq - 1, scalar(fresh_db, "SELECT hash FROM ledger_chain WHERE seq = :s", s=seq - 1)
    )
    assert _verify_with(fresh_db, earlier).ok


@pytest.mark.parametrize(
    "text",
    ["", "12", "²:" + "a" * 64, "0:" + "a" * 64, "x:" + "a" * 64, "3:" + "a" * 63, "3:" + "g" * 64],
)
def test_an_anchor_is_a_link_number_and_a_sha256(text):
    with pytest.raises(ValueError, match="SEQ:HASH"):
        Anchor.parse(text)
    assert Anchor.parse(" 3:" + "AB" * 32 + "\n") == Anchor(3, "ab" * 32)
