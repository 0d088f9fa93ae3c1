"""Unknown query parameters are refused (docs/http.md "Lists"): 400 ``bad_request`` naming them.

A misspelt filter (``GET /accounts?holderid=…``) would otherwise be ignored and answer every
row, and the caller would believe it had filtered.  One hook checks every API endpoint: the
parameters its query schemas declare (``@blp.arguments(..., location="query")``, which also
documents them in OpenAPI) are allowed, and so are the few the app reads on any endpoint
(``GLOBAL``); anything else is refused before the view runs.  An endpoint without a query schema
takes only the global ones.  The pages (``api.web``) are not API endpoints and keep their own
parameters.

``format``, the one global parameter, is also checked here against the representations the
endpoint answers in (``api.formats``): ``?format=xml`` is 422 ``validation_error`` naming it, not
a JSON answer, and an export refused so never starts streaming.

As for a body refused before the view (``api.auth``), the caller's token and role are checked
first: a role the endpoint refuses hears 403 whatever it sends.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, g, request

from api import formats, roles
from api.context import actor
from api.problems import ApiProblem
from api.strict_json import check_query_string, unstorable

#: taken by every endpoint: ``?format=``, one of the representations the endpoint answers in
#: (``api.formats``: ``json`` everywhere JSON is answered, ``csv`` on the exports, ``html`` and
#: ``pdf`` on the notices), any other value being 422
GLOBAL = frozenset({"format"})


def refuse_unknown() -> None:
    """400 ``bad_request`` for a query parameter the API endpoint called does not take, and
    422 ``validation_error`` for one holding text no record can (a NUL) or for a ``format``
    the endpoint does not answer in, before the view runs (installed by ``api.auth``, after the
    token is checked)."""
    if not request.args or not _api_endpoint():
        return
    handler = formats.current_handler()
    if handler is None:
        return
    unknown = sorted(set(request.args) - allowed(handler))
    if not unknown:
        if any(unstorable(name) or unstorable(value) for name, value in _every_arg()):
            _caller_checked(handler)
            check_query_string()  # a NUL in a filter: 422, before an export starts streaming
        if "format" in request.args:
            _caller_checked(handler)
            formats.check(handler)  # a format the endpoint has not: 422, not JSON
        return
    _caller_checked(handler)
    names = ", ".join(unknown)
    raise ApiProblem(
        400,
        "bad_request",
        f"Unknown query parameter: {names}.",
        errors={name: ["Unknown query parameter."] for name in unknown},
    )


def _every_arg() -> list[tuple[str, str]]:
    return list(request.args.items(multi=True))


def _caller_checked(handler: Any) -> None:
    """An unknown token hears 401, and a role the endpoint refuses 403, before anything about
    the query."""
    if g.get("bearer_secret") and g.get("actor") is None:
        actor()
    roles.check(handler)


def allowed(handler: Any) -> frozenset[str]:
    """The query parameters ``handler`` declares, with the global ones."""
    names = set(GLOBAL)
    docs = getattr(handler, "_apidoc", {}).get("arguments", {}).get("parameters", [])
    for parameter in docs:
        if parameter.get("in", parameter.get("location")) != "query":
            continue
        schema = parameter["schema"]
        schema = schema() if isinstance(schema, type) else schema
        names.update(field.data_key or name for name, field in schema.fields.items())
    return frozenset(names)


def _api_endpoint() -> bool:
    """Whether the request is for an endpoint of the API's blueprints (``Api.register_blueprint``),
    not a page, a static file or the OpenAPI document."""
    names = current_app.extensions.get("flask-smorest", {}).get("blp_name_to_api", {})
    return request.blueprint in names
