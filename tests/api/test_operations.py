"""Issue 25: readiness, metrics, JSON logs, the proxy and pool settings, on both databases.

The real thing (gunicorn's workers, nginx, PgBouncer) is in tests/system; here each setting is
checked in-process, where a failure points at the code.
"""

from __future__ import annotations

import io
import json
import logging
import secrets
import time
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from flask import Flask, request
from freezegun import freeze_time
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import Connection, create_engine, event, text
from sqlalchemy.engine import make_url

from api import create_app, logs, metrics
from api.readiness import sealing_backlog
from ledger import Leg, chain, clock, sealer, transfer
from ledger.db import Database
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, on
from tests.api.web_kit import csrf_of, sign_in
from tests.dbs import PG_ADMIN_URL, create_database, drop_database
from tests.integration.ledger_kit import meta, move, open_accounts
from tests.system.harness import free_port


def metric_samples(app: Flask) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``GET /metrics``, parsed: (sample name, sorted labels) -> value."""
    response = app.test_client().get("/metrics")
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain")
    out = {}
    for family in text_string_to_metric_families(response.get_data(as_text=True)):
        for sample in family.samples:
            out[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return out


def sample(
    samples: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str
) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


# --- readiness ----------------------------------------------------------------------------------


def test_ready_answers_200_with_what_each_check_found(api: Api, app: Flask) -> None:
    # what earlier tests of this database wrote under a frozen clock is recorded months ago: were
    # the background sealer still to reach it, it would read as waiting that long
    sealer.seal_all(app.extensions["wetbank.db"])
    response = api.get("/ready", token="")
    assert response.status_code == 200, response.json
    body = response.json
    assert body["status"] == "ready"
    assert body["checks"]["database"] == {"ok": True}
    schema = body["checks"]["schema"]
    assert schema["ok"] and schema["revision"] == schema["head"]
    assert body["checks"]["sealing"]["ok"] is True
    assert body["checks"]["sealing"]["max_age_seconds"] == 60


def test_ready_is_503_while_the_database_is_unreachable_and_health_stays_the_liveness() -> None:
    # nothing listens on this port: PostgreSQL refuses at once
    url = f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/nowhere"
    app = create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})
    try:
        response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "5"
        body = response.json
        assert body["code"] == "service_unavailable"
        assert body["checks"]["database"]["ok"] is False
        assert body["checks"]["database"]["detail"].startswith("unreachable")
        # the scrape still answers, and says the database is down
        assert sample(metric_samples(app), "wetbank_database_up") == 0
        # liveness: the process answers without its database, so it is not restarted for it
        health = app.test_client().get("/api/v1/health")
        assert (health.status_code, health.json["status"]) == (200, "ok")
    finally:
        app.extensions["wetbank.db"].dispose()


def test_ready_is_503_while_the_schema_is_behind(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)  # empty: never migrated
    app = create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})
    try:
        response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 503
        schema = response.json["checks"]["schema"]
        assert schema["ok"] is False and schema["revision"] is None
        assert "wetbank db upgrade" in schema["detail"]
        assert app.test_client().get("/metrics").status_code == 200
    finally:
        app.extensions["wetbank.db"].dispose()
        drop_database(url)


def test_ready_is_503_while_a_transaction_waits_to_be_sealed_longer_than_the_bound(
    backend: str, fresh_db_url: str
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite seals each transaction as it is written")
    # a transaction committed two minutes ago by a process whose sealer never ran
    writer = Database.from_url(fresh_db_url)
    try:
        with freeze_time("2026-03-02 12:00:00", tz_offset=0):
            source, target = open_accounts(writer, "sqft", False, False)
            move(writer, source, target, 5)
    finally:
        writer.dispose()
    app = create_app(
        {
            "DATABASE_URL": fresh_db_url,
            "WETBANK_READY_MAX_SEAL_AGE_SECONDS": "60",
            "PROPAGATE_EXCEPTIONS": False,
        }
    )
    try:
        with freeze_time("2026-03-02 12:02:00", tz_offset=0):
            # the scrape first: the readiness check wakes this process's sealer, which seals
            samples = metric_samples(app)
            response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 503, response.json
        sealing = response.json["checks"]["sealing"]
        assert sealing == {
            "ok": False,
            "queued": 1,
            "oldest_age_seconds": 120.0,
            "max_age_seconds": 60,
        }
        assert "sealing" in response.json["detail"]
        assert sample(samples, "wetbank_chain_queue_length") == 1
        assert sample(samples, "wetbank_chain_queue_oldest_age_seconds") == 120
        assert sample(samples, "wetbank_ledger_transactions_total") == 1

        sealer.seal_all(app.extensions["wetbank.db"])
        assert app.test_client().get("/api/v1/ready").status_code == 200
        samples = metric_samples(app)
        assert sample(samples, "wetbank_chain_queue_length") == 0
        assert sample(samples, "wetbank_ledger_transactions_total") == 1
    finally:
        app.extensions["wetbank.db"].dispose()


def test_ready_becomes_200_by_itself_when_a_crash_left_a_transaction_unsealed(
    backend: str, fresh_db_url: str
) -> None:
    """A server killed after a commit and before its sealer ran leaves the transaction queued.
    A process started afterwards, asked only ``/ready`` (a load balancer's probe: no write ever
    comes while it answers 503), seals it and becomes ready within seconds."""
    if backend != "postgresql":
        pytest.skip("SQLite seals each transaction as it is written")
    writer = Database.from_url(fresh_db_url)  # the crashed process: its sealer never ran
    try:
        with freeze_time(clock.utcnow() - timedelta(minutes=2)):
            source, target = open_accounts(writer, "sqft", False, False)
            move(writer, source, target, 5)
    finally:
        writer.dispose()
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    try:
        client = app.test_client()
        first = client.get("/api/v1/ready")
        assert first.status_code == 503, first.json
        assert first.json["checks"]["sealing"]["queued"] == 1
        deadline = time.monotonic() + 5
        response = first
        while response.status_code != 200 and time.monotonic() < deadline:
            time.sleep(0.1)
            response = client.get("/api/v1/ready")
        assert response.status_code == 200, response.json
        assert response.json["checks"]["sealing"]["queued"] == 0
    finally:
        app.extensions["wetbank.db"].dispose()


# --- metrics ------------------------------------------------------------------------------------


def test_metrics_count_requests_by_route_and_status_and_refusals_by_code(
    app: Flask, api: Api
) -> None:
    before = metric_samples(app)
    assert api.get("/health").status_code == 200
    assert api.get("/me", token="wbt_unknown").status_code == 401
    assert api.get("/accounts/acct_0000000000000000").status_code == 404
    after = metric_samples(app)

    def moved(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    requests = "wetbank_http_requests_total"
    assert moved(requests, method="GET", route="/api/v1/health", status="200") == 1
    assert moved(requests, method="GET", route="/api/v1/me", status="401") == 1
    route = "/api/v1/accounts/<account_id>"
    assert moved(requests, method="GET", route=route, status="404") == 1
    assert moved("wetbank_http_problems_total", code="unauthorized", status="401") == 1
    assert moved("wetbank_http_problems_total", code="not_found", status="404") == 1
    latency = "wetbank_http_request_duration_seconds_count"
    assert moved(latency, method="GET", route="/api/v1/health") == 1
    assert moved(latency, method="GET", route="/api/v1/me") == 1


def test_metrics_label_made_up_methods_and_paths_with_a_bounded_set(app: Flask) -> None:
    """A client sending methods of its own or paths no route has adds no labels: a method other
    than the standard ones is ``<unknown>``, a path no rule matched is ``unmatched``."""
    client = app.test_client()
    made_up = ["FOO", "BREW", "X" + secrets.token_hex(8).upper(), "PROPFIND"]
    paths = [f"/api/v1/{secrets.token_hex(6)}", f"/no-such-page-{secrets.token_hex(6)}"]
    before = metric_samples(app)
    for method in made_up:
        assert client.open("/api/v1/health", method=method).status_code == 405
        assert client.open(paths[1], method=method).status_code in (404, 405)
    for path in paths:
        assert client.get(path).status_code in (401, 404)  # the API asks for a token first
    after = metric_samples(app)

    def moved(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    def moved_any_status(**labels: str) -> float:
        statuses = {dict(k)["status"] for n, k in after if n == requests and "status" in dict(k)}
        return sum(moved(requests, status=status, **labels) for status in statuses)

    requests = "wetbank_http_requests_total"
    assert moved(requests, method="<unknown>", route="unmatched", status="405") >= len(made_up)
    assert moved_any_status(method="<unknown>", route="unmatched") == 2 * len(made_up)
    assert moved_any_status(method="GET", route="unmatched") == len(paths)
    latency = "wetbank_http_request_duration_seconds_count"
    assert moved(latency, method="<unknown>", route="unmatched") == 2 * len(made_up)
    for (name, labels), _value in after.items():
        if name.startswith("wetbank_http_request"):
            given = dict(labels)
            assert given["method"] in metrics.METHODS | {"<unknown>"}, (name, labels)
            assert not any(path in given["route"] for path in paths), (name, labels)
    assert all(method not in str(after) for method in made_up)


def test_metrics_count_the_transactions_written(app: Flask, api: Api) -> None:
    kit = Kit(api, app)
    before = metric_samples(app)
    with on("2026-05-25"):
        kit.funded(10_000)  # one deposit: one ledger transaction
    sealer.seal_all(app.extensions["wetbank.db"])
    after = metric_samples(app)
    written = "wetbank_ledger_transactions_total"
    # the shared database: other tests may write at the same time, never fewer
    assert sample(after, written) >= sample(before, written) + 1
    assert sample(after, "wetbank_database_up") == 1


# --- logs ---------------------------------------------------------------------------------------


@pytest.fixture
def json_lines() -> Iterator[io.StringIO]:
    """What the service's JSON handler writes, for the duration of a test."""
    out = io.StringIO()
    handler = logging.StreamHandler(out)
    handler.setFormatter(logs.JsonFormatter())
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield out
    root.removeHandler(handler)
    root.setLevel(level)


