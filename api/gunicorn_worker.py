"""The worker and logger classes ``wetbank serve`` runs: gunicorn's gthread worker with a quick
shutdown that always exits, and gunicorn's logger without its access log.

gunicorn 27's gthread worker answers SIGQUIT and SIGINT (a quick shutdown: Ctrl-C, or the
master passing on its own SIGINT) by shutting its thread pool down inside the signal handler.
The handler runs in the main thread, between two of its bytecodes; when that thread was inside
``ThreadPoolExecutor.submit``, handing a new connection to the pool, it holds the pool's lock, and
the handler waits for that lock for ever: the worker hangs until the master kills it at the end
of its graceful timeout.  This worker leaves the pool alone and exits: ``SystemExit`` unwinds
``submit`` (releasing its lock), and the interpreter's exit stops the pool's threads once their
requests are done, as the pool's shutdown would have.  A graceful stop (SIGTERM) is unchanged.

gunicorn answers a request it will not hand to the app (a request line over 4,094 bytes, a
header over 8,190 or more than 100 of them, a malformed request line or header, an ``Expect`` it
cannot meet, a transfer coding it does not implement) with an HTML page of its own.  This worker
answers them as the app answers its errors (docs/http.md "Errors: problem details"): an RFC 9457
problem with a stable ``code`` (``EDGE_PROBLEMS``), an ``X-Request-Id`` (the client's, when
gunicorn had read a sane one, else a new one) repeated as ``request_id``, logged under that id
(a warning, and a line of the access log), counted in ``wetbank_http_problems_total`` and (the
app, which counts every request it answers, never saw it) in ``wetbank_http_requests_total``
under the route ``<refused>`` (``api.metrics.count_refused``), and ``Connection: close``.  Its
``type`` is ``/problems/<code>`` without the path prefix a proxy may add: the app, which would
learn the prefix, was never called.  An error of the app (500 ``internal_error``: a header the
app tried to send, anything raised while calling it) is not counted with the requests again:
the request reached the app, which counted it.  gunicorn's ``ConfigurationProblem`` (a path
outside the ``SCRIPT_NAME`` a trusted proxy sent), a 500 too, is raised before the app is
called, and counted under ``<refused>``.

What gunicorn's refusal quotes of the request (a header line, the request line, a method, bytes
of a body: a header line without its colon may be ``Authorization Bearer wbt_…``) is neither
logged nor echoed in ``detail``: only a leading name (a header's, a method) that is no
credential, and how many characters followed (``said``).
"""

from __future__ import annotations

import copy
import json
import re
import ssl
from http import HTTPStatus
from types import FrameType
from typing import Any

from gunicorn import glogging, util
from gunicorn.http import errors
from gunicorn.workers import base, gthread

from api import metrics, problems
from api.auth import request_id_for
from api.logs import ACCESS
from bank.access import TOKEN_PREFIX

#: gunicorn's refusals of a request before the app, as problems: (its exception, status, code,
#: what ``detail`` says), the first that matches; gunicorn's message follows the detail (``said``).
#: A header the app tried to send is the app's fault (500); a request that is not HTTP, or a
#: TLS failure (neither can reach this deployment: no proxy protocol, no TLS in gunicorn), 400.
EDGE_PROBLEMS: tuple[tuple[type[BaseException], int, str, str], ...] = (
    (errors.InvalidResponseHeader, 500, "internal_error", problems.UNEXPECTED),
    (errors.InvalidResponseHeaderName, 500, "internal_error", problems.UNEXPECTED),
    (errors.ConfigurationProblem, 500, "internal_error", problems.UNEXPECTED),
    (
        errors.LimitRequestLine,
        414,
        "uri_too_long",
        "The request line (method, path and query) is longer than the server reads: "
        "send a shorter query.",
    ),
    (
        errors.LimitRequestHeaders,
        431,
        "header_fields_too_large",
        "A header is longer, or the headers more, than the server reads: send fewer or "
        "shorter headers.",
    ),
    (
        errors.ExpectationFailed,
        417,
        "expectation_failed",
        "The server meets no expectation but `Expect: 100-continue`.",
    ),
    (
        errors.UnsupportedTransferCoding,
        501,
        "unsupported_transfer_coding",
        "The server decodes no transfer coding but chunked: send the body with a "
        "Content-Length, or chunked.",
    ),
    (
        errors.ParseException,
        400,
        "bad_request",
        "The request line or a header is not valid HTTP/1.1.",
    ),
    (ssl.SSLError, 400, "bad_request", "The TLS connection failed."),
)

#: gunicorn's message about the request, at most this long in ``detail``
_MESSAGE_LENGTH = 200

#: gunicorn's errors whose message quotes nothing a client sent but a path (which every access
#: line logs anyway), a header name the app tried to send, or gunicorn's own words; each other
#: error of gunicorn's quotes text of the request, which ``said`` withholds
_QUOTING_NO_REQUEST_TEXT: tuple[type[BaseException], ...] = (
    errors.LimitRequestLine,
    errors.LimitRequestHeaders,
    errors.InvalidSchemeHeaders,
    errors.InvalidChunkExtension,
    errors.InvalidProxyHeader,
    errors.ConfigurationProblem,
    errors.InvalidResponseHeader,
    errors.InvalidResponseHeaderName,
)


