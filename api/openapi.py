"""The OpenAPI document, completed in one place for every operation flask-smorest describes.

flask-smorest writes each operation from its view's schemas.  ``DocumentPlugin`` (an apispec
plugin, so it sees each operation as it is added, with the Flask rule and the view behind it)
adds what a client generator and a person need and what the views do not say themselves:

* an ``operationId``, ``<method>_<view class in snake case>`` (``post_transfers``), stable while
  the class keeps its name; a summary (the docstring's first sentence) and a description (the
  whole docstring, then who may call it and how a write is retried);
* the request headers ``Idempotency-Key`` (writes that honour it: ``api.idempotency.writes``)
  and ``X-Request-Id``; the response headers ``X-Request-Id`` (every response) and
  ``Idempotent-Replayed`` (those writes' success);
* the problem responses each operation can give, derived from what it is: 401 unless it is
  public (public ones carry ``security: []``), 403 unless every role may call it
  (``api.roles``), 404 with an id in its path, body or query, 409, 413, 415 and 422 for writes
  (422 for reads too: every one takes ``?format=``, and a query's filters), 429 for rate-limited
  writes, 400 and 503 always; each a ``Problem`` whose ``code`` is an enum of every stable code
  (``api.problem_types``);
* every content type a response is sent in (``text/csv`` for the exports, HTML and PDF for the
  notices), where flask-smorest keeps only one per status, and ``?format=`` where it chooses;
* request examples for the main writes, and for a write that takes no body
  (``api.strict_json.takes_no_body``) an optional body that may only be an empty object, which
  is what it accepts;
* an optional enumerated query filter's values without ``null``, which apispec adds for a field
  that loads ``None`` when absent (a query string carries no null).
"""

from __future__ import annotations

import copy
import inspect
import re
from typing import Any

from apispec import APISpec, BasePlugin
from flask import Flask

from api import auth, formats, problems
from api.context import AUTHENTICATES_IN_UNIT
from api.openapi_examples import REQUEST_EXAMPLES
from api.openapi_problems import (
    OTHER_PROBLEM,
    PROBLEM_RESPONSES,
    problem_response,
)
from api.roles import declared
from api.strict_json import TAKES_NO_BODY
from bank.access import ROLES

PROBLEM_JSON = problems.PROBLEM_JSON
WRITE_METHODS = ("post", "put", "patch", "delete")

#: media types flask-smorest declares without a schema
_UNTYPED_CONTENT = {
    "text/csv": {"schema": {"type": "string"}},
    "text/html": {"schema": {"type": "string"}},
    "application/pdf": {"schema": {"type": "string", "format": "binary"}},
}

#: the request body of a write that takes none (``api.strict_json.takes_no_body``): none, or
#: ``{}``, is the action; a field, or any other value, is 422 ``validation_error``
NO_BODY = {
    "required": False,
    "description": (
        "This action takes no body: send none, or an empty object `{}` (the same request). "
        "Any field is 422 `validation_error`, as is any other JSON value."
    ),
    "content": {"application/json": {"schema": {"type": "object", "maxProperties": 0}}},
}

_IDEMPOTENCY = (
    "Sending an `Idempotency-Key` makes a retry safe: a repeat of the same request under the same "
    "key gets the first answer again, with `Idempotent-Replayed: true`, and writes nothing; the "
    "same key with another request is 409 `idempotency_conflict`."
)

INFO_DESCRIPTION = """\
The ledger of a Minnesota wetland bank (Minn. Stat. 103G.2242).  Credits are whole square feet
(`*_sqft`), money whole cents (`*_cents`), dates `YYYY-MM-DD` in Minnesota.

**Authentication.** `Authorization: Bearer <token>` on every operation but the public ones
(`security: []`).  A token has one role: `board`, `lgu` or `holder`; each operation's description
says which may call it.

**Writes.** Send an `Idempotency-Key` (1 to 255 characters) with every write: a repeat of the
same request under the same key is answered as the first was, with `Idempotent-Replayed: true`,
and writes nothing.

**Request ids.** Every response carries `X-Request-Id`: the client's own if it sent a sane one,
else a new one.  Problems repeat it as `request_id`.

**Errors** are RFC 9457 problem details (`application/problem+json`) with a stable `code`; their
`type` is a relative reference, `/problems/<code>`, to a page of this service that explains the
code ([all codes](/problems)).  So are the refusals of the server itself, before the service
reads the request (a request line over 4,094 bytes, oversized headers, malformed HTTP).
"""

