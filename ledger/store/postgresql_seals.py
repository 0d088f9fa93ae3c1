"""PostgreSQL's row seal statements (``ledger.row_seals``): the functions every sealed table
shares, each table's own insert seal function, and a set-once column's seal (``PostgresqlDdl``
in ``postgresql_ddl`` puts them together)."""

from __future__ import annotations

from collections.abc import Sequence

SEAL_FUNCTIONS = [
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

DROP_SEAL_FUNCTIONS = [
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


def quoted(columns: Sequence[str]) -> str:
    return ", ".join(f"'{c}'" for c in columns)


#: ``jsonb_build_object`` takes at most 100 arguments, a name and a value per column; PostgreSQL
#: would refuse a wider seal only when a row is inserted
MAX_SEALED_COLUMNS = 50


def seal_row_function(name: str, id_column: str, columns: Sequence[str]) -> str:
    """A table's own AFTER INSERT seal function: the content ``ledger_sealed_content`` gives
    (``to_jsonb`` of the row, keeping ``columns``), built from the new row's columns by name.
    The generic ``ledger_seal_row`` made the whole row's JSON twice and filtered its keys on
    every insert, several times the cost.  Its trigger keeps the id and sealed columns as its
    arguments, as the generic one's did, so the catalog still says what a table seals."""
    if len(columns) > MAX_SEALED_COLUMNS:
        raise ValueError(f"{name}: at most {MAX_SEALED_COLUMNS} sealed columns")
    content = ", ".join(f"'{column}', NEW.{column}" for column in columns)
    return f"""CREATE OR REPLACE FUNCTION {name}_seal_row() RETURNS trigger
    LANGUAGE plpgsql SET timezone = 'UTC' AS $$
    BEGIN
        INSERT INTO ledger_row_seals (table_name, row_id, content)
        VALUES ('{name}', NEW.{id_column}::text, jsonb_build_object({content}));
        RETURN NULL;
    END $$"""


def seal_once_statements(name: str, id_column: str, column: str) -> list[str]:
    """A set-once column's seal, written when a row is inserted with a value or given one
    (``{name}_{column}_seal``), and the refusal of any change once it holds one (through
    ``ledger_refuse_sealed_change``, comparing that column alone); ``PostgresqlDdl.unseal_once``
    drops them."""
    prefix = f"{name}_{column}"
    args = quoted([id_column, column])
    return [
        f"""CREATE OR REPLACE FUNCTION {prefix}_seal() RETURNS trigger
        LANGUAGE plpgsql SET timezone = 'UTC' AS $$
        BEGIN
            INSERT INTO ledger_row_seals (table_name, row_id, content)
            VALUES ('{name}.{column}', NEW.{id_column}::text,
                    jsonb_build_object('{column}', NEW.{column}));
            RETURN NULL;
        END $$""",
        f"""CREATE TRIGGER {prefix}_seal AFTER INSERT ON {name}
        FOR EACH ROW WHEN (NEW.{column} IS NOT NULL) EXECUTE FUNCTION {prefix}_seal()""",
        f"""CREATE TRIGGER {prefix}_seal_set AFTER UPDATE ON {name}
        FOR EACH ROW WHEN (OLD.{column} IS NULL AND NEW.{column} IS NOT NULL)
        EXECUTE FUNCTION {prefix}_seal()""",
        f"""CREATE TRIGGER {prefix}_sealed BEFORE UPDATE ON {name}
        FOR EACH ROW
        WHEN (OLD.{column} IS NOT NULL AND OLD.{column} IS DISTINCT FROM NEW.{column})
        EXECUTE FUNCTION ledger_refuse_sealed_change({args})""",
    ]
