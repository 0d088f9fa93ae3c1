"""indexes in the order an account's lots and reservations, the plans and the accounts are paged

Each listing is paged by keyset (``bank.keyset``): a page is the rows past the last one shown,
which an index on the listing's order finds without reading the rows before it.

- ``GET /accounts/{id}/lots``: an account's lots oldest first, by ``created_at``, then their
  label's length and label (labels are issued in order per account: A, B, … Z, AA):
  ``ix_lots_account_id_created_at_label`` on (account_id, created_at, length(label), label).
- ``GET /accounts/{id}/reservations``: an account's reservations oldest first, by ``created_at``
  and then id: ``ix_reservations_account_id_created_at_id``.
- ``GET /plans`` (and the pages' list of plans): oldest first, by ``created_at`` and then id,
  every plan for the board (``ix_plans_created_at_id``) or an LGU's own
  (``ix_plans_lgu_id_created_at_id``).
- ``GET /accounts`` (and the pages' list of accounts): in opening order, by ``created_at`` and
  then id, every account for the board (``ix_bank_accounts_created_at_id``) or a holder's own
  (``ix_bank_accounts_holder_id_created_at_id``).

The indexes on an account, LGU or holder replace ``ix_lots_account_id``,
``ix_reservations_account_id``, ``ix_plans_lgu_id`` and ``ix_bank_accounts_holder_id``, whose
every use they serve (their first column).

Plain CREATE INDEX and DROP INDEX on both databases (a batch rebuild would drop the triggers
other revisions install on these tables).  Downgrading to 0028 puts the single-column indexes
back.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-08 12:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0029"
down_revision: str | None = "0028"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: (table, the single-column index replaced, its column, the new indexes: name and columns)
_INDEXES: list[tuple[str, str, str, list[tuple[str, list[str]]]]] = [
    (
        "reservations",
        "ix_reservations_account_id",
        "account_id",
        [("ix_reservations_account_id_created_at_id", ["account_id", "created_at", "id"])],
    ),
    (
        "plans",
        "ix_plans_lgu_id",
        "lgu_id",
        [
            ("ix_plans_created_at_id", ["created_at", "id"]),
            ("ix_plans_lgu_id_created_at_id", ["lgu_id", "created_at", "id"]),
        ],
    ),
    (
        "bank_accounts",
        "ix_bank_accounts_holder_id",
        "holder_id",
        [
            ("ix_bank_accounts_created_at_id", ["created_at", "id"]),
            ("ix_bank_accounts_holder_id_created_at_id", ["holder_id", "created_at", "id"]),
        ],
    ),
]


def upgrade() -> None:
    op.create_index(
        "ix_lots_account_id_created_at_label",
        "lots",
        ["account_id", "created_at", sa.text("length(label)"), "label"],
    )
    op.drop_index("ix_lots_account_id", table_name="lots")
    for table, replaced, _column, indexes in _INDEXES:
        for name, columns in indexes:
            op.create_index(name, table, columns)
        op.drop_index(replaced, table_name=table)


def downgrade() -> None:
    for table, replaced, column, indexes in reversed(_INDEXES):
        op.create_index(replaced, table, [column])
        for name, _columns in reversed(indexes):
            op.drop_index(name, table_name=table)
    op.create_index("ix_lots_account_id", "lots", ["account_id"])
    op.drop_index("ix_lots_account_id_created_at_label", table_name="lots")
