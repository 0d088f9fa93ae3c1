"""reversal and commit guards: what points at a transaction points at the right one

What an ordinary role could still write with plain SQL after 0016, and the engine never would:

* a withdrawal's ``reversal_transaction_id`` goes once from NULL to a transaction reversing the
  withdrawal's own (its ``reverses_id``); any other change of it is refused, and a withdrawal is
  inserted either unreversed or so.  A new ``deposit_reversals`` row names a transaction
  reversing its deposit's (the bank's reversal writes ``ledger.reverse`` first); reversals
  recorded before this revision are left as they are;
* a transaction is chained or queued only sealed: SQLite checks a transaction's balance when it
  is sealed, so an open one was never checked (SQLite: insert triggers on ``ledger_chain_queue``
  and ``ledger_chain``; PostgreSQL inserts every header sealed and now refuses any other at
  COMMIT, so no open transaction commits to be chained);
* a release entry releases a pending entry of its account in the pending transfer it resolves,
  the same amount (PostgreSQL in the deferred check, SQLite by an insert trigger).

The upgrade stops, naming a row, if stored rows already break a guard.  The ledger's guards are
the stores' (``ledger.store.postgresql_ddl``: ``CHECK_SEALED_FUNCTION``; ``sqlite_ddl``:
``GUARDS_0018``); the registry's are here.  Downgrading to 0017 restores the balance check as
0006 made it and drops the triggers.

Revision ID: 0018
Revises: 0017
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities, store
from ledger.store import postgresql_ddl, sqlite_ddl

revision: str = "0018"
down_revision: str | None = "0017"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: a transaction reversing the withdrawal's (``{row}``: ``NEW.``), as its reversal must be
_REVERSES_WITHDRAWAL = (
    "EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.id = {row}reversal_transaction_id AND r.reverses_id = {row}transaction_id)"
)
#: a transaction reversing the deposit's, as a new deposit reversal's must be
_REVERSES_DEPOSIT = (
    "EXISTS (SELECT 1 FROM ledger_transactions AS r JOIN deposits AS d "
    "ON d.transaction_id = r.reverses_id WHERE r.id = NEW.transaction_id AND d.id = NEW.deposit_id)"
)
_WITHDRAWAL_REFUSED = (
    "a withdrawal''s reversal_transaction_id is set once, to a transaction reversing its own: "
    "{op} on withdrawals refused"
)
_DEPOSIT_REFUSED = (
    "a deposit reversal is a transaction reversing the deposit''s: INSERT on deposit_reversals "
    "refused"
)
#: the registry's triggers (both databases) and PostgreSQL's functions behind them
TRIGGERS = (
    "withdrawals_reversal_reverses",
    "withdrawals_inserted_reversal_reverses",
    "deposit_reversals_reverse_the_deposit",
)
_POSTGRESQL_REGISTRY = [
    f"""
    CREATE OR REPLACE FUNCTION withdrawals_reversal_reverses() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF (TG_OP = 'UPDATE' AND OLD.reversal_transaction_id IS NOT NULL)
                OR NOT {_REVERSES_WITHDRAWAL.format(row="NEW.")} THEN
            RAISE EXCEPTION '{_WITHDRAWAL_REFUSED.format(op="%")}', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER withdrawals_reversal_reverses
        BEFORE UPDATE OF reversal_transaction_id ON withdrawals FOR EACH ROW
        WHEN (OLD.reversal_transaction_id IS DISTINCT FROM NEW.reversal_transaction_id)
        EXECUTE FUNCTION withdrawals_reversal_reverses()
    """,
    """
    CREATE TRIGGER withdrawals_inserted_reversal_reverses BEFORE INSERT ON withdrawals
        FOR EACH ROW WHEN (NEW.reversal_transaction_id IS NOT NULL)
        EXECUTE FUNCTION withdrawals_reversal_reverses()
    """,
    f"""
    CREATE OR REPLACE FUNCTION deposit_reversals_reverse_the_deposit() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT {_REVERSES_DEPOSIT} THEN
            RAISE EXCEPTION '{_DEPOSIT_REFUSED}'
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER deposit_reversals_reverse_the_deposit BEFORE INSERT ON deposit_reversals
        FOR EACH ROW EXECUTE FUNCTION deposit_reversals_reverse_the_deposit()
    """,
]
_SQLITE_REGISTRY = [
    f"""
    CREATE TRIGGER withdrawals_reversal_reverses
    BEFORE UPDATE OF reversal_transaction_id ON withdrawals
    WHEN NEW.reversal_transaction_id IS NOT OLD.reversal_transaction_id
        AND (OLD.reversal_transaction_id IS NOT NULL
             OR NOT {_REVERSES_WITHDRAWAL.format(row="NEW.")})
    BEGIN SELECT RAISE(ABORT, '{_WITHDRAWAL_REFUSED.format(op="UPDATE")}'); END
    """,
    f"""
    CREATE TRIGGER withdrawals_inserted_reversal_reverses BEFORE INSERT ON withdrawals
    WHEN NEW.reversal_transaction_id IS NOT NULL AND NOT {_REVERSES_WITHDRAWAL.format(row="NEW.")}
    BEGIN SELECT RAISE(ABORT, '{_WITHDRAWAL_REFUSED.format(op="INSERT")}'); END
    """,
    f"""
    CREATE TRIGGER deposit_reversals_reverse_the_deposit BEFORE INSERT ON deposit_reversals
    WHEN NOT {_REVERSES_DEPOSIT}
    BEGIN SELECT RAISE(ABORT, '{_DEPOSIT_REFUSED}'); END
    """,
]


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _first(sql: str) -> object | None:
    return op.get_bind().execute(sa.text(sql + " LIMIT 1")).scalar()


def _rows_that_break_the_guards() -> list[str]:
    """A row of each guard that stored rows already break, named."""
    found = []
    withdrawal = _first(
        "SELECT w.id FROM withdrawals AS w WHERE w.reversal_transaction_id IS NOT NULL "
        f"AND NOT {_REVERSES_WITHDRAWAL.format(row='w.')} ORDER BY w.id"
    )
    if withdrawal is not None:
        found.append(
            f"withdrawals row {withdrawal} (its reversal_transaction_id does not reverse its "
            "transaction)"
        )
    chained = (
        ""
        if _is_postgresql()  # where every header must be sealed
        else " AND (t.id IN (SELECT transaction_id FROM ledger_chain) "
        "OR t.id IN (SELECT transaction_id FROM ledger_chain_queue))"
    )
    left_open = _first(
        "SELECT t.id FROM ledger_transactions AS t "
        f"WHERE t.state <> 'sealed'{chained} ORDER BY t.id"
    )
    if left_open is not None:
        found.append(f"ledger_transactions row {left_open} (open, never checked for balance)")
    release = _first(
        "SELECT e.id FROM ledger_entries AS e WHERE e.resolves_id IS NOT NULL AND NOT EXISTS ("
        "SELECT 1 FROM ledger_entries AS p JOIN ledger_transactions AS t "
        "ON t.id = p.transaction_id AND t.pending WHERE p.transaction_id = e.resolves_id "
        "AND p.account_id = e.account_id AND p.phase = 'pending' AND p.amount = e.amount) "
        "ORDER BY e.id"
    )
    if release is not None:
        found.append(f"ledger_entries row {release} (a release of no pending entry of its account)")
    return found


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    broken = _rows_that_break_the_guards()
    if broken:
        raise RuntimeError(
            "cannot add the reversal and commit guards: stored rows break them: "
            + "; ".join(broken)
        )
    if _is_postgresql():
        for statement in [postgresql_ddl.CHECK_SEALED_FUNCTION, *_POSTGRESQL_REGISTRY]:
            op.execute(statement)
        return
    for statement in [*sqlite_ddl.GUARDS_0018, *_SQLITE_REGISTRY]:
        op.execute(statement)
    _quantity_guards_first({"ledger_entries", "withdrawals", "deposit_reversals"})


def _quantity_guards_first(tables: set[str]) -> None:
    """SQLite fires a table's triggers newest first: the quantity guards (0008) of the tables
    guarded here are made again, after the guards, so that a value that is not an integer is
    refused as such first (as 0016 does)."""
    bind = op.get_bind()
    for table, column, nullable in store.of(bind).ddl.quantity_columns(bind):
        if table in tables:
            quantities.drop_sqlite(bind, table, [column])
            quantities.install_sqlite(bind, table, [(column, nullable)])


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    if _is_postgresql():
        op.execute(
            "DROP TRIGGER IF EXISTS deposit_reversals_reverse_the_deposit ON deposit_reversals"
        )
        op.execute("DROP TRIGGER IF EXISTS withdrawals_inserted_reversal_reverses ON withdrawals")
        op.execute("DROP TRIGGER IF EXISTS withdrawals_reversal_reverses ON withdrawals")
        op.execute("DROP FUNCTION IF EXISTS deposit_reversals_reverse_the_deposit()")
        op.execute("DROP FUNCTION IF EXISTS withdrawals_reversal_reverses()")
        op.execute(postgresql_ddl.CHECK_BALANCED_FUNCTION)  # as 0006 made it
        return
    for name in reversed(TRIGGERS):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    for statement in sqlite_ddl.DROP_GUARDS_0018:
        op.execute(statement)
