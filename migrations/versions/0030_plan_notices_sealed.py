"""a plan's notices sealed, and a copy mailed tied to its own plan's request and notice

A plan's notices are its legal record (Minn. Stat. 103G.2242 Subd. 6, 7): each notice as mailed
(``plan_notices``: its kind, its date and its document), the people it was mailed to
(``plan_notice_recipients``), the members of the public who asked for a copy
(``plan_copy_requests``) and the copies mailed to them afterwards (``plan_copies_mailed``).  None
of them was sealed: a plain ``UPDATE`` could change when a notice was mailed, whom it was mailed
to or when a copy was mailed, and ``wetbank audit verify`` still said ok.  Now, on both databases:

* the four tables are sealed (``bank.registry``, ``ledger.row_seals``), every column: an UPDATE
  or DELETE is refused, and an edit made behind the triggers is named by verify.  A notice's
  document is written with its row (``bank.notices``), so it is sealed with it; a notice
  recorded before documents were kept (0017) has none, and keeps none;
* a copy mailed is of a copy request and a notice of its own plan (until now only the service
  checked it, and a row breaking it would fail the plan's listing): PostgreSQL by composite
  foreign keys, (copy_request_id, plan_id) and (notice_id, plan_id), to new unique keys
  (id, plan_id) of ``plan_copy_requests`` and ``plan_notices``, replacing the plain foreign keys
  under the same names; SQLite by BEFORE INSERT triggers named as those keys (it adds a foreign
  key only by rebuilding a table), with the unique keys as indexes.  A copy's row is sealed, so
  no UPDATE changes them afterwards.

The upgrade first checks the copies stored, and stops naming the first whose request or notice
is another plan's (such a row needs a person's look; nothing is changed); then it seals the rows
stored.  None of the four tables had a trigger before, and the copies' guards fire before an
INSERT while the seals' fire after it or on UPDATE and DELETE, so no older trigger needs making
again to fire first on SQLite.

Downgrading to 0029 drops the triggers, the guards, the keys (the plain foreign keys again) and
the four tables' seals.

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-07 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import row_seals, store
from ledger.row_seals import SealedTable

revision: str = "0030"
down_revision: str | None = "0029"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the four tables' seals, as this revision made them
SEALED = (
    SealedTable(
        "plan_copy_requests",
        "id",
        tuple("id plan_id name address requested_on recorded_at".split()),
    ),
    SealedTable(
        "plan_notices",
        "id",
        tuple("id plan_id notice kind mailed_on document recorded_at".split()),
    ),
    SealedTable(
        "plan_notice_recipients", "id", tuple("id notice_id position name address role".split())
    ),
    SealedTable(
        "plan_copies_mailed",
        "id",
        tuple("id plan_id copy_request_id notice_id mailed_on recorded_at".split()),
    ),
)

COPIES = "plan_copies_mailed"
#: per parent a copy mailed names: the copy's column, the parent table, what the parent is
PARENTS = (
    ("copy_request_id", "plan_copy_requests", "copy request"),
    ("notice_id", "plan_notices", "notice"),
)


def _unique_key(parent: str) -> str:
    return f"uq_{parent}_id_plan_id"


def _fk_name(column: str, parent: str) -> str:
    """The plain foreign key's name (0011's naming), which the composite one takes."""
    return f"fk_{COPIES}_{column}_{parent}"


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _first_of_another_plan() -> str | None:
    """The refusal naming the first copy stored whose request or notice is another plan's."""
    bind = op.get_bind()
    for column, parent, what in PARENTS:
        found = bind.execute(
            sa.text(
                f"""SELECT c.id FROM {COPIES} AS c
                JOIN {parent} AS p ON p.id = c.{column}
                WHERE p.plan_id <> c.plan_id ORDER BY c.id LIMIT 1"""
            )
        ).scalar()
        if found is not None:
            return (
                f"cannot seal the plans' notices: {COPIES} row {found} names a {what} of "
                "another plan than its own"
            )
    return None


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    refusal = _first_of_another_plan()
    if refusal is not None:
        raise RuntimeError(refusal)
    if _is_postgresql():
        _keys_postgresql()
    else:
        _keys_sqlite()
    row_seals.install(bind, SEALED)
    for table in SEALED:
        row_seals.seal_existing(bind, table)


def _keys_postgresql() -> None:
    for column, parent, _what in PARENTS:
        op.execute(
            f"ALTER TABLE {parent} ADD CONSTRAINT {_unique_key(parent)} UNIQUE (id, plan_id)"
        )
        name = _fk_name(column, parent)
        op.execute(
            f"ALTER TABLE {COPIES} DROP CONSTRAINT {name}, "
            f"ADD CONSTRAINT {name} FOREIGN KEY ({column}, plan_id) "
            f"REFERENCES {parent} (id, plan_id)"
        )


def _keys_sqlite() -> None:
    for column, parent, what in PARENTS:
        op.execute(f"CREATE UNIQUE INDEX {_unique_key(parent)} ON {parent} (id, plan_id)")
        name = _fk_name(column, parent)
        refusal = (
            f"FOREIGN KEY constraint {name} failed: a copy mailed is of a {what} of its own "
            f"plan: INSERT on {COPIES} refused"
        )
        op.execute(
            f"""CREATE TRIGGER {name} BEFORE INSERT ON {COPIES}
            WHEN NOT EXISTS (
                SELECT 1 FROM {parent} WHERE id = NEW.{column} AND plan_id = NEW.plan_id)
            BEGIN SELECT RAISE(ABORT, '{refusal}'); END"""
        )


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    row_seals.uninstall(bind, SEALED)
    ddl = store.of(bind).ddl
    for statement in [
        *ddl.unguard_seals,
        *(f"DELETE FROM ledger_row_seals WHERE table_name = '{t.name}'" for t in SEALED),
    ]:
        op.execute(statement)
    row_seals.install(bind, [])  # the seals' own guards again
    pg = _is_postgresql()
    for column, parent, _what in reversed(PARENTS):
        name = _fk_name(column, parent)
        if pg:
            op.execute(
                f"ALTER TABLE {COPIES} DROP CONSTRAINT {name}, "
                f"ADD CONSTRAINT {name} FOREIGN KEY ({column}) REFERENCES {parent} (id)"
            )
            op.execute(f"ALTER TABLE {parent} DROP CONSTRAINT IF EXISTS {_unique_key(parent)}")
        else:
            op.execute(f"DROP TRIGGER IF EXISTS {name}")
            op.execute(f"DROP INDEX IF EXISTS {_unique_key(parent)}")
