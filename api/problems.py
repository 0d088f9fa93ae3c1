"""RFC 9457 problem details: the one place where errors become HTTP statuses and bodies."""

from __future__ import annotations

import logging
import re
from typing import Any

from flask import Flask, Response, g, has_request_context, json, request
from sqlalchemy.exc import DataError, DBAPIError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from bank.errors import code_of
from ledger import quantities
from ledger.db import is_retryable, refuses_writes
from ledger.errors import LedgerError

log = logging.getLogger("wetbank.api")

PROBLEM_JSON = "application/problem+json"

#: domain error code → HTTP status (docs/http.md "Errors: problem details")
STATUS_BY_CODE = {
    "bad_request": 400,
    "unauthorized": 401,
    "forbidden": 403,
    "not_found": 404,
    "validation_error": 422,
    "idempotency_conflict": 409,
    "conflict": 409,
    "insufficient_credits": 422,
    "cap_exceeded": 422,
    "not_eligible": 422,
    "restricted_credit_misuse": 422,
    "ratio_too_low": 422,
    "comment_period_open": 422,
    "deadline_passed": 422,
    "appeal_window_closed": 422,
    "invalid_fee": 422,
    "security_required": 422,
    "account_frozen": 422,
    "unbalanced": 422,
}


class UnmappedCode(LookupError):
    """A domain error's code that ``STATUS_BY_CODE`` gives no status: a fault of the service,
    which tests/unit/test_error_statuses.py finds for every error class."""


def status_for(code: str) -> int:
    """The HTTP status of a domain error's ``code`` (``bank.errors.code_of``); ``UnmappedCode``
    for a code with none."""
    status = STATUS_BY_CODE.get(code)
    if status is None:
        raise UnmappedCode(f"no HTTP status for the error code {code!r}")
    return status


def status_of_error(error: LedgerError) -> int:
    """The status ``error`` is answered with: its code's, or 500, logged, for a code that has
    none (a caller is not told 409 for a refusal the service cannot name)."""
    try:
        return status_for(code_of(error))
    except UnmappedCode:
        log.exception("%s has no HTTP status", type(error).__name__)
        return 500


#: HTTP status → code, for errors raised by Flask/Werkzeug rather than by the domain
CODE_BY_STATUS = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    409: "conflict",
    413: "payload_too_large",
    414: "uri_too_long",
    415: "unsupported_media_type",
    417: "expectation_failed",
    422: "validation_error",
    429: "rate_limited",
    431: "header_fields_too_large",
    503: "service_unavailable",
}

#: the ``detail`` of a 500: what went wrong is in the log, under the request id
UNEXPECTED = "An unexpected error occurred; it has been logged."

TITLES = {
    "validation_error": "The request is not valid",
    "not_found": "Not found",
    "unauthorized": "Authentication required",
    "forbidden": "Not allowed",
    "uri_too_long": "URI too long",
}


