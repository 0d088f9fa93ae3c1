"""copies mailed: a copy of a notice mailed afterwards to a member of the public who asked

A member of the public the LGU registers after a notice was mailed, who had asked on or before
that day, is owed a copy of it (Subd. 6 (a), 7).  ``plan_copies_mailed`` records each such copy
the LGU mails: the request, the notice and the day, once per request and notice (a unique key),
so that the copy is owed no more.

Plain CREATE TABLE on both databases; downgrading drops the table and with it the copies
recorded (the copies are owed again).

Revision ID: 0023
Revises: 0022
Create Date: 2026-12-09 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0023"
down_revision: str | None = "0022"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "plan_copies_mailed"
INDEXED = ("plan_id", "copy_request_id", "notice_id")


def _fk(column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{TABLE}_{column}_{target}")
    )


def upgrade() -> None:
    op.create_table(
        TABLE,
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("copy_request_id", sa.String(length=40), nullable=False),
        sa.Column("notice_id", sa.String(length=40), nullable=False),
        sa.Column("mailed_on", sa.Date(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        _fk("plan_id", "plans"),
        _fk("copy_request_id", "plan_copy_requests"),
        _fk("notice_id", "plan_notices"),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{TABLE}")),
        sa.UniqueConstraint(
            "copy_request_id", "notice_id", name=op.f(f"uq_{TABLE}_copy_request_id")
        ),
    )
    for column in INDEXED:
        op.create_index(op.f(f"ix_{TABLE}_{column}"), TABLE, [column])


def downgrade() -> None:
    for column in reversed(INDEXED):
        op.drop_index(op.f(f"ix_{TABLE}_{column}"), table_name=TABLE)
    op.drop_table(TABLE)