# --- the plugin -------------------------------------------------------------------------------


class DocumentPlugin(BasePlugin):
    """Completes each operation of ``app``'s document as it is added (see the module)."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self._ids: dict[str, tuple[str, str]] = {}

    def init_spec(self, spec: APISpec) -> None:
        super().init_spec(spec)
        spec.options.setdefault("info", {})["description"] = INFO_DESCRIPTION
        for name, header in HEADERS.items():
            spec.components.header(name, header)
        for name, parameter in PARAMETERS.items():
            spec.components.parameter(name, "header", parameter)
        for status, (name, about) in PROBLEM_RESPONSES.items():
            spec.components.response(name, problem_response(status, about))
        spec.components.response(
            OTHER_PROBLEM,
            problem_response(
                None,
                "Any other problem: a method the path does not allow (405), "
                "an unexpected error (500), or one the server answers before the service reads "
                "the request: a request line over 4,094 bytes (414), an `Expect` it cannot "
                "meet (417), a header over 8,190 bytes or more than 100 headers (431), a "
                "transfer coding other than chunked (501).",
            ),
        )

    def operation_helper(
        self, path: str | None = None, operations: dict[str, Any] | None = None, **kwargs: Any
    ) -> None:
        rule = kwargs.get("rule")
        if path is None or not operations or rule is None:
            return
        view = self.app.view_functions.get(rule.endpoint)
        view_class = getattr(view, "view_class", None)
        for method, operation in operations.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            handler = getattr(view_class, method, None) if view_class is not None else view
            if getattr(handler, TAKES_NO_BODY, False):
                operation["requestBody"] = copy.deepcopy(NO_BODY)
            facts = _Facts(path, method, operation, handler, bool(rule.arguments))
            operation["operationId"] = self._operation_id(rule.endpoint, method, view_class, path)
            if facts.public:
                operation["security"] = []  # no token needed (``api.auth.PUBLIC_PATHS``)
            _describe(operation, facts)
            _query_enums(operation)
            _parameters(operation, facts)
            _responses(operation, facts)
            _examples(operation, facts)

    def _operation_id(self, endpoint: str, method: str, view_class: Any, path: str) -> str:
        """``<method>_<class>``; the blueprint's name joins in should another blueprint's class
        of the same name have taken it first."""
        name = _snake(view_class.__name__ if view_class is not None else endpoint.split(".")[-1])
        candidate = f"{method}_{name}"
        if self._ids.get(candidate, (path, method)) != (path, method):
            candidate = f"{method}_{endpoint.split('.')[0]}_{name}"
        self._ids[candidate] = (path, method)
        return candidate


class _Facts:
    """What an operation is, as far as its documentation goes."""

    def __init__(
        self, path: str, method: str, operation: dict[str, Any], handler: Any, ids_in_path: bool
    ) -> None:
        self.path, self.method, self.handler = path, method, handler
        self.key = f"{method.upper()} {path.removeprefix('/api/v1')}"
        self.public = bool(auth.PUBLIC_PATHS.match(path))
        self.roles = declared(handler) if handler is not None else None
        self.write = method in WRITE_METHODS
        # a write checking its token in its own unit of work is ``api.idempotency.writes``; a
        # read does so too (``api.reads``) and takes no key
        self.idempotent = self.write and bool(getattr(handler, AUTHENTICATES_IN_UNIT, False))
        self.body = "requestBody" in operation
        query = [p for p in operation.get("parameters", []) if _in(p) == "query"]
        # every operation answering in a format takes ``?format=``, and refuses another (422)
        self.query = bool(query) or bool(formats.words(handler))
        self.ids = ids_in_path or self.body or any(_name(p).endswith("_id") for p in query)

    def problem_statuses(self) -> list[int]:
        statuses = [503]
        if not self.public:
            statuses.append(401)
            if self.roles is None or set(self.roles) != set(ROLES):
                statuses.append(403)
        if self.ids:
            statuses.append(404)
        statuses.append(400)  # a query parameter it does not take (``api.query_params``), at least
        if self.write:
            # every write's body, a DELETE's too, is JSON or none (``api.auth``)
            statuses += [409, 413, 415, 422]
        elif self.query:
            statuses.append(422)
        if self.idempotent:
            statuses.append(429)
        return sorted(statuses)


# --- summary and description ------------------------------------------------------------------


def _describe(operation: dict[str, Any], facts: _Facts) -> None:
    text = _markdown(inspect.getdoc(facts.handler) or "") if facts.handler else ""
    text = text or operation.get("summary") or operation.get("description") or facts.key
    operation["summary"], rest = split_summary(text)
    notes = [rest, f"**Who may call it:** {_who(facts)}."]
    if facts.idempotent:
        notes.append(_IDEMPOTENCY)
    operation["description"] = "\n\n".join(note for note in notes if note)


def _who(facts: _Facts) -> str:
    if facts.public:
        return "anyone, without a token"
    if facts.roles is None or set(facts.roles) == set(ROLES):
        return "any token"
    names = [f"`{role}`" for role in facts.roles]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
    return f"{listed} tokens (another role: 403 `forbidden`)"


#: abbreviations the statute's citations use, after which a sentence does not end
_ABBREVIATIONS = ("Subd.", "Stat.", "Minn.", "e.g.", "i.e.", "No.", "vs.", "etc.")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(`\"])")


def split_summary(text: str) -> tuple[str, str]:
    """``text``'s first sentence, on one line, and the rest of it."""
    first, _, others = text.strip().partition("\n\n")
    paragraph = " ".join(first.split())
    for match in _SENTENCE_END.finditer(paragraph):
        if not paragraph[: match.start()].endswith(_ABBREVIATIONS):
            rest = [paragraph[match.end() :], others.strip()]
            return paragraph[: match.start()], "\n\n".join(part for part in rest if part)
    return paragraph, others.strip()


