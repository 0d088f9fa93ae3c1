"""The database refuses what the ledger's Python refuses (migration 0016), from an ordinary role
with plain SQL, on SQLite and PostgreSQL: an account never changes, a balance row keeps its
account, slot, asset and limits, an entry and a balance row are in their account's asset,
PostgreSQL refuses TRUNCATE of every ledger and registry table, and the registry's quantities
that are never zero or negative are refused as such.  The same statements without what the guard
looks for are accepted; the engine's and the bank's own writes are the other integration and API
tests.
"""

from __future__ import annotations

import contextlib
import re
import uuid
import warnings
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import Connection, MetaData, Table, text
from sqlalchemy.exc import DBAPIError, IntegrityError, SAWarning

from api import create_app
from bank.registry import SEALED_TABLES
from ledger import Database, verify
from ledger.sealer import seal_all
from ledger.store.postgresql_ddl import NO_TRUNCATE
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit
from tests.api.test_audit import workload
from tests.integration.ledger_kit import (
    move,
    open_accounts,
    row_counts,
    scalar,
    stored_rows,
    unique,
    write_raw_transaction,
)

#: what each database says when 0016's ledger triggers refuse a change
IMMUTABLE = "ledger rows are immutable"


def _refused(db: Database, statement: str, match: str, **params: Any) -> None:
    with pytest.raises(IntegrityError, match=match):
        with db.engine.begin() as connection:
            connection.execute(text(statement), params)


def _run(db: Database, statement: str, **params: Any) -> None:
    with db.engine.begin() as connection:
        connection.execute(text(statement), params)


def _account_row(db: Database, account_id: int) -> tuple[Any, ...]:
    with db.engine.connect() as connection:
        row = connection.execute(
            text("SELECT * FROM ledger_accounts WHERE id = :a"), {"a": account_id}
        ).one()
    return tuple(row)


def _balance_identity(db: Database, account_id: int) -> list[tuple[Any, ...]]:
    with db.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT account_id, slot, asset, no_overdraft, no_overcredit FROM ledger_balances "
                "WHERE account_id = :a ORDER BY slot"
            ),
            {"a": account_id},
        ).all()
    return [tuple(row) for row in rows]


# --- 1. an account never changes -----------------------------------------------------------------


@pytest.mark.parametrize(
    "assignment",
    [
        "code = code || '-edited'",
        "asset = 'OTHER'",
        "name = 'renamed'",
        "no_overdraft = NOT no_overdraft",
        "no_overcredit = NOT no_overcredit",
        "created_at = created_at",
        "slots = 8",
        "id = id + 1000000",
    ],
)
def test_an_account_refuses_an_update_of_any_column(fresh_db, assignment):
    asset = unique("X")
    (account,) = open_accounts(fresh_db, asset, False)
    before = _account_row(fresh_db, account)
    _refused(
        fresh_db,
        f"UPDATE ledger_accounts SET {assignment} WHERE id = :a",
        f"{IMMUTABLE}: UPDATE on ledger_accounts",
        a=account,
    )
    assert _account_row(fresh_db, account) == before


def test_an_account_refuses_delete_and_still_takes_new_accounts_and_transfers(fresh_db):
    asset = unique("X")
    issuer, holder = open_accounts(fresh_db, asset, False, True)
    move(fresh_db, issuer, holder, 7)
    _refused(
        fresh_db,
        "DELETE FROM ledger_accounts WHERE id = :a",
        f"{IMMUTABLE}: DELETE on ledger_accounts",
        a=holder,
    )
    (later,) = open_accounts(fresh_db, asset, True)  # an INSERT is what the guard leaves alone
    move(fresh_db, holder, later, 7)
    assert [r[2] - r[1] for r in stored_rows(fresh_db, [issuer, holder, later])] == [-7, 0, 7]


# --- 2. a balance row keeps its identity and limits; its totals move -----------------------------


@pytest.mark.parametrize(
    "assignment",
    [
        "account_id = :other",
        "slot = 5",  # no limit on the account: the slot CHECK alone would allow it
        "asset = 'OTHER'",
        "no_overdraft = NOT no_overdraft",
        "no_overcredit = NOT no_overcredit",
    ],
)
def test_a_balance_row_refuses_a_change_of_its_account_slot_asset_or_limits(fresh_db, assignment):
    asset = unique("X")
    account, other = open_accounts(fresh_db, asset, False, False)
    before = _balance_identity(fresh_db, account)
    _refused(
        fresh_db,
        f"UPDATE ledger_balances SET {assignment} WHERE account_id = :a",
        f"{IMMUTABLE}: UPDATE on ledger_balances",
        a=account,
        other=other,
    )
    assert _balance_identity(fresh_db, account) == before


