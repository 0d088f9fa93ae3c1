"""Logs as JSON lines, one object per line, and the access log written by the app itself.

Every line carries ``timestamp`` (UTC, ISO 8601), ``level``, ``logger``, ``process`` (the
worker's pid) and ``message``; a line logged while a request is handled also carries its
``request_id`` (the ``X-Request-Id`` the response bears), ``actor`` (the token's label, once it
is known), ``method`` and ``path``.  The access log (logger ``wetbank.access``) adds ``status``,
``duration_ms`` and ``remote_addr`` (the client's, through ``WETBANK_TRUST_PROXY``).  The app
writes it rather than gunicorn, which knows neither the request id nor the actor.

``wetbank serve`` gives gunicorn a logging configuration (``api.gunicorn_config``) that sends
every logger, gunicorn's own included, through ``JsonFormatter`` to standard error.  An app
created elsewhere (``flask run``, another WSGI server) installs the same handler on the root
logger unless one is configured already.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from datetime import UTC, datetime
from typing import Any

from flask import Flask, Response, g, has_request_context, request
from pythonjsonlogger.json import JsonFormatter as _LibraryJsonFormatter

ACCESS = logging.getLogger("wetbank.access")
LEVEL_VARIABLE = "WETBANK_LOG_LEVEL"


class JsonFormatter(_LibraryJsonFormatter):
    """python-json-logger's formatter, with the fields named above."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        super().__init__("%(levelname)s %(name)s %(process)d %(message)s", *args, **kwargs)

    def add_fields(
        self, log_data: dict[str, Any], record: logging.LogRecord, message_dict: dict[str, Any]
    ) -> None:
        log_data["timestamp"] = datetime.fromtimestamp(record.created, UTC).isoformat(
            timespec="milliseconds"
        )
        super().add_fields(log_data, record, message_dict)
        if has_request_context():
            log_data.setdefault("request_id", g.get("request_id"))
            who = g.get("actor")
            log_data.setdefault("actor", who.label if who is not None else None)
            log_data.setdefault("method", request.method)
            log_data.setdefault("path", request.path)


def level() -> str:
    """The level of the service's logs (``WETBANK_LOG_LEVEL``, default INFO)."""
    name = os.environ.get(LEVEL_VARIABLE, "INFO").strip().upper() or "INFO"
    if not isinstance(logging.getLevelName(name), int):
        raise ValueError(f"{LEVEL_VARIABLE} must be DEBUG, INFO, WARNING or ERROR, not {name!r}")
    return name


def handler() -> logging.Handler:
    """A handler writing JSON lines to standard error."""
    out = logging.StreamHandler(sys.stderr)
    out.setFormatter(JsonFormatter())
    return out


def configure(app: Flask) -> None:
    """JSON logging for the process (unless already configured) and the app's access log."""
    root = logging.getLogger()
    if not root.handlers:
        root.addHandler(handler())
        root.setLevel(level())
    app.before_request(_start_clock)
    app.after_request(_log_access)


def _start_clock() -> None:
    g.started = time.perf_counter()


def elapsed() -> float:
    """Seconds since this request's first hook ran."""
    started = g.get("started")
    return time.perf_counter() - started if started is not None else 0.0


def _log_access(response: Response) -> Response:
    # the time to produce the response: a streamed export's body is sent after it
    ACCESS.info(
        "%s %s %s",
        request.method,
        request.path,
        response.status_code,
        extra={
            "status": response.status_code,
            "duration_ms": round(elapsed() * 1000, 3),
            "remote_addr": request.remote_addr,
        },
    )
    return response
