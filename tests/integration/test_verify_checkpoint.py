"""Verified checkpoints (docs/reliability.md, guarantee 8): after a full pass, a check since its
checkpoint covers what was written later, in time that follows it, and finds what was tampered with
there; what the full pass already verified is left, by design, to the next full pass.

Each test builds a small ledger on a private database (the ``ledger`` fixture of
test_ledger_verify), records a checkpoint, writes more, tampers the way someone with direct
database access could, and expects the check since the checkpoint (or the full pass) to notice.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from ledger import Leg, checkpoint, reserve, transfer, verification
from ledger.sealer import seal_all
from ledger.store import postgresql_verify
from ledger.store.postgresql import execute
from tests.integration.ledger_kit import meta, move, scalar, write_raw_transaction
from tests.integration.test_ledger_verify import Ledger, _tamper
from tests.integration.test_ledger_verify import ledger as ledger  # noqa: F401  (the fixture)


@pytest.fixture
def book(request: pytest.FixtureRequest) -> Ledger:
    """test_ledger_verify's ledger: a dozen transactions of every kind, all sealed."""
    return request.getfixturevalue("ledger")  # type: ignore[no-any-return]


def _full(db):
    seal_all(db)
    with db.engine.connect() as connection:
        report = verification.verify(connection)
    assert report.ok, report.first_broken
    with db.engine.begin() as connection:
        return checkpoint.record(connection, report)


def _since(db, processes: int = 1):
    seal_all(db)
    with db.engine.connect() as connection:
        latest = checkpoint.latest(connection)
        assert latest is not None
        return verification.verify_since(connection, latest, processes=processes)


def _more(db, book: Ledger) -> list[int]:
    """Three transactions after the checkpoint: two transfers and a reservation."""
    ids = [
        move(db, book.issuer, book.a, 40).transaction_id,
        move(db, book.a, book.issuer, 15).transaction_id,
    ]
    with db.transaction() as session:
        hold = reserve(session, "hold", [Leg(book.a, book.issuer, 5)], meta(), expires_at=None)
    seal_all(db)  # chained before any tampering, as a sealer would have done by then
    return [*ids, hold.transaction_id]


def test_a_check_since_the_checkpoint_passes_after_new_writes_and_counts_only_them(fresh_db, book):
    recorded = _full(fresh_db)
    assert (recorded.seq, recorded.transactions) == (len(book.transactions),) * 2
    quiet = _since(fresh_db)
    assert (quiet.ok, quiet.mode, quiet.transactions_checked) == (True, "since_checkpoint", 0)
    assert quiet.head.seq == recorded.seq and quiet.checkpoint == recorded
    new = _more(fresh_db, book)
    report = _since(fresh_db)
    assert report.ok, report.first_broken
    assert report.transactions_checked == len(new)
    assert report.head.seq == recorded.seq + len(new)
    assert report.accounts_checked == 3


def test_a_check_since_the_checkpoint_catches_an_edited_entry_written_after_it(fresh_db, book):
    _full(fresh_db)
    edited = _more(fresh_db, book)[1]
    _tamper(
        fresh_db,
        "UPDATE ledger_entries SET amount = amount + 1 WHERE id = "
        "(SELECT min(id) FROM ledger_entries WHERE transaction_id = :t)",
        t=edited,
    )
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "hash_mismatch")
    assert report.first_broken.transaction_id == edited


@pytest.mark.parametrize("touched", [False, True], ids=["untouched since", "written since"])
def test_a_check_since_the_checkpoint_catches_an_edited_stored_balance(fresh_db, book, touched):
    _full(fresh_db)
    _more(fresh_db, book)  # the issuer and a; b is untouched since the checkpoint
    account = book.a if touched else book.b
    _tamper(
        fresh_db,
        "UPDATE ledger_balances SET credits_posted = credits_posted + 7 WHERE account_id = :a",
        a=account,
    )
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "stored_balance")
    assert report.first_broken.account_id == account


EDITS = {
    "its head": "UPDATE ledger_verify_checkpoints SET seq = seq - 1",
    "its largest transaction": "UPDATE ledger_verify_checkpoints SET max_transaction_id = 1",
    "its time": "UPDATE ledger_verify_checkpoints SET duration_ms = duration_ms + 1",
    "a balance": "UPDATE ledger_verify_balances SET credits_posted = credits_posted + 1 "
    "WHERE account_id = :b",
    "a balance removed": "DELETE FROM ledger_verify_balances WHERE account_id = :b",
    "a balance added": "INSERT INTO ledger_verify_balances SELECT checkpoint_id, :b, 5, 0, 0, "
    "0, 0 FROM ledger_verify_balances LIMIT 1",
}


