"""The account use cases (``bank.accounts``, ``bank.account_close``, ``bank.balances``) on both
databases: an account opened, frozen, unfrozen and closed (not while it holds credits), who sees
which accounts, the keyset listing page by page, balances as of a date, lots and entries.  A
refused act writes nothing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import event

from bank import account_close, accounts, balances
from bank.access import SYSTEM
from bank.errors import Conflict, Forbidden, NotFound, UnknownCursor, ValidationFailed
from bank.rules.deposit_eligibility import ActionRequest
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    cover,
    deposit,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    new_site,
    request,
    statements,
    wetland,
)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def status(db: Database, account_id: str) -> str:
    return accounts.get_account(db, SYSTEM, account_id).status


def test_an_account_is_opened_for_a_holder(db: Database) -> None:
    holder = new_holder(db)

    opened = new_account(db, holder)

    assert opened.id.startswith("acct_") and opened.number.startswith("WB-")
    assert (opened.holder_id, opened.service_area, opened.county) == (holder, 5, "Lyon")
    assert (opened.status, opened.name, opened.balances) == ("open", None, [])
    seen = accounts.get_account(db, holder_actor(holder), opened.id)
    assert (seen.id, seen.number, seen.status) == (opened.id, opened.number, "open")


def test_opening_is_the_boards_and_needs_a_holder_and_an_area(db: Database) -> None:
    holder = new_holder(db)
    with pytest.raises(Forbidden):
        accounts.open_account(
            db, RULESET, holder_actor(holder), holder_id=holder, service_area=5, county="Lyon"
        )
    with pytest.raises(ValidationFailed):
        accounts.open_account(db, RULESET, SYSTEM, holder_id="hld_0", service_area=5, county="L")
    with pytest.raises(ValidationFailed):
        accounts.open_account(db, RULESET, SYSTEM, holder_id=holder, service_area=11, county="L")
    assert accounts.list_accounts(db, SYSTEM, holder, 10, None) == []


def test_a_frozen_account_takes_deposits_and_counts_them_frozen(db: Database) -> None:
    holder = new_holder(db)
    account = new_account(db, holder).id

    assert accounts.set_status(db, SYSTEM, account, "frozen").status == "frozen"
    deposit(db, request(account, new_site(db, holder), new_lgu(db), wetland(3_000)))
    (held,) = accounts.get_account(db, SYSTEM, account).balances
    assert (held.posted_sqft, held.frozen_sqft, held.available_sqft) == (3_000, 3_000, 0)

    assert accounts.set_status(db, SYSTEM, account, "open").status == "open"
    (held,) = accounts.get_account(db, SYSTEM, account).balances
    assert (held.posted_sqft, held.frozen_sqft, held.available_sqft) == (3_000, 0, 3_000)


def test_only_the_board_freezes_and_closes(db: Database) -> None:
    holder = new_holder(db)
    account = new_account(db, holder).id
    with pytest.raises(Forbidden):
        accounts.set_status(db, holder_actor(holder), account, "frozen")
    with pytest.raises(Forbidden):
        account_close.close_account(db, holder_actor(holder), account)
    with pytest.raises(NotFound):
        accounts.set_status(db, SYSTEM, "acct_0000", "frozen")
    assert status(db, account) == "open"


def test_an_account_holding_credits_is_not_closed(db: Database) -> None:
    holder = new_holder(db)
    account = new_account(db, holder).id
    deposit(db, request(account, new_site(db, holder), new_lgu(db), wetland(2_000)))

    with pytest.raises(Conflict) as refused:
        account_close.close_account(db, SYSTEM, account)

    assert refused.value.code == "conflict"
    assert refused.value.fields == {"posted_sqft": 2_000}
    assert status(db, account) == "open"


def test_an_empty_account_closes_for_good(db: Database) -> None:
    account = new_account(db, new_holder(db)).id

    assert account_close.close_account(db, SYSTEM, account).status == "closed"

    for change in ("open", "frozen"):
        with pytest.raises(Conflict):
            accounts.set_status(db, SYSTEM, account, change)
    with pytest.raises(Conflict):
        account_close.close_account(db, SYSTEM, account)
    assert status(db, account) == "closed"


def test_an_account_is_seen_by_the_board_and_its_holder_only(db: Database) -> None:
    holder = new_holder(db)
    account = new_account(db, holder).id
    for stranger in (holder_actor(new_holder(db)), lgu_actor(new_lgu(db))):
        with pytest.raises(NotFound):
            accounts.get_account(db, stranger, account)
        with pytest.raises(NotFound):
            accounts.account_lots(db, stranger, account)
        with pytest.raises(NotFound):
            balances.balances_as_of(db, stranger, account, DAY)
        with pytest.raises(NotFound):
            balances.entries_page(db, stranger, account, 10, None)
        with pytest.raises(NotFound):
            balances.entry_stream(db, stranger, account)


def test_the_listing_pages_by_opening_order_then_id(db: Database) -> None:
    holder = new_holder(db)
    # opened at the same frozen instant: the id orders them
    opened = sorted(new_account(db, holder).id for _ in range(5))

    first = accounts.list_accounts(db, SYSTEM, holder, 2, None)
    second = accounts.list_accounts(db, SYSTEM, holder, 2, first[1].id)
    third = accounts.list_accounts(db, SYSTEM, holder, 2, second[1].id)

    assert [a.id for a in first] == opened[:3]  # two shown, one saying there is more
    assert [a.id for a in second] == opened[2:5]
    assert [a.id for a in third] == opened[4:]
    with pytest.raises(UnknownCursor):  # a cursor naming no account marks no place
        accounts.list_accounts(db, SYSTEM, holder, 2, "acct_0000")


def test_the_listing_follows_the_opening_time_across_pages(db: Database) -> None:
    holder = new_holder(db)
    with freeze_time("2026-06-17 13:00:00"):
        later = new_account(db, holder).id
    with freeze_time("2026-06-17 11:00:00"):
        earlier = new_account(db, holder).id

    first = accounts.list_accounts(db, SYSTEM, holder, 1, None)
    second = accounts.list_accounts(db, SYSTEM, holder, 1, first[0].id)

    assert [a.id for a in first] == [earlier, later]
    assert [a.id for a in second] == [later]


def test_a_holder_lists_its_own_accounts_only(db: Database) -> None:
    holder, other = new_holder(db), new_holder(db)
    mine = sorted(new_account(db, holder).id for _ in range(2))
    theirs = new_account(db, other).id
    me = holder_actor(holder)

    assert [a.id for a in accounts.list_accounts(db, me, None, 10, None)] == mine
    assert [a.id for a in accounts.list_accounts(db, me, holder, 10, None)] == mine
    assert accounts.list_accounts(db, me, other, 10, None) == []
    with pytest.raises(UnknownCursor):  # another's cursor
        accounts.list_accounts(db, me, None, 10, theirs)
    board = [a.id for a in accounts.list_accounts(db, SYSTEM, other, 10, None)]
    assert board == [theirs]


def test_balances_as_of_a_date_count_what_was_effective_by_its_end(db: Database) -> None:
    holder = new_holder(db)
    with freeze_time("2026-05-31 12:00:00"):  # opened before its first deposit's day
        account = new_account(db, holder).id
    site, lgu = new_site(db, holder), new_lgu(db)
    deposit(db, request(account, site, lgu, wetland(4_000), on=date(2026, 6, 1)))
    deposit(db, request(account, site, lgu, wetland(1_000), on=date(2026, 6, 10)))

    before = balances.balances_as_of(db, SYSTEM, account, date(2026, 5, 31))
    between = balances.balances_as_of(db, holder_actor(holder), account, date(2026, 6, 5))
    after = balances.balances_as_of(db, SYSTEM, account, date(2026, 6, 10))

    assert (before.as_of, before.balances) == (date(2026, 5, 31), [])
    (then,) = between.balances
    assert (then.credit_class.code, then.posted_sqft, then.available_sqft) == (
        "BSA5-T2-U",
        4_000,
        4_000,
    )
    assert [b.posted_sqft for b in after.balances] == [5_000]


def test_lots_and_entries_show_what_each_deposit_put_where(db: Database) -> None:
    holder = new_holder(db)
    account = new_account(db, holder).id
    site, lgu = new_site(db, holder), new_lgu(db)
    made = deposit(db, request(account, site, lgu, wetland(4_000), cover(2_000, 1_000)))

    lots = accounts.account_lots(db, holder_actor(holder), account)
    page = balances.entries_page(db, SYSTEM, account, 1, None)
    rest = balances.entries_page(db, SYSTEM, account, 1, (page[0]["seq"], page[0]["entry_id"]))
    streamed = list(balances.entry_stream(db, SYSTEM, account))

    assert [(lot.label, lot.posted_sqft, lot.frozen) for lot in lots] == [
        ("A", 4_000, False),
        ("B", 1_000, False),
    ]
    assert [e["lot_id"] for e in streamed] == [made.credits[1].lot_id, made.credits[0].lot_id]
    assert [e["balance_after_sqft"] for e in streamed] == [5_000, 4_000]
    assert page == streamed and rest == streamed[1:]
    assert {e["transaction_id"] for e in streamed} == {made.transaction_id}


def test_a_page_of_entries_reads_them_in_one_statement_however_many_there_are(
    db: Database,
) -> None:
    """The same statements for a page of an account of two entries as for one of eight, first
    page or later; one of them reads the entries with their balances (the others: the sealing
    of what is queued, and who may see the account)."""
    holder, lgu = new_holder(db), new_lgu(db)

    def funded(deposits: int) -> str:
        account = new_account(db, holder).id
        for _ in range(deposits):
            site = new_site(db, holder)
            deposit(db, request(account, site, lgu, wetland(3_000), cover(2_000, 1_000)))
        return account

    small, large = funded(1), funded(4)
    with own_statements(db) as one:
        balances.entries_page(db, SYSTEM, small, 2, None)
    with own_statements(db) as top:
        page = balances.entries_page(db, SYSTEM, large, 2, None)
    with own_statements(db) as later:
        balances.entries_page(db, SYSTEM, large, 2, (page[1]["seq"], page[1]["entry_id"]))

    assert len(page) == 3 and len(one) == len(top) == len(later)
    reads = [sql for sql in top if "ledger_entries" in sql and "ledger_chain_queue" not in sql]
    assert len(reads) == 1


@contextmanager
def own_statements(db: Database) -> Iterator[list[str]]:
    """The SQL statements this thread sends through ``db`` inside the block (not the background
    sealer's)."""
    sent: list[str] = []
    me = threading.current_thread()

    def note(_conn: Any, _cursor: Any, statement: str, *_args: Any) -> None:
        if threading.current_thread() is me:
            sent.append(statement)

    event.listen(db.engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(db.engine, "before_cursor_execute", note)


def test_the_account_number_is_issued_in_order(db: Database) -> None:
    holder = new_holder(db)
    first, second = new_account(db, holder), new_account(db, holder)
    assert int(second.number[3:]) == int(first.number[3:]) + 1


def test_listed_accounts_hold_what_each_shows_alone_read_at_once(db: Database) -> None:
    """``GET /accounts`` reads every listed account's balances together: the same statements for
    three accounts as for one, and for each the balances ``GET /accounts/{id}`` shows."""
    holder, lgu = new_holder(db), new_lgu(db)

    def funded() -> str:
        account = new_account(db, holder).id
        site = new_site(db, holder)
        deposit(db, request(account, site, lgu, wetland(3_000), cover(2_000, 1_000)))
        return account

    funded()
    with statements(db) as one:
        accounts.list_accounts(db, SYSTEM, holder, 10, None)
    funded(), new_account(db, holder)
    with statements(db) as three:
        listed = accounts.list_accounts(db, SYSTEM, holder, 10, None)

    assert len(three) == len(one) and len(listed) == 3
    for shown in listed:
        alone = accounts.get_account(db, SYSTEM, shown.id)
        assert [(b.credit_class.code, b.posted_sqft, b.available_sqft) for b in shown.balances] == [
            (b.credit_class.code, b.posted_sqft, b.available_sqft) for b in alone.balances
        ]
    assert sum(1 for shown in listed if shown.balances) == 2


def test_an_account_of_several_classes_reads_their_classes_in_one_statement(db: Database) -> None:
    """``GET /accounts/{id}``: one round trip for the credit classes of every balance row."""
    holder, lgu = new_holder(db), new_lgu(db)
    account = new_account(db, holder).id
    pond = ActionRequest("treatment_pond", 1_000, 700, associated_project="CSAH 9")  # restricted
    deposit(db, request(account, new_site(db, holder), lgu, wetland(3_000), pond))
    with statements(db) as sent:
        shown = accounts.get_account(db, SYSTEM, account)
    assert len({row.credit_class.code for row in shown.balances}) == 2
    assert sum("credit_classes" in statement for statement in sent) == 1