def test_the_access_log_is_a_json_line_with_request_id_actor_path_status_and_duration(
    app: Flask, api: Api, board_token: str, json_lines: io.StringIO
) -> None:
    response = api.get("/me", headers={"X-Request-Id": "req-access-log-1"})
    assert response.status_code == 200
    lines = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    access = [r for r in lines if r["logger"] == "wetbank.access"]
    assert len(access) == 1, lines
    record = access[0]
    assert record["level"] == "INFO"
    assert record["timestamp"].endswith("+00:00")
    assert record["request_id"] == "req-access-log-1" == response.headers["X-Request-Id"]
    me = response.json
    assert record["actor"] == f"{me['name']} ({me['token_id']})"
    assert (record["method"], record["path"], record["status"]) == ("GET", "/api/v1/me", 200)
    assert record["message"] == "GET /api/v1/me 200"
    assert isinstance(record["duration_ms"], float) and record["duration_ms"] >= 0
    assert board_token not in json_lines.getvalue()


def test_an_application_log_line_carries_the_request_it_was_logged_in(
    app: Flask, json_lines: io.StringIO
) -> None:
    with app.test_request_context("/api/v1/health", headers={"X-Request-Id": "req-app-1"}):
        app.preprocess_request()
        logging.getLogger("wetbank.api").warning("something to look at")
    record = json.loads(json_lines.getvalue().splitlines()[-1])
    assert record["message"] == "something to look at"
    assert (record["level"], record["logger"]) == ("WARNING", "wetbank.api")
    assert (record["request_id"], record["path"]) == ("req-app-1", "/api/v1/health")


