"""Balance slots: a hot account without limits keeps its balance in several rows, so that its
concurrent writers need not wait for each other's commits.  Its balance is the sum of the rows;
each entry says which slot it changed, and its balance-after is that slot's."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from sqlalchemy import text

from ledger import (
    Leg,
    balances,
    create_account,
    lock,
    post_pending,
    reserve,
    transfer,
    verify,
    void_pending,
)
from ledger.ddl import drop_triggers
from ledger.sealer import seal_all
from tests.integration.ledger_kit import meta, move, open_accounts, scalar, unique

SLOTS = 4


def _slotted(db, asset: str, slots: int = SLOTS) -> int:
    with db.transaction() as session:
        return create_account(session, code=unique("hot"), asset=asset, name="hot", slots=slots)


def _verify(db):
    seal_all(db)
    with db.engine.connect() as connection:
        return verify(connection)


def _entry_slots(db, account: int) -> Counter[int]:
    with db.engine.connect() as connection:
        rows = connection.execute(
            text("SELECT slot FROM ledger_entries WHERE account_id = :a"), {"a": account}
        ).all()
    return Counter(int(r[0]) for r in rows)


@pytest.mark.parametrize(
    ("slots", "no_overdraft"), [(0, False), (65, False), (2, True)], ids=["0", "65", "limited"]
)
def test_slots_are_for_accounts_without_limits_and_are_1_to_64(db, slots, no_overdraft):
    with pytest.raises(ValueError), db.transaction() as session:
        create_account(
            session,
            code=unique("bad"),
            asset="X",
            name="bad",
            slots=slots,
            no_overdraft=no_overdraft,
        )


def test_the_database_refuses_a_second_slot_row_for_an_account_with_a_limit(db):
    (limited,) = open_accounts(db, unique("X"), True)
    with pytest.raises(Exception, match="ck_ledger_balances_slot|CHECK"):
        with db.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO ledger_balances (account_id, slot, asset, no_overdraft, "
                    "no_overcredit, debits_posted, credits_posted, debits_pending, "
                    "credits_pending, version) SELECT account_id, 1, asset, no_overdraft, "
                    "no_overcredit, 0, 0, 0, 0, 0 FROM ledger_balances WHERE account_id = :a"
                ),
                {"a": limited},
            )


def test_a_slotted_account_balances_to_the_sum_of_its_slots_and_verifies(fresh_db, backend):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    a, b = open_accounts(fresh_db, asset, True, True)
    for n in range(1, 41):
        move(fresh_db, hot, a if n % 2 else b, n)
    move(fresh_db, a, hot, 5)
    with fresh_db.transaction() as session:
        seen = balances(session, [hot, a, b])
        locked = lock(session, [hot])
    total = sum(range(1, 41))
    assert seen[hot].posted == -total + 5 == locked[hot].posted
    assert seen[a].posted + seen[b].posted == total - 5
    assert seen[hot].version == 41  # every write counted once, whichever slot took it
    assert scalar(
        fresh_db, "SELECT count(*) FROM ledger_balances WHERE account_id = :a", a=hot
    ) == (SLOTS)
    used = _entry_slots(fresh_db, hot)
    if backend == "postgresql":
        assert len(used) > 1, used  # 41 writes spread over the slots
    else:
        assert set(used) == {0}  # one writer at a time: slot 0 always
    report = _verify(fresh_db)
    assert report.ok, report.first_broken
    assert report.accounts_checked == 3


def test_each_entry_of_a_slotted_account_carries_its_slots_balance_after(fresh_db):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    (a,) = open_accounts(fresh_db, asset, True)
    for n in range(1, 21):
        move(fresh_db, hot, a, n)
    with fresh_db.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT slot, amount, balance_after, account_version FROM ledger_entries "
                "WHERE account_id = :a ORDER BY id"
            ),
            {"a": hot},
        ).all()
    running: Counter[int] = Counter()
    versions: Counter[int] = Counter()
    for slot, amount, after, version in rows:
        running[slot] += amount
        versions[slot] += 1
        assert (after, version) == (running[slot], versions[slot])


def test_reservations_on_a_slotted_account_are_held_and_released_in_slot_0(fresh_db):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    a, b = open_accounts(fresh_db, asset, True, True)
    move(fresh_db, hot, a, 100)
    with fresh_db.transaction() as session:
        kept = reserve(session, "hold", [Leg(hot, b, 30)], meta(), expires_at=None)
        dropped = reserve(session, "hold", [Leg(hot, b, 7)], meta(), expires_at=None)
    with fresh_db.transaction() as session:
        assert balances(session, [hot])[hot].reserved_debits == 37
    fresh_db.run(lambda s: post_pending(s, kept.transaction_id, meta()))
    fresh_db.run(lambda s: void_pending(s, dropped.transaction_id, meta()))
    with fresh_db.transaction() as session:
        seen = balances(session, [hot, b])
    assert (seen[hot].posted, seen[hot].reserved_debits, seen[b].posted) == (-130, 0, 30)
    with fresh_db.engine.connect() as connection:
        pending_slots = connection.execute(
            text(
                "SELECT DISTINCT slot FROM ledger_entries WHERE account_id = :a "
                "AND phase <> 'posted'"
            ),
            {"a": hot},
        ).all()
    assert pending_slots == [(0,)]
    assert _verify(fresh_db).ok


def test_verify_names_the_slot_whose_stored_balance_was_edited(fresh_db):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    (a,) = open_accounts(fresh_db, asset, True)
    move(fresh_db, hot, a, 9)
    with fresh_db.engine.begin() as connection:
        drop_triggers(connection)
        connection.execute(
            text(
                "UPDATE ledger_balances SET credits_posted = credits_posted + 9 "
                "WHERE account_id = :a AND slot = 3"
            ),
            {"a": hot},
        )
    report = _verify(fresh_db)
    assert (report.ok, report.first_broken.kind) == (False, "stored_balance")
    assert report.first_broken.account_id == hot
    assert "slot 3" in report.first_broken.detail


def test_verify_notices_an_entry_moved_to_another_slot(fresh_db, backend):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    (a,) = open_accounts(fresh_db, asset, True)
    for n in (4, 5, 6):
        move(fresh_db, hot, a, n)
    seal_all(fresh_db)
    with fresh_db.engine.begin() as connection:
        drop_triggers(connection)
        connection.execute(
            text(
                "UPDATE ledger_entries SET slot = (slot + 1) % 4 WHERE id = "
                "(SELECT max(id) FROM ledger_entries WHERE account_id = :a)"
            ),
            {"a": hot},
        )
    report = _verify(fresh_db)
    assert not report.ok
    assert report.first_broken.kind == "hash_mismatch"  # the slot is part of what was sealed


def test_concurrent_writers_of_one_slotted_account_lose_nothing(fresh_db, backend):
    if backend != "postgresql":
        pytest.skip("a PostgreSQL concurrency test: SQLite serializes every writer")
    asset = unique("X")
    hot = _slotted(fresh_db, asset, slots=8)
    holders = open_accounts(fresh_db, asset, *[True] * 4)
    errors: list[BaseException] = []
    barrier = threading.Barrier(8)

    def writer(seed: int) -> None:
        try:
            barrier.wait(30)
            for n in range(25):
                move(fresh_db, hot, holders[(seed + n) % 4], 1 + (seed * 25 + n) % 7)
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=writer, args=(i,)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert errors == []
    expected = sum(1 + i % 7 for i in range(200))
    with fresh_db.transaction() as session:
        seen = balances(session, [hot, *holders])
    assert -seen[hot].posted == expected == sum(seen[h].posted for h in holders)
    assert seen[hot].version == 200
    report = _verify(fresh_db)
    assert report.ok, report.first_broken


def test_one_transaction_with_two_lines_on_a_slotted_account_keeps_them_in_one_slot(fresh_db):
    asset = unique("X")
    hot = _slotted(fresh_db, asset)
    a, b = open_accounts(fresh_db, asset, True, True)
    for _ in range(6):
        with fresh_db.transaction() as session:
            posted = transfer(session, "two", [Leg(hot, a, 3), Leg(hot, b, 4)], meta())
        with fresh_db.engine.connect() as connection:
            slots = connection.execute(
                text(
                    "SELECT DISTINCT slot FROM ledger_entries WHERE transaction_id = :t "
                    "AND account_id = :a"
                ),
                {"t": posted.transaction_id, "a": hot},
            ).all()
        assert len(slots) == 1
    assert _verify(fresh_db).ok


def test_one_unit_of_work_keeps_to_one_slot_of_a_hot_account(fresh_db, backend):
    """Two writes of one database transaction taking two slots of an account could take them
    in the opposite order to another transaction, and deadlock: a unit keeps its first slot
    (adding at most slot 0, for a reservation)."""
    asset = unique("X")
    hot = _slotted(fresh_db, asset, slots=8)
    (a,) = open_accounts(fresh_db, asset, True)
    for _ in range(5):
        with fresh_db.transaction() as session:
            ids = [
                transfer(session, "t", [Leg(hot, a, 1)], meta()).transaction_id for _ in range(6)
            ]
            ids.append(
                reserve(session, "hold", [Leg(hot, a, 1)], meta(), expires_at=None).transaction_id
            )
            ids.append(transfer(session, "t", [Leg(hot, a, 1)], meta()).transaction_id)
        with fresh_db.engine.connect() as connection:
            slots = [
                connection.execute(
                    text(
                        "SELECT slot FROM ledger_entries WHERE transaction_id = :t "
                        "AND account_id = :a"
                    ),
                    {"t": t, "a": hot},
                ).scalar_one()
                for t in ids
            ]
        first = slots[0]
        assert slots == [first] * 6 + [0, first]
        if backend == "sqlite":
            assert first == 0
    assert _verify(fresh_db).ok
