"""Errors on the pages are pages: the same statuses as the API, in HTML instead of JSON."""

from __future__ import annotations

import logging
from typing import Any
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    Flask,
    Response,
    current_app,
    redirect,
    render_template,
    request,
    url_for,
)
from sqlalchemy.exc import DBAPIError, OperationalError
from werkzeug.exceptions import (
    HTTPException,
    MethodNotAllowed,
    NotFound,
    RequestEntityTooLarge,
)
from werkzeug.routing import RequestRedirect

from api import problems
from api.strict_json import unstorable
from api.web.signin import (
    ENDED_BY_REVOCATION,
    BadForm,
    SignInRequired,
    ended_by_revocation,
    ended_session,
    is_local_path,
)
from ledger.db import refuses_writes
from ledger.errors import LedgerError

log = logging.getLogger("wetbank.web")

HEADINGS = {
    400: "The form could not be used",
    403: "Not allowed",
    404: "Not found",
    405: "Not allowed here",
    413: "Too much to send",
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
    """Routing errors belong to no blueprint: a page path gets a page, an API path a problem.
    So does a body over the size limit (``WETBANK_MAX_BODY_BYTES``), which may be refused
    before any view is chosen (``api.body_limit``: a chunked one, in ``api.auth``)."""
    for status in (404, 405):
        app.register_error_handler(status, _routing_error)
    app.register_error_handler(RequestEntityTooLarge, _too_large)


def error_page(status: int, detail: str, headers: dict[str, str] | None = None) -> Response:
    body = render_template(
        "error.html",
        status=status,
        heading=HEADINGS.get(status, "Something went wrong"),
        detail=detail,
    )
    response = Response(body, status=status, mimetype="text/html")
    # signed in, the page carries the session's CSRF secret (its sign-out form): never cached
    response.headers["Cache-Control"] = "no-store"
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
    """The sign-in page, to come back here after; saying, when the browser's session was ended
    by its token's revocation, that it was (``signin.ENDED``)."""
    if ended_by_revocation():
        ended = redirect(url_for("web.sign_in_form", next=_back_to()), 303)
        return ended_session(ended, ENDED_BY_REVOCATION)
    return redirect(url_for("web.sign_in_form", next=_back_to()), 303)


def _back_to() -> str:
    """Where to come back after signing in: this page; for a form's POST (the session ran out
    while it was being filled in), a page with a GET, since the browser will GET it: the
    address's own GET twin, else the page the form was on (``Referer``, if on this site), else
    the home page."""
    here = request.full_path.rstrip("?")
    if request.method in ("GET", "HEAD") or _has_get(request.path):
        return here
    referer = urlsplit(request.headers.get("Referer", ""))
    if referer.scheme in ("http", "https") and referer.netloc == request.host:
        page = referer.path + (f"?{referer.query}" if referer.query else "")
        if is_local_path(page) and _has_get(referer.path):
            return page
    return url_for("web.index")


def _has_get(path: str) -> bool:
    """Whether a GET of ``path`` reaches a page of this site (rather than 404 or 405)."""
    adapter = current_app.url_map.bind_to_environ(request.environ)
    try:
        adapter.match(path, method="GET")
    except RequestRedirect:
        return True
    except (NotFound, MethodNotAllowed):
        return False
    return True


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
    if refuses_writes(error):  # a read-only standby (the API's 503 too)
        log.warning("database read-only, refusing writes, for page %s", request.path)
        detail = "The database cannot take writes now; try again shortly."
        return error_page(503, detail, {"Retry-After": "1"})
    raise error


def _routing_error(error: HTTPException) -> Any:
    if request.path.startswith("/api/"):
        return problems.http_error(error)
    return error_page(error.code or 404, error.description or "")


def _too_large(error: RequestEntityTooLarge) -> Any:
    if request.path.startswith("/api/"):
        return problems.http_error(error)
    return error_page(
        413,
        "What the form sent is more than the service takes in one form: go back, shorten what "
        "was typed or pasted into it, and send it again.",
    )