def test_a_balance_rows_totals_stay_writable_and_a_no_op_identity_assignment_passes(fresh_db):
    asset = unique("X")
    issuer, holder = open_accounts(fresh_db, asset, False, True)
    move(fresh_db, issuer, holder, 5)
    _run(
        fresh_db,
        "UPDATE ledger_balances SET account_id = account_id, slot = slot, asset = asset, "
        "no_overdraft = no_overdraft, no_overcredit = no_overcredit, "
        "credits_posted = credits_posted + 3, version = version + 1 WHERE account_id = :a",
        a=holder,
    )
    assert stored_rows(fresh_db, [holder]) == [(holder, 0, 8, 0, 0, 2)]
    seal_all(fresh_db)
    with fresh_db.engine.connect() as connection:
        report = verify(connection)
    assert report.first_broken is not None and report.first_broken.kind == "stored_balance"


def test_a_balance_row_refuses_delete(fresh_db):
    asset = unique("X")
    (account,) = open_accounts(fresh_db, asset, False)
    _refused(
        fresh_db,
        "DELETE FROM ledger_balances WHERE account_id = :a",
        f"{IMMUTABLE}: DELETE on ledger_balances",
        a=account,
    )
    assert len(_balance_identity(fresh_db, account)) == 1


# --- 3. an entry, and a balance row, are in their account's asset --------------------------------

#: PostgreSQL: the composite foreign keys; SQLite: the insert triggers
ENTRY_ASSET = "fk_ledger_entries_account_id_ledger_accounts|in its account's asset"
BALANCE_OF_ACCOUNT = "fk_ledger_balances_account_id_ledger_accounts|account's asset and limits"


def test_an_entry_in_another_asset_than_its_accounts_is_refused(fresh_db):
    asset, other = unique("X"), unique("Y")
    a, b = open_accounts(fresh_db, asset, False, False)
    before = row_counts(fresh_db)
    with pytest.raises(IntegrityError, match=ENTRY_ASSET):
        write_raw_transaction(fresh_db, [(a, other, -5), (b, other, 5)])  # balanced, in Y
    assert row_counts(fresh_db) == before
    write_raw_transaction(fresh_db, [(a, asset, -5), (b, asset, 5)])  # the same, in X
    assert row_counts(fresh_db)[1] == before[1] + 2


_INSERT_BALANCE = (
    "INSERT INTO ledger_balances (account_id, slot, asset, no_overdraft, no_overcredit, "
    "debits_posted, credits_posted, debits_pending, credits_pending, version) "
    "VALUES (:a, :slot, :asset, :no_overdraft, false, 0, :credits, 0, 0, 0)"
)


def _raw_account(db: Database, asset: str, *, no_overdraft: bool) -> int:
    """An account inserted with raw SQL, without its balance row."""
    with db.engine.begin() as connection:
        return int(
            connection.execute(
                text(
                    "INSERT INTO ledger_accounts (code, asset, name, no_overdraft, "
                    "no_overcredit, created_at, slots) VALUES (:code, :asset, 'raw', "
                    ":no_overdraft, false, CURRENT_TIMESTAMP, 1) RETURNING id"
                ),
                {"code": unique("raw"), "asset": asset, "no_overdraft": no_overdraft},
            ).scalar_one()
        )


