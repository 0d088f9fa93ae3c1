"""the board's corrections of holders, LGUs and bank sites, each with its reason

A new table, ``party_edits``: one row per correction (who, when, each field from what to what,
and why).  It is append-only: triggers on both databases refuse UPDATE and DELETE.  The columns
corrected (names, addresses, a site's county and watershed) are ones the registry leaves
unsealed (``bank.registry``).

Plain CREATE TABLE on both databases: a batch rebuild would drop the triggers other revisions
install on their tables.

Revision ID: 0014
Revises: 0013
Create Date: 2026-12-05 13:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0014"
down_revision: str | None = "0013"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

REFUSAL = "party_edits is append-only"

PG_FUNCTION = f"""
CREATE FUNCTION party_edits_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION '{REFUSAL}';
END;
$$ LANGUAGE plpgsql
"""


def upgrade() -> None:
    op.create_table(
        "party_edits",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("party_kind", sa.String(length=20), nullable=False),
        sa.Column("party_id", sa.String(length=40), nullable=False),
        sa.Column("changes", sa.JSON(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("actor", sa.String(length=300), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_party_edits")),
    )
    op.create_index(op.f("ix_party_edits_party_id"), "party_edits", ["party_id"])
    if op.get_bind().dialect.name == "postgresql":
        op.execute(PG_FUNCTION)
        op.execute(
            "CREATE TRIGGER party_edits_append_only BEFORE UPDATE OR DELETE ON party_edits "
            "FOR EACH ROW EXECUTE FUNCTION party_edits_append_only()"
        )
    else:
        for event in ("UPDATE", "DELETE"):
            op.execute(
                f"CREATE TRIGGER party_edits_no_{event.lower()} BEFORE {event} ON party_edits "
                f"BEGIN SELECT RAISE(ABORT, '{REFUSAL}'); END"
            )


def downgrade() -> None:
    if op.get_bind().dialect.name == "postgresql":
        op.execute("DROP TRIGGER IF EXISTS party_edits_append_only ON party_edits")
        op.execute("DROP FUNCTION IF EXISTS party_edits_append_only()")
    else:
        for event in ("update", "delete"):
            op.execute(f"DROP TRIGGER IF EXISTS party_edits_no_{event}")
    op.drop_index(op.f("ix_party_edits_party_id"), table_name="party_edits")
    op.drop_table("party_edits")
