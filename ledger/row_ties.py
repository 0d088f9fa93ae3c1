"""Tied columns: values of sealed rows that other records give, checked against them.

A column whose value other records give (a total of sealed rows, what a transaction in the hash
chain says) is declared a ``Tie``: ``verify``'s full pass names a row whose column disagrees
with them, as it names one that disagrees with its seal (``ledger.row_seals``), and the check
since a checkpoint a row among those the seals written since reach.  The database's own refusal
of such a value is the user's (a migration's triggers).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from sqlalchemy import Connection, text

from ledger.row_seals import (
    Mismatch,
    SealedTable,
    check_identifiers,
    ddl_of,
    once_seal_name,
    sealed_since_clause,
)


@dataclass(frozen=True)
class Source:
    """Rows of the sealed ``table`` (keyed by ``id_column``) that give a tied value, each naming
    the row it gives it to in its ``refers`` column (a draw's ``security_id``)."""

    table: str
    id_column: str
    refers: str

    def __post_init__(self) -> None:
        check_identifiers(self.table, self.id_column, self.refers)


@dataclass(frozen=True)
class Tie:
    """A ``column`` of ``table`` whose value other records give: a row agrees with them when
    ``holds``, an SQL condition on the row (aliased ``t``) that is never NULL, is true; ``given_by``
    says in words what gives the value ("the sum of its draws' amounts").  The column may be
    sealed or state: a state column that moves with the records it is tied to is checked this
    way, and a sealed one is checked against them as well as against its seal (a row rewritten
    together with its seal still disagrees with the hash chain).

    The check since a checkpoint (``first_untied_since``) weighs the rows whose own seals (the
    row's, or a set-once column's) were written since, and those a row of one of ``sources``
    sealed since names (a security, once a draw on it is): the rows whose value what was
    written since gave or moved.  A row a source reaches is weighed on every tie of its table,
    whichever of them declares the source."""

    table: str
    id_column: str
    column: str
    holds: str
    given_by: str
    sources: tuple[Source, ...] = ()

    def __post_init__(self) -> None:
        check_identifiers(self.table, self.id_column, self.column)


def first_untied(connection: Connection, ties: Sequence[Tie]) -> Mismatch | None:
    """The first row (in the order of ``ties``, then by id) whose tied column disagrees with
    what gives it."""
    ddl = ddl_of(connection)
    for tie in ties:
        row_id = ddl.sealed_row_id(tie.id_column, "t")
        found = connection.execute(
            text(
                f"""SELECT {row_id} FROM {tie.table} AS t WHERE NOT ({tie.holds})
                ORDER BY {row_id} LIMIT 1"""
            )
        ).first()
        if found is not None:
            return Mismatch(tie.table, str(found[0]), "changed", tie.column, tie.given_by)
    return None


def first_untied_since(
    connection: Connection,
    ties: Sequence[Tie],
    tables: Sequence[SealedTable],
    after: int,
    gaps: Sequence[int],
) -> Mismatch | None:
    """``first_untied`` for the rows a seal written after position ``after`` or at one of
    ``gaps`` (``ledger.checkpoint.seal_mark``) belongs to, or names: each tie weighed on the
    rows whose own seals (``tables`` say a table's set-once columns) were written since, and
    on those its ``sources``' rows sealed since name.

    Reads only those seals, by their position, and through the keys their rows (one statement
    a tie), so its time follows what was sealed since.  A row none of them reaches (its tied
    value or what gives it changed with no seal written since) is the full pass's
    (``first_untied``)."""
    ddl = ddl_of(connection)
    for statement in ddl.in_utc:
        connection.execute(text(statement))
    once = {table.name: table.set_once for table in tables}
    sealed_since = sealed_since_clause(connection, after, gaps)
    # a row a source reaches is reached for every tie of its table: a security drawn on since
    # is weighed on its amount and release as on its drawn total
    reaching: dict[str, list[Source]] = {}
    for tie in ties:
        known = reaching.setdefault(tie.table, [])
        known += [source for source in tie.sources if source not in known]
    for tie in ties:
        row_id = ddl.sealed_row_id(tie.id_column, "t")
        names = [tie.table, *(once_seal_name(tie.table, c) for c in once.get(tie.table, ()))]
        listed = ", ".join(f"'{name}'" for name in names)
        own_key = ddl.seal_key_join(connection, tie.table, tie.id_column)
        branches = [
            f"""SELECT {row_id} AS row_id FROM sealed_since AS s
            JOIN {tie.table} AS t ON {own_key}
            WHERE s.table_name IN ({listed}) AND NOT ({tie.holds})"""
        ]
        for source in reaching[tie.table]:
            key = ddl.seal_key_join(connection, source.table, source.id_column)
            named = f"""SELECT t.{source.refers} AS named FROM sealed_since AS s
                JOIN {source.table} AS t ON {key} WHERE s.table_name = '{source.table}'"""
            branches.append(
                f"""SELECT {row_id} AS row_id FROM ({named}) AS v
                JOIN {tie.table} AS t ON t.{tie.id_column} = v.named
                WHERE NOT ({tie.holds})"""
            )
        union = " UNION ALL ".join(branches)
        found = connection.execute(
            text(f"{sealed_since} SELECT u.row_id FROM ({union}) AS u ORDER BY u.row_id LIMIT 1")
        ).first()
        if found is not None:
            return Mismatch(tie.table, str(found[0]), "changed", tie.column, tie.given_by)
    return None
