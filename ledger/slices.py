"""Long lists of keys read in slices: a statement's bound parameters are limited (PostgreSQL
refuses more than 65,535), and a listing's keys (a report's plans, an account's reservations) are
not."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TypeVar

T = TypeVar("T")

#: keys per statement, well under every database's limit on bound parameters
SLICE = 10_000


def slices(keys: Sequence[T], size: int = SLICE) -> Iterator[Sequence[T]]:
    """``keys`` in consecutive slices of at most ``size``."""
    for start in range(0, len(keys), size):
        yield keys[start : start + size]
