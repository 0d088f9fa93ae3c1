"""row seals: each sealed table's insert trigger builds its seal from the row's columns by name

Every table ``ledger.row_seals`` seals had an AFTER INSERT trigger calling the shared
``ledger_seal_row(id column, sealed columns...)``, which made the row's JSON twice and kept the
sealed keys with ``jsonb_each``: several times what the insert itself cost.  Each now calls a
function of its own, ``<table>_seal_row()``, that builds the same content (the object
``ledger_sealed_content`` gives, which the verifier compares with) from the new row's columns by
name.  The trigger keeps its arguments, so the catalog still says what each table seals.

PostgreSQL only: SQLite's seal triggers are written per table already.  The tables are read from
the catalog (every trigger calling ``ledger_seal_row``, with its arguments), so the revision
converts whatever was sealed when it runs.  Downgrade calls the shared function again, with the
same arguments, and drops the tables' own.

Revision ID: 0015
Revises: 0014
Create Date: 2026-12-06 15:30:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0015"
down_revision: str | None = "0014"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# the seal triggers that call ``:function`` (a name, or NULL for the table's own), with their
# tables and arguments
_SEAL_TRIGGERS = sa.text(
    """SELECT c.relname, t.tgname, t.tgargs, t.tgnargs
    FROM pg_trigger AS t
    JOIN pg_class AS c ON c.oid = t.tgrelid
    JOIN pg_proc AS p ON p.oid = t.tgfoid
    WHERE NOT t.tgisinternal AND pg_table_is_visible(c.oid) AND t.tgname = c.relname || '_seal'
      AND p.proname = coalesce(CAST(:function AS TEXT), c.relname || '_seal_row')
    ORDER BY c.relname"""
)


def _seal_triggers(function: str | None) -> list[tuple[str, str, list[str]]]:
    rows = op.get_bind().execute(_SEAL_TRIGGERS, {"function": function}).all()
    return [
        (table, trigger, [arg.decode() for arg in bytes(args).split(b"\0")[:count]])
        for table, trigger, args, count in rows
    ]


def _quoted(names: Sequence[str]) -> str:
    return ", ".join(f"'{name}'" for name in names)


def _own_function(table: str, id_column: str, columns: Sequence[str]) -> str:
    content = ", ".join(f"'{column}', NEW.{column}" for column in columns)
    return f"""CREATE OR REPLACE FUNCTION {table}_seal_row() RETURNS trigger
    LANGUAGE plpgsql SET timezone = 'UTC' AS $$
    BEGIN
        INSERT INTO ledger_row_seals (table_name, row_id, content)
        VALUES ('{table}', NEW.{id_column}::text, jsonb_build_object({content}));
        RETURN NULL;
    END $$"""


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, trigger, args in _seal_triggers("ledger_seal_row"):
        id_column, *columns = args
        op.execute(_own_function(table, id_column, columns))
        op.execute(f"DROP TRIGGER {trigger} ON {table}")
        op.execute(
            f"CREATE TRIGGER {trigger} AFTER INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION {table}_seal_row({_quoted(args)})"
        )


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for table, trigger, args in _seal_triggers(None):
        op.execute(f"DROP TRIGGER {trigger} ON {table}")
        op.execute(
            f"CREATE TRIGGER {trigger} AFTER INSERT ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION ledger_seal_row({_quoted(args)})"
        )
        op.execute(f"DROP FUNCTION {table}_seal_row()")
