"""Bearer-token authentication, request ids, content-type checks and the access audit trail."""

from __future__ import annotations

import logging
import re
import uuid
from typing import Any

from flask import Flask, Response, current_app, g, request
from werkzeug.exceptions import HTTPException

from api import query_params, roles
from api.body_limit import refuse_over_limit
from api.context import AUTHENTICATES_IN_UNIT, actor, database
from api.problems import ApiProblem
from api.strict_json import check_request_body
from bank import access

log = logging.getLogger("wetbank.api")

#: endpoints anyone may call (docs/http.md "Authentication and roles"): health, readiness, the
#: OpenAPI document, the availability report
PUBLIC_PATHS = re.compile(
    r"^/api/v1/(health|ready|openapi\.json|reports/credit-availability)/?$"
    r"|^/api/v1/(swagger|redoc|docs)"
)
_SAFE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:\-]{1,200}$")
JSON_TYPES = ("application/json", "application/problem+json")
#: the methods whose body is checked: the writes' (a DELETE's too, which reads none and so must
#: refuse one that asks for anything: ``strict_json.takes_no_body``)
BODY_METHODS = ("POST", "PUT", "PATCH", "DELETE")


def register(app: Flask) -> None:
    """Install the request hooks (``assign_request_id`` is installed first, by the factory)."""
    app.before_request(_authenticate)
    app.before_request(_require_json_body)
    app.before_request(query_params.refuse_unknown)
    app.after_request(_finish)


def assign_request_id() -> None:
    """Use the client's ``X-Request-Id`` when it is sane, else a new one."""
    g.request_id = request_id_for(request.headers.get("X-Request-Id"))


def request_id_for(sent: str | None) -> str:
    """A request's id: ``sent`` (the client's ``X-Request-Id``) when it is sane (1 to 200
    letters, digits and ``. _ : -``), else a new one.  Also what the server's worker gives a
    request it refuses before the app (``api.gunicorn_worker``)."""
    return sent if sent and _SAFE_REQUEST_ID.match(sent) else uuid.uuid4().hex


def _authenticate() -> None:
    g.actor = None
    if not request.path.startswith("/api/"):
        return  # the pages sign in with a cookie session (api.web.signin), never a bearer token
    header = request.headers.get("Authorization", "")
    scheme, _, secret = header.partition(" ")
    if scheme.lower() == "bearer" and secret.strip():
        g.bearer_secret = secret.strip()
        if not _view_authenticates_in_its_unit():
            actor()
    elif not PUBLIC_PATHS.match(request.path) and request.method != "OPTIONS":
        raise ApiProblem(401, "unauthorized", "A bearer token is required.")


def _view_authenticates_in_its_unit() -> bool:
    """Whether the view checks the token itself, inside its own unit of work (``writes``,
    ``reads``): the request then costs one database transaction, not two."""
    return bool(getattr(_handler(), AUTHENTICATES_IN_UNIT, False))


def _handler() -> Any:
    """The function that will handle this request (a MethodView's method for it), if any."""
    view = current_app.view_functions.get(request.endpoint or "")
    view_class = getattr(view, "view_class", None)
    return getattr(view_class, request.method.lower(), None) if view_class else view


def _require_json_body() -> None:
    try:
        _check_json_body()
    except (ApiProblem, HTTPException):  # 415, 400, and werkzeug's 413 for an oversized body
        if g.get("bearer_secret") and g.get("actor") is None:
            actor()  # a token not checked yet: an unknown one hears 401, whatever its body
        roles.check(_handler())  # and a role the endpoint refuses hears 403 (``api.roles``)
        raise


def _check_json_body() -> None:
    refuse_over_limit()  # a body of unknown length (chunked) over the limit: 413, on every path
    if request.method not in BODY_METHODS or not request.path.startswith("/api/"):
        return  # the pages' forms post application/x-www-form-urlencoded
    if not request.content_length and not request.headers.get("Transfer-Encoding"):
        return  # bodiless actions (freeze, void) need no content type
    if request.mimetype not in JSON_TYPES:
        raise ApiProblem(
            415, "unsupported_media_type", "Send the request body as application/json."
        )
    check_request_body()  # strict JSON: no duplicate keys, NaN, deep nesting


def _finish(response: Response) -> Response:
    response.headers["X-Request-Id"] = g.get("request_id", "")
    status = response.status_code
    # a page's 401 (a bad token pasted at sign-in) is recorded by the sign-in itself
    if status == 403 or (status == 401 and request.path.startswith("/api/")):
        _record_refusal(status)
    return response


def _record_refusal(status: int) -> None:
    """Refused requests are audited in their own transaction: the request's own rolled back."""
    who = g.get("actor")
    try:
        with database().transaction() as session:
            access.record_event(
                session,
                kind="unauthorized" if status == 401 else "forbidden",
                path=f"{request.method} {request.path}",
                status=status,
                actor=who.label if who else None,
                request_id=g.get("request_id"),
            )
    except Exception:  # never turn a 401/403 into a 500 because the audit write failed
        log.exception("could not record a refused request in the audit trail")