def test_a_log_line_outside_a_request_has_no_request_fields(json_lines: io.StringIO) -> None:
    try:
        raise RuntimeError("boom")
    except RuntimeError:
        logging.getLogger("ledger.sealer").exception("sealing failed")
    record = json.loads(json_lines.getvalue().splitlines()[-1])
    assert record["logger"] == "ledger.sealer" and record["level"] == "ERROR"
    assert "RuntimeError: boom" in record["exc_info"]
    assert "request_id" not in record


# --- behind a proxy ------------------------------------------------------------------------------


def _sign_in_through_a_proxy(app: Flask, token: str) -> Any:
    """The sign-in form as a browser sends it to https://bank.example through a proxy that
    reaches the app as http://127.0.0.1:8000."""
    client = app.test_client()
    forwarded = {
        "X-Forwarded-For": "203.0.113.7",
        "X-Forwarded-Proto": "https",
        "X-Forwarded-Host": "bank.example",
    }
    base = "http://127.0.0.1:8000"
    form = client.get("/sign-in", base_url=base, headers=forwarded)
    assert form.status_code == 200
    return client.post(
        "/sign-in",
        base_url=base,
        headers={**forwarded, "Origin": "https://bank.example"},
        data={"csrf_token": csrf_of(form.get_data(as_text=True)), "token": token, "next": "/"},
    )


