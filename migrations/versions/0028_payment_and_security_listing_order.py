"""indexes in the order GET /payments and GET /securities list and page their rows

``GET /payments`` lists oldest first, by ``created_at`` and then id; ``GET /securities`` soonest
expiry first, by ``expires_on`` and then id.  Both are paged by keyset (``bank.keyset``): a page
is the rows past the last one shown, which an index on the listing's order finds without reading
the rows before it.  ``ix_payments_created_at_id`` is new; ``ix_securities_expires_on_id``
replaces ``ix_securities_expires_on``, whose every use it serves (its first column).  The pages'
lists of payments and securities read the same orders.

Plain CREATE INDEX and DROP INDEX on both databases (a batch rebuild would drop the triggers
other revisions install on these tables).  Downgrading to 0027 puts the single-column index back.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-07 15:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = "0028"
down_revision: str | None = "0027"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index("ix_payments_created_at_id", "payments", ["created_at", "id"])
    op.create_index("ix_securities_expires_on_id", "securities", ["expires_on", "id"])
    op.drop_index("ix_securities_expires_on", table_name="securities")


def downgrade() -> None:
    op.create_index("ix_securities_expires_on", "securities", ["expires_on"])
    op.drop_index("ix_securities_expires_on_id", table_name="securities")
    op.drop_index("ix_payments_created_at_id", table_name="payments")