def _markdown(docstring: str) -> str:
    """reStructuredText's ````literal```` as Markdown's `literal`."""
    return docstring.replace("``", "`")


# --- parameters -------------------------------------------------------------------------------

PARAMETERS: dict[str, dict[str, Any]] = {
    "IdempotencyKey": {
        "name": "Idempotency-Key",
        "required": False,
        "description": (
            "1 to 255 characters chosen by the client, one per intended write (a UUID, say). "
            "Keys belong to the token. " + _IDEMPOTENCY
        ),
        "schema": {"type": "string", "minLength": 1, "maxLength": 255},
    },
    "RequestId": {
        "name": "X-Request-Id",
        "required": False,
        "description": (
            "The client's id for this request (1 to 200 letters, digits and `._:-`): the "
            "response, the logs and a write's ledger transaction carry it. Another value is "
            "replaced by a new id."
        ),
        "schema": {"type": "string"},
    },
}

#: what ``?format=`` answers with each word (``api.formats``)
_FORMATS = {
    "json": "`json` answers `application/json`",
    "csv": "`csv` answers `text/csv`, as `Accept: text/csv` does: every row, not a page",
    "html": "`html` answers the printable page (`text/html`)",
    "pdf": "`pdf` answers `application/pdf`, as `Accept: application/pdf` does",
}


def _query_enums(operation: dict[str, Any]) -> None:
    """An optional enumerated filter (``?role=``, ``?status=``, ``?kind=``) lists only the values
    it takes.  Its field loads ``None`` when it is absent, so apispec would add ``null`` to the
    enum and call it nullable; a query string carries no null (``?role=null`` is 422), and a
    client generator would offer one."""
    for parameter in operation.get("parameters", []):
        if not isinstance(parameter, dict) or parameter.get("in") != "query":
            continue
        schema = parameter.get("schema")
        if not isinstance(schema, dict) or "enum" not in schema:
            continue
        schema["enum"] = [value for value in schema["enum"] if value is not None]
        schema.pop("nullable", None)
        if schema.get("default", "") is None:
            del schema["default"]


