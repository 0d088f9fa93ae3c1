"""Sealed rows: records outside the ledger that are as immutable and as audited as its entries.

A user of the engine (the bank) keeps records beside the ledger that say who holds what and what a
transaction did: which account a lot belongs to, how much a transfer moved.  Declaring such a
table ``SealedTable(name, id_column, columns)`` makes the database itself

* copy the sealed columns of every new row into ``ledger_row_seals`` (an AFTER INSERT trigger, so
  every writer is covered: the ORM, Core, fixed SQL and a person at a SQL prompt);
* refuse an UPDATE that changes a sealed column, any DELETE, and TRUNCATE (columns left out of
  ``columns`` are the row's mutable state, e.g. a status);

and makes ``verify`` compare every row with its seal: an edit made with the triggers disabled,
a row deleted, or a row inserted without its seal is reported as a ``Break`` naming the table and
the row's id.  The seals themselves refuse UPDATE and DELETE.

PostgreSQL builds a row's sealed content with one generic function (``to_jsonb`` of the row,
keeping the sealed keys, in UTC so that timestamps read the same in every session).  SQLite has
no row-to-JSON, so each table gets its own ``json_object`` over its sealed columns.  Each
database compares its own form with itself; the two forms need not agree with each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, text

SEALS_TABLE = "ledger_row_seals"


@dataclass(frozen=True)
class SealedTable:
    """A table whose ``columns`` (the id column among them) never change once a row exists."""

    name: str
    id_column: str
    columns: tuple[str, ...]

    def __post_init__(self) -> None:
        if self.id_column not in self.columns:
            raise ValueError(f"{self.name}: the id column must be sealed too")
        for ident in (self.name, self.id_column, *self.columns):
            if not ident.replace("_", "").isalnum() or not ident.isascii():
                raise ValueError(f"not a plain SQL identifier: {ident!r}")


# --- PostgreSQL -------------------------------------------------------------------------------

_PG_FUNCTIONS = [
    # the sealed keys of a row's JSON; '{}' when none (never NULL, so comparisons stay simple)
    """
    CREATE OR REPLACE FUNCTION ledger_sealed_content(r jsonb, keep text[]) RETURNS jsonb
    LANGUAGE sql IMMUTABLE AS $$
        SELECT coalesce(jsonb_object_agg(key, value), '{}'::jsonb)
        FROM jsonb_each(r) WHERE key = ANY(keep)
    $$
    """,
    # TG_ARGV: the id column, then the sealed columns.  UTC: a timestamptz's JSON text follows
    # the session's time zone, and every seal must read the same whoever wrote it
    """
    CREATE OR REPLACE FUNCTION ledger_seal_row() RETURNS trigger
    LANGUAGE plpgsql SET timezone = 'UTC' AS $$
    BEGIN
        INSERT INTO ledger_row_seals (table_name, row_id, content)
        VALUES (TG_TABLE_NAME, to_jsonb(NEW) ->> TG_ARGV[0],
                ledger_sealed_content(to_jsonb(NEW), TG_ARGV[1:TG_NARGS - 1]));
        RETURN NULL;
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION ledger_refuse_sealed_change() RETURNS trigger
    LANGUAGE plpgsql SET timezone = 'UTC' AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND ledger_sealed_content(to_jsonb(OLD), TG_ARGV[1:TG_NARGS - 1])
                = ledger_sealed_content(to_jsonb(NEW), TG_ARGV[1:TG_NARGS - 1]) THEN
            RETURN NEW;
        END IF;
        RAISE EXCEPTION 'sealed rows are immutable: % on % refused', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    """
    CREATE OR REPLACE FUNCTION ledger_refuse_seal_change() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION 'row seals are immutable: % on % refused', TG_OP, TG_TABLE_NAME
            USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    """
    DROP TRIGGER IF EXISTS ledger_row_seals_immutable ON ledger_row_seals
    """,
    """
    CREATE TRIGGER ledger_row_seals_immutable BEFORE UPDATE OR DELETE ON ledger_row_seals
        FOR EACH ROW EXECUTE FUNCTION ledger_refuse_seal_change()
    """,
    """
    DROP TRIGGER IF EXISTS ledger_row_seals_no_truncate ON ledger_row_seals
    """,
    """
    CREATE TRIGGER ledger_row_seals_no_truncate BEFORE TRUNCATE ON ledger_row_seals
        FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_seal_change()
    """,
]


def _pg_args(table: SealedTable) -> str:
    return ", ".join(f"'{c}'" for c in (table.id_column, *table.columns))


def _pg_keep(table: SealedTable) -> str:
    return "ARRAY[" + ", ".join(f"'{c}'" for c in table.columns) + "]::text[]"


def _pg_table_install(table: SealedTable) -> list[str]:
    t, args = table.name, _pg_args(table)
    return [
        *_pg_table_uninstall(table),
        f"""CREATE TRIGGER {t}_seal AFTER INSERT ON {t}
            FOR EACH ROW EXECUTE FUNCTION ledger_seal_row({args})""",
        f"""CREATE TRIGGER {t}_sealed BEFORE UPDATE OR DELETE ON {t}
            FOR EACH ROW EXECUTE FUNCTION ledger_refuse_sealed_change({args})""",
        f"""CREATE TRIGGER {t}_sealed_no_truncate BEFORE TRUNCATE ON {t}
            FOR EACH STATEMENT EXECUTE FUNCTION ledger_refuse_seal_change()""",
    ]


def _pg_table_uninstall(table: SealedTable) -> list[str]:
    t = table.name
    return [
        f"DROP TRIGGER IF EXISTS {t}_seal ON {t}",
        f"DROP TRIGGER IF EXISTS {t}_sealed ON {t}",
        f"DROP TRIGGER IF EXISTS {t}_sealed_no_truncate ON {t}",
    ]


def _pg_content(table: SealedTable, alias: str) -> str:
    return f"ledger_sealed_content(to_jsonb({alias}), {_pg_keep(table)})"


def _pg_row_id(table: SealedTable, alias: str) -> str:
    return f"{alias}.{table.id_column}::text"


# --- SQLite -----------------------------------------------------------------------------------


def _sqlite_content(table: SealedTable, alias: str) -> str:
    pairs = ", ".join(f"'{c}', {alias}.{c}" for c in table.columns)
    return f"json_object({pairs})"


def _sqlite_row_id(table: SealedTable, alias: str) -> str:
    return f"CAST({alias}.{table.id_column} AS TEXT)"


_SQLITE_SEALS_TRIGGERS = [
    """
    CREATE TRIGGER IF NOT EXISTS ledger_row_seals_no_update BEFORE UPDATE ON ledger_row_seals
    BEGIN SELECT RAISE(ABORT, 'row seals are immutable: UPDATE on ledger_row_seals refused'); END
    """,
    """
    CREATE TRIGGER IF NOT EXISTS ledger_row_seals_no_delete BEFORE DELETE ON ledger_row_seals
    BEGIN SELECT RAISE(ABORT, 'row seals are immutable: DELETE on ledger_row_seals refused'); END
    """,
]


def _sqlite_table_install(table: SealedTable) -> list[str]:
    t = table.name
    unchanged = " AND ".join(f"NEW.{c} IS OLD.{c}" for c in table.columns)
    return [
        *_sqlite_table_uninstall(table),
        f"""CREATE TRIGGER {t}_seal AFTER INSERT ON {t}
        BEGIN
            INSERT INTO ledger_row_seals (table_name, row_id, content)
            VALUES ('{t}', {_sqlite_row_id(table, "NEW")}, {_sqlite_content(table, "NEW")});
        END""",
        f"""CREATE TRIGGER {t}_sealed_no_update BEFORE UPDATE ON {t}
        WHEN NOT ({unchanged})
        BEGIN SELECT RAISE(ABORT, 'sealed rows are immutable: UPDATE on {t} refused'); END""",
        f"""CREATE TRIGGER {t}_sealed_no_delete BEFORE DELETE ON {t}
        BEGIN SELECT RAISE(ABORT, 'sealed rows are immutable: DELETE on {t} refused'); END""",
    ]


def _sqlite_table_uninstall(table: SealedTable) -> list[str]:
    t = table.name
    return [
        f"DROP TRIGGER IF EXISTS {t}_seal",
        f"DROP TRIGGER IF EXISTS {t}_sealed_no_update",
        f"DROP TRIGGER IF EXISTS {t}_sealed_no_delete",
    ]


# --- installing, sealing existing rows, checking ----------------------------------------------


def _is_pg(connection: Connection) -> bool:
    return connection.dialect.name == "postgresql"


def install(connection: Connection, tables: Sequence[SealedTable]) -> None:
    """Create (or re-create) the triggers that seal ``tables`` (the seals table must exist)."""
    pg = _is_pg(connection)
    statements = list(_PG_FUNCTIONS if pg else _SQLITE_SEALS_TRIGGERS)
    for table in tables:
        statements += _pg_table_install(table) if pg else _sqlite_table_install(table)
    for statement in statements:
        connection.execute(text(statement))


def uninstall(
    connection: Connection, tables: Sequence[SealedTable], *, functions: bool = False
) -> None:
    """Drop the per-table triggers of ``tables`` (tamper tests, migrations' downgrade), and with
    ``functions`` PostgreSQL's shared trigger functions too (once no table uses them)."""
    pg = _is_pg(connection)
    statements = []
    for table in tables:
        statements += _pg_table_uninstall(table) if pg else _sqlite_table_uninstall(table)
    if pg and functions:
        statements += [
            "DROP TRIGGER IF EXISTS ledger_row_seals_immutable ON ledger_row_seals",
            "DROP TRIGGER IF EXISTS ledger_row_seals_no_truncate ON ledger_row_seals",
            *(
                f"DROP FUNCTION IF EXISTS {name}"
                for name in (
                    "ledger_seal_row()",
                    "ledger_refuse_sealed_change()",
                    "ledger_refuse_seal_change()",
                    "ledger_sealed_content(jsonb, text[])",
                )
            ),
        ]
    for statement in statements:
        connection.execute(text(statement))


def seal_existing(connection: Connection, table: SealedTable) -> None:
    """Seal the rows ``table`` already holds that have no seal yet (a table newly sealed)."""
    pg = _is_pg(connection)
    if pg:
        connection.execute(text("SET LOCAL timezone = 'UTC'"))
    content = _pg_content(table, "t") if pg else _sqlite_content(table, "t")
    row_id = _pg_row_id(table, "t") if pg else _sqlite_row_id(table, "t")
    connection.execute(
        text(
            f"""INSERT INTO ledger_row_seals (table_name, row_id, content)
            SELECT '{table.name}', {row_id}, {content} FROM {table.name} AS t
            WHERE NOT EXISTS (SELECT 1 FROM ledger_row_seals AS s
                              WHERE s.table_name = '{table.name}' AND s.row_id = {row_id})"""
        )
    )


@dataclass(frozen=True)
class Mismatch:
    """A sealed row that disagrees with its seal: ``changed``, ``deleted`` or ``unsealed``."""

    table: str
    row_id: str
    kind: str

    @property
    def detail(self) -> str:
        what = {
            "changed": "differs from what was recorded when it was written",
            "deleted": "was deleted",
            "unsealed": "was written without its seal",
        }[self.kind]
        return f"{self.table} row {self.row_id} {what}"


def first_mismatch(connection: Connection, tables: Sequence[SealedTable]) -> Mismatch | None:
    """The first row of ``tables`` (in their order, then by id) that disagrees with its seal."""
    pg = _is_pg(connection)
    if pg:
        connection.execute(text("SET LOCAL timezone = 'UTC'"))
    for table in tables:
        found = _first_in(connection, table, pg)
        if found is not None:
            return found
    return None


def _first_in(connection: Connection, table: SealedTable, pg: bool) -> Mismatch | None:
    content = _pg_content(table, "t") if pg else _sqlite_content(table, "t")
    row_id = _pg_row_id(table, "t") if pg else _sqlite_row_id(table, "t")
    seals = f"(SELECT row_id, content FROM ledger_row_seals WHERE table_name = '{table.name}')"
    rows = f"(SELECT {row_id} AS row_id, {content} AS content FROM {table.name} AS t)"
    # one pass each way: rows whose seal is missing or differs, then seals without their row
    row_side = connection.execute(
        text(
            f"""SELECT r.row_id, s.row_id IS NULL FROM {rows} AS r
            LEFT JOIN {seals} AS s ON s.row_id = r.row_id
            WHERE s.row_id IS NULL OR s.content <> r.content
            ORDER BY r.row_id LIMIT 1"""
        )
    ).first()
    if row_side is not None:
        return Mismatch(table.name, str(row_side[0]), "unsealed" if row_side[1] else "changed")
    orphan = connection.execute(
        text(
            f"""SELECT s.row_id FROM {seals} AS s
            LEFT JOIN {rows} AS r ON r.row_id = s.row_id
            WHERE r.row_id IS NULL ORDER BY s.row_id LIMIT 1"""
        )
    ).first()
    if orphan is not None:
        return Mismatch(table.name, str(orphan[0]), "deleted")
    return None


def position_column(connection: Connection) -> str:
    """The column that orders ``ledger_row_seals`` by insertion: PostgreSQL's ``position``
    (an identity), SQLite's rowid (the table never loses a row, so rowids only grow)."""
    return "position" if connection.dialect.name == "postgresql" else "rowid"


def first_mismatch_since(
    connection: Connection, tables: Sequence[SealedTable], after: int, gaps: Sequence[int]
) -> Mismatch | None:
    """``first_mismatch`` for the seals written after position ``after`` or at one of ``gaps``
    (``ledger.checkpoint.seal_mark``): each compared with its row, which must still be there.

    Reads only those seals and, through each table's key, their rows, so its time follows
    what was sealed since.  A row written with its seal's trigger disabled has no seal to be
    found this way: the full pass (``first_mismatch``) finds it."""
    pg = _is_pg(connection)
    if pg:
        connection.execute(text("SET LOCAL timezone = 'UTC'"))
    position = f"s.{position_column(connection)}"
    for table in tables:
        ident = f"t.{table.id_column}"
        content = _pg_content(table, "t") if pg else _sqlite_content(table, "t")
        query = text(
            f"""SELECT s.row_id, {ident} IS NULL FROM ledger_row_seals AS s
            LEFT JOIN {table.name} AS t ON {_key_join(connection, table, pg)}
            WHERE s.table_name = '{table.name}' AND ({position} > :after OR {position} IN :gaps)
                AND ({ident} IS NULL OR {content} <> s.content)
            ORDER BY s.row_id LIMIT 1"""
        ).bindparams(bindparam("gaps", expanding=True))
        found = connection.execute(query, {"after": after, "gaps": list(gaps)}).first()
        if found is not None:
            return Mismatch(table.name, str(found[0]), "deleted" if found[1] else "changed")
    return None


def _key_join(connection: Connection, table: SealedTable, pg: bool) -> str:
    """A seal's row found through the table's key (not by casting every row's key to text)."""
    ident = f"t.{table.id_column}"
    if not pg:
        return f"{ident} = s.row_id"  # SQLite compares with the key column's affinity
    kind = connection.execute(
        text(
            "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
            "WHERE attrelid = to_regclass(:t) AND attname = :c"
        ),
        {"t": table.name, "c": table.id_column},
    ).scalar()
    if kind in ("smallint", "integer", "bigint"):
        return f"{ident} = CASE WHEN s.row_id ~ '^-?[0-9]{{1,18}}$' THEN s.row_id::bigint END"
    if str(kind).startswith(("character varying", "text")):
        return f"{ident} = s.row_id"
    return f"{ident}::text = s.row_id"
