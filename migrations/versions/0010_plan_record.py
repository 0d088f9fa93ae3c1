"""the replacement plan's whole record

On plans: whether the impact is on peatland (Subd. 1 (a)), the number of the application the
plan's dates belong to (a revision counting as new starts another, Subd. 6 (c)), and the decision's
record: the governing body's resolution (Subd. 1 (b)), the reasons of a denial (Minn. Stat. 15.99
subd. 2), and a peatland approval's carbon balance and planting. On appeals: the application whose
decision they appeal. New tables: extensions of the decision deadline (15.99 subd. 3 (f), (g): one
plan may have several), the technical evaluation panel's referral and determination (Subd. 2),
and the earlier applications a revision superseded.

The plan's one extension moves from its columns to ``plan_extensions`` (as the LGU's own, of
application 1); the downgrade moves each plan's first one back.

Plain ADD/DROP COLUMN and CREATE TABLE on both databases: a batch rebuild would drop the triggers
other revisions install on their tables.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities

revision: str = "0010"
down_revision: str | None = "0009"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the API's bound on every ``*_sqft`` a request states (api/schemas/common.py, migration 0008)
MAX_SQFT = 10**12
AREA_CHECK = "ck_plan_applications_impact_area_sqft_max"

DECISION_COLUMNS = (
    ("decision_resolution_number", sa.String(100)),
    ("decision_resolution_adopted_on", sa.Date()),
    ("decision_reasons", sa.Text()),
    ("decision_carbon_balance_considered", sa.Boolean()),
    ("decision_trees_or_shrubs", sa.Text()),
)
EXTENSION_COLUMNS = (
    ("extension_notified_on", sa.Date()),
    ("extension_days", sa.BigInteger()),
    ("extension_reason", sa.Text()),
)
TABLES = ("plan_applications", "plan_panels", "plan_extensions")


def upgrade() -> None:
    op.add_column(
        "plans",
        sa.Column("impact_peatland", sa.Boolean(), nullable=False, server_default=sa.false()),
    )
    op.add_column(
        "plans",
        sa.Column("application_number", sa.Integer(), nullable=False, server_default="1"),
    )
    for name, type_ in DECISION_COLUMNS:
        op.add_column("plans", sa.Column(name, type_, nullable=True))
    op.add_column(
        "appeals",
        sa.Column("application_number", sa.Integer(), nullable=False, server_default="1"),
    )
    _create_tables()
    op.execute(
        "INSERT INTO plan_extensions (id, plan_id, application_number, notified_on, days, "
        "reason, applicant_agreed, recorded_at) "
        "SELECT 'ext_' || id, id, 1, extension_notified_on, extension_days, "
        "COALESCE(extension_reason, ''), "
        f"{'false' if op.get_bind().dialect.name == 'postgresql' else '0'}, created_at "
        "FROM plans WHERE extension_notified_on IS NOT NULL"
    )
    for name, _type in EXTENSION_COLUMNS:
        op.drop_column("plans", name)
    bind = op.get_bind()
    # a new quantity column: SQLite refuses a non-integer in it (0008); PostgreSQL bounds it
    quantities.install_sqlite(bind, "plan_applications", [("impact_area_sqft", False)])
    if bind.dialect.name == "postgresql":
        op.execute(
            f"ALTER TABLE plan_applications ADD CONSTRAINT {AREA_CHECK} "
            f"CHECK (impact_area_sqft <= {MAX_SQFT})"
        )


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}")
    )


def _create_tables() -> None:
    op.create_table(
        "plan_extensions",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("application_number", sa.Integer(), nullable=False),
        sa.Column("notified_on", sa.Date(), nullable=False),
        sa.Column("days", sa.BigInteger(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("applicant_agreed", sa.Boolean(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        _fk("plan_extensions", "plan_id", "plans"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_extensions")),
    )
    op.create_table(
        "plan_panels",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("application_number", sa.Integer(), nullable=False),
        sa.Column("referred_on", sa.Date(), nullable=False),
        sa.Column("questions", sa.String(length=100), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("inspected_on", sa.Date(), nullable=True),
        sa.Column("member_board", sa.String(length=300), nullable=True),
        sa.Column("member_swcd", sa.String(length=300), nullable=True),
        sa.Column("member_lgu", sa.String(length=300), nullable=True),
        sa.Column("determination", sa.Text(), nullable=True),
        sa.Column("recommendation", sa.String(length=10), nullable=True),
        sa.Column("determined_at", sa.DateTime(timezone=True), nullable=True),
        _fk("plan_panels", "plan_id", "plans"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_panels")),
        sa.UniqueConstraint("plan_id", "application_number", name=op.f("uq_plan_panels_plan_id")),
    )
    op.create_table(
        "plan_applications",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("received_on", sa.Date(), nullable=False),
        sa.Column("impact_area_sqft", sa.BigInteger(), nullable=False),
        sa.Column("notice_mailed_on", sa.Date(), nullable=True),
        sa.Column("outcome", sa.String(length=20), nullable=True),
        sa.Column("decision_outcome", sa.String(length=10), nullable=True),
        sa.Column("decided_on", sa.Date(), nullable=True),
        *(sa.Column(name, type_, nullable=True) for name, type_ in DECISION_COLUMNS[:3]),
        sa.Column("tep_recommendation", sa.Text(), nullable=True),
        *(sa.Column(name, type_, nullable=True) for name, type_ in DECISION_COLUMNS[3:]),
        sa.Column("decision_notice_mailed_on", sa.Date(), nullable=True),
        sa.Column("revision_id", sa.String(length=40), nullable=False),
        sa.Column("superseded_on", sa.Date(), nullable=False),
        _fk("plan_applications", "plan_id", "plans"),
        _fk("plan_applications", "revision_id", "plan_revisions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_applications")),
        sa.UniqueConstraint("plan_id", "number", name=op.f("uq_plan_applications_plan_id")),
    )
    for table in TABLES:
        op.create_index(op.f(f"ix_{table}_plan_id"), table, ["plan_id"])


def downgrade() -> None:
    for name, type_ in EXTENSION_COLUMNS:
        op.add_column("plans", sa.Column(name, type_, nullable=True))
    # each plan's first extension of its current application goes back to its columns
    op.execute(
        "UPDATE plans SET "
        + ", ".join(
            f"{column} = (SELECT e.{source} FROM plan_extensions e WHERE e.plan_id = plans.id "
            "AND e.application_number = plans.application_number "
            "ORDER BY e.recorded_at, e.id LIMIT 1)"
            for column, source in (
                ("extension_notified_on", "notified_on"),
                ("extension_days", "days"),
                ("extension_reason", "reason"),
            )
        )
    )
    bind = op.get_bind()
    quantities.drop_sqlite(bind, "plan_applications", ["impact_area_sqft"])
    for table in TABLES:
        op.drop_index(op.f(f"ix_{table}_plan_id"), table_name=table)
        op.drop_table(table)
    op.drop_column("appeals", "application_number")
    for name, _type in reversed(DECISION_COLUMNS):
        op.drop_column("plans", name)
    op.drop_column("plans", "application_number")
    op.drop_column("plans", "impact_peatland")
