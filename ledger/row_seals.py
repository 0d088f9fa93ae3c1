"""Sealed rows: records outside the ledger that are as immutable and as audited as its entries.

A user of the engine (the bank) keeps records beside the ledger that say who holds what and what a
transaction did: which account a lot belongs to, how much a transfer moved.  Declaring such a
table ``SealedTable(name, id_column, columns)`` makes the database itself

* copy the sealed columns of every new row into ``ledger_row_seals`` (an AFTER INSERT trigger, so
  every writer is covered: the ORM, Core, fixed SQL and a person at a SQL prompt);
* refuse an UPDATE that changes a sealed column, any DELETE, and TRUNCATE (columns left out of
  ``columns`` are the row's mutable state, e.g. a status);
* seal each of its ``set_once`` columns, which a row is written without (NULL) and given later,
  once (a reversal's reason), when it is given: its value is copied into a seal of its own
  (``once_seal_name``), and any later change of it is refused;

and makes ``verify`` compare every row with its seal: an edit made with the triggers disabled,
a row deleted, or a row inserted without its seal is reported as a ``Break`` naming the table and
the row's id.  The seals themselves refuse UPDATE and DELETE.

A column whose value other records give is declared a ``ledger.row_ties.Tie``, checked beside
the seals.

How a row's sealed content is built is the store's (``ledger.store.postgresql_ddl``,
``sqlite_ddl``); each database compares its own form with itself, and the two forms need not
agree with each other.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from ledger import store
from ledger.store import Ddl

SEALS_TABLE = "ledger_row_seals"


@dataclass(frozen=True)
class SealedTable:
    """A table whose ``columns`` (the id column among them) never change once a row exists, and
    whose ``set_once`` columns never change once they hold a value."""

    name: str
    id_column: str
    columns: tuple[str, ...]
    set_once: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.id_column not in self.columns:
            raise ValueError(f"{self.name}: the id column must be sealed too")
        if set(self.set_once) & set(self.columns):
            raise ValueError(f"{self.name}: a column is sealed when written or when set, not both")
        for ident in (self.name, self.id_column, *self.columns, *self.set_once):
            if not ident.replace("_", "").isalnum() or not ident.isascii():
                raise ValueError(f"not a plain SQL identifier: {ident!r}")


def once_seal_name(table: str, column: str) -> str:
    """The ``table_name`` of the seals of ``table``'s set-once ``column``: one per row that has
    a value, its content that value (``{column: value}``), its ``row_id`` the row's."""
    return f"{table}.{column}"


def ddl_of(connection: Connection) -> Ddl:
    """The store's SQL forms for ``connection``'s database."""
    return store.of(connection).ddl


def install(connection: Connection, tables: Sequence[SealedTable]) -> None:
    """Create (or re-create) the triggers that seal ``tables`` (the seals table must exist)."""
    ddl = ddl_of(connection)
    statements = list(ddl.seal_functions)
    for table in tables:
        statements += ddl.seal_table(table.name, table.id_column, table.columns)
        for column in table.set_once:
            statements += ddl.seal_once(table.name, table.id_column, column)
    for statement in statements:
        connection.execute(text(statement))


def uninstall(
    connection: Connection, tables: Sequence[SealedTable], *, functions: bool = False
) -> None:
    """Drop the per-table triggers of ``tables`` (tamper tests, migrations' downgrade), and with
    ``functions`` the shared trigger functions too (once no table uses them)."""
    ddl = ddl_of(connection)
    statements = [
        s
        for table in tables
        for s in [
            *(s for column in table.set_once for s in ddl.unseal_once(table.name, column)),
            *ddl.unseal_table(table.name),
        ]
    ]
    if functions:
        statements += ddl.drop_seal_functions
    for statement in statements:
        connection.execute(text(statement))


