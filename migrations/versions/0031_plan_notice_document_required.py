"""a new notice is recorded with its document

A notice's ``document`` is what was mailed (Minn. Stat. 103G.2242 Subd. 6, 7), written with its
row (``bank.notices``) and sealed with it (0030).  Notices recorded before documents were kept
(0017) have none, and keep none; but nothing refused a new row without one: a notice typed in
with SQL and no document was sealed so, and listed as one whose document was never kept.  Now,
on both databases, a BEFORE INSERT trigger refuses a ``plan_notices`` row whose document is
NULL; the rows already stored are not weighed, so a database holding notices recorded before
documents were kept upgrades as it is.  A CHECK would weigh the stored rows too (PostgreSQL's
``NOT VALID`` spares them, SQLite adds a CHECK only by rebuilding the table), hence a trigger.
An UPDATE of a notice is the seals' to refuse (0030).

The trigger is the table's only one before an INSERT (its seal's fires after), so no older one
needs making again to fire first on SQLite.  Downgrading to 0030 drops it (and PostgreSQL's
function).

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-07 18:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from ledger import store

revision: str = "0031"
down_revision: str | None = "0030"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLE = "plan_notices"
NAME = "plan_notices_document_required"
#: the refusal, in the database's error on both databases
REFUSED = (
    "a notice is recorded with its document as mailed (only a notice recorded before documents "
    "were kept has none): INSERT on plan_notices without a document refused"
)


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    if _is_postgresql():
        op.execute(
            f"""
            CREATE OR REPLACE FUNCTION {NAME}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION '{REFUSED}' USING ERRCODE = 'not_null_violation';
            END $$
            """
        )
        op.execute(
            f"""
            CREATE TRIGGER {NAME} BEFORE INSERT ON {TABLE} FOR EACH ROW
                WHEN (NEW.document IS NULL) EXECUTE FUNCTION {NAME}()
            """
        )
        return
    op.execute(
        f"""
        CREATE TRIGGER {NAME} BEFORE INSERT ON {TABLE}
        WHEN NEW.document IS NULL
        BEGIN SELECT RAISE(ABORT, '{REFUSED}'); END
        """
    )


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    if _is_postgresql():
        op.execute(f"DROP TRIGGER IF EXISTS {NAME} ON {TABLE}")
        op.execute(f"DROP FUNCTION IF EXISTS {NAME}()")
        return
    op.execute(f"DROP TRIGGER IF EXISTS {NAME}")
