"""Keyset pagination: a listing's rows after a cursor row, in (column, id) order.

A page ends with the id of its last row; the next page is the rows past that row's place in the
order, which an index on (column, id) finds without reading the rows before it (an offset would).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import ColumnElement, select, tuple_
from sqlalchemy.orm import Session

from bank.errors import UnknownCursor


def after(
    column: Any, id_column: Any, cursor_id: str, *scope: ColumnElement[bool]
) -> ColumnElement[bool]:
    """The rows past the row ``cursor_id`` in ascending (``column``, ``id_column``) order: one
    row-value comparison, as ``after_row``'s, so that a page among many rows sharing ``column``
    (securities expiring on one day) starts at the cursor's row in the index.

    The cursor's row is looked up within ``scope``, the listing's own conditions: a cursor the
    caller could not have been given (another holder's account, say) yields an empty page, not a
    place in a listing it may not see; ``require_listed`` refuses it instead."""
    # the id is the cursor's own; with no such row in scope the time is NULL, and so no row
    value = _cursor_value(column, id_column, cursor_id, scope)
    return tuple_(column, id_column) > tuple_(value, cursor_id)


def after_row(
    order: Sequence[Any], id_column: Any, cursor_id: str, *scope: ColumnElement[bool]
) -> ColumnElement[bool]:
    """``after`` for an order of several columns (or expressions) whose last breaks every tie
    within ``scope`` (an account's lots: their time, then their label's length and label): the
    rows past the row whose ``id_column`` is ``cursor_id``, looked up within ``scope`` (none
    when it is not there).

    One row-value comparison, ``(a, b, c) > (x, y, z)``: PostgreSQL bounds its index range scan
    by the whole of it (an index on the scope's columns, then ``order``), so a page among many
    rows sharing ``a`` (lots made at one instant) starts at the cursor's row, not at the first
    row sharing its ``a``.  SQLite (3.15+) seeks on the comparison's leading plain columns (an
    expression such as ``length(label)`` ends them: there, on ``a``) and filters the rest."""
    values = [_cursor_value(column, id_column, cursor_id, scope) for column in order]
    return tuple_(*order) > tuple_(*values)


def before(
    column: Any, id_column: Any, cursor_id: str, *scope: ColumnElement[bool]
) -> ColumnElement[bool]:
    """``after`` for a listing in descending (``column``, ``id_column``) order, newest first."""
    value = _cursor_value(column, id_column, cursor_id, scope)
    return tuple_(column, id_column) < tuple_(value, cursor_id)


def _cursor_value(
    column: Any, id_column: Any, cursor_id: str, scope: tuple[ColumnElement[bool], ...]
) -> Any:
    return select(column).where(id_column == cursor_id, *scope).correlate(None).scalar_subquery()


def require_listed(
    session: Session, id_column: Any, cursor_id: str, *scope: ColumnElement[bool]
) -> None:
    """``UnknownCursor`` (400 ``bad_request``) unless the row ``cursor_id`` is within
    ``scope``: the rows of the listing the caller may page (its own, of the account asked for),
    whatever the filters, which do not move a cursor."""
    query = select(id_column).where(id_column == cursor_id, *scope)
    if session.execute(query).first() is None:
        raise UnknownCursor()


def listed_after(
    session: Session,
    column: Any,
    id_column: Any,
    cursor_id: str,
    *scope: ColumnElement[bool],
) -> ColumnElement[bool]:
    """``after`` for a listing that refuses a cursor not its own: ``require_listed`` within
    ``scope`` first (``UnknownCursor``), then the rows past the cursor's in that scope."""
    require_listed(session, id_column, cursor_id, *scope)
    return after(column, id_column, cursor_id, *scope)