def test_behind_a_trusted_proxy_sign_in_sees_the_clients_host(database_url: str) -> None:
    trusting = create_app({"DATABASE_URL": database_url, "WETBANK_TRUST_PROXY": "1"})
    blind = create_app({"DATABASE_URL": database_url})
    try:
        token = make_token(trusting, "board")
        signed_in = _sign_in_through_a_proxy(trusting, token)
        assert signed_in.status_code == 303, signed_in.get_data(as_text=True)
        assert signed_in.headers["Location"] == "/"
        # without the setting the Origin names another host than the app sees: refused
        assert _sign_in_through_a_proxy(blind, token).status_code == 400
    finally:
        trusting.extensions["wetbank.db"].dispose()
        blind.extensions["wetbank.db"].dispose()


def test_only_as_many_proxies_as_configured_are_believed(database_url: str) -> None:
    app = create_app({"DATABASE_URL": database_url, "WETBANK_TRUST_PROXY": "1"})
    seen: dict[str, Any] = {}

    @app.get("/__probe")
    def probe() -> str:
        seen.update(addr=request.remote_addr, scheme=request.scheme, host=request.host)
        return "ok"

    try:
        app.test_client().get(
            "/__probe",
            headers={
                # a client-forged first hop, then the one proxy this service trusts
                "X-Forwarded-For": "198.51.100.1, 203.0.113.7",
                "X-Forwarded-Proto": "https",
                "X-Forwarded-Host": "bank.example",
            },
        )
    finally:
        app.extensions["wetbank.db"].dispose()
    assert seen == {"addr": "203.0.113.7", "scheme": "https", "host": "bank.example"}


@pytest.mark.parametrize(
    "prefix",
    ["//evil.example", "https://evil.example", "/bank, //evil.example", '/x"><b>', "/a//b"],
)
def test_a_forwarded_prefix_that_is_not_a_plain_path_starts_no_url(
    database_url: str, prefix: str
) -> None:
    """A client's ``X-Forwarded-Prefix`` that a proxy passed on (the one trusted hop's value is
    the last) would start every URL the service writes: one that could name another site, or
    end the URL, is ignored."""
    app = create_app({"DATABASE_URL": database_url, "WETBANK_TRUST_PROXY": "1"})
    client = app.test_client()
    try:
        sent = {"X-Forwarded-Prefix": prefix}
        redirected = client.get("/accounts", headers=sent)
        assert redirected.status_code == 303
        assert redirected.headers["Location"] == "/sign-in?next=/accounts"
        page = client.get("/sign-in", headers=sent).get_data(as_text=True)
        assert 'action="/sign-in"' in page and 'href="/assets/site.css"' in page
        assert "evil" not in page and "<b>" not in page
        # a plain path, as a proxy that mounts the service under /bank sends it, is believed
        mounted = client.get("/accounts", headers={"X-Forwarded-Prefix": "/bank"})
        assert mounted.headers["Location"] == "/bank/sign-in?next=/accounts"
    finally:
        app.extensions["wetbank.db"].dispose()


