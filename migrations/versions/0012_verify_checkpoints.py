"""verified checkpoints, and the order registry seals were written in

A full verify that finds everything intact records a checkpoint (``ledger.checkpoint``): the
chain head it verified, the largest transaction id it saw, where the registry's seals stood,
when it ran and for how long, and (``ledger_verify_balances``) the balances the verified chain
implies per account and slot, all of it hashed.  ``GET /audit/verify`` then checks only what was
written since.

To know which seals are newer than a checkpoint, PostgreSQL numbers them: ``position``, an
identity column (existing seals are numbered in the order the table holds them), indexed.
SQLite's implicit rowid already grows with every seal (the table refuses DELETE).

Plain CREATE TABLE / ADD COLUMN: a batch rebuild of ``ledger_row_seals`` would drop the
triggers that keep it immutable.

Revision ID: 0012
Revises: 0011
Create Date: 2026-12-09 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0012"
down_revision: str | None = "0011"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
_TOTALS = ("debits_posted", "credits_posted", "debits_pending", "credits_pending")


def upgrade() -> None:
    op.create_table(
        "ledger_verify_checkpoints",
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        sa.Column("seq", sa.BigInteger(), nullable=False),
        sa.Column("head_hash", sa.String(length=64), nullable=False),
        sa.Column("max_transaction_id", sa.BigInteger(), nullable=False),
        sa.Column("seal_position", sa.BigInteger(), nullable=False),
        sa.Column("seal_gaps", sa.Text(), nullable=False),
        sa.Column("ran_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("duration_ms", sa.BigInteger(), nullable=False),
        sa.Column("transactions", sa.BigInteger(), nullable=False),
        sa.Column("accounts", sa.BigInteger(), nullable=False),
        sa.Column("hash", sa.String(length=64), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_verify_checkpoints")),
    )
    op.create_table(
        "ledger_verify_balances",
        sa.Column("checkpoint_id", _ID, nullable=False),
        sa.Column("account_id", sa.BigInteger(), nullable=False),
        sa.Column("slot", sa.SmallInteger(), nullable=False),
        *(sa.Column(name, sa.BigInteger(), nullable=False) for name in _TOTALS),
        sa.ForeignKeyConstraint(
            ["checkpoint_id"],
            ["ledger_verify_checkpoints.id"],
            name=op.f("fk_ledger_verify_balances_checkpoint_id_ledger_verify_checkpoints"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "checkpoint_id", "account_id", "slot", name=op.f("pk_ledger_verify_balances")
        ),
    )
    if op.get_bind().dialect.name == "postgresql":
        op.execute(
            "ALTER TABLE ledger_row_seals ADD COLUMN position bigint GENERATED ALWAYS AS IDENTITY"
        )
        op.execute("CREATE INDEX ix_ledger_row_seals_position ON ledger_row_seals (position)")


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP INDEX IF EXISTS ix_ledger_row_seals_position")
        op.execute("ALTER TABLE ledger_row_seals DROP COLUMN position")
    op.drop_table("ledger_verify_balances")
    op.drop_table("ledger_verify_checkpoints")
