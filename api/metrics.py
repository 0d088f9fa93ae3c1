"""``GET /metrics``: the service's measurements in Prometheus' text format.

Counted by the worker that served each request, and summed over every gunicorn worker at scrape
time (prometheus-client's multiprocess mode: each worker writes its counts to files in
``PROMETHEUS_MULTIPROC_DIR``, which ``wetbank serve`` sets up):

* ``wetbank_http_requests_total{method, route, status}``: requests by method, route (the URL
  rule, such as ``/api/v1/accounts/<account_id>``, never the raw path: ``unmatched`` when no rule
  matched) and status; a method other than the standard ones is counted as ``<unknown>``
  (``method_label``), so that neither made-up methods nor made-up paths add labels; a request
  gunicorn refused before the app (``api.gunicorn_worker``: 414, 431, 400 ...) is counted under
  the route ``<refused>`` (``count_refused``);
* ``wetbank_http_request_duration_seconds{method, route}``: a latency histogram;
* ``wetbank_http_problems_total{code, status}``: requests refused with problem details, by their
  stable ``code`` (docs/http.md "Errors").

Read from the database at scrape time, so the same across workers and restarts:

* ``wetbank_ledger_transactions_total``: ledger transactions written (sealed and queued);
* ``wetbank_chain_queue_length`` and ``wetbank_chain_queue_oldest_age_seconds``: committed
  transactions still waiting for their place in the hash chain, and how long the oldest has;
* ``wetbank_database_up``: 0 when the database did not answer the scrape.

Without ``PROMETHEUS_MULTIPROC_DIR`` (one process: tests, ``flask run``) the counts are the
process's own.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from typing import Any

from flask import Flask, Response, current_app, request
from prometheus_client import (
    CONTENT_TYPE_LATEST,
    REGISTRY,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from sqlalchemy.exc import SQLAlchemyError

from api import logs
from api.problems import PROBLEM_JSON
from api.readiness import sealing_backlog
from ledger.db import Database

log = logging.getLogger("wetbank.metrics")

MULTIPROC_DIR = "PROMETHEUS_MULTIPROC_DIR"

REQUESTS = Counter(
    "wetbank_http_requests",
    "HTTP requests served, by route and status.",
    ["method", "route", "status"],
)
LATENCY = Histogram(
    "wetbank_http_request_duration_seconds",
    "Time to produce a response, by route.",
    ["method", "route"],
    buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0),
)
PROBLEMS = Counter(
    "wetbank_http_problems",
    "Requests refused with problem details, by their code.",
    ["code", "status"],
)


#: the ``route`` of a request refused before the app: no URL rule was matched, and its raw path
#: (a request line too long to read, say) would make the labels unbounded
REFUSED_ROUTE = "<refused>"
#: the ``route`` of a request the app answered without matching a URL rule (a path no route
#: has, or a method its route does not take): one label, whatever the path
UNMATCHED_ROUTE = "unmatched"
#: the ``method`` of a request whose method is not one of ``METHODS`` (or that gunicorn refused
#: before reading one)
UNKNOWN_METHOD = "<unknown>"
#: the methods counted by name (RFC 9110's and PATCH); any other token is ``UNKNOWN_METHOD``, so
#: that a client sending made-up methods adds no labels
METHODS = frozenset(
    {"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT"}
)


def method_label(method: str | None) -> str:
    """The ``method`` label of a request sent with ``method``: a standard method by name (as
    sent, so ``get`` is not ``GET``), anything else ``UNKNOWN_METHOD``."""
    return method if method in METHODS else UNKNOWN_METHOD


def count_refused(method: str | None, status: int) -> None:
    """Count a request gunicorn refused before the app in ``wetbank_http_requests_total``
    (the app's ``_observe`` never saw it): ``method`` as gunicorn parsed it, if it had."""
    REQUESTS.labels(method_label(method), REFUSED_ROUTE, str(status)).inc()


def install(app: Flask) -> None:
    """Count every request, and serve ``GET /metrics``."""
    app.after_request(_observe)
    app.add_url_rule("/metrics", "metrics", _scrape, methods=["GET"])


def _route() -> str:
    """The URL rule the request matched (a bounded set: the app's own), never its raw path."""
    rule = request.url_rule
    return rule.rule if rule is not None else UNMATCHED_ROUTE


def _observe(response: Response) -> Response:
    method, route, status = method_label(request.method), _route(), str(response.status_code)
    REQUESTS.labels(method, route, status).inc()
    LATENCY.labels(method, route).observe(logs.elapsed())
    if response.mimetype == PROBLEM_JSON:
        body = response.get_json(silent=True)
        code = body.get("code") if isinstance(body, dict) else None
        PROBLEMS.labels(str(code or "unknown"), status).inc()
    return response


def _scrape() -> Response:
    registry = CollectorRegistry(auto_describe=True)
    if os.environ.get(MULTIPROC_DIR):
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
    else:
        registry.register(_ThisProcess())
    registry.register(LedgerCollector(current_app.extensions["wetbank.db"]))
    response = Response(generate_latest(registry), headers={"Content-Type": CONTENT_TYPE_LATEST})
    response.headers["Cache-Control"] = "no-store"
    return response


class _ThisProcess:
    """The process's own metrics (the default registry), when there is no multiprocess dir."""

    def collect(self) -> Iterator[Metric]:
        yield from REGISTRY.collect()


class LedgerCollector:
    """Measurements of the ledger read from the database when scraped."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def collect(self) -> Iterator[Metric]:
        up = GaugeMetricFamily("wetbank_database_up", "Whether the database answered the scrape.")
        try:
            with self.db.engine.connect() as connection:
                backlog = sealing_backlog(connection)
        except SQLAlchemyError as error:
            log.warning("metrics: the database did not answer: %s", _first_line(error))
            up.add_metric([], 0)
            yield up
            return
        up.add_metric([], 1)
        yield up
        written = CounterMetricFamily(
            "wetbank_ledger_transactions",
            "Ledger transactions written (sealed in the hash chain or queued for it).",
        )
        written.add_metric([], backlog.sealed + backlog.queued)
        yield written
        queue = GaugeMetricFamily(
            "wetbank_chain_queue_length",
            "Committed transactions waiting for their place in the hash chain.",
        )
        queue.add_metric([], backlog.queued)
        yield queue
        age = GaugeMetricFamily(
            "wetbank_chain_queue_oldest_age_seconds",
            "How long the oldest transaction waiting to be sealed has waited (0 when none).",
        )
        age.add_metric([], backlog.oldest_age_seconds)
        yield age


def _first_line(error: Any) -> str:
    return (str(error).strip().splitlines() or [type(error).__name__])[0]
