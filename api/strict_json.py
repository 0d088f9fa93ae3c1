"""Request bodies are strict JSON (docs/http.md "Conventions"; docs/reliability.md "Hostile input").

Python's parser accepts what JSON does not (``NaN``, ``Infinity``), silently keeps the last of
duplicate keys (so two parsers can read one body two ways), and fails with ``RecursionError`` (a
500) on deeply nested input; and PostgreSQL cannot store a NUL character or an unpaired surrogate
(another 500).  Every JSON body is checked here once, before any view parses it: each of those
is a 4xx problem, and nothing is written.

The value parsed here is the one the request uses: ``StrictParser``, the views' argument parser
(flask-smorest's ``Blueprint.ARGUMENTS_PARSER``, replaced when this module is imported, which
``api`` does before any view), reads it rather than parsing the body again, and so does the
``Idempotency-Key`` fingerprint (``body``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

import flask_smorest
from flask import g, request
from marshmallow import Schema
from webargs import core
from webargs.flaskparser import FlaskParser, is_json_request

from api.problems import ApiProblem

F = TypeVar("F", bound=Callable[..., Any])

#: no request body of the API nests deeper than a few levels
MAX_DEPTH = 32


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise _Constant(name)


#: the attribute marking a view ``takes_no_body`` (kept by ``functools.wraps``): the OpenAPI
#: document declares such a view's body as optional and empty (``api.openapi``)
TAKES_NO_BODY = "takes_no_body"
#: ``g`` key: this request's body as ``check_request_body`` parsed it
_PARSED = "strict_json_body"
#: no body was parsed (``body``)
UNPARSED: Any = core.missing


def check_request_body() -> None:
    """``check_body`` on this request's body, which the request then reads as parsed here."""
    raw = request.get_data(cache=True)
    if raw:
        setattr(g, _PARSED, check_body(raw))


def body() -> Any:
    """This request's body as ``check_request_body`` parsed it, or ``UNPARSED``."""
    return g.get(_PARSED, UNPARSED)


def takes_no_body(view: F) -> F:
    """Declare a write that takes no body (a freeze, a void, a refund): it refuses one that asks
    for anything, where it would otherwise act with the body ignored (a refund asked for "100
    cents" refunding the whole payment).  A JSON object's fields are unknown to it, each named
    as a body's schema names a field it does not have, and a value other than an object is no
    body it reads: 422 ``validation_error``.  An empty body, or ``{}``, is the action itself.
    Wrapped inside the write's unit of work and its role check, as a body's schema is: a role
    the endpoint refuses hears 403 whatever it sends, and nothing is written."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        sent = body()
        if sent is not UNPARSED and sent != {}:  # JSON null is a value, not no body
            raise ApiProblem(
                422,
                "validation_error",
                "This action takes no request body: send none, or {}.",
                errors=_unread(sent),
            )
        return view(*args, **kwargs)

    setattr(wrapper, TAKES_NO_BODY, True)
    return wrapper  # type: ignore[return-value]


def _unread(sent: Any) -> dict[str, list[str]]:
    """The errors of a body a bodiless write does not read, in the shape of a schema's."""
    if isinstance(sent, dict):
        return {str(key)[:100]: ["Unknown field."] for key in sent}
    return {"_schema": ["Invalid input type."]}


def check_body(raw: bytes) -> Any:
    """Refuse a JSON body that is ambiguous, not JSON, too deep, or not storable: also on
    writes that take no body (freeze, void, refund), which would otherwise ignore it.  Returns
    the parsed value (``None`` for an empty body)."""
    if not raw:
        return None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiProblem(400, "bad_request", "The request body is not UTF-8.") from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Duplicate as error:
        raise ApiProblem(
            400, "bad_request", f"The JSON object repeats the key {error.key[:100]!r}."
        ) from None
    except _Constant as error:
        raise ApiProblem(400, "bad_request", f"{error.name} is not a JSON value.") from None
    except RecursionError:
        raise ApiProblem(
            400, "bad_request", f"The JSON nests more than {MAX_DEPTH} levels deep."
        ) from None
    except ValueError:  # not JSON, or a number of more than 4300 digits
        raise ApiProblem(400, "bad_request", "The request body is not valid JSON.") from None
    _check_tree(value)
    return value


def _check_tree(value: Any) -> None:
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ApiProblem(
                400, "bad_request", f"The JSON nests more than {MAX_DEPTH} levels deep."
            )
        if isinstance(node, str):
            _check_string(node, path or "body")
        elif isinstance(node, dict):
            for key, item in node.items():
                here = f"{path}.{key}" if path else key
                _check_string(key, here)
                stack.append((item, here, depth + 1))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, f"{path}.{index}" if path else str(index), depth + 1))


def unstorable(text: str) -> str | None:
    """Why ``text`` cannot be stored (PostgreSQL's text holds no NUL, and UTF-8 no unpaired
    surrogate), or ``None`` when it can."""
    if "\x00" in text:
        return "must not contain a NUL character"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid Unicode (an unpaired surrogate)"
    return None


def check_query_string() -> None:
    """422 ``validation_error`` for a query parameter that could not be stored or compared
    (before a view runs: an export that streams would otherwise fail after its first line)."""
    errors = {
        name[:200]: [why]
        for name, value in request.args.items(multi=True)
        if (why := unstorable(name) or unstorable(value)) is not None
    }
    if errors:
        raise ApiProblem(
            422,
            "validation_error",
            "Some query parameters are not valid: see errors.",
            errors=errors,
        )


def _check_string(text: str, path: str) -> None:
    message = unstorable(text)
    if message is None:
        return
    raise ApiProblem(
        422,
        "validation_error",
        "Some fields are missing or not valid: see errors.",
        errors={path[:200]: [message]},
    )


class StrictParser(FlaskParser):
    """webargs' Flask parser, reading a JSON body as ``check_request_body`` parsed it, and
    making one instance of each schema class a view names (``@blp.arguments(TransferIn)``) for
    the process rather than one per request.  Schemas keep no state between loads."""

    def __init__(self) -> None:
        super().__init__()
        self._schemas: dict[type[Schema], Schema] = {}

    def _raw_load_json(self, req: Any) -> Any:
        parsed = body()
        if parsed is UNPARSED or not is_json_request(req):
            return super()._raw_load_json(req)
        return parsed

    def _get_schema(self, argmap: Any, req: Any) -> Schema:
        if isinstance(argmap, type) and issubclass(argmap, Schema):
            schema = self._schemas.get(argmap)
            if schema is None:
                schema = self._schemas.setdefault(argmap, argmap())
            return schema
        return super()._get_schema(argmap, req)


# before any view is decorated: ``@blp.arguments`` binds the parser its Blueprint class names
flask_smorest.Blueprint.ARGUMENTS_PARSER = StrictParser()
