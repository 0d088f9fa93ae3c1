"""Errors on the pages are pages: the same statuses as the API, in HTML instead of JSON."""

from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Flask, Response, redirect, render_template, request, url_for
from sqlalchemy.exc import DBAPIError, OperationalError
from werkzeug.exceptions import HTTPException

from api import problems
from api.strict_json import unstorable
from api.web.signin import BadForm, SignInRequired
from ledger.errors import LedgerError

log = logging.getLogger("wetbank.web")

HEADINGS = {
    400: "The form could not be used",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    422: "Check what you entered",
    503: "The service is busy",
}


def register(blueprint: Blueprint) -> None:
    blueprint.before_request(_refuse_unstorable_address)
    blueprint.register_error_handler(SignInRequired, _to_sign_in)
    blueprint.register_error_handler(BadForm, _bad_form)
    blueprint.register_error_handler(LedgerError, _domain_error)
    blueprint.register_error_handler(DBAPIError, _database_error)


def register_routing_errors(app: Flask) -> None:
    """Routing errors belong to no blueprint: a page path gets a page, an API path a problem."""
    for status in (404, 405):
        app.register_error_handler(status, _routing_error)


def error_page(status: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    body = render_template(
        "error.html",
        status=status,
        heading=HEADINGS.get(status, "Something went wrong"),
        detail=detail,
    )
    response = Response(body, status=status, mimetype="text/html")
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def _refuse_unstorable_address() -> Response | None:
    """An address whose path or query holds a NUL (or an unpaired surrogate): a page that says
    so, not a database error halfway through reading it."""
    values = [*(request.view_args or {}).values(), *request.args.keys()]
    values += request.args.values()
    if any(isinstance(v, str) and unstorable(v) for v in values):
        return error_page(400, "This address holds a character no record can contain (NUL).")
    return None


def _to_sign_in(_error: SignInRequired) -> Any:
    return redirect(url_for("web.sign_in_form", next=request.full_path.rstrip("?")), 303)


def _bad_form(_error: BadForm) -> Response:
    return error_page(
        400, "This form has expired or did not come from this site. Go back, reload and try again."
    )


def _domain_error(error: LedgerError) -> Response:
    status = problems.status_of_error(error)
    if status == 404:
        return error_page(404, "There is no such record, or your token may not see it.")
    if status == 500:
        return error_page(500, problems.UNEXPECTED)
    return error_page(status, error.detail)


def _database_error(error: DBAPIError) -> Response:
    if isinstance(error, OperationalError) or error.connection_invalidated:
        log.warning("database unavailable for page %s", request.path)
        detail = "The database is unavailable; try again shortly."
        return error_page(503, detail, {"Retry-After": "1"})
    raise error


def _routing_error(error: HTTPException) -> Any:
    if request.path.startswith("/api/"):
        return problems.http_error(error)
    return error_page(error.code or 404, error.description or "")
