"""balance check at every entry again: withdraw 0005's skip of entries whose header was inserted by
the same database transaction (PostgreSQL only)

The skip trusted the header's own deferred check to run after every entry.  ``SET CONSTRAINTS ALL
IMMEDIATE`` runs it early, so an entry added after it went unchecked and an unbalanced
transaction could commit; and a frozen header keeps its 32-bit xmin, which an xid wraparound can
make equal to a new transaction's id.  This installs the one-pass check without the skip.
Downgrading keeps it: going back to a function with the hole would reopen it.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-04 20:55:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from ledger.ddl import CHECK_BALANCED_FUNCTION

revision: str = "0006"
down_revision: str | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute(CHECK_BALANCED_FUNCTION)


def downgrade() -> None:
    """Nothing to undo: 0005's function as it is now is this one."""
