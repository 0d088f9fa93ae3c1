"""Which representation an API endpoint answers in: ``?format=`` and ``Accept`` (docs/http.md
"Lists, cursors and CSV").

An endpoint's representations are the media types its view declares for its success
(``@blp.response``, then each ``@blp.alt_response``; the first is its default): JSON alone for
most, JSON and CSV for the exports, a printable page (HTML) and PDF for the notices.  The same
declarations give the OpenAPI document its content types and the ``format`` parameter's enum
(``api.openapi``), so what the document offers is what the endpoint takes.

``?format=`` names one of them by its word (``json``, ``csv``, ``html``, ``pdf``) and decides,
whatever ``Accept`` says.  Any other word, on any API endpoint, is 422 ``validation_error``
naming ``format`` and the words the endpoint takes, before the view runs
(``api.query_params``): an export never starts streaming first and a write writes nothing, and
a client that asked for XML, or for a PDF of a JSON record, is told so rather than handed JSON.
Without ``?format=``, ``Accept`` chooses among them, and one naming none of them gets the
default: ``Accept`` is a preference a server may not be able to meet (RFC 9110 section 12.5.1),
``?format=`` a request for one representation.
"""

from __future__ import annotations

from typing import Any

from flask import current_app, request

from api.problems import ApiProblem

JSON, CSV, HTML, PDF = "application/json", "text/csv", "text/html", "application/pdf"
#: ``?format=``'s word for each media type an endpoint can answer in
WORDS = {JSON: "json", CSV: "csv", HTML: "html", PDF: "pdf"}


def declared(handler: Any, status: int) -> dict[str, str]:
    """Every media type ``handler`` declares for ``status`` (``@blp.response``, then each
    ``@blp.alt_response``), with its description: flask-smorest's document keeps only one."""
    responses = getattr(handler, "_apidoc", {}).get("response", {}).get("responses", {})
    entries = responses.get(status) or responses.get(str(status)) or []
    entries = [e for e in (entries if isinstance(entries, list) else [entries]) if e]
    entries.reverse()  # decorators apply from the bottom: ``@blp.response``, above, came last
    out: dict[str, str] = {}
    for entry in entries:
        about = str(entry.get("description") or "")
        out.setdefault(entry.get("content_type") or JSON, "" if about == "OK" else about)
    return out


def offered(handler: Any) -> list[str]:
    """The media types ``handler`` answers its success in, its default first (none if it
    declares no response)."""
    responses = getattr(handler, "_apidoc", {}).get("response", {}).get("responses", {})
    success = sorted(int(s) for s in responses if str(s).isdigit() and 200 <= int(s) < 300)
    return list(declared(handler, success[0])) if success else []


def words(handler: Any) -> list[str]:
    """The values ``?format=`` takes on ``handler``, its default first."""
    return [WORDS[media_type] for media_type in offered(handler) if media_type in WORDS]


def check(handler: Any) -> None:
    """422 ``validation_error`` naming ``format`` unless each ``?format=`` given is one of the
    words ``handler`` takes."""
    given = request.args.getlist("format")
    taken = words(handler)
    if not given or not taken or all(value in taken for value in given):
        return
    allowed = ", ".join(taken)
    raise ApiProblem(
        422,
        "validation_error",
        f"format must be one of: {allowed}.",
        errors={"format": [f"Must be one of: {allowed}."]},
    )


def wanted() -> str:
    """The media type the request asks this endpoint for: ``?format=``'s, else the one
    ``Accept`` prefers among those it answers in, else its default."""
    handler = current_handler()
    media_types = offered(handler) or [JSON]
    check(handler)
    asked = request.args.get("format")
    if asked is not None:
        named = (media_type for media_type in media_types if WORDS.get(media_type) == asked)
        return next(named, media_types[0])
    accept = request.accept_mimetypes
    best = accept.best_match(media_types)
    return best if best is not None and accept[best] > 0 else media_types[0]


def current_handler() -> Any:
    """The view method that answers this request (``MethodView.get``, ...), or the view.  A
    HEAD request is answered by ``get`` (Flask's ``MethodView``), and in the same format."""
    view = current_app.view_functions.get(request.endpoint or "")
    view_class = getattr(view, "view_class", None)
    method = "get" if request.method == "HEAD" else request.method.lower()
    return getattr(view_class, method, None) if view_class else view