def test_a_forwarded_port_that_is_not_a_number_is_ignored(database_url: str) -> None:
    app = create_app({"DATABASE_URL": database_url, "WETBANK_TRUST_PROXY": "1"})
    seen: list[str] = []

    @app.get("/__probe")
    def probe() -> str:
        seen.append(request.host)
        return "ok"

    try:
        for port in ("@evil.example", "8443"):
            app.test_client().get(
                "/__probe",
                headers={"X-Forwarded-Host": "bank.example", "X-Forwarded-Port": port},
            )
    finally:
        app.extensions["wetbank.db"].dispose()
    assert seen == ["bank.example", "bank.example:8443"]


# --- the pool and prepared statements -----------------------------------------------------------


def test_pool_settings_reach_each_processs_connection_pool(backend: str, database_url: str) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite keeps SQLAlchemy's own pool")
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "WETBANK_POOL_SIZE": "3",
            "WETBANK_POOL_OVERFLOW": "2",
            "WETBANK_POOL_TIMEOUT": "7",
        }
    )
    try:
        pool: Any = app.extensions["wetbank.db"].engine.pool
        assert (pool.size(), pool._max_overflow, pool._timeout) == (3, 2, 7)
    finally:
        app.extensions["wetbank.db"].dispose()


def _prepared_after_writes(url: str, prepare: str) -> int:
    """How many statements the server holds prepared on a connection after many writes."""
    app = create_app({"DATABASE_URL": url, "WETBANK_PG_PREPARE": prepare})
    db: Database = app.extensions["wetbank.db"]
    try:
        source, target = open_accounts(db, "sqft", False, False)
        with db.transaction() as session:
            for _ in range(8):  # past psycopg's threshold for preparing a repeated statement
                transfer(session, "transfer", [Leg(source, target, 1)], meta())
            return int(
                session.execute(text("SELECT count(*) FROM pg_prepared_statements")).scalar()
            )
    finally:
        db.dispose()


def test_with_pg_prepare_off_no_statement_is_prepared(backend: str, database_url: str) -> None:
    if backend != "postgresql":
        pytest.skip("PostgreSQL only")
    assert _prepared_after_writes(database_url, "on") > 0  # the check can see them
    assert _prepared_after_writes(database_url, "off") == 0


def test_a_request_that_finds_no_free_connection_in_time_gets_503(
    backend: str, database_url: str
) -> None:
    if backend != "postgresql":
        pytest.skip("SQLite keeps SQLAlchemy's own pool")
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "WETBANK_POOL_SIZE": "1",
            "WETBANK_POOL_OVERFLOW": "0",
            "WETBANK_POOL_TIMEOUT": "1",
            "PROPAGATE_EXCEPTIONS": False,
        }
    )
    db: Database = app.extensions["wetbank.db"]
    try:
        with db.engine.connect():  # the pool's only connection, busy
            response = app.test_client().get("/api/v1/reports/credit-availability")
        assert response.status_code == 503
        assert response.headers["Retry-After"] == "1"
        assert response.json["code"] == "service_unavailable"
        assert app.test_client().get("/api/v1/reports/credit-availability").status_code == 200
    finally:
        db.dispose()


