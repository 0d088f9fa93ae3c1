"""notices to the people the statute names, and guarantees that add up

On plans: the watershed district (Subd. 6 and 7 mail its managers when one exists), where the
impact is (the public's copy identifies it), and the security a project-specific replacement
needs (Subd. 3).  New tables: members of the public who asked for a copy, each notice as mailed
(its kind and date) with its recipients, and each draw on a security (the rest stays held as a
new pending transfer).

A security drawn in part before this revision had the rest released by the ledger when it was
drawn; it is marked released on its draw date, so that it does not read as held again.

Plain ADD COLUMN / CREATE TABLE on both databases: a batch rebuild would drop the triggers other
revisions install on their tables (the securities' seals among them: the columns written here
are its mutable ones).

Revision ID: 0011
Revises: 0010
Create Date: 2026-12-08 10:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities

revision: str = "0011"
down_revision: str | None = "0010"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the API's bound on every ``*_cents`` a request states (api/schemas/common.py, migration 0008)
MAX_CENTS = 10**13
#: (table, column) of the new quantities a request states, bounded on PostgreSQL
BOUNDED = (("plans", "security_required_cents"), ("security_draws", "amount_cents"))
LEGACY_RELEASE = "the rest was released when it was drawn in part"
INDEXED = (
    ("plan_copy_requests", "plan_id"),
    ("plan_notices", "plan_id"),
    ("plan_notice_recipients", "notice_id"),
    ("security_draws", "security_id"),
)


def _check_name(table: str, column: str) -> str:
    return f"ck_{table}_{column}_max"


def upgrade() -> None:
    op.add_column("plans", sa.Column("watershed_district", sa.String(300), nullable=True))
    op.add_column("plans", sa.Column("location", sa.String(1000), nullable=True))
    op.add_column("plans", sa.Column("security_required_cents", sa.BigInteger(), nullable=True))
    _create_tables()
    bind = op.get_bind()
    quantities.install_sqlite(bind, "plans", [("security_required_cents", True)])
    quantities.install_sqlite(bind, "security_draws", [("amount_cents", False)])
    if bind.dialect.name == "postgresql":
        for table, column in BOUNDED:
            op.execute(
                f"ALTER TABLE {table} ADD CONSTRAINT {_check_name(table, column)} "
                f"CHECK ({column} <= {MAX_CENTS})"
            )
    op.execute(
        sa.text(
            "UPDATE securities SET released_on = drawn_on, release_reason = :reason "
            "WHERE drawn_on IS NOT NULL AND released_on IS NULL AND drawn_cents < amount_cents"
        ).bindparams(reason=LEGACY_RELEASE)
    )


def _fk(table: str, column: str, target: str) -> sa.ForeignKeyConstraint:
    return sa.ForeignKeyConstraint(
        [column], [f"{target}.id"], name=op.f(f"fk_{table}_{column}_{target}")
    )


def _create_tables() -> None:
    tx_id = sa.BigInteger().with_variant(sa.Integer(), "sqlite")
    op.create_table(
        "plan_copy_requests",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("address", sa.String(length=1000), nullable=False),
        sa.Column("requested_on", sa.Date(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        _fk("plan_copy_requests", "plan_id", "plans"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_copy_requests")),
    )
    op.create_table(
        "plan_notices",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("plan_id", sa.String(length=40), nullable=False),
        sa.Column("notice", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("mailed_on", sa.Date(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        _fk("plan_notices", "plan_id", "plans"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_notices")),
    )
    op.create_table(
        "plan_notice_recipients",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("notice_id", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=300), nullable=False),
        sa.Column("address", sa.String(length=1000), nullable=False),
        sa.Column("role", sa.String(length=30), nullable=False),
        _fk("plan_notice_recipients", "notice_id", "plan_notices"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_plan_notice_recipients")),
    )
    op.create_table(
        "security_draws",
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("security_id", sa.String(length=40), nullable=False),
        sa.Column("drawn_on", sa.Date(), nullable=False),
        sa.Column("amount_cents", sa.BigInteger(), nullable=False),
        sa.Column("transaction_id", tx_id, nullable=False),
        sa.Column("held_transaction_id", tx_id, nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        _fk("security_draws", "security_id", "securities"),
        _fk("security_draws", "transaction_id", "ledger_transactions"),
        _fk("security_draws", "held_transaction_id", "ledger_transactions"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_security_draws")),
    )
    for table, column in INDEXED:
        op.create_index(op.f(f"ix_{table}_{column}"), table, [column])


def downgrade() -> None:
    bind = op.get_bind()
    for table, column in reversed(INDEXED):
        op.drop_index(op.f(f"ix_{table}_{column}"), table_name=table)
    for table in ("security_draws", "plan_notice_recipients", "plan_notices", "plan_copy_requests"):
        op.drop_table(table)
    quantities.drop_sqlite(bind, "plans", ["security_required_cents"])
    if bind.dialect.name == "postgresql":
        table, column = BOUNDED[0]
        op.execute(f"ALTER TABLE {table} DROP CONSTRAINT IF EXISTS {_check_name(table, column)}")
    for column in ("security_required_cents", "location", "watershed_district"):
        op.drop_column("plans", column)
