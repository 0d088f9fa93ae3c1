"""Small helpers shared by the ledger's integration and property tests.

Every name a test creates on the shared database is unique (uuid4), so tests never see each
other's accounts or idempotency keys.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable
from datetime import date
from typing import Any

from sqlalchemy import Connection, bindparam, text

from ledger import Balance, Database, Leg, Meta, Posted, balances, create_account, transfer

DAY = date(2026, 3, 2)


def unique(prefix: str = "t") -> str:
    """A name no other test uses."""
    return f"{prefix}-{uuid.uuid4().hex}"


def meta(day: date = DAY, key: str | None = None, memo: str | None = None) -> Meta:
    """A ``Meta`` with a fresh idempotency key unless ``key`` is given."""
    return Meta(key or unique("key"), day, memo=memo)


def open_accounts(db: Database, asset: str, *no_overdraft: bool) -> list[int]:
    """One account of ``asset`` per flag (``True``: debits must not exceed credits)."""
    with db.transaction() as session:
        return [
            create_account(
                session, code=unique("acct"), asset=asset, name="test", no_overdraft=flag
            )
            for flag in no_overdraft
        ]


def move(db: Database, source: int, target: int, amount: int, day: date = DAY) -> Posted:
    """Transfer ``amount`` from ``source`` to ``target`` in its own unit of work."""
    return db.run(lambda s: transfer(s, "transfer", [Leg(source, target, amount)], meta(day)))


def balance(db: Database, account_id: int) -> Balance:
    """The account's current balance."""
    with db.transaction() as session:
        return balances(session, [account_id])[account_id]


def balance_map(db: Database, account_ids: Iterable[int]) -> dict[int, Balance]:
    """Current balances of several accounts, read in one unit of work."""
    with db.transaction() as session:
        return balances(session, list(account_ids))


def scalar(db: Database, sql: str, **params: Any) -> Any:
    """One value from raw SQL."""
    with db.engine.connect() as connection:
        return connection.execute(text(sql), params).scalar()


def stored_rows(db: Database, account_ids: Iterable[int]) -> list[tuple[int, ...]]:
    """The stored balance rows of these accounts, as plain tuples, ordered by account."""
    ids = sorted(account_ids)
    with db.engine.connect() as connection:
        rows = connection.execute(
            text(
                "SELECT account_id, debits_posted, credits_posted, debits_pending, "
                "credits_pending, version FROM ledger_balances WHERE account_id IN :ids "
                "ORDER BY account_id"
            ).bindparams(bindparam("ids", expanding=True)),
            {"ids": ids},
        ).all()
    return [tuple(int(x) for x in row) for row in rows]


def row_counts(db: Database) -> tuple[int, int, int]:
    """How many transactions, entries and open-pending rows the whole ledger holds."""
    with db.engine.connect() as connection:
        return tuple(
            int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())
            for table in ("ledger_transactions", "ledger_entries", "ledger_open_pending")
        )  # type: ignore[return-value]


def insert_raw_header(connection: Connection, state: str, tx_id: int | None = None) -> int:
    """A transaction header written with raw SQL, behind the engine's back (with the id
    ``tx_id``, if given, rather than the next)."""
    columns = "kind, state, pending, idempotency_key, request_hash, effective_on, recorded_at"
    values = "'raw', :state, :pending, :key, :hash, CURRENT_DATE, CURRENT_TIMESTAMP"
    if tx_id is not None:
        columns, values = f"id, {columns}", f":id, {values}"
    return int(
        connection.execute(
            text(f"INSERT INTO ledger_transactions ({columns}) VALUES ({values}) RETURNING id"),
            {
                "id": tx_id,
                "state": state,
                "pending": False,
                "key": unique("raw"),
                "hash": "0" * 64,
            },
        ).scalar_one()
    )


def insert_raw_entry(
    connection: Connection, transaction_id: int, account_id: int, asset: str, amount: int
) -> None:
    """A posted entry written with raw SQL."""
    connection.execute(
        text(
            "INSERT INTO ledger_entries (transaction_id, account_id, asset, amount, phase, "
            "balance_after, account_version, effective_on) VALUES (:tx, :account, :asset, "
            ":amount, 'posted', 0, 0, CURRENT_DATE)"
        ),
        {"tx": transaction_id, "account": account_id, "asset": asset, "amount": amount},
    )


def seal_raw(connection: Connection, transaction_id: int) -> None:
    """Seal an open transaction the way the engine does on SQLite."""
    connection.execute(
        text("UPDATE ledger_transactions SET state = 'sealed' WHERE id = :id"),
        {"id": transaction_id},
    )


def write_raw_transaction(
    db: Database,
    entries: list[tuple[int, str, int]],
    header_state: str | None = None,
    tx_id: int | None = None,
) -> int:
    """Commit a transaction with raw SQL: on PostgreSQL insert it sealed (the deferred trigger
    checks at COMMIT); on SQLite insert it open, add the entries, then seal it.  Returns its id
    (``tx_id`` if given).
    """
    postgresql = db.dialect == "postgresql"
    with db.engine.begin() as connection:
        state = header_state or ("sealed" if postgresql else "open")
        tx_id = insert_raw_header(connection, state, tx_id)
        for account_id, asset, amount in entries:
            insert_raw_entry(connection, tx_id, account_id, asset, amount)
        if not postgresql and state == "open":
            seal_raw(connection, tx_id)
    return tx_id


def write_raw_with_an_entry_after_an_early_check(
    db: Database, asset: str, debit: int, credit: int
) -> None:
    """PostgreSQL: a raw transaction balanced when ``SET CONSTRAINTS ALL IMMEDIATE`` runs its
    deferred checks early, then given one more entry (7 to ``credit``) before COMMIT."""
    with db.engine.begin() as connection:
        tx_id = insert_raw_header(connection, "sealed")
        insert_raw_entry(connection, tx_id, debit, asset, -5)
        insert_raw_entry(connection, tx_id, credit, asset, 5)
        connection.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
        connection.execute(text("SET CONSTRAINTS ALL DEFERRED"))
        insert_raw_entry(connection, tx_id, credit, asset, 7)
