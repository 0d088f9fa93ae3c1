"""``ledger.slices.grouped``: rows by key, a slice of keys per query (on both databases)."""

from __future__ import annotations

import functools

import pytest

from ledger import Database, slices
from ledger.schema import LedgerEntry
from tests.integration.ledger_kit import move, open_accounts, unique


def test_rows_are_grouped_by_key_once_whatever_the_slices(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    issuer, holder = open_accounts(db, unique("G"), False, True)
    first, second = (move(db, issuer, holder, n).transaction_id for n in (2, 3))
    monkeypatch.setattr(slices, "slices", functools.partial(slices.slices, size=1))
    credits = (condition for condition in [LedgerEntry.amount > 0])  # read by every slice

    with db.transaction() as session:
        found = slices.grouped(
            session,
            LedgerEntry.transaction_id,
            [first, second, first, -1],  # one key twice, one with no rows
            LedgerEntry.id,
            where=credits,
        )
        amounts = {key: [row.amount for row in rows] for key, rows in found.items()}

    assert amounts == {first: [2], second: [3]}
    assert found[-1] == []
