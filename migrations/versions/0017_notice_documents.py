"""notice documents: each notice keeps the document it was mailed as

``plan_notices.document`` holds the notice's text as mailed (its title, statute, the LGU, the
mailing date, each section and the recipients, as JSON), written in the transaction that
records the mailing.  ``GET /plans/{id}/notices/...`` prints it, so a later revision, a new
application or a requirement set afterwards never changes a notice already mailed.  Notices
recorded before this revision have none and are printed from the plan, as before.

Revision ID: 0017
Revises: 0016
Create Date: 2026-12-07 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0017"
down_revision: str | None = "0016"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("plan_notices", sa.Column("document", sa.Text(), nullable=True))


def downgrade() -> None:
    op.drop_column("plan_notices", "document")
