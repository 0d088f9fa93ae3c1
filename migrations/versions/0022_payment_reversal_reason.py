"""payment reversal reason: a filing fee recorded in error is reversed with the board's reason

The $200 appeal filing fee is retained by the board and never refunded (Subd. 9), so a fee
booked on the wrong appeal is undone another way: the board reverses the booking with a
compensating transaction (``payment_reversed``) and says why (``bank.money.reverse_in_error``).
The payment keeps its row and its transaction; its ``status`` becomes ``reversed`` and
``payments.reversal_reason`` holds the board's reason (the reversal's memo in the journal carries
it too).

Downgrading to 0021 drops the column.  A payment already reversed keeps its ``reversed`` status
and its compensating transaction, and its reason stays in that transaction's memo
(``payment <id> reversed: <reason>``), from which upgrading again restores the column.

Revision ID: 0022
Revises: 0021
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0022"
down_revision: str | None = "0021"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


#: a reversed payment's reason, from its compensating transaction's memo (``bank.money``)
RESTORE_REASONS = """
UPDATE payments SET reversal_reason = (
    SELECT substr(t.memo, length('payment ' || payments.id || ' reversed: ') + 1)
    FROM ledger_transactions AS t
    WHERE t.id = payments.compensation_transaction_id
      AND substr(t.memo, 1, length('payment ' || payments.id || ' reversed: '))
          = 'payment ' || payments.id || ' reversed: '
)
WHERE status = 'reversed' AND reversal_reason IS NULL
"""


def upgrade() -> None:
    op.add_column("payments", sa.Column("reversal_reason", sa.Text(), nullable=True))
    # a database downgraded to 0021 after a reversal, and upgraded again
    op.execute(RESTORE_REASONS)


def downgrade() -> None:
    op.drop_column("payments", "reversal_reason")
