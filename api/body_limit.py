"""The request body size limit (``WETBANK_MAX_BODY_BYTES``) for bodies of every framing.

Werkzeug enforces ``MAX_CONTENT_LENGTH`` on a ``Content-Length`` body, but a chunked body has
none: the server (gunicorn) de-chunks it, and Werkzeug's stream then stops reading at the limit
without an error, so on its own a body over the limit would arrive cut short, and JSON that still
parsed would be acted on.  This middleware reads a body of unknown length itself, one byte past
the limit at most: one that fits is handed on as an ordinary ``Content-Length`` body; one that
does not is dropped and the request marked, and ``refuse_over_limit`` (called where request
bodies are checked, ``api.auth``) answers 413 ``payload_too_large``.  So a body over the limit is
never truncated and acted on, and nothing reads more than the limit into memory.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

from flask import Flask, request
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wsgi import get_content_length

#: set in the WSGI environ of a request whose body of unknown length was over the limit
OVER_LIMIT = "wetbank.body_over_limit"
_READ_SIZE = 64 * 1024


class BodyLimit:
    """WSGI middleware around ``app.wsgi_app``; the limit is the app's ``MAX_CONTENT_LENGTH``."""

    def __init__(self, app: Flask) -> None:
        self.app = app
        self.wsgi_app = app.wsgi_app

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Iterable[bytes]:
        # chunked (its Content-Length, if any, does not count) or of no stated length, and
        # the server ends the stream where the body ends
        if get_content_length(environ) is None and environ.get("wsgi.input_terminated"):
            limit = int(self.app.config["MAX_CONTENT_LENGTH"])
            body = _read_at_most(environ["wsgi.input"], limit + 1)
            if len(body) > limit:
                environ[OVER_LIMIT] = True
                body = b""
            environ["wsgi.input"] = io.BytesIO(body)
            environ["CONTENT_LENGTH"] = str(len(body))
            environ.pop("HTTP_TRANSFER_ENCODING", None)  # now an ordinary fixed-length body
        return self.wsgi_app(environ, start_response)


def _read_at_most(stream: Any, size: int) -> bytes:
    out = bytearray()
    while len(out) < size:
        chunk = stream.read(min(_READ_SIZE, size - len(out)))
        if not chunk:
            break
        out.extend(chunk)
    return bytes(out)


def install(app: Flask) -> None:
    app.wsgi_app = BodyLimit(app)  # type: ignore[method-assign]


def refuse_over_limit() -> None:
    """413 if this request's body (of unknown length) was over the limit."""
    if request.environ.get(OVER_LIMIT):
        raise RequestEntityTooLarge()