def seal_existing(connection: Connection, table: SealedTable) -> None:
    """Seal the rows ``table`` already holds that have no seal yet (a table newly sealed), and
    the values its set-once columns already hold (a column newly sealed once set)."""
    ddl = ddl_of(connection)
    for statement in ddl.in_utc:
        connection.execute(text(statement))
    row_id = ddl.sealed_row_id(table.id_column, "t")
    parts = [(table.name, table.columns, "TRUE")]
    parts += [(once_seal_name(table.name, c), (c,), f"t.{c} IS NOT NULL") for c in table.set_once]
    for seal_name, columns, where in parts:
        content = ddl.sealed_content(columns, "t")
        connection.execute(
            text(
                f"""INSERT INTO ledger_row_seals (table_name, row_id, content)
                SELECT '{seal_name}', {row_id}, {content} FROM {table.name} AS t
                WHERE {where} AND NOT EXISTS (
                    SELECT 1 FROM ledger_row_seals AS s
                    WHERE s.table_name = '{seal_name}' AND s.row_id = {row_id})"""
            )
        )


def reseal(connection: Connection, was: SealedTable, now: SealedTable) -> None:
    """Make ``now`` what seals a table ``was`` sealed (a migration that seals a column more, or
    one less): every row first checked against its seals as they are (``RuntimeError`` naming
    the first that disagrees, and nothing changed: a re-seal must not make an edit made behind
    the triggers look recorded), then each row's seal rewritten with ``now``'s columns, the
    seals of set-once columns no longer sealed dropped, the triggers made ``now``'s, and the
    values of newly set-once columns sealed."""
    if (was.name, was.id_column) != (now.name, now.id_column):
        raise ValueError("a re-seal keeps the table and its id column")
    found = first_mismatch(connection, [was])
    if found is not None:
        raise RuntimeError(f"cannot re-seal {was.name}: {found.detail}")
    ddl = ddl_of(connection)
    statements = list(ddl.unguard_seals)
    if was.columns != now.columns:
        content = ddl.sealed_content(now.columns, "t")
        row_id = ddl.sealed_row_id(now.id_column, "t")
        statements.append(
            f"""UPDATE ledger_row_seals SET content = (
                SELECT {content} FROM {now.name} AS t WHERE {row_id} = ledger_row_seals.row_id)
            WHERE table_name = '{now.name}'"""
        )
    statements += [
        f"DELETE FROM ledger_row_seals WHERE table_name = '{once_seal_name(was.name, c)}'"
        for c in was.set_once
        if c not in now.set_once
    ]
    for statement in statements:
        connection.execute(text(statement))
    uninstall(connection, [was])
    install(connection, [now])  # the seals' own guards again, with the table's triggers
    seal_existing(connection, now)


def check_identifiers(*idents: str) -> None:
    """``ValueError`` unless each of ``idents`` is a plain SQL identifier (written into SQL)."""
    for ident in idents:
        if not ident.replace("_", "").isalnum() or not ident.isascii():
            raise ValueError(f"not a plain SQL identifier: {ident!r}")


@dataclass(frozen=True)
class Mismatch:
    """A sealed row that disagrees with its seal: ``changed``, ``deleted`` or ``unsealed``;
    ``column``: a set-once column whose value disagrees with its seal (``changed``), or a tied
    column whose value disagrees with what ``given_by`` says gives it (``changed``)."""

    table: str
    row_id: str
    kind: str
    column: str | None = None
    given_by: str | None = None

    @property
    def detail(self) -> str:
        if self.given_by is not None:
            return f"{self.table} row {self.row_id}: its {self.column} is not {self.given_by}"
        if self.column is not None:
            return (
                f"{self.table} row {self.row_id}: its {self.column} differs from what was "
                "recorded when it was set"
            )
        what = {
            "changed": "differs from what was recorded when it was written",
            "deleted": "was deleted",
            "unsealed": "was written without its seal",
        }[self.kind]
        return f"{self.table} row {self.row_id} {what}"


def first_mismatch(connection: Connection, tables: Sequence[SealedTable]) -> Mismatch | None:
    """The first row of ``tables`` (in their order, then by id; each table's set-once columns
    after its rows) that disagrees with its seals."""
    ddl = ddl_of(connection)
    for statement in ddl.in_utc:
        connection.execute(text(statement))
    for table in tables:
        found = _first_in(connection, table, ddl)
        for column in table.set_once:
            found = found or _first_once_in(connection, table, column, ddl)
        if found is not None:
            return found
    return None


