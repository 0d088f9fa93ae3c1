"""application appeal security: an earlier application keeps the security its petitioners owed

``plan_applications.appeal_security_required_cents`` is the appeal security (Subd. 9) the LGU
required of petitioners on an application when a revision counting as new (Subd. 6 (c))
superseded it.  A petition mailed within that application's window may reach the board after
the revision, and the LGU may require another amount of the new application
(``plans.appeal_security_required_cents``), so the earlier one's is kept with it.

Applications superseded before this revision take the plan's amount as it stands: the amount
they were superseded with is not recorded anywhere else.

Revision ID: 0020
Revises: 0019
Create Date: 2026-12-07 05:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities

revision: str = "0020"
down_revision: str | None = "0019"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column(
        "plan_applications",
        sa.Column("appeal_security_required_cents", sa.BigInteger(), nullable=True),
    )
    op.execute(
        "UPDATE plan_applications SET appeal_security_required_cents = "
        "(SELECT plans.appeal_security_required_cents FROM plans "
        "WHERE plans.id = plan_applications.plan_id)"
    )
    # a quantity column: whole numbers only on SQLite (``ledger.quantities``)
    quantities.install_sqlite(
        op.get_bind(), "plan_applications", [("appeal_security_required_cents", True)]
    )


def downgrade() -> None:
    quantities.drop_sqlite(op.get_bind(), "plan_applications", ["appeal_security_required_cents"])
    op.drop_column("plan_applications", "appeal_security_required_cents")
