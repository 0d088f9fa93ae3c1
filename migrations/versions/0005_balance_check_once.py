"""balance check in one pass: each firing of the deferred balance trigger reads the transaction's
entries once, not twice (PostgreSQL only: SQLite checks once, when a transaction is sealed)

As first released, this revision also let an entry skip its check when its header was inserted
by the same database transaction; 0006 withdraws that for databases that ran it, and this
revision now installs the function 0006 does (``ledger.ddl.CHECK_BALANCED_FUNCTION``).

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-04 19:10:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from ledger.ddl import CHECK_BALANCED_FUNCTION

revision: str = "0005"
down_revision: str | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the function as 0001 installed it: two reads of the transaction's entries per firing
_CHECK_EVERY_ROW = """
    CREATE OR REPLACE FUNCTION ledger_check_balanced() RETURNS trigger AS $$
    DECLARE tx bigint;
    BEGIN
        IF TG_TABLE_NAME = 'ledger_entries' THEN tx := NEW.transaction_id;
        ELSE tx := NEW.id; END IF;
        IF NOT (
            (SELECT count(*) FROM ledger_entries WHERE transaction_id = tx) >= 2
            AND NOT EXISTS (
                SELECT 1 FROM ledger_entries WHERE transaction_id = tx
                GROUP BY asset, phase HAVING sum(amount) <> 0
            )
        ) THEN
            RAISE EXCEPTION 'ledger transaction % is unbalanced or has fewer than 2 entries', tx
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END $$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(CHECK_BALANCED_FUNCTION)


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(_CHECK_EVERY_ROW)