def sealed_since_clause(connection: Connection, after: int, gaps: Sequence[int]) -> str:
    """A WITH clause naming ``sealed_since``: the seals written after position ``after`` or
    at one of ``gaps``, read first by their position (materialized, so that neither database
    reads all of a table's seals by name to keep the newer ones); the positions are integers,
    written in."""
    position = position_column(connection)
    where = f"{position} > {int(after)}"
    if gaps:
        where += f" OR {position} IN ({', '.join(str(int(g)) for g in gaps)})"
    return (
        "WITH sealed_since AS MATERIALIZED (SELECT table_name, row_id, content "
        f"FROM ledger_row_seals WHERE {where})"
    )


def _first_in(connection: Connection, table: SealedTable, ddl: Ddl) -> Mismatch | None:
    content = ddl.sealed_content(table.columns, "t")
    row_id = ddl.sealed_row_id(table.id_column, "t")
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


def _first_once_in(
    connection: Connection, table: SealedTable, column: str, ddl: Ddl
) -> Mismatch | None:
    """The first row whose set-once ``column`` disagrees with its seal: a value with no seal
    (given behind the triggers), or a seal whose row now holds another value or none.  Rows
    deleted are the table's own seals' to name (``_first_in``, which runs first)."""
    content = ddl.sealed_content((column,), "t")
    row_id = ddl.sealed_row_id(table.id_column, "t")
    name = once_seal_name(table.name, column)
    seals = f"(SELECT row_id, content FROM ledger_row_seals WHERE table_name = '{name}')"
    rows = (
        f"(SELECT {row_id} AS row_id, {content} AS content, t.{column} IS NULL AS unset "
        f"FROM {table.name} AS t)"
    )
    found = connection.execute(
        text(
            f"""SELECT r.row_id FROM {rows} AS r
            LEFT JOIN {seals} AS s ON s.row_id = r.row_id
            WHERE (s.row_id IS NULL AND NOT r.unset)
               OR (s.row_id IS NOT NULL AND s.content <> r.content)
            ORDER BY r.row_id LIMIT 1"""
        )
    ).first()
    if found is not None:
        return Mismatch(table.name, str(found[0]), "changed", column)
    return None


def position_column(connection: Connection) -> str:
    """The column that orders ``ledger_row_seals`` by insertion: PostgreSQL's ``position``
    (an identity), SQLite's rowid (the table never loses a row, so rowids only grow)."""
    return ddl_of(connection).seal_position_column


def first_mismatch_since(
    connection: Connection, tables: Sequence[SealedTable], after: int, gaps: Sequence[int]
) -> Mismatch | None:
    """``first_mismatch`` for the seals written after position ``after`` or at one of ``gaps``
    (``ledger.checkpoint.seal_mark``): each compared with its row, which must still be there.

    Reads only those seals, by their position, and through each table's key their rows, so
    its time follows what was sealed since.  A row written with its seal's trigger disabled
    has no seal to be found this way: the full pass (``first_mismatch``) finds it."""
    ddl = ddl_of(connection)
    for statement in ddl.in_utc:
        connection.execute(text(statement))
    sealed_since = sealed_since_clause(connection, after, gaps)
    for table in tables:
        ident = f"t.{table.id_column}"
        key_join = ddl.seal_key_join(connection, table.name, table.id_column)
        parts: list[tuple[str, tuple[str, ...], str | None]] = [(table.name, table.columns, None)]
        parts += [(once_seal_name(table.name, c), (c,), c) for c in table.set_once]
        for seal_name, columns, column in parts:
            content = ddl.sealed_content(columns, "t")
            query = text(
                f"""{sealed_since} SELECT s.row_id, {ident} IS NULL FROM sealed_since AS s
                LEFT JOIN {table.name} AS t ON {key_join}
                WHERE s.table_name = '{seal_name}'
                    AND ({ident} IS NULL OR {content} <> s.content)
                ORDER BY s.row_id LIMIT 1"""
            )
            found = connection.execute(query).first()
            if found is not None and found[1]:
                return Mismatch(table.name, str(found[0]), "deleted")
            if found is not None:
                return Mismatch(table.name, str(found[0]), "changed", column)
    return None
