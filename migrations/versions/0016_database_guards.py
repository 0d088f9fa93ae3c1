"""database guards: what the ledger's Python refuses, the database refuses too

What an ordinary role could otherwise write with plain INSERT, UPDATE, DELETE or TRUNCATE, and
the engine never would (nor ``audit verify`` notice), is refused.  On both databases:

* an account is immutable once created: UPDATE and DELETE of ``ledger_accounts`` are refused
  (no code path updates it; only revision 0004 did, before this one);
* a balance row keeps its account, slot, asset and limits (``UPDATE OF`` them is refused, a
  no-op assignment excepted) and is never deleted; its running totals stay the engine's to
  update, and its UPDATE names no other column, so the trigger is not even considered there;
* an entry is in its account's asset, and a balance row carries its account's asset and limits:
  PostgreSQL by composite foreign keys, (account_id, asset) and (account_id, asset,
  no_overdraft, no_overcredit), to two new unique keys of ``ledger_accounts``, replacing the
  plain account_id foreign keys under the same names (one index probe per entry, as before);
  SQLite by BEFORE INSERT triggers (it adds a foreign key only by rebuilding a table, which
  would drop the triggers on it);
* PostgreSQL: TRUNCATE is refused on every ledger table (``ledger_entries``, ``ledger_row_seals``
  and the sixteen sealed registry tables refused it already) and on ``party_edits``;
* the registry's quantities that are never zero or negative are refused as such: a deposit's
  credit, area and total, a transfer's and its lots' amounts, a reservation's and its lots', a
  withdrawal's allocations, a payment and a security are positive, an action's credit at most
  its cap; a transfer's price, a withdrawal's total and a site's registered area not negative.
  PostgreSQL by CHECK constraints; SQLite by BEFORE INSERT triggers (a CHECK would need a table
  rebuild; the columns are sealed, so no UPDATE can change them afterwards).  SQLite fires a
  table's triggers newest first: the quantity guards (0008) of the tables guarded here are made
  again after these, so that a value that is not an integer is still refused as such first.

The upgrade stops, naming the table and a row, if stored rows already break a guard: such rows
need a person's look.  The ledger's triggers are the stores' (``ledger.store.postgresql_ddl``,
``sqlite_ddl``: ``GUARDS``), which ``ledger.ddl.drop_triggers`` drops with the others.

Revision ID: 0016
Revises: 0015
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities, store
from ledger.store import postgresql_ddl, sqlite_ddl

revision: str = "0016"
down_revision: str | None = "0015"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_LIMITS = ("asset", "no_overdraft", "no_overcredit")
#: the unique keys of ``ledger_accounts`` the composite foreign keys point at
UNIQUE_KEYS = (
    ("uq_ledger_accounts_id_asset", ("id", "asset")),
    ("uq_ledger_accounts_id_limits", ("id", *_LIMITS)),
)
#: (table, its columns, ledger_accounts' columns): PostgreSQL's composite foreign keys, named as
#: the plain ones they replace
FOREIGN_KEYS = (
    ("ledger_entries", ("account_id", "asset"), ("id", "asset")),
    ("ledger_balances", ("account_id", *_LIMITS), ("id", *_LIMITS)),
)

#: (table, name, condition): each registry quantity's floor (and a deposit action's cap);
#: ``ck_<table>_<name>`` on both databases.  ``{row}`` is where the row's columns are (nothing in
#: a CHECK, ``NEW.`` in a trigger).  A NULL passes, as it passes a CHECK.
CHECKS = (
    ("deposits", "total_credit_sqft_positive", "{row}total_credit_sqft > 0"),
    ("deposit_actions", "area_sqft_positive", "{row}area_sqft > 0"),
    (
        "deposit_actions",
        "credit_sqft_within_cap",
        "{row}credit_sqft > 0 AND {row}credit_sqft <= {row}cap_sqft",
    ),
    ("bank_site_credit_areas", "area_sqft_not_negative", "{row}area_sqft >= 0"),
    ("transfers", "amount_sqft_positive", "{row}amount_sqft > 0"),
    ("transfers", "price_not_negative", "{row}price_per_sqft_cents >= 0"),
    ("transfer_lots", "amount_sqft_positive", "{row}amount_sqft > 0"),
    ("reservations", "amount_sqft_positive", "{row}amount_sqft > 0"),
    ("reservation_lots", "amount_sqft_positive", "{row}amount_sqft > 0"),
    ("withdrawals", "withdrawn_sqft_not_negative", "{row}withdrawn_sqft >= 0"),
    ("withdrawal_allocations", "amount_sqft_positive", "{row}amount_sqft > 0"),
    ("payments", "amount_cents_positive", "{row}amount_cents > 0"),
    ("securities", "amount_cents_positive", "{row}amount_cents > 0"),
)


def _fk_name(table: str) -> str:
    return f"fk_{table}_account_id_ledger_accounts"


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _first(sql: str) -> object | None:
    return op.get_bind().execute(sa.text(sql + " LIMIT 1")).scalar()


def _rows_that_break_the_guards() -> list[str]:
    """A row of each guard that stored rows already break, named."""
    found = []
    entry = _first(
        "SELECT e.id FROM ledger_entries AS e JOIN ledger_accounts AS a ON a.id = e.account_id "
        "WHERE e.asset <> a.asset ORDER BY e.id"
    )
    if entry is not None:
        found.append(f"ledger_entries row {entry} (asset not its account's)")
    balance = _first(
        "SELECT b.account_id FROM ledger_balances AS b "
        "JOIN ledger_accounts AS a ON a.id = b.account_id "
        "WHERE b.asset <> a.asset OR b.no_overdraft <> a.no_overdraft "
        "OR b.no_overcredit <> a.no_overcredit ORDER BY b.account_id"
    )
    if balance is not None:
        found.append(f"ledger_balances of account {balance} (asset or limits not its account's)")
    for table, name, condition in CHECKS:
        held = condition.format(row="")
        row = _first(f"SELECT id FROM {table} WHERE NOT ({held}) ORDER BY id")
        if row is not None:
            found.append(f"{table} row {row} (ck_{table}_{name}: {held})")
    return found


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    broken = _rows_that_break_the_guards()
    if broken:
        raise RuntimeError(
            "cannot add the database guards: stored rows break them: " + "; ".join(broken)
        )
    if _is_postgresql():
        _upgrade_postgresql()
    else:
        _upgrade_sqlite()


def _upgrade_postgresql() -> None:
    for name, columns in UNIQUE_KEYS:
        op.execute(
            f"ALTER TABLE ledger_accounts ADD CONSTRAINT {name} UNIQUE ({', '.join(columns)})"
        )
    for table, columns, referred in FOREIGN_KEYS:
        op.execute(
            f"ALTER TABLE {table} DROP CONSTRAINT {_fk_name(table)}, "
            f"ADD CONSTRAINT {_fk_name(table)} FOREIGN KEY ({', '.join(columns)}) "
            f"REFERENCES ledger_accounts ({', '.join(referred)})"
        )
    for table, name, condition in CHECKS:
        held = condition.format(row="")
        op.execute(f"ALTER TABLE {table} ADD CONSTRAINT ck_{table}_{name} CHECK ({held})")
    for statement in postgresql_ddl.GUARDS:
        op.execute(statement)
    op.execute(
        "CREATE TRIGGER party_edits_no_truncate BEFORE TRUNCATE ON party_edits "
        "FOR EACH STATEMENT EXECUTE FUNCTION party_edits_append_only()"
    )


def _upgrade_sqlite() -> None:
    for name, columns in UNIQUE_KEYS:
        op.execute(f"CREATE UNIQUE INDEX {name} ON ledger_accounts ({', '.join(columns)})")
    for table, name, condition in CHECKS:
        op.execute(
            f"CREATE TRIGGER {table}_{name} BEFORE INSERT ON {table} "
            f"WHEN NOT ({condition.format(row='NEW.')}) "
            f"BEGIN SELECT RAISE(ABORT, 'check constraint ck_{table}_{name} failed: "
            f"INSERT on {table} refused'); END"
        )
    for statement in sqlite_ddl.GUARDS:
        op.execute(statement)
    _quantity_guards_first({"ledger_balances", "ledger_entries", *(t for t, _n, _c in CHECKS)})


def _quantity_guards_first(tables: set[str]) -> None:
    """SQLite fires a table's triggers newest first, and the quantity guards (0008) run before
    every other check, so that a value that is not an integer is refused as such: those of the
    tables guarded here are made again, after the guards."""
    bind = op.get_bind()
    for table, column, nullable in store.of(bind).ddl.quantity_columns(bind):
        if table in tables:
            quantities.drop_sqlite(bind, table, [column])
            quantities.install_sqlite(bind, table, [(column, nullable)])


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    if _is_postgresql():
        op.execute("DROP TRIGGER IF EXISTS party_edits_no_truncate ON party_edits")
        for statement in postgresql_ddl.DROP_GUARDS:
            op.execute(statement)
        for table, name, _condition in reversed(CHECKS):
            op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS ck_{table}_{name}")
        for table, _columns, _referred in reversed(FOREIGN_KEYS):
            op.execute(
                f"ALTER TABLE {table} DROP CONSTRAINT {_fk_name(table)}, "
                f"ADD CONSTRAINT {_fk_name(table)} FOREIGN KEY (account_id) "
                "REFERENCES ledger_accounts (id)"
            )
        for name, _columns in reversed(UNIQUE_KEYS):
            op.execute(f"ALTER TABLE ledger_accounts DROP CONSTRAINT IF EXISTS {name}")
        return
    for statement in sqlite_ddl.DROP_GUARDS:
        op.execute(statement)
    for table, name, _condition in reversed(CHECKS):
        op.execute(f"DROP TRIGGER IF EXISTS {table}_{name}")
    for name, _columns in reversed(UNIQUE_KEYS):
        op.execute(f"DROP INDEX IF EXISTS {name}")
