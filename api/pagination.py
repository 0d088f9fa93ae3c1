"""Cursor pagination and streamed CSV (docs/http.md "Lists, cursors and CSV").

A cursor is the opaque, URL-safe encoding of the last row's sort key, so pages never repeat or
skip a row while new rows arrive (keyset pagination, not offsets).

A cursor names its listing, and its key is checked fully (type, range, shape) before any query
uses it: anything else (random text, JSON of another shape, a cursor of another listing) is 400
``bad_request``.  Cursors are not MAC-signed: validating their shape is enough, since a
well-formed cursor made by hand only resumes the same listing after another key, which shows
nothing the caller could not page to.
"""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from flask import Response, stream_with_context
from marshmallow import Schema, fields, validate

from api import formats
from api.problems import ApiProblem
from ledger import clock

DEFAULT_LIMIT, MAX_LIMIT = 50, 500


class PageArgs(Schema):
    """``?limit=&cursor=``"""

    limit = fields.Integer(
        load_default=DEFAULT_LIMIT,
        validate=validate.Range(min=1, max=MAX_LIMIT),
        metadata={"description": "rows a page holds at most (1 to 500)"},
    )
    cursor = fields.String(
        load_default=None,
        metadata={
            "description": "the `next_cursor` of the page before, for the page after it; left "
            "out, the first page (a cursor this listing did not give is 400 `bad_request`)"
        },
    )


MAX_CURSOR_LENGTH = 400
_BASE64URL = re.compile(r"^[A-Za-z0-9_-]+$")
_MAX_BIGINT = 2**63 - 1


@dataclass(frozen=True)
class Listing:
    """One paginated listing: ``name`` (its path, e.g. ``/audit/journal`` or
    ``/accounts/acct_1/entries``) and its sort key: a row id of ``id_prefix`` (``bank.ids``:
    ``acct_`` and hex digits); with ``pair``, two numbers (such as a chain ``seq`` and an entry
    id, each a non-negative BIGINT); otherwise a sequence number (a non-negative BIGINT)."""

    name: str
    id_prefix: str | None = None
    pair: bool = False

    def cursor(self, key: int | str | tuple[int, int]) -> str:
        """The cursor that resumes after the row whose sort key is ``key``."""
        raw = json.dumps([self.name, key], separators=(",", ":")).encode()
        return base64.urlsafe_b64encode(raw).decode().rstrip("=")

    def after(self, cursor: str | None) -> Any:
        """The sort key in ``cursor``, or ``None`` for the first page; 400 ``bad_request``
        unless it is a cursor of this listing."""
        if not cursor:
            return None
        key = self._key(cursor)
        if key is None:
            raise ApiProblem(400, "bad_request", "The cursor is not one this listing gave.")
        return key

    def _key(self, cursor: str) -> int | str | tuple[int, int] | None:
        if len(cursor) > MAX_CURSOR_LENGTH or not _BASE64URL.match(cursor):
            return None
        try:
            padded = cursor + "=" * (-len(cursor) % 4)
            value = json.loads(base64.urlsafe_b64decode(padded.encode()))
        except ValueError:  # not base64, not UTF-8, or not JSON
            return None
        if not (isinstance(value, list) and len(value) == 2 and value[0] == self.name):
            return None
        key = value[1]
        if self.pair:
            if isinstance(key, list) and len(key) == 2 and all(map(_is_bigint, key)):
                return (key[0], key[1])
            return None
        if self.id_prefix is None:
            return key if _is_bigint(key) else None
        pattern = re.escape(self.id_prefix) + "_[0-9a-f]{1,64}"
        ok = type(key) is str and re.fullmatch(pattern, key) is not None
        return key if ok else None

    def page(self, items: list[Any], limit: int, key: Callable[[Any], Any]) -> dict[str, Any]:
        """A page body from ``limit + 1`` fetched rows: the extra row only says there is more."""
        more = len(items) > limit
        shown = items[:limit]
        return {"items": shown, "next_cursor": self.cursor(key(shown[-1])) if more else None}

    def resumable_page(
        self, items: list[Any], limit: int, key: Callable[[Any], Any], after: Any, origin: Any
    ) -> dict[str, Any]:
        """``page``, with ``resume_cursor``: the cursor after the page's last row, or for an
        empty page after ``after`` (the key of the cursor it was read from), or ``origin`` (a
        key before every row) on an empty first page.  Never null, so a client that reached the
        end (``next_cursor`` null) can ask again later from there for the rows written since."""
        body = self.page(items, limit, key)
        shown = body["items"]
        last = key(shown[-1]) if shown else (origin if after is None else after)
        body["resume_cursor"] = self.cursor(last)
        return body


def _is_bigint(key: Any) -> bool:
    """A non-negative BIGINT: not a bool, a float or a string of digits."""
    return type(key) is int and 0 <= key <= _MAX_BIGINT


def wants_csv() -> bool:
    """Whether the client asked for ``text/csv`` (``?format=csv``, or without ``?format=`` an
    ``Accept`` header preferring it: ``api.formats``)."""
    return formats.wanted() == formats.CSV


def csv_response(fieldnames: list[str], rows: Iterable[dict[str, Any]], filename: str) -> Response:
    """Stream ``rows`` as CSV: one header row, then one line per row, as they are produced."""
    chunks = csv_chunks(fieldnames, rows)
    response = Response(stream_with_context(chunks), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def csv_chunks(
    fieldnames: list[str], rows: Iterable[dict[str, Any]], rows_per_chunk: int = 500
) -> Iterator[str]:
    """The CSV text of ``rows`` (their ``fieldnames`` fields, in that order), in chunks: the
    header alone first, so a client sees it before any row is fetched."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow(fieldnames)
    yield _drain(buffer)
    for index, row in enumerate(rows, 1):
        writer.writerow(map(_cell, map(row.get, fieldnames)))
        if index % rows_per_chunk == 0:
            yield _drain(buffer)
    yield _drain(buffer)


def _drain(buffer: io.StringIO) -> str:
    text = buffer.getvalue()
    buffer.seek(0)
    buffer.truncate()
    return text


#: a spreadsheet reads a cell that begins with one of these as a formula (OWASP "CSV Injection")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _cell(value: Any) -> Any:
    """``value`` as a CSV cell.  Text that a spreadsheet would run as a formula (a memo
    ``=HYPERLINK(...)``) is prefixed with ``'``, so it shows as the text it is; numbers, such as
    an amount of -500, are written as numbers."""
    kind = type(value)
    if kind is str:  # the most common cells first: an export is mostly text and whole numbers
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if kind is int or value is None:
        return value
    if isinstance(value, datetime):
        return clock.as_utc(value).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return _JSON.encode(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    return value


_JSON = json.JSONEncoder(separators=(",", ":"))