def _parameters(operation: dict[str, Any], facts: _Facts) -> None:
    parameters = operation.setdefault("parameters", [])
    if facts.idempotent:
        parameters.append("IdempotencyKey")
    parameters.append("RequestId")


# --- responses --------------------------------------------------------------------------------

HEADERS: dict[str, dict[str, Any]] = {
    "X-Request-Id": {
        "description": "This request's id: the client's own if it sent a sane one, else a new one.",
        "required": True,
        "schema": {"type": "string"},
    },
    "Idempotent-Replayed": {
        "description": (
            "`true` when this is the stored answer to an earlier request under the same "
            "`Idempotency-Key`: nothing was written this time."
        ),
        "schema": {"type": "string", "enum": ["true"]},
    },
    "Retry-After": {
        "description": "Seconds to wait before retrying.",
        "schema": {"type": "string", "pattern": "^[0-9]+$"},
    },
}


def _responses(operation: dict[str, Any], facts: _Facts) -> None:
    responses = {str(status): value for status, value in operation.get("responses", {}).items()}
    for code, response in responses.items():
        if code.startswith(("2", "3")) and isinstance(response, dict):
            _success(response, facts, code)
    for status in facts.problem_statuses():
        name, _about = PROBLEM_RESPONSES[status]
        present = responses.get(str(status))
        if isinstance(present, dict):  # the view's own words for it: kept, completed
            present.setdefault("content", {PROBLEM_JSON: {"schema": "Problem"}})
            present.setdefault("headers", {}).update(
                {"X-Request-Id": "X-Request-Id", "Retry-After": "Retry-After"}
                if status in (429, 503)
                else {"X-Request-Id": "X-Request-Id"}
            )
        else:
            responses[str(status)] = name
    responses["default"] = OTHER_PROBLEM
    operation["responses"] = dict(sorted(responses.items(), key=lambda item: item[0]))
    _format_parameter(operation, facts)


def _format_parameter(operation: dict[str, Any], facts: _Facts) -> None:
    """``?format=`` where the operation answers in more than one media type, its words an enum
    (every endpoint takes ``format``, but one answering in JSON alone takes only ``json``)."""
    words = formats.words(facts.handler)
    if len(words) < 2 or any(_name(p) == "format" for p in operation["parameters"]):
        return
    about = [_FORMATS[word] + (" (the default)" if word == words[0] else "") for word in words]
    operation["parameters"].append(
        {
            "in": "query",
            "name": "format",
            "required": False,
            "description": "; ".join(about) + ". It decides whatever `Accept` says; any other "
            "value is 422 `validation_error`.",
            "schema": {"type": "string", "enum": words},
        }
    )


def _success(response: dict[str, Any], facts: _Facts, status: str) -> None:
    headers = response.setdefault("headers", {})
    headers["X-Request-Id"] = "X-Request-Id"
    if facts.idempotent:
        headers["Idempotent-Replayed"] = "Idempotent-Replayed"
    declared = formats.declared(facts.handler, int(status))
    if len(declared) > 1 or declared and "content" not in response:
        content = response.setdefault("content", {})
        for media_type in declared:
            if media_type not in content:
                content[media_type] = dict(_UNTYPED_CONTENT.get(media_type, {}))
        response["description"] = "; ".join(
            f"`{media_type}`: {about}" if about else f"`{media_type}`"
            for media_type, about in declared.items()
        )
        for media_type, word in (("text/csv", "csv"), ("application/pdf", "pdf")):
            if media_type in declared:
                response["description"] += f" (ask with `Accept: {media_type}` or `?format={word}`)"


# --- examples ---------------------------------------------------------------------------------


def _examples(operation: dict[str, Any], facts: _Facts) -> None:
    examples = REQUEST_EXAMPLES.get(facts.key)
    body = operation.get("requestBody", {}).get("content", {}).get("application/json")
    if examples and body is not None:
        body["examples"] = examples


# --- helpers ----------------------------------------------------------------------------------


def _in(parameter: Any) -> str | None:
    return parameter.get("in") if isinstance(parameter, dict) else None


def _name(parameter: Any) -> str:
    return str(parameter.get("name", "")) if isinstance(parameter, dict) else ""


def _snake(name: str) -> str:
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])", "_", name).lower()
