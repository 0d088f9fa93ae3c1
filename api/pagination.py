"""Cursor pagination and streamed CSV (API.md "Lists").

A cursor is the opaque, URL-safe encoding of the last row's sort key, so pages never repeat or
skip a row while new rows arrive (keyset pagination, not offsets).
"""

from __future__ import annotations

import base64
import csv
import io
import json
from collections.abc import Callable, Iterable, Iterator
from datetime import date, datetime
from typing import Any

from flask import Response, request, stream_with_context
from marshmallow import Schema, fields, validate

from api.problems import ApiProblem
from ledger import clock

DEFAULT_LIMIT, MAX_LIMIT = 50, 500


class PageArgs(Schema):
    """``?limit=&cursor=``"""

    limit = fields.Integer(
        load_default=DEFAULT_LIMIT, validate=validate.Range(min=1, max=MAX_LIMIT)
    )
    cursor = fields.String(load_default=None)


def encode_cursor(key: Any) -> str:
    """The cursor that resumes after the row whose sort key is ``key``."""
    return base64.urlsafe_b64encode(json.dumps(key).encode()).decode().rstrip("=")


def decode_cursor(cursor: str | None) -> Any:
    """The sort key in ``cursor``, or ``None`` for the first page; 400 if it is not ours."""
    if not cursor:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        return json.loads(base64.urlsafe_b64decode(padded.encode()))
    except ValueError as error:
        raise ApiProblem(400, "bad_request", "The cursor is not valid.") from error


def page(items: list[Any], limit: int, key: Callable[[Any], Any]) -> dict[str, Any]:
    """A page body from ``limit + 1`` fetched rows: the extra row only says there is more."""
    more = len(items) > limit
    shown = items[:limit]
    return {"items": shown, "next_cursor": encode_cursor(key(shown[-1])) if more else None}


def wants_csv() -> bool:
    """Whether the client asked for ``text/csv`` (Accept header or ``?format=csv``)."""
    if request.args.get("format") == "csv":
        return True
    best = request.accept_mimetypes.best_match(["application/json", "text/csv"])
    return best == "text/csv" and request.accept_mimetypes["text/csv"] > 0


def csv_response(fieldnames: list[str], rows: Iterable[dict[str, Any]], filename: str) -> Response:
    """Stream ``rows`` as CSV: one header row, then one line per row, as they are produced."""

    def generate() -> Iterator[str]:
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=fieldnames, extrasaction="ignore")
        writer.writeheader()
        yield _drain(buffer)  # the client sees the header before any row is fetched
        for index, row in enumerate(rows, 1):
            writer.writerow({k: _cell(v) for k, v in row.items()})
            if index % 500 == 0:
                yield _drain(buffer)
        yield _drain(buffer)

    response = Response(stream_with_context(generate()), mimetype="text/csv")
    response.headers["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


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
    if isinstance(value, str):
        return "'" + value if value.startswith(FORMULA_STARTS) else value
    if isinstance(value, datetime):
        return clock.as_utc(value).isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return value