def test_a_read_only_database_is_503_not_500_and_logged_without_the_statement(
    backend: str, fresh_db_url: str, json_lines: io.StringIO
) -> None:
    """A standby after a failover (``default_transaction_read_only``) answers reads but refuses
    writes; a token's first use in a minute records it (an UPDATE), so every request with a
    token met the refusal, and was a 500 ``internal_error``.  It is 503, as for a database that
    cannot be reached: the database cannot take writes now; retry later."""
    if backend != "postgresql":
        pytest.skip("a read-only database of its own: PostgreSQL")
    writable = create_app({"DATABASE_URL": fresh_db_url})
    try:
        token = make_token(writable, "board")
    finally:
        writable.extensions["wetbank.db"].dispose()
    name = make_url(fresh_db_url).database
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.exec_driver_sql(
                f"ALTER DATABASE {name} SET default_transaction_read_only = on"
            )
    finally:
        admin.dispose()
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    try:
        api = Api(app.test_client(), token)
        for response in (api.get("/me"), api.post("/holders", {"name": "on a standby"})):
            assert response.status_code == 503, response.json
            assert response.json["code"] == "service_unavailable"
            assert "cannot take writes" in response.json["detail"]
            assert int(response.headers["Retry-After"]) >= 1
        assert api.get("/health", token="").status_code == 200  # liveness: no database
        page = sign_in(app.test_client(), token)  # the pages' sign-in records the use too
        assert page.status_code == 503, page.get_data(as_text=True)
        assert page.mimetype == "text/html" and page.headers["Retry-After"]
        assert "cannot take writes" in page.get_data(as_text=True)
    finally:
        app.extensions["wetbank.db"].dispose()
    records = [json.loads(line) for line in json_lines.getvalue().splitlines()]
    refused = [r for r in records if r["logger"] == "wetbank.api"]
    assert len(refused) == 2 and all(r["level"] == "WARNING" for r in refused), refused
    assert "read-only" in refused[0]["message"]
    # the database's own words, not the statement, its parameters or a traceback
    assert "read-only transaction" in refused[0]["message"]
    assert not any("exc_info" in r or "[SQL" in r["message"] for r in refused), refused
    assert "parameters" not in json_lines.getvalue() and token not in json_lines.getvalue()


