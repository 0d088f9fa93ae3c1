"""one live appeal payment of each kind: at most one filing fee and one security per appeal

An appeal has at most one filing fee and at most one appeal security that is live: received, not
refunded or returned (Subd. 9; ``bank.money``).  The bank checks it under the appealed plan's row
lock; the database holds it too, with a partial unique index on ``payments (appeal_id, kind)``
over the rows whose ``status`` is ``received``.  A refund or a return sets the payment's
``status`` (``refunded``, ``returned``) as it records its compensating transaction, so the payment
leaves the index and the appeal may be paid again; only the two appeal kinds are indexed.

SQLite and PostgreSQL both build a partial index from the same condition.  The upgrade stops,
naming an appeal and kind, if stored rows already hold two live payments of one kind for one
appeal.  Downgrading to 0020 drops the index.

Revision ID: 0021
Revises: 0020
Create Date: 2026-12-07 07:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0021"
down_revision: str | None = "0020"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: as ``bank.money_tables.Payment`` declares it
INDEX = "uq_payments_live_appeal_kind"
LIVE = "status = 'received' AND kind IN ('appeal_filing_fee', 'appeal_security')"


def _two_live() -> tuple[str, str] | None:
    """An appeal and kind with more than one live payment, if stored rows hold any."""
    row = (
        op.get_bind()
        .execute(
            sa.text(
                f"SELECT appeal_id, kind FROM payments WHERE appeal_id IS NOT NULL AND {LIVE} "
                "GROUP BY appeal_id, kind HAVING count(*) > 1 ORDER BY appeal_id, kind LIMIT 1"
            )
        )
        .first()
    )
    return (str(row[0]), str(row[1])) if row is not None else None


def upgrade() -> None:
    found = _two_live()
    if found is not None:
        appeal_id, kind = found
        raise RuntimeError(
            "cannot add the one-live-appeal-payment index: stored rows break it: appeal "
            f"{appeal_id} has more than one {kind} payment received and neither refunded nor "
            "returned"
        )
    op.create_index(
        INDEX,
        "payments",
        ["appeal_id", "kind"],
        unique=True,
        sqlite_where=sa.text(LIVE),
        postgresql_where=sa.text(LIVE),
    )


def downgrade() -> None:
    op.drop_index(INDEX, table_name="payments")
