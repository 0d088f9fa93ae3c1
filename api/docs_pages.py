"""Documentation the service serves itself: ``GET /api/v1/docs`` (Swagger UI over the OpenAPI
document) and ``/problems/<code>``, the page each problem's ``type`` points to.

Swagger UI's files ship in the package (``api/static/docs``: swagger-ui-dist's bundle and
stylesheet, Apache-2.0, with their licence), so the page makes no request beyond this service;
its Content-Security-Policy allows nothing else ('self', and ``data:`` images, which the
stylesheet embeds).  The problem pages are pages of the site, under its own policy (no scripts).
"""

from __future__ import annotations

import json
import re

from flask import Blueprint, Flask, Response, abort, render_template, url_for
from markupsafe import Markup, escape

from api import problem_types
from api.openapi_problems import example_problem

#: the API documentation: Swagger UI and its assets, under the public ``/api/v1/docs``
docs = Blueprint(
    "docs",
    __name__,
    static_folder="static/docs",
    static_url_path="/api/v1/docs/assets",
)

#: what each problem ``type`` resolves to
problem_pages = Blueprint("problem_pages", __name__)

DOCS_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; form-action 'none'; frame-ancestors 'none'; "
    "base-uri 'none'"
)


def register(app: Flask) -> None:
    app.register_blueprint(docs)
    app.register_blueprint(problem_pages)


@docs.route("/api/v1/docs")
def api_docs() -> Response:
    """Swagger UI, reading ``/api/v1/openapi.json``."""
    body = render_template(
        "api_docs.html",
        spec_url=url_for("api-docs.openapi_json"),
        asset=lambda name: url_for("docs.static", filename=name),
    )
    return Response(body, mimetype="text/html")


@docs.after_request
def _docs_headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = DOCS_POLICY
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


@problem_pages.app_template_filter("code_spans")
def code_spans(text: str) -> Markup:
    """Markdown's `literal` (as the catalogue writes a name) as HTML's <code>, the rest
    escaped."""
    return Markup(re.sub(r"`([^`]+)`", r"<code>\1</code>", str(escape(text))))


@problem_pages.route("/problems")
def problem_index() -> Response:
    """Every problem code, its status and what it means."""
    kinds = [problem_types.explained(code) for code in problem_types.codes()]
    body = render_template("problem_types.html", kinds=[k for k in kinds if k is not None])
    return Response(body, mimetype="text/html")


@problem_pages.route("/problems/<code>")
def problem_page(code: str) -> Response:
    """One code: its status, what it means, what to do, and an example of such a problem."""
    kind = problem_types.explained(code)
    if kind is None:
        abort(404, "There is no problem type of this name.")
    example = json.dumps(example_problem(code), indent=2)
    body = render_template("problem_type.html", kind=kind, example=example)
    return Response(body, mimetype="text/html")
