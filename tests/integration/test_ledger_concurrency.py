"""Races and a bank workload on PostgreSQL (SQLite has one writer at a time, so nothing races).

Exactly-once races (post against void, two reversals, one idempotency key from many threads):
exactly one wins each.  The bank workload moves random amounts among no-overdraft accounts from
many threads while a reader sums them: every read sees the seeded total and nothing negative.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from freezegun import freeze_time

from ledger import (
    AlreadyResolved,
    AlreadyReversed,
    InsufficientFunds,
    Leg,
    Posted,
    balances,
    lock,
    pending_state,
    post_pending,
    reserve,
    reverse,
    transfer,
    verify,
    void_pending,
)
from ledger.sealer import seal_all
from tests.integration.ledger_kit import (
    balance_map,
    meta,
    move,
    open_accounts,
    scalar,
    unique,
)

pytestmark = pytest.mark.postgresql_only


@pytest.fixture(autouse=True)
def _postgresql_only(backend: str) -> None:
    if backend != "postgresql":
        pytest.skip("a PostgreSQL concurrency test: SQLite serializes every writer")


def race(*actions: Callable[[], Any], timeout: float = 30) -> list[Any]:
    """Run the actions on their own threads, released together; each result or exception."""
    barrier = threading.Barrier(len(actions))
    results: list[Any] = [None] * len(actions)

    def run(index: int, action: Callable[[], Any]) -> None:
        try:
            barrier.wait(timeout)
            results[index] = action()
        except BaseException as error:  # reported to the test, never to the thread hook
            results[index] = error

    threads = [
        threading.Thread(target=run, args=(i, action), daemon=True)
        for i, action in enumerate(actions)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout)
        assert not thread.is_alive(), "a racing thread hung"
    return results


def _outcomes(results: list[Any]) -> tuple[list[Posted], list[BaseException]]:
    won = [r for r in results if isinstance(r, Posted)]
    lost = [r for r in results if not isinstance(r, Posted)]
    return won, lost


@pytest.mark.parametrize("limited", [True, False], ids=["no-overdraft", "unlimited"])
def test_post_and_void_of_one_pending_transfer_racing_resolve_it_exactly_once(fresh_db, limited):
    db = fresh_db
    asset = unique("X")
    issuer, a, b = open_accounts(db, asset, False, limited, limited)
    move(db, issuer, a, 10_000)
    winners: Counter[str] = Counter()
    expected_a, expected_b = 10_000, 0
    for round_ in range(20):
        amount = 10 + round_
        hold = db.run(
            lambda s, n=amount: reserve(s, "hold", [Leg(a, b, n)], meta(), expires_at=None)
        )
        pid = hold.transaction_id
        post, void = meta(), meta()
        results = race(
            lambda p=pid, m=post: db.run(lambda s: post_pending(s, p, m)),
            lambda p=pid, m=void: db.run(lambda s: void_pending(s, p, m)),
        )
        won, lost = _outcomes(results)
        assert len(won) == 1 and len(lost) == 1, results
        assert isinstance(lost[0], AlreadyResolved), repr(lost[0])
        posted_won = isinstance(results[0], Posted)
        winners["post" if posted_won else "void"] += 1
        with db.transaction() as session:
            assert pending_state(session, pid) == ("posted" if posted_won else "voided")
        if posted_won:
            expected_a, expected_b = expected_a - amount, expected_b + amount
        got = balance_map(db, [a, b])
        assert (got[a].posted, got[a].reserved_debits) == (expected_a, 0)
        assert (got[b].posted, got[b].reserved_credits) == (expected_b, 0)
        releases = scalar(db, "SELECT count(*) FROM ledger_entries WHERE resolves_id = :p", p=pid)
        assert releases == 2
    assert sum(winners.values()) == 20
    _assert_verifies(db)


@pytest.mark.parametrize("limited", [True, False], ids=["no-overdraft", "unlimited"])
def test_two_reversals_of_one_transaction_at_once_reverse_it_exactly_once(fresh_db, limited):
    db = fresh_db
    asset = unique("X")
    issuer, a, b = open_accounts(db, asset, False, limited, limited)
    move(db, issuer, a, 10_000)
    for round_ in range(20):
        amount = 5 + round_
        original = move(db, a, b, amount)
        before = balance_map(db, [a, b])
        results = race(
            *[
                lambda t=original.transaction_id: db.run(lambda s: reverse(s, t, meta()))
                for _ in range(2)
            ]
        )
        won, lost = _outcomes(results)
        assert len(won) == 1 and len(lost) == 1, results
        assert isinstance(lost[0], AlreadyReversed), repr(lost[0])
        after = balance_map(db, [a, b])
        assert after[a].posted == before[a].posted + amount
        assert after[b].posted == before[b].posted - amount
        reversals = scalar(
            db,
            "SELECT count(*) FROM ledger_transactions WHERE reverses_id = :t",
            t=original.transaction_id,
        )
        assert reversals == 1
    _assert_verifies(db)


@pytest.mark.parametrize("limited", [True, False], ids=["no-overdraft", "unlimited"])
def test_one_idempotency_key_from_eight_threads_commits_one_transaction(fresh_db, limited):
    db = fresh_db
    asset = unique("X")
    issuer, a, b = open_accounts(db, asset, False, limited, limited)
    move(db, issuer, a, 10_000)
    for round_ in range(5):
        request = meta()
        amount = 3 + round_
        results = race(
            *[
                lambda n=amount, m=request: db.run(lambda s: transfer(s, "t", [Leg(a, b, n)], m))
                for _ in range(8)
            ]
        )
        assert all(isinstance(r, Posted) for r in results), results
        assert len({r.transaction_id for r in results}) == 1
        assert sorted(r.replayed for r in results) == [False] + [True] * 7
        count = scalar(
            db,
            "SELECT count(*) FROM ledger_transactions WHERE idempotency_key = :k",
            k=request.idempotency_key,
        )
        assert count == 1
    got = balance_map(db, [a, b])
    assert (got[a].posted, got[b].posted) == (10_000 - 25, 25)
    _assert_verifies(db)


@pytest.mark.parametrize("operation", ["post", "reverse"])
def test_one_key_for_a_resolution_or_a_reversal_from_four_threads_answers_each_with_one_result(
    fresh_db, operation
):
    db = fresh_db
    asset = unique("X")
    issuer, a, b = open_accounts(db, asset, False, True, True)
    move(db, issuer, a, 10_000)
    for round_ in range(5):
        if operation == "post":
            target = db.run(
                lambda s, n=round_: reserve(s, "hold", [Leg(a, b, 5 + n)], meta(), expires_at=None)
            ).transaction_id

            def write(s, t=target, m=meta()):  # noqa: B008 - one key shared by the threads
                return post_pending(s, t, m)
        else:
            target = move(db, a, b, 5 + round_).transaction_id

            def write(s, t=target, m=meta()):  # noqa: B008
                return reverse(s, t, m)

        results = race(*[lambda w=write: db.run(w) for _ in range(4)])
        # the twins that waited for the winner's locks get its result, not "already done"
        assert all(isinstance(r, Posted) for r in results), results
        assert len({r.transaction_id for r in results}) == 1
        assert sorted(r.replayed for r in results) == [False, True, True, True]
    _assert_verifies(db)


ACCOUNTS = 20
SEED = 1_000
WRITERS = 8
TRANSFERS_PER_WRITER = 250
HOT = 3  # the skewed writers pick among the first few accounts


def test_a_bank_workload_keeps_the_total_and_never_goes_negative(fresh_db):
    db = fresh_db
    asset = unique("X")
    issuer, *holders = open_accounts(db, asset, False, *[True] * ACCOUNTS)
    with db.transaction() as session:
        transfer(session, "seed", [Leg(issuer, h, SEED) for h in holders], meta())
    total = SEED * ACCOUNTS
    done = threading.Event()
    errors: list[BaseException] = []
    outcomes: Counter[str] = Counter()
    reads: list[tuple[int, int]] = []  # (total, most negative balance) per read
    lock = threading.Lock()

    def one_transfer(session, leg: Leg) -> Posted:
        return transfer(session, "move", [leg], meta())

    def writer(seed: int) -> None:
        rng = random.Random(seed)
        skewed = seed % 2 == 1
        try:
            for _ in range(TRANSFERS_PER_WRITER):
                pool = holders[:HOT] if skewed and rng.random() < 0.7 else holders
                source, target = rng.sample(pool, 2)
                amount = rng.randint(1, 400)
                try:
                    db.run(one_transfer, Leg(source, target, amount))
                    key = "posted"
                except InsufficientFunds:
                    key = "refused"
                with lock:
                    outcomes[key] += 1
        except BaseException as error:
            with lock:
                errors.append(error)

    def reader() -> None:
        try:
            while not done.is_set():
                with db.transaction() as session:
                    got = balances(session, holders)  # one statement: one snapshot
                with lock:
                    reads.append(
                        (
                            sum(b.posted for b in got.values()),
                            min(min(b.posted, b.available) for b in got.values()),
                        )
                    )
                time.sleep(0.002)
        except BaseException as error:
            with lock:
                errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,), daemon=True) for i in range(WRITERS)]
    watcher = threading.Thread(target=reader, daemon=True)
    started = time.monotonic()
    watcher.start()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(120)
    done.set()
    watcher.join(30)
    elapsed = time.monotonic() - started
    assert not any(t.is_alive() for t in [*threads, watcher]), "a workload thread hung"

    assert errors == [], errors
    assert sum(outcomes.values()) == WRITERS * TRANSFERS_PER_WRITER
    assert outcomes["posted"] > 0 and outcomes["refused"] >= 0
    assert len(reads) >= 10, f"only {len(reads)} snapshot reads in {elapsed:.1f}s"
    assert {t for t, _ in reads} == {total}
    assert min(lowest for _, lowest in reads) >= 0
    final = balance_map(db, holders)
    assert sum(b.posted for b in final.values()) == total
    assert all(b.posted >= 0 and b.available >= 0 for b in final.values())
    moved = scalar(db, "SELECT count(*) FROM ledger_transactions WHERE kind = 'move'")
    assert moved == outcomes["posted"]
    _assert_verifies(db)


def _assert_verifies(db) -> None:
    seal_all(db)
    with db.engine.connect() as connection:
        report = verify(connection)
    assert report.ok, report.first_broken
    assert isinstance(report.transactions_checked, int)


def test_a_locking_read_that_waited_on_a_lazy_expiry_sees_the_reservation_gone_once(fresh_db):
    """A writer expires a reservation lazily while a locking read (``ledger.lock``) waits for
    the balance row: the read must count neither the reservation nor its release twice."""
    db = fresh_db
    expiry = datetime(2026, 6, 1, 17, tzinfo=UTC)
    issuer, a, b = open_accounts(db, unique("X"), False, True, True)
    with freeze_time(expiry - timedelta(hours=1)) as frozen:
        move(db, issuer, a, 100)
        db.run(lambda s: reserve(s, "hold", [Leg(a, b, 40)], meta(), expires_at=expiry))
        frozen.move_to(expiry + timedelta(minutes=1))
        seen: list[Any] = []
        with db.transaction() as session:
            transfer(session, "move", [Leg(a, b, 1)], meta())  # expires the hold, holds the row

            def read() -> None:
                with db.transaction() as reader:
                    seen.append(lock(reader, [a])[a])

            waiting = threading.Thread(target=read)
            waiting.start()
            deadline = time.monotonic() + 10
            while not scalar(
                db,
                "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                "AND datname = current_database()",
            ):
                assert time.monotonic() < deadline, "the locking read never waited"
                time.sleep(0.01)
        waiting.join(10)
    (after,) = seen
    assert (after.posted, after.reserved_debits, after.available) == (99, 0, 99)