def test_a_balance_row_in_another_asset_or_with_other_limits_than_its_accounts_is_refused(
    fresh_db,
):
    asset = unique("X")
    free, limited = open_accounts(fresh_db, asset, False, True)
    bare = _raw_account(fresh_db, asset, no_overdraft=True)
    for values in (
        {"a": free, "slot": 1, "asset": unique("Y"), "no_overdraft": False},
        # an account with a limit whose balance row says it has none: no CHECK would see it go
        # below zero
        {"a": bare, "slot": 0, "asset": asset, "no_overdraft": False},
        # a second row of an account with a limit, under no limit, would hold credits its
        # limit's CHECK never sees
        {"a": limited, "slot": 1, "asset": asset, "no_overdraft": False},
    ):
        _refused(fresh_db, _INSERT_BALANCE, BALANCE_OF_ACCOUNT, credits=1_000, **values)
    assert [len(_balance_identity(fresh_db, a)) for a in (free, limited, bare)] == [1, 1, 0]
    # with the account's own asset and limits they go in
    _run(fresh_db, _INSERT_BALANCE, a=bare, slot=0, asset=asset, no_overdraft=True, credits=0)
    _run(fresh_db, _INSERT_BALANCE, a=free, slot=1, asset=asset, no_overdraft=False, credits=0)
    assert [r[1] for r in _balance_identity(fresh_db, free)] == [0, 1]
    assert _balance_identity(fresh_db, bare) == [(bare, 0, asset, True, False)]


# --- 4. PostgreSQL: no TRUNCATE ------------------------------------------------------------------

#: every table whose rows the ledger or the registry keep, with what refuses its TRUNCATE
TRUNCATE_REFUSED = {
    **{table: f"TRUNCATE on {table} refused" for table in NO_TRUNCATE},
    "ledger_entries": "TRUNCATE on ledger_entries refused",
    "ledger_row_seals": "TRUNCATE on ledger_row_seals refused",
    **{t.name: f"TRUNCATE on {t.name} refused" for t in SEALED_TABLES},
    "party_edits": "party_edits is append-only",
}


def _counts(connection: Connection) -> dict[str, int]:
    return {
        table: int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
        for table in TRUNCATE_REFUSED
    }


def test_postgresql_refuses_truncate_of_every_ledger_and_registry_table(fresh_db, backend):
    if backend != "postgresql":
        pytest.skip("SQLite has no TRUNCATE (a DELETE is refused by the row triggers)")
    asset = unique("X")
    issuer, holder = open_accounts(fresh_db, asset, False, True)
    move(fresh_db, issuer, holder, 4)
    seal_all(fresh_db)
    with fresh_db.engine.connect() as connection:
        before = _counts(connection)
    assert before["ledger_entries"] == 2 and before["ledger_accounts"] == 2
    for table, refusal in TRUNCATE_REFUSED.items():
        # CASCADE: what a foreign key would refuse first is truncated with it, so the table's
        # own trigger is what refuses (it fires first, naming the table)
        # (party_edits' function, of 0014, raises without an integrity error code)
        with pytest.raises(DBAPIError, match=re.escape(refusal)):
            with fresh_db.engine.begin() as connection:
                connection.execute(text(f"TRUNCATE {table} CASCADE"))
    with fresh_db.engine.begin() as connection:
        assert _counts(connection) == before
        # the guard is the statement, not emptying: rows the engine removes one by one still go
        connection.execute(text("DELETE FROM ledger_verify_checkpoints"))
        connection.execute(text("TRUNCATE web_sessions"))  # a table the ledger does not keep


# --- 5. the registry's quantities ----------------------------------------------------------------

#: (table, column, refused values, an accepted value; ``cap`` is the row's own cap) per guard
QUANTITIES = (
    ("deposits", "total_credit_sqft", "ck_deposits_total_credit_sqft_positive", (0, -5), 1),
    ("deposit_actions", "area_sqft", "ck_deposit_actions_area_sqft_positive", (0,), 1),
    (
        "deposit_actions",
        "credit_sqft",
        "ck_deposit_actions_credit_sqft_within_cap",
        (0, "cap + 1"),
        "cap",
    ),
    (
        "bank_site_credit_areas",
        "area_sqft",
        "ck_bank_site_credit_areas_area_sqft_not_negative",
        (-1,),
        0,
    ),
    ("transfers", "amount_sqft", "ck_transfers_amount_sqft_positive", (0, -1), 1),
    ("transfers", "price_per_sqft_cents", "ck_transfers_price_not_negative", (-1,), 0),
    ("transfer_lots", "amount_sqft", "ck_transfer_lots_amount_sqft_positive", (0,), 1),
    ("reservations", "amount_sqft", "ck_reservations_amount_sqft_positive", (0,), 1),
    ("reservation_lots", "amount_sqft", "ck_reservation_lots_amount_sqft_positive", (0,), 1),
    ("withdrawals", "withdrawn_sqft", "ck_withdrawals_withdrawn_sqft_not_negative", (-1,), 0),
    (
        "withdrawal_allocations",
        "amount_sqft",
        "ck_withdrawal_allocations_amount_sqft_positive",
        (0,),
        1,
    ),
    ("payments", "amount_cents", "ck_payments_amount_cents_positive", (0, -100), 1),
    ("securities", "amount_cents", "ck_securities_amount_cents_positive", (0,), 1),
)