@pytest.mark.parametrize("edit", EDITS, ids=list(EDITS))
def test_a_check_since_the_checkpoint_catches_an_edited_checkpoint(fresh_db, book, edit):
    recorded = _full(fresh_db)
    _more(fresh_db, book)
    _tamper(fresh_db, EDITS[edit], b=book.b)
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "checkpoint")
    assert report.first_broken.seq == recorded.seq or edit == "its head"
    assert "wetbank audit verify" in report.first_broken.detail


def test_a_check_since_the_checkpoint_catches_a_link_removed_after_it(fresh_db, book):
    recorded = _full(fresh_db)
    new = _more(fresh_db, book)
    _tamper(fresh_db, "DELETE FROM ledger_chain WHERE seq = :s", s=recorded.seq + 2)
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "chain_gap")
    assert report.first_broken.seq == recorded.seq + 2
    assert report.transactions_checked == 1
    # the newest link removed leaves a clean chain, and its transaction outside it
    _tamper(fresh_db, "DELETE FROM ledger_chain WHERE seq > :s", s=recorded.seq)
    _tamper(fresh_db, "INSERT INTO ledger_chain_queue VALUES (:a), (:b)", a=new[0], b=new[1])
    seal_all(fresh_db)
    report = _since(fresh_db)
    assert (report.first_broken.kind, report.first_broken.transaction_id) == (
        "unchained_transaction",
        new[2],
    )


@pytest.mark.parametrize("tx_id", [0, -7], ids=str)
def test_a_check_since_the_checkpoint_catches_a_transaction_inserted_below_the_ids_it_saw(
    fresh_db, book, tx_id
):
    """An id need not come from the sequence: one below those the checkpoint saw is found."""
    _full(fresh_db)
    _more(fresh_db, book)
    inserted = write_raw_transaction(
        fresh_db, [(book.issuer, book.asset, -9), (book.b, book.asset, 9)], tx_id=tx_id
    )
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "unchained_transaction")
    assert report.first_broken.transaction_id == inserted


def test_a_check_since_the_checkpoint_catches_the_links_it_verified_removed(fresh_db, book):
    recorded = _full(fresh_db)
    _tamper(fresh_db, "DELETE FROM ledger_chain WHERE seq >= :s", s=recorded.seq - 1)
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "checkpoint")
    assert "removed from its end" in report.first_broken.detail


def test_a_check_since_the_checkpoint_catches_the_chain_rewritten_before_it(fresh_db, book):
    recorded = _full(fresh_db)
    edited = book.transactions[2]
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
    report = _since(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "checkpoint")
    assert report.first_broken.seq == recorded.seq and "rewritten" in report.first_broken.detail


def test_an_edit_before_the_checkpoint_is_left_to_the_full_pass(fresh_db, book):
    _full(fresh_db)
    _more(fresh_db, book)
    edited = book.transactions[3]
    _tamper(fresh_db, "UPDATE ledger_transactions SET memo = 'edited' WHERE id = :t", t=edited)
    assert _since(fresh_db).ok  # by design: the checkpoint vouches for what came before it
    with fresh_db.engine.connect() as connection:
        full = verification.verify(connection)
    assert (full.ok, full.first_broken.kind) == (False, "hash_mismatch")
    assert full.first_broken.transaction_id == edited


def test_a_check_since_the_checkpoint_in_parallel_finds_what_one_connection_finds(
    fresh_db, book, monkeypatch
):
    recorded = _full(fresh_db)
    new = _more(fresh_db, book) + _more(fresh_db, book)
    _tamper(fresh_db, "UPDATE ledger_transactions SET memo = 'x' WHERE id = :t", t=new[4])
    alone = _since(fresh_db)
    monkeypatch.setattr(verification, "PARALLEL_FROM", 1)  # segments of 2 links
    parallel = _since(fresh_db, processes=2)
    assert parallel.first_broken == alone.first_broken
    assert parallel.first_broken.seq == recorded.seq + 5
    assert parallel.transactions_checked == alone.transactions_checked == 4