class ApiProblem(Exception):
    """An error raised by the HTTP layer itself (auth, content type, rate limit)."""

    def __init__(
        self,
        status: int,
        code: str,
        detail: str,
        headers: dict[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.status, self.code, self.detail = status, code, detail
        self.headers = headers or {}
        self.extra = extra


def problem(
    status: int,
    code: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> Response:
    """A problem-details response."""
    body = {
        "type": type_uri(code),
        "title": title_of(code),
        "status": status,
        "detail": detail,
        "code": code,
        **{k: v for k, v in extra.items() if v is not None},
    }
    if getattr(g, "request_id", None):
        body["request_id"] = g.request_id
    response = Response(json.dumps(body), status=status, mimetype=PROBLEM_JSON)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def type_uri(code: str) -> str:
    """A problem's ``type``: the relative reference ``/problems/<code>`` (RFC 9457 3.1.1), the
    page of this service that explains the code (``api.docs_pages``).  Relative, so that it
    names the same type whatever host or proxy the client came through; a client resolves it
    against the URL it called."""
    root = request.script_root if has_request_context() else ""
    return f"{root}/problems/{code}"


def title_of(code: str) -> str:
    """A problem's ``title``: the same for every problem of ``code``."""
    return TITLES.get(code, code.replace("_", " ").capitalize())


def register(app: Flask) -> None:
    """Install handlers so that every error leaves as problem details."""
    app.register_error_handler(LedgerError, _domain_error)
    app.register_error_handler(ApiProblem, _api_problem)
    app.register_error_handler(HTTPException, http_error)
    app.register_error_handler(DBAPIError, _database_error)
    app.register_error_handler(PoolTimeout, _pool_exhausted)
    app.register_error_handler(Exception, _unexpected)


#: members of the problem document itself: a domain error's field of the same name (such as the
#: ``status`` of the plan or payment a ``conflict`` is about) is renamed ``current_<name>``
_RESERVED_MEMBERS = frozenset({"type", "title", "status", "detail", "code", "headers"})


def _domain_error(error: LedgerError) -> Response:
    status = status_of_error(error)
    if status == 500:
        return problem(500, "internal_error", UNEXPECTED)
    code = code_of(error)
    fields = {
        (f"current_{k}" if k in _RESERVED_MEMBERS else k): _jsonable(v)
        for k, v in error.fields.items()
    }
    errors = fields.pop("errors", None)
    return problem(status, code, error.detail, errors=errors, **fields)


def _api_problem(error: ApiProblem) -> Response:
    return problem(error.status, error.code, error.detail, error.headers, **error.extra)


def http_error(error: HTTPException) -> Response:
    """An error raised by Flask or Werkzeug (routing, parsing, size limits) as a problem."""
    status = error.code or 500
    code = CODE_BY_STATUS.get(status, "error")
    detail = error.description or ""
    errors = None
    data = getattr(error, "data", None) or {}
    messages = data.get("messages")
    if status == 400 and messages:
        detail = "The request body is not valid JSON."
    elif status == 422 and messages:
        errors = _flatten_locations(messages)
        detail = "Some fields are missing or not valid: see errors."
    headers = {}
    if status == 405 and error.valid_methods:  # type: ignore[attr-defined]
        headers["Allow"] = ", ".join(error.valid_methods)  # type: ignore[attr-defined]
    return problem(status, code, detail, headers, errors=errors)


def _database_error(error: DBAPIError) -> Response:
    """The database is unreachable (down, restarting, connection lost) or cannot take writes (a
    read-only standby; a request with a token writes too, recording its use once a minute): 503,
    retry later.  Nothing was acknowledged, so a retry with the same Idempotency-Key is safe.
    A value the database cannot store (out of its column's range, a NUL in a path or query) is
    422, and so is a quantity that would no longer be exact (``_inexact_quantity``)."""
    if isinstance(error, DataError):
        return problem(
            422,
            "validation_error",
            "A value is out of range or contains characters that cannot be stored.",
        )
    if _inexact_quantity(error):
        return problem(
            422,
            "validation_error",
            "A quantity is out of range: the amounts involved cannot be stored exactly.",
        )
    if is_retryable(error):
        return _contended(error)
    if refuses_writes(error):
        return _unavailable(
            error,
            "database read-only, refusing writes (request %s %s): %s",
            "The database cannot take writes now; retry shortly.",
        )
    if not (isinstance(error, OperationalError) or error.connection_invalidated):
        return _unexpected(error)
    return _unavailable(
        error,
        "database unavailable (request %s %s): %s",
        "The database is unavailable; retry shortly.",
    )


def _contended(error: DBAPIError) -> Response:
    """The database answered, but the request's unit of work met a deadlock, a serialization
    failure or a busy SQLite file on every attempt it was given (``Database.run`` retries up to
    ``MAX_ATTEMPTS`` times; a unit outside it gets one): 503, as busy, not as unreachable; each
    attempt was rolled back, so nothing was written."""
    return _unavailable(
        error,
        "request %s %s conflicted with concurrent writes on every attempt, nothing written: %s",
        "The service is busy: this request conflicted with concurrent writes each time it was "
        "tried, and nothing was written; retry shortly.",
    )


def _unavailable(error: DBAPIError, log_line: str, detail: str) -> Response:
    """503 ``service_unavailable`` with ``Retry-After: 1``, logged as ``log_line`` (its three
    ``%s``: the path, the request id and the error's first line)."""
    log.warning(log_line, request.path, getattr(g, "request_id", ""), _first_line(error))
    return problem(503, "service_unavailable", detail, {"Retry-After": "1"})


def _first_line(error: DBAPIError) -> str:
    """The database's own message, first line only (a log line each)."""
    return (str(error.orig).strip().splitlines() or [type(error).__name__])[0]


def _pool_exhausted(_error: PoolTimeout) -> Response:
    """Every connection of the process's pool stayed busy for ``WETBANK_POOL_TIMEOUT``: 503, as
    for a database that does not answer; nothing was written."""
    log.warning("no database connection free (request %s %s)", request.path, g.get("request_id"))
    return problem(
        503,
        "service_unavailable",
        "The service is busy; retry shortly.",
        {"Retry-After": "1"},
    )


#: PostgreSQL's CHECK on a quantity's bound (migration 0008), named in its error message
_BOUND_CHECK = re.compile(r"\bck_\w+_(?:sqft|cents)_max\b")


def _inexact_quantity(error: DBAPIError) -> bool:
    """A write the database refused because a quantity would not be an exact whole number within
    its bound: SQLite's guards on quantity columns (``ledger.quantities``), its ``sum()``
    overflowing 64 bits, or PostgreSQL's CHECK on a quantity's bound."""
    if isinstance(error, IntegrityError):
        return quantities.is_refusal(error) or bool(_BOUND_CHECK.search(str(error.orig)))
    return isinstance(error, OperationalError) and "integer overflow" in str(error.orig)


def _unexpected(error: Exception) -> Response:
    log.exception("unexpected error (request %s %s)", request.path, getattr(g, "request_id", ""))
    return problem(500, "internal_error", UNEXPECTED)


def _flatten_locations(messages: dict[str, Any]) -> dict[str, Any]:
    """webargs groups errors by location (json, query); the contract maps field paths."""
    flat: dict[str, Any] = {}
    for location, fields in messages.items():
        if isinstance(fields, dict):
            flat.update(_paths(fields))
        else:
            flat[location] = fields
    return flat


def _paths(tree: dict[Any, Any], prefix: str = "") -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in tree.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        if isinstance(value, dict):
            out.update(_paths(value, path))
        else:
            out[path] = value
    return out


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    return str(value)
