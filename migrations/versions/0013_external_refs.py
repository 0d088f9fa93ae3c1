"""integrators' references on plans, withdrawals, payments and securities

``external_refs``: a JSON map of the integrator's own identifiers (``bank.external_refs``),
``{}`` for every existing row.  Not among the registry's sealed columns (``bank.registry``).

Plain ADD COLUMN: a batch rebuild of these tables would drop the triggers earlier revisions
installed on them.

Revision ID: 0013
Revises: 0012
Create Date: 2026-12-05 12:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0013"
down_revision: str | None = "0012"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("plans", "withdrawals", "payments", "securities")


def upgrade() -> None:
    for table in TABLES:
        op.add_column(
            table,
            sa.Column("external_refs", sa.JSON(), nullable=False, server_default=sa.text("'{}'")),
        )


def downgrade() -> None:
    for table in TABLES:
        op.drop_column(table, "external_refs")
