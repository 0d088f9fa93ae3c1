"""the history of each account's status and each site's freeze, sealed, and the status tied to it

Freezing, unfreezing and closing an account, freezing and unfreezing a bank site, and an
account reopened by a reversal on appeal changed a state column (``bank_accounts.status``,
``bank_sites.frozen``) and left no record of who did it, when or why; a plain ``UPDATE`` of either
at a SQL prompt left ``wetbank audit verify`` ok.  Now, on both databases:

* a new table, ``status_changes``: one row per change (the account or site, its position among
  the subject's changes, from what to what, who, when, and the reason where there is one),
  written by the bank in the unit of work that makes the change (``bank.status_history``);
* it is sealed (``bank.registry``, ``ledger.row_seals``), every column: the database refuses an
  UPDATE or DELETE, and verify names a row edited or deleted behind the triggers;
* an account's ``status`` and a site's ``frozen`` are tied to the last change of their history
  (``bank.registry.TIES``): verify's full pass names one that disagrees.

Every account and site stored gets its first row here: position 1, from nothing to the status it
has now, by ``migration 0033``, with the reason that its history starts here; those rows are
sealed, so the registry verifies at once.  (An account closed before this keeps no record of
the status it was closed from: a reversal on appeal reopens it ``open``, as before.)

Plain CREATE TABLE on both databases: a batch rebuild would drop the triggers other revisions
install on their tables.  Downgrading to 0032 drops the triggers, the seals and the table.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-08 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import row_seals, store
from ledger.row_seals import SealedTable

revision: str = "0033"
down_revision: str | None = "0032"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "status_changes"
#: the table's seal, as this revision made it
SEALED = SealedTable(
    TABLE,
    "id",
    tuple(
        "id subject_kind subject_id position from_status to_status reason actor recorded_at".split()
    ),
)
ACTOR = "migration 0033"
REASON = "the status it had when its history began to be kept"


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    op.create_table(
        TABLE,
        sa.Column("id", sa.String(length=40), nullable=False),
        sa.Column("subject_kind", sa.String(length=20), nullable=False),
        sa.Column("subject_id", sa.String(length=40), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("from_status", sa.String(length=10), nullable=True),
        sa.Column("to_status", sa.String(length=10), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("actor", sa.String(length=300), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint(
            "subject_kind IN ('bank_account', 'bank_site')",
            name=op.f("ck_status_changes_subject_kind"),
        ),
        sa.CheckConstraint(
            "to_status IN ('open', 'frozen', 'closed', 'unfrozen')",
            name=op.f("ck_status_changes_to_status"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_status_changes")),
        sa.UniqueConstraint(
            "subject_id", "position", name=op.f("uq_status_changes_subject_id_position")
        ),
    )
    _first_rows(bind)
    row_seals.install(bind, [SEALED])
    row_seals.seal_existing(bind, SEALED)


def _first_rows(bind: sa.Connection) -> None:
    """Each account and site stored: its status now, as the first row of its history (its id
    the subject's with a prefix of its own, so it is as unique as the subject)."""
    for kind, source, status in (
        ("bank_account", "bank_accounts", "t.status"),
        ("bank_site", "bank_sites", "CASE WHEN t.frozen THEN 'frozen' ELSE 'unfrozen' END"),
    ):
        bind.execute(
            sa.text(
                f"""INSERT INTO {TABLE} (id, subject_kind, subject_id, position, from_status,
                    to_status, reason, actor, recorded_at)
                SELECT 'stat0033_' || t.id, :kind, t.id, 1, NULL, {status}, :reason, :actor,
                    CURRENT_TIMESTAMP
                FROM {source} AS t"""
            ),
            {"kind": kind, "reason": REASON, "actor": ACTOR},
        )


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    row_seals.uninstall(bind, [SEALED])
    ddl = store.of(bind).ddl
    for statement in [
        *ddl.unguard_seals,
        f"DELETE FROM ledger_row_seals WHERE table_name = '{TABLE}'",
        f"DELETE FROM ledger_row_seals WHERE table_name LIKE '{TABLE}.%'",
    ]:
        op.execute(statement)
    row_seals.install(bind, [])  # the seals' own guards again
    op.drop_table(TABLE)
