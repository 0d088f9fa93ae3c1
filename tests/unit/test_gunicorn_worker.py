"""``wetbank serve``'s worker exits on a quick shutdown (SIGQUIT, SIGINT) whatever its main
thread was doing when the signal came, and answers the requests gunicorn refuses before the app
with problems of the catalogue (``api/gunicorn_worker.py``; the answers themselves, from a
running server: tests/system/test_edge_errors.py)."""

from __future__ import annotations

import inspect
import json
import signal
import socket
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any

import pytest
from gunicorn.http import errors
from gunicorn.workers import gthread
from prometheus_client import REGISTRY

from api import metrics, problem_types, problems
from api.gunicorn_worker import (
    _QUOTING_NO_REQUEST_TEXT,
    EDGE_PROBLEMS,
    ThreadWorker,
    edge_problem,
    problem_response,
    said,
)


def exits_while_handing_over_a_connection(worker_class: Any) -> bool:
    """Whether the worker's SIGQUIT handler exits when it runs while the main thread holds the
    thread pool's lock, as the thread does inside ``ThreadPoolExecutor.submit`` when it hands a
    new connection to the pool (the handler runs in that thread, between two bytecodes)."""
    worker = worker_class.__new__(worker_class)  # no sockets, no app: what the handler reads
    worker.tpool = ThreadPoolExecutor(max_workers=1)
    worker.alive = True
    worker.cfg = SimpleNamespace(worker_int=lambda _worker: None)
    outcome: list[str] = []

    def signalled_inside_submit() -> None:
        with worker.tpool._shutdown_lock:
            try:
                worker.handle_quit(signal.SIGQUIT, None)
            except SystemExit:
                outcome.append("exited")

    # a daemon: the handler that waits on the lock never returns, and must not keep pytest alive
    thread = threading.Thread(target=signalled_inside_submit, daemon=True)
    thread.start()
    thread.join(2)
    return outcome == ["exited"] and not worker.alive


def test_a_quick_shutdown_exits_while_a_connection_is_handed_to_the_threads() -> None:
    assert exits_while_handing_over_a_connection(ThreadWorker)


def test_gunicorns_own_gthread_worker_waits_on_the_pools_lock_there() -> None:
    """Why ``wetbank serve`` does not run gunicorn's class as it is; once this fails (gunicorn
    fixed), ``ThreadWorker.handle_quit`` can go."""
    assert not exits_while_handing_over_a_connection(gthread.ThreadWorker)


def test_the_app_writes_the_only_access_log_and_gunicorn_builds_none() -> None:
    """With the app's logging configuration set, gunicorn's own logger would build every
    request's access-log fields (then drop them: its access logger is silenced); the served
    logger builds none, and returns before reading the request."""
    from gunicorn import glogging

    from api import gunicorn_config
    from api.gunicorn_worker import Logger

    cfg = SimpleNamespace(
        accesslog=None,
        logconfig=None,
        logconfig_dict=gunicorn_config.logconfig_dict,
        logconfig_json=None,
        syslog=False,
        disable_redirect_access_to_syslog=False,
    )
    theirs, ours = glogging.Logger.__new__(glogging.Logger), Logger.__new__(Logger)
    theirs.cfg = ours.cfg = cfg
    assert theirs.access_log_enabled
    assert not ours.access_log_enabled
    assert ours.access(None, None, {}, None) is None  # no request to read: nothing read
    assert gunicorn_config.logger_class == "api.gunicorn_worker.Logger"


def test_every_refusal_of_gunicorn_is_a_problem_of_the_catalogue_with_its_status() -> None:
    for _kind, status, code, _detail in EDGE_PROBLEMS:
        assert problem_types.CATALOGUE[code].status == status, code
    refusals = [
        kind
        for _name, kind in inspect.getmembers(errors, inspect.isclass)
        if issubclass(kind, errors.ParseException) and kind is not errors.ParseException
    ]
    assert errors.LimitRequestLine in refusals and len(refusals) > 15
    for kind in refusals:  # each has its own entry, or the 400 of malformed HTTP
        assert any(issubclass(kind, entry[0]) for entry in EDGE_PROBLEMS), kind


def test_a_refusal_says_what_gunicorn_said_and_an_error_of_the_app_says_nothing() -> None:
    status, code, detail = edge_problem(errors.LimitRequestLine(5_032, 4_094))
    assert (status, code) == (414, "uri_too_long") and "(5032 > 4094)" in detail
    line = errors.InvalidRequestLine("x" * 5_000)
    assert edge_problem(line)[:2] == (400, "bad_request") and len(edge_problem(line)[2]) < 400
    assert edge_problem(errors.InvalidResponseHeaderName("X\nY"))[:2] == (500, "internal_error")
    assert edge_problem(RuntimeError("secret"))[1:] == (
        "internal_error",
        problems.UNEXPECTED,
    )


def test_the_answer_to_a_long_request_line_is_a_whole_problem_titled_uri_too_long() -> None:
    answer = problem_response(414, "uri_too_long", "send a shorter query", "req-1")
    head, body = answer.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 414 Request-URI Too Long\r\n")
    assert b"Content-Type: application/problem+json" in head and b"X-Request-Id: req-1" in head
    assert json.loads(body) == {
        "type": "/problems/uri_too_long",
        "title": "URI too long",
        "status": 414,
        "detail": "send a shorter query",
        "code": "uri_too_long",
        "request_id": "req-1",
    }


