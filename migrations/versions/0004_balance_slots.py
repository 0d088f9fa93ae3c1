"""balance slots: a hot account without limits keeps its balance in several rows

An account's stored balance is the sum of its slot rows. A writer changes one slot of such an
account, so concurrent writers of one hot account (the issuance account every deposit draws on)
no longer wait for each other's commits (docs/scaling.md; bench/README.md "Contention").
Accounts with an overdraft or overcredit limit keep exactly one row, slot 0, which is what their
checks lock. Existing rows become slot 0; existing entries slot 0.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-04 08:25:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


HOT_SLOTS = 8
_SLOTS_1_TO_N = " UNION ALL ".join(f"SELECT {n} AS slot" for n in range(1, HOT_SLOTS))


def upgrade() -> None:
    # a plain ADD COLUMN: SQLite would have to rebuild this table (which others reference) to
    # add a CHECK; the slot rows' own CHECK below is what keeps limited accounts to one row
    op.add_column(
        "ledger_accounts",
        sa.Column("slots", sa.SmallInteger(), server_default="1", nullable=False),
    )
    with op.batch_alter_table("ledger_balances", recreate="always") as batch_op:
        batch_op.add_column(sa.Column("slot", sa.SmallInteger(), server_default="0", nullable=False))
        batch_op.drop_constraint("pk_ledger_balances", type_="primary")
        batch_op.create_primary_key("pk_ledger_balances", ["account_id", "slot"])
        batch_op.create_check_constraint(
            "slot", "slot >= 0 AND (slot = 0 OR NOT (no_overdraft OR no_overcredit))"
        )
    # ADD COLUMN with a constant default: no table rewrite (PostgreSQL), no rebuild (SQLite)
    op.add_column(
        "ledger_entries",
        sa.Column("slot", sa.SmallInteger(), server_default="0", nullable=False),
    )
    # the bank's hot accounts (bank.credits.HOT_ACCOUNT_SLOTS): each credit class's issuance
    # account, which carries no limit, gets its other slots, all zero
    hot = (
        "SELECT id FROM ledger_accounts WHERE code LIKE 'issuance:%' "
        "AND NOT no_overdraft AND NOT no_overcredit"
    )
    op.execute(f"UPDATE ledger_accounts SET slots = {HOT_SLOTS} WHERE id IN ({hot})")
    op.execute(
        "INSERT INTO ledger_balances (account_id, slot, asset, no_overdraft, no_overcredit, "
        "debits_posted, credits_posted, debits_pending, credits_pending, version) "
        "SELECT b.account_id, s.slot, b.asset, b.no_overdraft, b.no_overcredit, 0, 0, 0, 0, 0 "
        f"FROM ledger_balances AS b CROSS JOIN ({_SLOTS_1_TO_N}) AS s "
        f"WHERE b.slot = 0 AND b.account_id IN ({hot})"
    )


def downgrade() -> None:
    # entries written to other slots carry their slot's balance-after, which one row per
    # account cannot explain: refuse rather than leave a ledger that no longer verifies
    used = op.get_bind().execute(sa.text("SELECT count(*) FROM ledger_entries WHERE slot <> 0"))
    if used.scalar():
        raise RuntimeError("cannot downgrade: entries were written to balance slots other than 0")
    op.drop_column("ledger_entries", "slot")
    op.execute("DELETE FROM ledger_balances WHERE slot <> 0")  # no entries: all zero
    with op.batch_alter_table("ledger_balances", recreate="always") as batch_op:
        batch_op.drop_constraint(op.f("ck_ledger_balances_slot"), type_="check")
        batch_op.drop_constraint("pk_ledger_balances", type_="primary")
        batch_op.create_primary_key("pk_ledger_balances", ["account_id"])
        batch_op.drop_column("slot")
    op.drop_column("ledger_accounts", "slots")
