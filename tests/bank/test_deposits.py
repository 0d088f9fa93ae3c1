"""The deposit use cases (``bank.deposits``, ``bank.deposit_views``, ``bank.deposit_reversal``)
on both databases: a deposit within the Subd. 12 caps, one over a cap, the same restoration
credited twice, a reversal and a second one, and who may see a deposit.  A refused deposit or
reversal writes nothing."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest
from freezegun import freeze_time

from bank import accounts, credits, deposit_reversal, deposit_views
from bank.access import SYSTEM
from bank.deposit_tables import Deposit, DepositReversal
from bank.deposit_views import DepositView
from bank.errors import CapExceeded, Conflict, Forbidden, NotFound, ValidationFailed
from ledger.db import Database
from tests.bank.account_kit import (
    COVER,
    DAY,
    RULESET,
    WETLAND,
    count,
    cover,
    deposit,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    new_site,
    request,
    wetland,
)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


@pytest.fixture
def place(db: Database) -> tuple[str, str, str, str]:
    """(holder, LGU, bank site with 10,000 sq ft of wetland registered, open account)."""
    holder = new_holder(db)
    return holder, new_lgu(db), new_site(db, holder), new_account(db, holder).id


def shown(view: DepositView) -> tuple[object, ...]:
    """A deposit as plain values (a credit class is a row: compared by its code)."""
    lines = [
        (c.category, c.credit_sqft, c.cap_sqft, c.credit_class.code, c.lot_id) for c in view.credits
    ]
    return (view.id, view.transaction_id, view.total_credit_sqft, view.reversal, *lines)


def posted(db: Database, account_id: str) -> int:
    return sum(b.posted_sqft for b in accounts.get_account(db, SYSTEM, account_id).balances)


def test_a_deposit_within_the_caps_credits_a_lot_per_action(db: Database, place) -> None:
    holder, lgu, site, account = place
    made = deposit(db, request(account, site, lgu, wetland(4_000), cover(2_000, 1_000)))

    assert (made.account_id, made.bank_site_id, made.effective_on) == (account, site, DAY)
    assert made.total_credit_sqft == 5_000 and made.reversal is None
    assert made.transaction_id.isdigit()
    first, second = made.credits
    assert (first.category, first.credit_sqft, first.cap_sqft) == (WETLAND, 4_000, 4_000)
    assert (second.category, second.credit_sqft, second.cap_sqft) == (COVER, 1_000, 1_000)
    assert first.credit_class.code == "BSA5-T2-U" and not first.restricted
    lots = accounts.account_lots(db, SYSTEM, account)
    assert [(lot.id, lot.deposit_id, lot.posted_sqft) for lot in lots] == [
        (first.lot_id, made.id, 4_000),
        (second.lot_id, made.id, 1_000),
    ]
    assert posted(db, account) == 5_000
    assert shown(deposit_views.show_deposit(db, holder_actor(holder), made.id)) == shown(made)


def test_a_deposit_over_a_cap_is_refused_and_writes_nothing(db: Database, place) -> None:
    _holder, lgu, site, account = place
    over = request(account, site, lgu, wetland(4_000), cover(2_000, 1_001))

    with pytest.raises(CapExceeded) as refused:
        deposit(db, over)

    assert refused.value.code == "cap_exceeded"
    assert refused.value.fields["cap_sqft"] == 1_000
    assert refused.value.fields["requested_sqft"] == 1_001
    assert count(db, Deposit, Deposit.account_id == account) == 0
    assert count(db, credits.Lot, credits.Lot.account_id == account) == 0
    assert posted(db, account) == 0


def test_the_same_restoration_credited_twice_is_refused(db: Database, place) -> None:
    _holder, lgu, site, account = place
    deposit(db, request(account, site, lgu, wetland(10_000)))

    with pytest.raises(CapExceeded) as refused:
        deposit(db, request(account, site, lgu, wetland(10_000)))

    assert refused.value.code == "cap_exceeded"
    assert refused.value.fields["credited_sqft"] == 10_000
    assert refused.value.fields["cap_sqft"] == 10_000
    assert count(db, Deposit, Deposit.account_id == account) == 1
    assert posted(db, account) == 10_000


def test_a_reversal_books_the_credits_back_and_frees_the_restoration(db: Database, place) -> None:
    holder, lgu, site, account = place
    made = deposit(db, request(account, site, lgu, wetland(10_000)))

    undone = deposit_reversal.reverse_deposit(
        db, RULESET, SYSTEM, made.id, effective_on=DAY, reason="wrong site", request_id=None
    )

    assert undone.id == made.id and undone.reversal is not None
    assert undone.reversal.reason == "wrong site" and undone.reversal.effective_on == DAY
    assert undone.reversal.transaction_id != made.transaction_id
    assert posted(db, account) == 0
    seen = deposit_views.show_deposit(db, holder_actor(holder), made.id)
    assert seen.reversal == undone.reversal
    # the site's register no longer counts it: the corrected deposit is accepted
    assert deposit(db, request(account, site, lgu, wetland(10_000))).total_credit_sqft == 10_000


def test_a_deposit_is_reversed_once(db: Database, place) -> None:
    _holder, lgu, site, account = place
    made = deposit(db, request(account, site, lgu, wetland(1_000)))
    deposit_reversal.reverse_deposit(
        db, RULESET, SYSTEM, made.id, effective_on=DAY, reason="typo", request_id=None
    )

    with pytest.raises(Conflict) as refused:
        deposit_reversal.reverse_deposit(
            db, RULESET, SYSTEM, made.id, effective_on=DAY, reason="again", request_id=None
        )

    assert refused.value.code == "conflict"
    assert count(db, DepositReversal, DepositReversal.deposit_id == made.id) == 1


def test_a_reversal_dated_before_the_deposit_is_refused(db: Database, place) -> None:
    _holder, lgu, site, account = place
    made = deposit(db, request(account, site, lgu, wetland(1_000)))

    with pytest.raises(ValidationFailed):
        deposit_reversal.reverse_deposit(
            db, RULESET, SYSTEM, made.id, effective_on=date(2026, 6, 1), reason="x", request_id=None
        )

    assert count(db, DepositReversal, DepositReversal.deposit_id == made.id) == 0
    assert posted(db, account) == 1_000


def test_only_the_board_deposits_and_reverses(db: Database, place) -> None:
    holder, lgu, site, account = place
    with pytest.raises(Forbidden):
        deposit(db, request(account, site, lgu, wetland(1_000)), holder_actor(holder))
    made = deposit(db, request(account, site, lgu, wetland(1_000)))
    with pytest.raises(Forbidden):
        deposit_reversal.reverse_deposit(
            db,
            RULESET,
            holder_actor(holder),
            made.id,
            effective_on=DAY,
            reason="x",
            request_id=None,
        )
    assert count(db, Deposit, Deposit.account_id == account) == 1
    assert count(db, DepositReversal, DepositReversal.deposit_id == made.id) == 0


def test_a_deposit_into_no_account_is_not_found(db: Database, place) -> None:
    _holder, lgu, site, _account = place
    with pytest.raises(NotFound):
        deposit(db, request("acct_0000", site, lgu, wetland(1_000)))
    assert count(db, Deposit, Deposit.account_id == "acct_0000") == 0


def test_a_deposit_is_seen_by_the_board_and_its_holder_only(db: Database, place) -> None:
    _holder, lgu, site, account = place
    made = deposit(db, request(account, site, lgu, wetland(1_000)))

    assert deposit_views.show_deposit(db, SYSTEM, made.id).id == made.id
    for stranger in (holder_actor(new_holder(db)), lgu_actor(lgu)):
        with pytest.raises(NotFound):
            deposit_views.show_deposit(db, stranger, made.id)
    with pytest.raises(NotFound):
        deposit_views.show_deposit(db, SYSTEM, "dep_0000")