def refused_by_the_worker(req: Any, exc: BaseException, logged: list[str] | None = None) -> bytes:
    """What ``ThreadWorker.handle_error`` writes to the client for ``exc`` raised on ``req``
    (``None``: gunicorn had not read a request yet), as gunicorn calls it; each message it logs
    is added to ``logged``, with its arguments (and the exception it logs, if any)."""
    worker = ThreadWorker.__new__(ThreadWorker)  # no sockets, no app: what the handler reads

    def log(message: str, *args: Any, **_kwargs: Any) -> None:
        if logged is not None:
            logged.append(message % args)

    def exception(message: str, *args: Any, **kwargs: Any) -> None:  # with a traceback
        log(message, *args, **kwargs)
        if logged is not None:
            logged.append(f"{exc!r} {exc}")

    worker.log = SimpleNamespace(exception=exception, error=log, warning=log, debug=log)
    ours, client = socket.socketpair()
    with ours, client:
        worker.handle_error(req, client, ("127.0.0.1", 5_000), exc)
        client.shutdown(socket.SHUT_WR)
        return ours.recv(65_536)


def requests_counted(method: str, status: int) -> float:
    labels = {"method": method, "route": metrics.REFUSED_ROUTE, "status": str(status)}
    return REGISTRY.get_sample_value("wetbank_http_requests_total", labels) or 0.0


@pytest.mark.parametrize(
    ("req", "exc", "method", "status"),
    [
        (None, errors.LimitRequestLine(5_032, 4_094), "<unknown>", 414),
        (
            SimpleNamespace(method="GET", path="/api/v1/health", headers=[]),
            errors.LimitRequestHeaders("limit request headers fields size"),
            "GET",
            431,
        ),
        (
            SimpleNamespace(method="POST", path="/api/v1/holders", headers=[]),
            errors.UnsupportedTransferCoding("br"),
            "POST",
            501,
        ),
        # a made-up method is counted as unknown: the labels stay bounded
        (
            SimpleNamespace(method="BREW", path="/", headers=[]),
            errors.ExpectationFailed("200-ok"),
            "<unknown>",
            417,
        ),
        (None, errors.InvalidHeaderName("Bad Name"), "<unknown>", 400),
    ],
)
def test_a_request_refused_before_the_app_is_counted_with_the_requests(
    req: Any, exc: BaseException, method: str, status: int
) -> None:
    """The app counts every request it answers (``wetbank_http_requests_total``); one gunicorn
    refused never reached it, so the worker counts it, under the one route ``<refused>``."""
    before = requests_counted(method, status)
    answer = refused_by_the_worker(req, exc)
    assert answer.startswith(f"HTTP/1.1 {status} ".encode())
    assert requests_counted(method, status) == before + 1


def test_an_error_of_the_app_is_not_counted_again_as_a_refused_request() -> None:
    """A 500 the worker answers came from calling the app, which counted the request."""
    before = requests_counted("GET", 500)
    req = SimpleNamespace(method="GET", path="/api/v1/health", headers=[])
    answer = refused_by_the_worker(req, RuntimeError("boom"))
    assert answer.startswith(b"HTTP/1.1 500 ")
    assert requests_counted("GET", 500) == before


def test_a_path_outside_the_proxys_script_name_is_counted_though_answered_500() -> None:
    """gunicorn raises ``ConfigurationProblem`` while it builds the request's environ (a path
    not under the ``SCRIPT_NAME`` a trusted proxy sent), before the app is called: no one else
    counts it."""
    before = requests_counted("GET", 500)
    req = SimpleNamespace(method="GET", path="/elsewhere", headers=[])
    refused = errors.ConfigurationProblem("Request path /elsewhere does not start with SCRIPT_NAME")
    answer = refused_by_the_worker(req, refused)
    assert answer.startswith(b"HTTP/1.1 500 ")
    assert requests_counted("GET", 500) == before + 1


def test_no_refusal_of_gunicorn_logs_or_answers_the_request_text_it_quotes() -> None:
    """gunicorn quotes what it refuses (a header line without its colon is quoted whole:
    ``Authorization Bearer wbt_…``); the worker logs and answers the name before it and how
    many characters followed, for every error of gunicorn's that quotes the request."""
    token = "wbt_" + "Zq9x" * 11
    line = f"Authorization Bearer {token}"
    quoting = [
        kind
        for _name, kind in inspect.getmembers(errors, inspect.isclass)
        if issubclass(kind, (errors.ParseException, errors.NoMoreData))
        and not issubclass(kind, _QUOTING_NO_REQUEST_TEXT)
    ]
    assert errors.InvalidHeader in quoting and len(quoting) > 12
    for kind in quoting:
        try:
            exc = kind(line)
        except TypeError:  # quotes nothing
            exc = kind()
        logged: list[str] = []
        answer = refused_by_the_worker(None, exc, logged)
        assert logged and token[4:] not in " ".join(logged), (kind, logged)
        assert token[4:] not in answer.decode(), kind
    logged = []
    refused_by_the_worker(None, errors.InvalidHeader(line), logged)
    withheld = len(line) - len("Authorization")
    assert f"Invalid HTTP Header: 'Authorization' and {withheld} characters withheld" in logged[0]
    for credential in (token, f"Bearer {token}", f"{token}: x"):  # no name to show
        assert said(errors.InvalidHeaderName(credential)).endswith(" characters withheld")
    assert said(errors.InvalidHeader("CONTENT-LENGTH")) == "Invalid HTTP Header: 'CONTENT-LENGTH'"
