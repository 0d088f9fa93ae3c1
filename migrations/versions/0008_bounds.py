"""quantities exact and bounded on both databases

SQLite: every quantity column (the ledger's amounts and balances, every ``*_sqft`` and ``*_cents``
column) gets BEFORE INSERT and BEFORE UPDATE triggers that refuse a value that is not an integer
(``ledger.quantities``), so that arithmetic overflowing 64 bits fails instead of storing a REAL.
Triggers, not CHECK constraints: SQLite adds a CHECK only by rebuilding a table, which would drop
the triggers earlier revisions installed on it.

PostgreSQL: integer arithmetic there never yields anything but an integer (it raises when a BIGINT
overflows).  The counters still 32-bit become BIGINT (an account's lots, the last account number,
a plan's version and extension days), and each quantity a request states directly gets a CHECK
on the API's bound: at most 10^12 sq ft, at most 10^13 cents (``api/schemas/common.py``; the values
are written out here so that this revision stays what it was).  The upgrade stops, naming the
column, if a stored row already exceeds its bound: such a row needs a person's look.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-05 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities

revision: str = "0008"
down_revision: str | None = "0007"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

MAX_SQFT = 10**12
MAX_CENTS = 10**13

#: (table, column, bound) of every quantity a request states directly (PostgreSQL CHECKs)
BOUNDED = (
    ("deposit_actions", "area_sqft", MAX_SQFT),
    ("deposit_actions", "credit_sqft", MAX_SQFT),
    ("bank_site_credit_areas", "area_sqft", MAX_SQFT),
    ("transfers", "amount_sqft", MAX_SQFT),
    ("transfers", "price_per_sqft_cents", MAX_CENTS),
    ("transfer_lots", "amount_sqft", MAX_SQFT),
    ("reservations", "amount_sqft", MAX_SQFT),
    ("reservation_lots", "amount_sqft", MAX_SQFT),
    ("withdrawal_allocations", "amount_sqft", MAX_SQFT),
    ("plans", "impact_area_sqft", MAX_SQFT),
    ("plans", "in_lieu_amount_due_cents", MAX_CENTS),
    ("plan_revisions", "area_sqft", MAX_SQFT),
    ("plan_revisions", "previous_area_sqft", MAX_SQFT),
    ("appeals", "filing_fee_cents", MAX_CENTS),
    ("appeals", "security_cents", MAX_CENTS),
    ("payments", "amount_cents", MAX_CENTS),
    ("securities", "amount_cents", MAX_CENTS),
    ("securities", "drawn_cents", MAX_CENTS),
)

#: (table, column) of the 32-bit counters PostgreSQL widens to BIGINT
WIDENED = (
    ("bank_accounts", "lot_count"),
    ("account_numbers", "last"),
    ("plans", "extension_days"),
    ("plans", "version"),
)


def _check_name(table: str, column: str) -> str:
    return f"ck_{table}_{column}_max"


def upgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        quantities.install_all_sqlite(bind)
        return
    for table, column in WIDENED:
        op.alter_column(table, column, type_=sa.BigInteger(), existing_type=sa.Integer())
    over = [
        f"{table}.{column} (bound {bound})"
        for table, column, bound in BOUNDED
        if bind.execute(
            sa.text(f"SELECT EXISTS (SELECT 1 FROM {table} WHERE {column} > {bound})")
        ).scalar()
    ]
    if over:
        raise RuntimeError(
            "cannot add the quantity bounds: rows already exceed them in " + ", ".join(over)
        )
    for table, column, bound in BOUNDED:
        op.execute(
            f"ALTER TABLE {table} ADD CONSTRAINT {_check_name(table, column)} "
            f"CHECK ({column} <= {bound})"
        )


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "sqlite":
        quantities.drop_all_sqlite(bind)
        return
    for table, column, _bound in reversed(BOUNDED):
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {_check_name(table, column)}")
    # a counter that has grown past 32 bits makes this fail (integer out of range): going down
    # would lose it
    for table, column in reversed(WIDENED):
        op.alter_column(table, column, type_=sa.Integer(), existing_type=sa.BigInteger())
