"""Issue 8 §4: hostile input against every write endpoint of the OpenAPI document.

For each write, starting from a valid body (``world.valid_bodies``), one thing at a time is made
wrong: numbers beyond 64 bits, negative and zero quantities, floats and exponents where integers
belong, ``NaN`` and ``Infinity``, impossible dates, over-long and 1 MB strings, NUL characters and
unpaired surrogates, wrong types, deeply nested JSON, duplicate keys, wrong content types, bad
encodings, hostile path ids.  Each answer must be a 4xx problem (``application/problem+json``
with a ``code``) and no row may change; a body over the size limit is 413.  The Flask test client
on a fresh PostgreSQL database (the ``system`` mark: it belongs with the server tests).
"""

from __future__ import annotations

import http.client
import json
import socket
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask import Flask

from api import create_app
from tests.system.harness import BASE as BASE_URL
from tests.system.harness import (
    FULL,
    HOST,
    Client,
    Server,
    days_ago,
    row_counts,
    scale,
    seed,
)
from tests.system.world import AppClient, World, build_world, fill, operations, valid_bodies

pytestmark = pytest.mark.system

ONE_MB = 1024 * 1024
WRITES = ("POST", "PUT", "PATCH", "DELETE")


@pytest.fixture
def app(pg_url: str) -> Iterator[Flask]:
    application = create_app({"DATABASE_URL": pg_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


class Raw:
    """A JSON fragment spliced into the body as is (``1e3``, ``NaN``, a 5,000-digit number)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"Raw({self.text[:40]!r})"


def dumps(value: Any) -> str:
    """``json.dumps`` that writes ``Raw`` fragments verbatim."""
    if isinstance(value, Raw):
        return value.text
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(k)}: {dumps(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(dumps(v) for v in value) + "]"
    return json.dumps(value)


# --- the corpus, per JSON schema type --------------------------------------------------------


def integer_corpus(schema: dict[str, Any]) -> list[Any]:
    values: list[Any] = [
        2**64,
        -(2**64),
        2**63,
        10**30,
        Raw("9" * 5_000),
        Raw("1.5"),
        Raw("1e3"),
        Raw("1E+2"),
        Raw("1000.0"),
        Raw("-0.0"),
        Raw("NaN"),
        Raw("Infinity"),
        Raw("-Infinity"),
        "12",
        "0x10",
        True,
        [],
        {},
        [1],
    ]
    minimum = schema.get("minimum")
    if minimum is not None and minimum >= 0:
        values.append(-1)
        if minimum >= 1:
            values.append(0)
    if not schema.get("nullable"):
        values.append(None)
    return values


DATE_CORPUS = [
    "2026-02-30",
    "2025-02-29",
    "2026-13-01",
    "2026-00-10",
    "2026-04-31",
    "0000-01-01",
    "20260301",
    "2026-3-1",
    "2026/03/01",
    "03/01/2026",
    "2026-03-01T00:00:00",
    "2026-03-01 ",
    "",
    "today",
    20260301,
    Raw("NaN"),
    [],
]
#: dates of events that have happened may not lie in the future; expiry dates may
FUTURE_ALLOWED = {"expires_on", "established_on"}


def date_corpus(name: str, schema: dict[str, Any]) -> list[Any]:
    values = list(DATE_CORPUS)
    if name not in FUTURE_ALLOWED:
        values += [days_ago(-1), "9999-12-31"]
    if not schema.get("nullable"):
        values.append(None)
    return values


def string_corpus(schema: dict[str, Any], huge: bool) -> list[Any]:
    values: list[Any] = ["a\x00b", "\ud800", "x\udfffy", 123, 1.5, True, [], {}, ["a"]]
    if schema.get("maxLength"):
        values.append("x" * (schema["maxLength"] + 1))
    if schema.get("minLength"):
        values.append("")
    if "enum" in schema:
        values += ["bogus", schema["enum"][0].upper() + " ", ""]
    if huge:
        values += ["x" * (ONE_MB - 4_096), "é" * (ONE_MB // 2 + 10)]  # just under / over
    if not schema.get("nullable"):
        values.append(None)
    return values


def boolean_corpus(schema: dict[str, Any]) -> list[Any]:
    values: list[Any] = [[], {}, 2, "maybe", Raw("NaN")]
    if not schema.get("nullable"):
        values.append(None)
    return values


def array_corpus(schema: dict[str, Any]) -> list[Any]:
    values: list[Any] = ["x", {}, 1, [None], [[[]]]]
    if schema.get("minItems"):
        values.append([])
    if schema.get("maxItems"):
        values.append(["x"] * (schema["maxItems"] + 1))
    if not schema.get("nullable"):
        values.append(None)
    return values


def object_corpus(schema: dict[str, Any]) -> list[Any]:
    return [[], "x", 1, None, {}, {"unknown": 1}]


def resolve(doc: dict[str, Any], schema: dict[str, Any]) -> dict[str, Any]:
    if "$ref" in schema:
        name = schema["$ref"].rsplit("/", 1)[-1]
        return dict(doc["components"]["schemas"][name])
    if "allOf" in schema:
        return resolve(doc, schema["allOf"][0])
    return schema


def field_mutations(
    doc: dict[str, Any], schema: dict[str, Any], body: Any, path: tuple[Any, ...], huge: bool
) -> Iterator[tuple[tuple[Any, ...], Any]]:
    """``(path, bad value)`` for every field of ``body`` that ``schema`` describes."""
    schema = resolve(doc, schema)
    kind = schema.get("type")
    name = str(path[-1]) if path else ""
    if kind == "object" and isinstance(body, dict):
        if path:
            for value in object_corpus(schema):
                yield path, value
        for key, item in body.items():
            sub = schema.get("properties", {}).get(key)
            if sub is not None:
                yield from field_mutations(doc, sub, item, (*path, key), huge)
        return
    if kind == "array" and isinstance(body, list):
        for value in array_corpus(schema):
            yield path, value
        if body:
            yield from field_mutations(doc, schema.get("items", {}), body[0], (*path, 0), huge)
        return
    if kind == "integer":
        values = integer_corpus(schema)
    elif kind == "string" and schema.get("format") == "date":
        values = date_corpus(name, schema)
    elif kind == "string":
        values = string_corpus(schema, huge)
    elif kind == "boolean":
        values = boolean_corpus(schema)
    else:
        values = [[], {}]
    for value in values:
        yield path, value


def integer_paths(
    doc: dict[str, Any], schema: dict[str, Any], body: Any, path: tuple[Any, ...]
) -> Iterator[tuple[Any, ...]]:
    """The path of every integer field of ``body`` that ``schema`` describes."""
    schema = resolve(doc, schema)
    if schema.get("type") == "integer":
        yield path
    elif isinstance(body, dict):
        for key, item in body.items():
            sub = schema.get("properties", {}).get(key)
            if sub is not None:
                yield from integer_paths(doc, sub, item, (*path, key))
    elif isinstance(body, list) and body:
        yield from integer_paths(doc, schema.get("items", {}), body[0], (*path, 0))


def replaced(body: Any, path: tuple[Any, ...], value: Any) -> Any:
    copy = json.loads(json.dumps(body))
    target = copy
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return copy


def whole_body_corpus(body: dict[str, Any] | None) -> list[tuple[str, bytes, str | None]]:
    """``(label, raw body, content type)`` that are wrong as a whole."""
    valid = json.dumps(body or {"a": 1})
    first = next(iter(body)) if body else "a"
    rest = valid[1:]
    corpus: list[tuple[str, bytes, str | None]] = [
        ("malformed", b'{"a": ', "application/json"),
        ("trailing garbage", valid.encode() + b" x", "application/json"),
        ("two documents", (valid + valid).encode(), "application/json"),
        ("single quotes", valid.replace('"', "'").encode(), "application/json"),
        ("comment", b"/* hi */" + valid.encode(), "application/json"),
        ("whitespace only", b"   ", "application/json"),
        ("NaN document", b"NaN", "application/json"),
        ("deeply nested arrays", b"[" * 100_000 + b"]" * 100_000, "application/json"),
        (
            "deeply nested objects",
            b'{"a":' * 50_000 + b"1" + b"}" * 50_000,
            "application/json",
        ),
        (
            "nested 40 deep in a field",
            ('{"' + first + '": ' + "[" * 40 + "]" * 40 + ", " + rest).encode(),
            "application/json",
        ),
        (
            "duplicate key (bad value, then good)",
            ('{"' + first + '": -1, ' + rest).encode(),
            "application/json",
        ),
        (
            "duplicate key (good value, then bad)",
            (valid[:-1] + f', "{first}": -1}}').encode(),
            "application/json",
        ),
        ("NUL in a key", ('{"a\\u0000": 1, ' + rest).encode(), "application/json"),
        ("invalid UTF-8", b'{"x": "\xff\xfe"}', "application/json"),
        ("UTF-16", valid.encode("utf-16"), "application/json; charset=utf-16"),
        ("UTF-8 BOM", b"\xef\xbb\xbf" + valid.encode(), "application/json"),
        ("text/plain", valid.encode(), "text/plain"),
        ("form", b"a=1&b=2", "application/x-www-form-urlencoded"),
        ("multipart", b"--x\r\n\r\n1\r\n--x--\r\n", "multipart/form-data; boundary=x"),
        ("xml", b"<a>1</a>", "application/xml"),
        ("no content type", valid.encode(), None),
        ("over the size limit", b'{"x": "' + b"x" * ONE_MB + b'"}', "application/json"),
    ]
    if body:  # well-formed JSON of the wrong shape: a write that takes no body ignores it
        corpus += [
            ("unknown field", json.dumps({**body, "is_admin": True}).encode(), "application/json"),
            ("array", b"[]", "application/json"),
            ("null", b"null", "application/json"),
            ("number", b"42", "application/json"),
            ("string", b'"hello"', "application/json"),
            ("empty object", b"{}", "application/json"),
        ]
    return corpus


HOSTILE_IDS = ["a\x00b", "x" * 5_000, "../../../etc/passwd", "' OR '1'='1", "%", "\u202e", "null"]


def path_variants(template: str, ids: dict[str, str]) -> list[tuple[str, str]]:
    """The path with one hostile id in place of each real one."""
    out = []
    for name in ids:
        if "{" + name + "}" in template:
            for bad in HOSTILE_IDS:
                out.append((f"{name}={bad[:12]!r}", fill(template, {**ids, name: bad})))
    return out


# --- the test -----------------------------------------------------------------------------


def check_problem(status: int, headers: dict[str, str], body: Any, what: str) -> None:
    assert 400 <= status < 500, (what, status, body)
    assert headers.get("content-type", "").startswith("application/problem+json"), (what, body)
    assert isinstance(body, dict) and isinstance(body.get("code"), str), (what, body)
    assert body["status"] == status, (what, body)
    assert headers.get("x-request-id"), what


def test_every_write_refuses_hostile_input_with_a_problem_and_writes_nothing(
    app: Flask, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    world: World = build_world(app, pg_url)
    client = AppClient(app.test_client(), world.bank.board)
    doc = client.ok("GET", "/openapi.json", status=200)
    bodies = valid_bodies(world)
    writes = [(m, p, op) for m, p, op in operations(doc) if m in WRITES]
    # a write that takes no body declares an optional empty object (``api.openapi.NO_BODY``)
    with_body = {f"{m} {p}" for m, p, op in writes if op.get("requestBody", {}).get("required")}
    assert with_body == set(bodies), (
        "every write with a body needs a valid body in world.valid_bodies",
        with_body ^ set(bodies),
    )

    sent, statuses = 0, {}
    before = row_counts(pg_url)
    for method, template, operation in writes:
        key = f"{method} {template}"
        path = fill(template, world.ids)
        body = bodies.get(key)
        cases: list[tuple[str, str, bytes | None, str | None]] = []
        if method != "DELETE":
            if body is not None:
                schema = operation["requestBody"]["content"]["application/json"]["schema"]
                huge_left = 1 if not FULL else 10**6
                for field_path, value in field_mutations(doc, schema, body, (), True):
                    is_huge = isinstance(value, str) and len(value) > 100_000
                    if is_huge:
                        if huge_left <= 0:
                            continue
                        huge_left -= 1
                    raw = dumps(replaced(body, field_path, value)).encode("utf-8", "surrogatepass")
                    label = f"{'.'.join(map(str, field_path))}={value!r:.40}"
                    cases.append((label, path, raw, "application/json"))
            for label, raw, content_type in whole_body_corpus(body):
                cases.append((label, path, raw, content_type))
        for label, bad_path in path_variants(template, world.ids):
            raw = json.dumps(body).encode() if body is not None else None
            cases.append((label, bad_path, raw, "application/json" if raw else None))

        counts = row_counts(pg_url)
        for label, case_path, raw, content_type in cases:
            headers = {"Idempotency-Key": f"hostile-{sent}"}
            if content_type:
                headers["Content-Type"] = content_type
            status, out_headers, problem = client.call(method, case_path, raw=raw, headers=headers)
            check_problem(status, out_headers, problem, f"{key} {label}")
            if label == "over the size limit":
                assert status == 413 and problem["code"] == "payload_too_large", problem
            statuses[status] = statuses.get(status, 0) + 1
            sent += 1
        assert row_counts(pg_url) == counts, f"{key} wrote something"

    # the Idempotency-Key header itself
    for bad_key in ("", "k" * 256):
        status, out_headers, problem = client.call(
            "POST", "/holders", {"name": "x"}, headers={"Idempotency-Key": bad_key}
        )
        check_problem(status, out_headers, problem, f"Idempotency-Key {bad_key[:10]!r}")
        sent += 1
    assert row_counts(pg_url) == before
    verify = client.ok("GET", "/audit/verify", status=200)
    assert verify["ok"], verify
    with capsys.disabled():
        print(
            f"\n  {sent} hostile requests to {len(writes)} writes: {dict(sorted(statuses.items()))}"
        )


def test_integers_inside_64_bits_but_beyond_a_column_are_never_a_server_error(
    app: Flask, pg_url: str
) -> None:
    """The schema allows up to 2^63 - 1; some columns are 32-bit.  Whatever the answer (a
    domain refusal, or 422 for a value the database cannot store), it is not a 5xx, and an
    error is a problem.  (Accepting a large value is allowed: a migration may widen a column.)"""
    world = build_world(app, pg_url)
    client = AppClient(app.test_client(), world.bank.board)
    doc = client.ok("GET", "/openapi.json", status=200)
    bodies = valid_bodies(world)
    checked = 0
    for method, template, operation in operations(doc):
        key = f"{method} {template}"
        if key not in bodies:
            continue
        schema = operation["requestBody"]["content"]["application/json"]["schema"]
        for field_path in integer_paths(doc, schema, bodies[key], ()):
            for big in (2**31, 2**53 + 1, 2**63 - 1):
                body = replaced(bodies[key], field_path, big)
                status, headers, problem = client.call(method, fill(template, world.ids), body)
                assert status < 500, (key, field_path, big, problem)
                if status >= 400:
                    check_problem(status, headers, problem, f"{key} {field_path}={big}")
                checked += 1
    assert checked > 40


def test_a_body_over_the_configured_limit_is_413(pg_url: str) -> None:
    application = create_app(
        {"DATABASE_URL": pg_url, "PROPAGATE_EXCEPTIONS": False, "MAX_CONTENT_LENGTH": 4_096}
    )
    try:
        world = build_world(application, pg_url)
        client = AppClient(application.test_client(), world.bank.board)
        before = row_counts(pg_url)
        for path, body in (
            ("/holders", {"name": "n", "address": "a" * 5_000}),
            ("/transfers", {**valid_bodies(world)["POST /transfers"], "memo": "m" * 5_000}),
        ):
            status, headers, problem = client.call("POST", path, body)
            check_problem(status, headers, problem, path)
            assert (status, problem["code"]) == (413, "payload_too_large")
        assert row_counts(pg_url) == before
        # and just under the limit the same request is judged on its content
        status, _h, problem = client.call("POST", "/holders", {"name": "n" * 301})
        assert (status, problem["code"]) == (422, "validation_error")
    finally:
        application.extensions["wetbank.db"].dispose()


def send_chunked(port: int, path: str, raw: bytes, token: str) -> tuple[int, dict[str, Any]]:
    """POST ``raw`` with ``Transfer-Encoding: chunked`` (no Content-Length), 64 KiB a chunk,
    then read the answer.  The server may answer 413 and stop reading before the client has
    sent everything, so a failed send is not an error (``http.client`` would give up there)."""
    with socket.create_connection((HOST, port), timeout=60) as sock:
        head = (
            f"POST {BASE_URL}{path} HTTP/1.1\r\nHost: {HOST}\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n\r\n"
        )
        try:
            sock.sendall(head.encode())
            for start in range(0, len(raw), 65_536):
                chunk = raw[start : start + 65_536]
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            sock.sendall(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # answered early: the answer is read below
        response = http.client.HTTPResponse(sock)
        response.begin()
        return response.status, json.loads(response.read() or b"null")


def padded(body: dict[str, Any], size: int) -> bytes:
    """``body`` as JSON, then spaces to ``size`` bytes: the JSON still parses wherever a
    truncation cuts the spaces (the body a silent truncation would act on)."""
    raw = json.dumps(body).encode()
    return raw + b" " * (size - len(raw))


def test_a_chunked_body_over_the_limit_is_413_on_the_real_server(
    pg_url: str, tmp_path: Path
) -> None:
    """gunicorn de-chunks the body; Werkzeug alone stopped reading at the limit without an
    error, and the cut JSON was acted on (a holder created)."""
    with Server(pg_url, 2, tmp_path / "server.log") as server:
        with Client(server.port) as setup:
            bank = seed(setup, pg_url, [5_000, 0])
        source, target = bank.accounts
        transfer = {
            "from_account_id": source,
            "to_account_id": target,
            "credit_class": "BSA5-T2-U",
            "amount_sqft": 100,
        }
        before = row_counts(pg_url)
        for size in (ONE_MB + 10, 3 * ONE_MB):
            for path, body in (
                ("/holders", {"name": "chunked"}),
                ("/transfers", {**transfer, "memo": "m" * 1_000}),
                (f"/accounts/{source}/freeze", {}),
            ):
                status, problem = send_chunked(server.port, path, padded(body, size), bank.board)
                assert (status, problem["code"]) == (413, "payload_too_large"), (path, size)
        assert row_counts(pg_url) == before
        with Client(server.port, bank.board) as client:
            assert client.ok("GET", f"/accounts/{source}", status=200)["status"] == "open"

            # at the limit and under it, a chunked body is read whole and acted on
            for size in (ONE_MB, 2_000):
                status, created = send_chunked(
                    server.port, "/holders", padded({"name": f"c{size}"}, size), bank.board
                )
                assert status == 201 and created["name"] == f"c{size}", created
            status, moved = send_chunked(
                server.port, "/transfers", padded(transfer, ONE_MB), bank.board
            )
            assert status == 201 and moved["amount_sqft"] == 100, moved
            assert client.ok("GET", "/audit/verify", status=200)["ok"]


def test_schemathesis_finds_no_server_error_and_every_response_conforms(
    app: Flask, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """Generated requests (valid and invalid, against real and random ids) to every operation
    of the OpenAPI document, as the board: no 5xx, every status, content type, body and header
    as documented, invalid data refused, and every error a problem with a ``code``."""
    schemathesis = pytest.importorskip("schemathesis")
    from schemathesis import GenerationMode

    world = build_world(app, pg_url)
    auth = {"Authorization": f"Bearer {world.bank.board}"}
    schema = schemathesis.openapi.from_wsgi(f"{BASE_URL}/openapi.json", app)
    failures: list[str] = []
    sent = [0]
    for result in schema.get_all_operations():
        operation = result.ok()
        ids = {k: v for k, v in world.ids.items() if "{" + k + "}" in operation.path}
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            if mode == GenerationMode.NEGATIVE and not (operation.body or operation.query):
                continue  # nothing a negative case could change
            for pinned in (True, False):
                strategy = operation.as_strategy(
                    generation_mode=mode,
                    path_parameters=ids if pinned and ids else None,
                    headers=auth,
                )
                label = f"{operation.label} ({mode.value}, {'real' if pinned else 'any'} ids)"
                generated_run(app, strategy, label, failures, sent)()
    with capsys.disabled():
        print(f"\n  schemathesis: {sent[0]} generated requests")
    assert not failures, "\n".join(failures[:20])


def generated_run(
    app: Flask, strategy: Any, label: str, failures: list[str], sent: list[int]
) -> Any:
    """A Hypothesis test of one operation: bounded, reproducible, no shrinking."""
    from hypothesis import HealthCheck, Phase, given, settings
    from schemathesis.checks import not_a_server_error
    from schemathesis.specs.openapi import checks

    every_check = [
        not_a_server_error,
        checks.status_code_conformance,
        checks.content_type_conformance,
        checks.response_schema_conformance,
        checks.response_headers_conformance,
        checks.negative_data_rejection,
    ]

    @settings(
        max_examples=scale(3, 40),
        deadline=None,
        database=None,
        derandomize=True,
        phases=[Phase.explicit, Phase.generate],
        suppress_health_check=list(HealthCheck),
    )
    @given(case=strategy)
    def run(case: Any) -> None:
        sent[0] += 1
        response = case.call(app=app)
        try:
            case.validate_response(response, checks=every_check)
        except BaseException as error:  # a FailureGroup: recorded, the run goes on
            failures.append(f"{label}: {str(error)[:500]}")
        if response.status_code >= 400:
            kind = response.headers.get("content-type", [""])[0]
            body = response.json() if "json" in kind else None
            if not kind.startswith("application/problem+json") or not (
                isinstance(body, dict) and isinstance(body.get("code"), str)
            ):
                failures.append(f"{label}: a {response.status_code} that is not a problem")

    return run