#: tables the database takes a row of only with the transaction keyed by its own id that moved
#: its amount (0032): a copy of another row, with a quantity its guard accepts, is refused for that
TIED_TO_THEIR_TRANSACTION = {
    "payments": "a payment's amount_cents is what its own transaction",
    "securities": "a security's amount_cents is what its own pending transfer",
}


@pytest.fixture
def filled_app(fresh_db_url: str) -> Iterator[Flask]:
    """A fresh database holding the audit workload: a row in every table ``QUANTITIES`` names."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    workload(Kit(Api(application.test_client(), make_token(application, "board")), application))
    yield application
    application.extensions["wetbank.db"].dispose()


def _copy(connection: Connection, table: Table, column: str, value: Any) -> dict[str, Any]:
    """A row of ``table`` with a new id and ``column`` set to ``value``."""
    row = dict(connection.execute(table.select().limit(1)).mappings().one())
    if isinstance(row["id"], int):
        row["id"] = row["id"] + 10_000_000
    else:
        row["id"] = f"guard-{uuid.uuid4().hex[:12]}"
    if value == "cap":
        value = row["cap_sqft"]
    elif value == "cap + 1":
        value = row["cap_sqft"] + 1
    row[column] = value
    if table.name == "reservation_lots":  # its pending transaction is its own (unique)
        row["pending_transaction_id"] = connection.execute(
            text(
                "SELECT min(id) FROM ledger_transactions WHERE id NOT IN "
                "(SELECT pending_transaction_id FROM reservation_lots "
                "WHERE pending_transaction_id IS NOT NULL)"
            )
        ).scalar_one()
    return row


@pytest.mark.parametrize(
    ("table_name", "column", "guard", "refused", "accepted"),
    QUANTITIES,
    ids=[guard for *_, guard, _r, _a in QUANTITIES],
)
def test_the_registry_refuses_a_quantity_it_never_records(
    filled_app, table_name, column, guard, refused, accepted
):
    engine = filled_app.extensions["wetbank.db"].engine
    with engine.connect() as connection, warnings.catch_warnings():
        # SQLite's reflection skips an index on an expression (the lots' listing order, 0029):
        # the columns are what this test reads
        warnings.filterwarnings("ignore", "Skipped unsupported reflection", SAWarning)
        table = Table(table_name, MetaData(), autoload_with=connection)
        rows = int(connection.execute(text(f"SELECT count(*) FROM {table_name}")).scalar_one())
    assert rows, f"the workload wrote no {table_name}"
    for value in refused:
        with pytest.raises(IntegrityError, match=guard):
            with engine.begin() as connection:
                connection.execute(table.insert(), [_copy(connection, table, column, value)])
    tied = TIED_TO_THEIR_TRANSACTION.get(table_name)
    with contextlib.ExitStack() as refusal:
        if tied:  # the quantity passes its guard; the copy is refused for its transaction
            refusal.enter_context(pytest.raises(IntegrityError, match=tied))
        with engine.begin() as connection:
            connection.execute(table.insert(), [_copy(connection, table, column, accepted)])
    with engine.connect() as connection:
        after = int(connection.execute(text(f"SELECT count(*) FROM {table_name}")).scalar_one())
    assert after == rows + (0 if tied else 1)


def test_an_engine_write_still_counts_as_one_account_and_asset(db):
    """The write path on each store: entries take their account's asset (PostgreSQL's from the
    balance row, which the composite key ties to the account)."""
    asset = unique("X")
    issuer, holder = open_accounts(db, asset, False, True)
    posted = move(db, issuer, holder, 11)
    assets = scalar(
        db,
        "SELECT count(DISTINCT e.asset) FROM ledger_entries AS e JOIN ledger_accounts AS a "
        "ON a.id = e.account_id AND a.asset = e.asset WHERE e.transaction_id = :t",
        t=posted.transaction_id,
    )
    assert assets == 1
