"""The bytes a chain link hashes are fixed forever: a sealed ledger must verify under every later
version of the code, so the canonical form is pinned here, value type by value type."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta, timezone

import pytest

from ledger import canonical
from ledger.chain import Sealed


def test_the_canonical_form_of_a_transaction_is_pinned() -> None:
    header = {
        "id": 7,
        "kind": "transfer",
        "state": "posted",
        "pending": False,
        "expires_at": None,
        "reverses_id": None,
        "idempotency_key": "k-1",
        "request_hash": "ab",
        "effective_on": date(2026, 6, 8),
        # an instant stored with an offset is hashed as its UTC time, to the microsecond
        "recorded_at": datetime(2026, 6, 8, 7, 0, 0, tzinfo=timezone(timedelta(hours=-5))),
        "actor": "board (tok_1)",
        "request_id": None,
        "memo": 'say "hi" ✓',
    }
    entry = {
        "id": 1,
        "account_id": 3,
        "asset": "sqft:BSA5-T2-U",
        "amount": -9000,
        "phase": "posted",
        "balance_after": 1000,
        "account_version": 2,
        "effective_on": date(2026, 6, 8),
    }
    assert canonical.canonical(header, [entry]) == (
        b'{"tx":[7,"transfer","posted",0,null,null,"k-1","ab","2026-06-08",'
        b'"2026-06-08T12:00:00.000000","board (tok_1)",null,"say \\"hi\\" \\u2713"],'
        b'"entries":[[1,3,"sqft:BSA5-T2-U",-9000,"posted",1000,2,"2026-06-08"]]}'
    )


def test_an_entrys_balance_slot_is_hashed_only_when_it_is_not_0() -> None:
    """Links sealed before accounts had slots keep their bytes; a slot other than 0 is sealed."""
    entry = {
        "id": 1,
        "account_id": 3,
        "asset": "X",
        "amount": 5,
        "phase": "posted",
        "balance_after": 5,
        "account_version": 1,
        "effective_on": date(2026, 6, 8),
    }
    before = canonical.canonical({}, [entry])
    assert canonical.canonical({}, [dict(entry, slot=0)]) == before
    assert before.endswith(b'"2026-06-08"]]}')
    assert canonical.canonical({}, [dict(entry, slot=2)]).endswith(b'"2026-06-08",2]]}')


def test_naive_and_aware_utc_instants_hash_alike() -> None:
    aware = {"recorded_at": datetime(2026, 1, 2, 3, 4, 5, 6, tzinfo=UTC), "pending": True}
    naive = {"recorded_at": datetime(2026, 1, 2, 3, 4, 5, 6), "pending": True}
    assert canonical.canonical(aware, []) == canonical.canonical(naive, [])
    assert b'"2026-01-02T03:04:05.000006"' in canonical.canonical(aware, [])
    assert b",1," in canonical.canonical(aware, [])  # True is hashed as 1


@pytest.mark.parametrize(
    ("first", "last", "passed"),
    [
        (1, 1999, False),
        (1, 2000, True),
        (1999, 2001, True),
        (2000, 2000, True),
        (2001, 2001, False),
        (2001, 3999, False),
        (3999, 4000, True),
    ],
)
def test_a_seal_passes_a_multiple_when_it_writes_the_link_numbered_with_it(first, last, passed):
    sealed = Sealed(last - first + 1, first, last)
    assert sealed.passed_multiple_of(2000) is passed


def test_a_seal_that_chained_nothing_passes_no_multiple():
    assert Sealed(0).passed_multiple_of(2000) is False