def _set_read_only(url: str, read_only: bool) -> None:
    """What a failover does to a database, as a test can without touching the server: new
    sessions of ``url`` take no writes (or take them again)."""
    name = make_url(url).database
    admin = create_engine(PG_ADMIN_URL, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            value = "on" if read_only else "off"
            connection.exec_driver_sql(
                f"ALTER DATABASE {name} SET default_transaction_read_only = {value}"
            )
    finally:
        admin.dispose()


def test_ready_is_503_naming_a_read_only_database_and_200_once_it_takes_writes(
    backend: str, fresh_db_url: str
) -> None:
    """Every write on a read-only database is 503: a load balancer polling ``/ready`` is told
    to send nothing there, and why."""
    if backend != "postgresql":
        pytest.skip("a read-only database of its own: PostgreSQL")
    _set_read_only(fresh_db_url, True)
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    try:
        response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 503, response.json
        assert response.headers["Retry-After"] == "5"
        assert response.json["code"] == "service_unavailable"
        assert response.json["detail"].startswith("Not ready: database (read-only: ")
        found = response.json["checks"]
        assert found["database"]["ok"] is False and found["database"]["read_only"] is True
        assert "default_transaction_read_only" in found["database"]["detail"]
        assert found["schema"]["ok"] and found["sealing"]["ok"]  # what else it checked

        _set_read_only(fresh_db_url, False)
        app.extensions["wetbank.db"].engine.dispose()  # the connections a failover gives anew
        response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 200, response.json
        assert response.json["checks"]["database"] == {"ok": True}
    finally:
        app.extensions["wetbank.db"].dispose()


def test_the_sealer_waits_longer_each_time_on_a_read_only_database_and_says_so_once(
    backend: str,
    fresh_db_url: str,
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """On a read-only database every sealing run is refused.  The sealer said so every second,
    for ever, each time with a traceback.  It says so once, tries again after a wait that
    doubles up to its bound whatever wakes it meanwhile (a read-only request's commit does),
    and says once that it seals again when the database takes writes."""
    if backend != "postgresql":
        pytest.skip("SQLite seals each transaction as it is written")
    writer = Database.from_url(fresh_db_url)  # committed before the failover, still queued
    try:
        source, target = open_accounts(writer, "sqft", False, False)
        move(writer, source, target, 5)
    finally:
        writer.dispose()
    _set_read_only(fresh_db_url, True)
    app = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    db: Database = app.extensions["wetbank.db"]
    background: sealer.BackgroundSealer = app.extensions["wetbank.sealer"]
    background.read_only_retry_first_seconds = 0.25  # the service's: 1 s up to 30 s
    background.read_only_retry_max_seconds = 1.0
    tried: list[float] = []
    seal = chain.seal

    def counted_seal(connection: Connection, *, wait: bool = False) -> chain.Sealed:
        if connection.engine is db.engine:  # other tests' sealers, idle, run each second
            tried.append(time.monotonic())
        return seal(connection, wait=wait)

    monkeypatch.setattr(chain, "seal", counted_seal)
    caplog.set_level(logging.INFO, logger="ledger.sealer")
    try:
        deadline = time.monotonic() + 3.2
        while time.monotonic() < deadline:  # woken ten times a second, as by busy readers
            background.wake()
            time.sleep(0.1)
        gaps = [later - earlier for earlier, later in zip(tried, tried[1:], strict=False)]
        assert 4 <= len(tried) <= 6, gaps
        assert gaps[0] < 0.6 and all(0.85 <= gap <= 1.5 for gap in gaps[-2:]), gaps
        said = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert len(said) == 1, said
        assert said[0][0] == "WARNING" and "read-only" in said[0][1], said
        assert "cannot execute" in said[0][1] and not caplog.records[0].exc_info

        _set_read_only(fresh_db_url, False)
        db.engine.dispose()  # the connections a failover gives anew
        deadline = time.monotonic() + 3
        while background.runs == 0 and time.monotonic() < deadline:
            time.sleep(0.05)
        response = app.test_client().get("/api/v1/ready")
        assert response.status_code == 200, response.json
        assert response.json["checks"]["sealing"]["queued"] == 0  # what was queued is sealed
        said = [(r.levelname, r.getMessage()) for r in caplog.records]
        assert said[1:] == [
            ("INFO", "the database takes writes again: sealing the hash chain resumes")
        ], said
    finally:
        db.dispose()


def test_the_count_of_transactions_written_holds_while_the_sealer_moves_them(
    backend: str, fresh_db_url: str
) -> None:
    """``wetbank_ledger_transactions_total`` (sealed + queued) counts a transaction once while
    the sealer moves it from the queue to the chain: the count is read in one snapshot."""
    if backend != "postgresql":
        pytest.skip("SQLite seals each transaction as it is written")
    db = Database.from_url(fresh_db_url)  # no background sealer: the test seals, mid-read
    try:
        issuer, holder = open_accounts(db, "X-written", False, True)
        for amount in (1, 2, 3):
            move(db, issuer, holder, amount)
        with db.engine.connect() as connection:
            written = connection.execute(text("SELECT count(*) FROM ledger_transactions")).scalar()
            sealed_meanwhile: list[object] = []

            def seal_after_the_first_statement(*_args: Any) -> None:
                if not sealed_meanwhile:  # on another connection, committed
                    sealed_meanwhile.append(sealer.seal_all(db))

            event.listen(connection, "after_cursor_execute", seal_after_the_first_statement)
            backlog = sealing_backlog(connection)
        assert sealed_meanwhile
        assert backlog.sealed + backlog.queued == written > 0
    finally:
        db.dispose()
