"""Long lists of keys read in slices: a statement's bound parameters are limited (PostgreSQL
refuses more than 65,535), and a listing's keys (a report's plans, an account's reservations) are
not."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar

from sqlalchemy import ColumnElement, select
from sqlalchemy.orm import InstrumentedAttribute, Session

T = TypeVar("T")
K = TypeVar("K")

#: keys per statement, well under every database's limit on bound parameters
SLICE = 10_000


def slices(keys: Sequence[T], size: int = SLICE) -> Iterator[Sequence[T]]:
    """``keys`` in consecutive slices of at most ``size``."""
    for start in range(0, len(keys), size):
        yield keys[start : start + size]


def grouped(
    session: Session,
    key: InstrumentedAttribute[K],
    keys: Sequence[K],
    *order_by: Any,
    where: Iterable[ColumnElement[bool]] = (),
) -> defaultdict[K, list[Any]]:
    """The rows of ``key``'s table whose ``key`` is one of ``keys`` (and ``where`` holds), by
    ``key``, each group in ``order_by``'s order: one query per slice of keys, not one per key.
    A key with no rows reads as an empty list; a key given twice is read once."""
    model = key.class_
    conditions = list(where)  # every slice's query has them all
    found: defaultdict[K, list[Any]] = defaultdict(list)
    for some in slices(list(dict.fromkeys(keys))):
        query = select(model).where(key.in_(some), *conditions).order_by(*order_by)
        for row in session.scalars(query):
            found[getattr(row, key.key)].append(row)
    return found