class ThreadWorker(gthread.ThreadWorker):  # type: ignore[misc]  # gunicorn has no types
    """gthread, with a quick shutdown that cannot wait on the thread pool's lock, and problem
    details for the requests gunicorn refuses before the app."""

    def handle_quit(self, sig: int, frame: FrameType | None) -> None:
        base.Worker.handle_quit(self, sig, frame)

    def handle_error(self, req: Any, client: Any, addr: Any, exc: BaseException) -> None:
        """Answer a request gunicorn refused before (or while calling) the app as a problem,
        where gunicorn writes an HTML page.  Runs in the thread that read the request, in the
        ``except`` that caught ``exc``; nothing of the response was sent yet."""
        status, code, detail = edge_problem(exc)
        request_id = request_id_for(_sent_request_id(req or getattr(exc, "req", None)))
        remote = (addr or ("", -1))[0]
        facts = {"request_id": request_id, "status": status, "remote_addr": remote}
        if code == "internal_error" and not _gunicorns(exc):
            self.log.exception("Error handling request before the app answered", extra=facts)
        elif code == "internal_error":  # its traceback would end with its message as is
            message = "Error handling request before the app answered: %s"
            self.log.error(message, said(exc), extra=facts)
        else:
            self.log.warning("Invalid request from ip=%s: %s", remote, said(exc), extra=facts)
        ACCESS.info("%s %s %s", *_request_line(req), status, extra=facts)
        metrics.PROBLEMS.labels(code, str(status)).inc()
        if code != "internal_error" or isinstance(exc, errors.ConfigurationProblem):
            # a 500 from calling the app was counted by the app; gunicorn's ConfigurationProblem
            # (a path outside the SCRIPT_NAME a trusted proxy sent) is raised before the app
            metrics.count_refused(_parsed_method(req or getattr(exc, "req", None)), status)
        try:
            util.write_nonblock(client, problem_response(status, code, detail, request_id))
        except Exception:
            self.log.debug("Failed to send error message.")


class Logger(glogging.Logger):  # type: ignore[misc]  # gunicorn has no types
    """gunicorn's logger, with no access log of its own: the app writes one (``api.logs``) that
    knows the request id and the actor.  Silencing gunicorn's access logger was not enough: with
    a logging configuration set, gunicorn still built each request's log fields, then dropped
    them."""

    @property
    def access_log_enabled(self) -> bool:
        return False


def edge_problem(exc: BaseException) -> tuple[int, str, str]:
    """The status, code and detail the worker answers ``exc`` with (``EDGE_PROBLEMS``); 500
    ``internal_error`` for any other error."""
    for kind, status, code, detail in EDGE_PROBLEMS:
        if isinstance(exc, kind):
            if status < 500:
                message = said(exc)[:_MESSAGE_LENGTH]
                detail = f"{detail} ({message})" if message else detail
            return status, code, detail
    return 500, "internal_error", problems.UNEXPECTED


def said(exc: BaseException) -> str:
    """gunicorn's message about ``exc``, with the text of the request it quotes withheld
    (``Withheld``): what the worker logs, and tells the client, of a refusal."""
    if not _gunicorns(exc) or isinstance(exc, _QUOTING_NO_REQUEST_TEXT):
        return str(exc)
    try:
        shown = copy.copy(exc)
        for name, value in vars(exc).items():
            if isinstance(value, (str, bytes)):
                setattr(shown, name, Withheld(value))
        shown.args = tuple(Withheld(a) if isinstance(a, (str, bytes)) else a for a in exc.args)
        return str(shown)
    except Exception:  # worded in a way not foreseen: its kind alone
        return type(exc).__name__


def _gunicorns(exc: BaseException) -> bool:
    """Whether ``exc`` is one of gunicorn's errors about a request (``gunicorn.http.errors``)."""
    return isinstance(exc, (errors.ParseException, errors.NoMoreData))


class Withheld:
    """Text of a refused request as it may be logged: a leading name (a header's, a method)
    unless it looks like a credential, then how many characters followed, never the characters.
    ``Authorization Bearer wbt_…`` is ``'Authorization' and 55 characters withheld``."""

    _NAME = re.compile(r"[A-Za-z0-9_-]{1,40}(?=[\s:]|$)")
    _SCHEMES = frozenset({"bearer", "basic", "digest", "negotiate", "token"})

    def __init__(self, text: str | bytes) -> None:
        text = text.decode("latin-1") if isinstance(text, bytes) else text
        match = self._NAME.match(text)
        name = match.group() if match else ""
        if name.lower() in self._SCHEMES or name.lower().startswith(TOKEN_PREFIX):
            name = ""
        self.name, self.rest = name, len(text) - len(name)

    def __str__(self) -> str:
        if not self.rest:
            return repr(self.name)
        withheld = f"{self.rest} characters withheld"
        return f"{self.name!r} and {withheld}" if self.name else withheld

    __repr__ = __str__


def problem_response(status: int, code: str, detail: str, request_id: str) -> bytes:
    """A whole HTTP/1.1 response: the problem (``api.problems.problem``'s members), with
    ``X-Request-Id``, closing the connection."""
    body = json.dumps(
        {
            "type": f"/problems/{code}",
            "title": problems.title_of(code),
            "status": status,
            "detail": detail,
            "code": code,
            "request_id": request_id,
        }
    ).encode()
    head = (
        f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\n"
        "Connection: close\r\n"
        f"Content-Type: {problems.PROBLEM_JSON}\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"X-Request-Id: {request_id}\r\n"
        "\r\n"
    )
    return head.encode("latin-1") + body


def _sent_request_id(req: Any) -> str | None:
    """The ``X-Request-Id`` the client sent, if gunicorn had read the headers."""
    for name, value in getattr(req, "headers", None) or ():
        if isinstance(name, str) and name.upper() == "X-REQUEST-ID":
            return str(value)
    return None


def _parsed_method(req: Any) -> str | None:
    """The method of the refused request, if gunicorn had read it."""
    method = getattr(req, "method", None)
    return method if isinstance(method, str) else None


def _request_line(req: Any) -> tuple[str, str]:
    """The method and path of the refused request, as far as gunicorn read them (``-``)."""
    return getattr(req, "method", None) or "-", getattr(req, "path", None) or "-"
