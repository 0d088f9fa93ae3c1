"""appeals and finality as Subd. 7 and 9 say

The LGU's appeal security requirement on a plan; on an appeal, the petitioner's name and
address, the grounds a petition was denied on, the factors the board considered, and the day
its decision was served (the start of judicial review, Minn. Stat. 14.63).

Plain ADD/DROP COLUMN on both databases (SQLite >= 3.35 drops a column in place): a batch
rebuild would drop the triggers other revisions install on their tables.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-05 11:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the API's bound on every ``*_cents`` a request states (api/schemas/common.py, migration 0008)
MAX_CENTS = 10**13
SECURITY_CHECK = "ck_plans_appeal_security_required_cents_max"

APPEAL_COLUMNS = (
    ("petitioner_name", sa.String(300)),
    ("petitioner_address", sa.String(1000)),
    ("petition_grounds", sa.String(200)),
    ("factors_considered", sa.Text()),
    ("served_on", sa.Date()),
)


def upgrade() -> None:
    op.add_column(
        "plans", sa.Column("appeal_security_required_cents", sa.BigInteger(), nullable=True)
    )
    # a new quantity column: SQLite refuses a non-integer in it, as in every other (0008), and
    # PostgreSQL holds it to the API's bound on cents like every quantity a request states
    bind = op.get_bind()
    quantities.install_sqlite(bind, "plans", [("appeal_security_required_cents", True)])
    if bind.dialect.name == "postgresql":
        op.execute(
            f"ALTER TABLE plans ADD CONSTRAINT {SECURITY_CHECK} "
            f"CHECK (appeal_security_required_cents <= {MAX_CENTS})"
        )
    for name, type_ in APPEAL_COLUMNS:
        op.add_column("appeals", sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for name, _type in reversed(APPEAL_COLUMNS):
        op.drop_column("appeals", name)
    bind = op.get_bind()
    quantities.drop_sqlite(bind, "plans", ["appeal_security_required_cents"])
    if bind.dialect.name == "postgresql":
        op.execute(f"ALTER TABLE plans DROP CONSTRAINT IF EXISTS {SECURITY_CHECK}")
    op.drop_column("plans", "appeal_security_required_cents")
