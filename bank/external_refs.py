"""Integrators' references (docs/http.md "External references"): a small map of the caller's own
identifiers for a plan, withdrawal, payment or security (a county's permit number, a parcel id),
stored with the record, shown on its reads and exports, and usable as a listing's filter.

The references are the integrator's, not the ledger's: the registry's seals (``bank.registry``)
list the columns they cover, and ``external_refs`` is not one of them, so a reference may be
corrected without breaking a seal.  They never change an amount, a status or a deadline.

A filter ``key:value`` matches the records whose reference ``key`` is exactly ``value``.  The
JSON lookup is the one expression that differs between the databases (SQLite's
``json_extract(external_refs, '$."key"')``, PostgreSQL's ``external_refs ->> 'key'``); SQLAlchemy's
``JSON`` type renders each, and ``matching`` is the one place that builds it.
"""

from __future__ import annotations

import re
from typing import Any, Final

from sqlalchemy import ColumnElement

#: at most this many references on one record
MAX_REFS: Final = 10
#: a reference's name: 1..40 of lower-case letters, digits, ``_`` and ``-``
KEY_PATTERN: Final = r"[a-z0-9_-]{1,40}"
#: a reference's value: 1..200 characters
MAX_VALUE: Final = 200
_KEY = re.compile(KEY_PATTERN)


def problems(refs: Any) -> list[str]:
    """What is wrong with ``refs`` as references (none if it is a valid map)."""
    if not isinstance(refs, dict):
        return ["a map of names to text"]
    found = []
    if len(refs) > MAX_REFS:
        found.append(f"at most {MAX_REFS} references")
    for key, value in refs.items():
        if not (isinstance(key, str) and _KEY.fullmatch(key)):
            found.append(f"name {str(key)[:50]!r}: 1 to 40 of a-z, 0-9, _ and -")
        if not (isinstance(value, str) and 1 <= len(value) <= MAX_VALUE and "\x00" not in value):
            found.append(f"value of {str(key)[:50]!r}: text of 1 to {MAX_VALUE} characters")
    return found


def parse_filter(text: str) -> tuple[str, str] | None:
    """``key:value`` as its two parts (the value may itself contain ``:``), or ``None`` unless
    both are valid as a reference."""
    key, colon, value = text.partition(":")
    if not colon or problems({key: value}):
        return None
    return key, value


def matching(column: Any, key: str, value: str) -> ColumnElement[bool]:
    """SQL: the record's reference ``key`` is ``value`` (``column`` is an ``external_refs``
    JSON column)."""
    condition: ColumnElement[bool] = column[key].as_string() == value
    return condition
