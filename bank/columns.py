"""The kinds of column the bank's tables share, each defined once: an id made by
``bank.ids.new_id``, a serial key, a reference to another table, an area in square feet, a
moment, and the label of the actor who recorded a row.

Each call makes a new column for the class body it stands in (a column belongs to one table),
in the order the class declares them.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import BigInteger, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import MappedColumn, mapped_column

#: room for ``bank.ids.new_id``'s prefix and random part
ID_LENGTH = 40
#: room for ``bank.access.Actor.label``
ACTOR_LENGTH = 300


def public_id() -> MappedColumn[Any]:
    """The primary key of a row the API names (``bank.ids.new_id``)."""
    return mapped_column(String(ID_LENGTH), primary_key=True)


def serial_id() -> MappedColumn[Any]:
    """The primary key of a row the API reaches only through its parent."""
    return mapped_column(Integer, primary_key=True, autoincrement=True)


def refers(
    target: str, *, index: bool | None = None, unique: bool | None = None
) -> MappedColumn[Any]:
    """A foreign key to ``target`` (``"table.column"``)."""
    return mapped_column(ForeignKey(target), index=index, unique=unique)


def part_of(parent: str) -> MappedColumn[Any]:
    """A foreign key to the row this one is a part of, indexed: the parts are read by it."""
    return refers(parent, index=True)


def sqft() -> MappedColumn[Any]:
    """An area or an amount of credits, in square feet."""
    return mapped_column(BigInteger)


def moment() -> MappedColumn[Any]:
    """A point in time, with its time zone."""
    return mapped_column(DateTime(timezone=True))


def actor_label() -> MappedColumn[Any]:
    """Who recorded the row (``bank.access.Actor.label``)."""
    return mapped_column(String(ACTOR_LENGTH))