def test_the_checkpoint_keeps_the_newest_three_and_implies_the_chains_balances(fresh_db, book):
    for _ in range(4):
        recorded = _full(fresh_db)
    assert scalar(fresh_db, "SELECT count(*) FROM ledger_verify_checkpoints") == checkpoint.KEEP
    kept = scalar(fresh_db, "SELECT count(DISTINCT checkpoint_id) FROM ledger_verify_balances")
    assert kept == checkpoint.KEEP
    implied = scalar(
        fresh_db,
        "SELECT credits_posted - debits_posted FROM ledger_verify_balances "
        "WHERE checkpoint_id = :c AND account_id = :b",
        c=recorded.id,
        b=book.b,
    )
    stored = scalar(
        fresh_db,
        "SELECT sum(credits_posted - debits_posted) FROM ledger_balances WHERE account_id = :b",
        b=book.b,
    )
    assert implied == stored


def test_a_checkpoints_canonical_text_is_pinned():
    fields = {
        "seq": 12,
        "head_hash": "ab" * 32,
        "max_transaction_id": 40,
        "seal_position": 9,
        "seal_gaps": (3, 7),
        "ran_at": datetime(2026, 6, 8, 12, 0, tzinfo=UTC),
        "duration_ms": 1500,
        "transactions": 12,
        "accounts": 3,
    }
    balances = [(1, 0, 5, 0, 0, 0), (2, 0, 0, 5, 0, 0)]
    assert checkpoint.digest(fields, balances) == (
        "16dbaa6cbcd0188cb05b81b4b8e510aaf5cb752fbdc903682ed0b93314859a61"
    )
    naive = dict(fields, ran_at=datetime(2026, 6, 8, 12, 0))  # SQLite hands back naive UTC
    assert checkpoint.digest(naive, balances) == checkpoint.digest(fields, balances)
    assert checkpoint.digest(fields, balances[:1]) != checkpoint.digest(fields, balances)


# --- PostgreSQL checks links in SQL: its rendering against the sealer's ------------------------

MEMOS = {
    "printable ASCII with quotes and backslashes": 'say "hi" \\ C:\\temp\\ {"x": [1]}',
    "a newline and a tab": "line one\nline\ttwo",
    "accented letters": "Rivière-du-Loup, Minnesota's wetland",
    "an emoji": "restored \U0001f986",
    "DEL": "rub\x7fout",
}


def test_postgresql_confirms_plain_links_itself_and_sends_the_others_to_python(
    backend, fresh_db, book, monkeypatch
):
    if backend != "postgresql":
        pytest.skip("SQLite checks every link in Python")
    ids = {name: _transfer_with_memo(fresh_db, book, memo) for name, memo in MEMOS.items()}
    seal_all(fresh_db)  # chained before any tampering
    rechecked: list[int] = []
    original = postgresql_verify.recheck_contents

    def recording(connection, seqs):
        rechecked.extend(seqs)
        return original(connection, seqs)

    monkeypatch.setattr(postgresql_verify, "recheck_contents", recording)
    with fresh_db.engine.connect() as connection:
        report = verification.verify(connection)
    assert report.ok, report.first_broken
    seqs = {
        name: scalar(fresh_db, "SELECT seq FROM ledger_chain WHERE transaction_id = :t", t=tx)
        for name, tx in ids.items()
    }
    plain = seqs.pop("printable ASCII with quotes and backslashes")
    assert plain not in rechecked  # rendered exactly as the sealer did
    assert set(seqs.values()) <= set(rechecked)  # escaped by the sealer: checked in Python
    for name, tx in ids.items():
        _tamper(fresh_db, "UPDATE ledger_transactions SET memo = memo || '.' WHERE id = :t", t=tx)
        with fresh_db.engine.connect() as connection:
            broken = verification.verify(connection).first_broken
        assert (broken.kind, broken.transaction_id) == ("hash_mismatch", tx), name
        _tamper(
            fresh_db,
            "UPDATE ledger_transactions SET memo = :m WHERE id = :t",
            t=tx,
            m=MEMOS[name],
        )


def _transfer_with_memo(db, book: Ledger, memo: str) -> int:
    legs = [Leg(book.issuer, book.b, 1)]
    return db.run(lambda s: transfer(s, "transfer", legs, meta(memo=memo))).transaction_id


def test_a_link_rendered_in_sql_matches_the_sealers_bytes_for_every_kind_of_value(
    backend, fresh_db, book
):
    """The ``ledger`` fixture holds every kind of transaction (a reservation with no expiry, a
    void, a reversal, a two-leg batch): PostgreSQL confirms each link without Python."""
    if backend != "postgresql":
        pytest.skip("SQLite checks every link in Python")
    with fresh_db.engine.connect() as connection:
        params = {"window": 1, "start": 1, "last": len(book.transactions)}
        rows = execute(connection, postgresql_verify.SEGMENT_SQL, params).fetchall()
    assert rows and all(row[-1] for row in rows), rows  # confirmed: the last column
