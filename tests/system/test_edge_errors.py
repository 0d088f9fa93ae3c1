"""Requests gunicorn refuses before the app sees them (a request line over its 4,094 bytes, a
header over its 8,190, a malformed request line or header, an ``Expect`` it cannot meet, a
transfer coding it does not implement) are answered by the worker (``api.gunicorn_worker``) as
the app answers its own errors: an RFC 9457 problem with a stable ``code`` and an
``X-Request-Id``, and the worker serves the next connection as before."""

from __future__ import annotations

import http.client
import json
import re
import secrets
import socket
from pathlib import Path
from typing import Any

import pytest

from api.problems import PROBLEM_JSON
from tests.system.harness import BASE, HOST, Client, Server

pytestmark = pytest.mark.system


def raw_call(port: int, head: bytes) -> tuple[int, dict[str, str], dict[str, Any]]:
    """Send ``head`` as is on a new connection; the answer's status, headers and JSON body."""
    with socket.create_connection((HOST, port), timeout=10) as sock:
        sock.sendall(head)
        response = http.client.HTTPResponse(sock)
        response.begin()
        body = response.read()
        headers = {name.lower(): value for name, value in response.getheaders()}
    assert headers.get("content-type") == PROBLEM_JSON, (response.status, body[:200])
    assert int(headers["content-length"]) == len(body)
    return response.status, headers, json.loads(body)


def refused_requests(scraped: str, status: int) -> float:
    """``wetbank_http_requests_total`` of the requests refused before the app with ``status``,
    whatever their method."""
    found = re.findall(
        r'^wetbank_http_requests_total\{method="[^"]*",route="<refused>",status="'
        + str(status)
        + r'"\} ([0-9.e+]+)$',
        scraped,
        re.MULTILINE,
    )
    return sum(float(n) for n in found)


def test_requests_the_server_refuses_before_the_app_are_problems_with_a_request_id(
    pg_url: str, tmp_path: Path
) -> None:
    long_query = f"GET {BASE}/accounts?x={'a' * 5_000} HTTP/1.1\r\nHost: x\r\n\r\n"
    big_header = f"GET {BASE}/health HTTP/1.1\r\nHost: x\r\nX-Big: {'b' * 9_000}\r\n\r\n"
    cases = {
        "uri_too_long": (414, long_query.encode()),
        "header_fields_too_large": (431, big_header.encode()),
        "bad_request": (400, f"GET {BASE}/health HTTP/1.1\r\nBad Name: x\r\n\r\n".encode()),
        "expectation_failed": (
            417,
            f"GET {BASE}/health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n".encode(),
        ),
        "unsupported_transfer_coding": (
            501,
            f"POST {BASE}/holders HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: br\r\n\r\n".encode(),
        ),
    }
    with Server(pg_url, 1, tmp_path / "server.log") as server:
        ids = set()
        for code, (status, head) in cases.items():
            got, headers, problem = raw_call(server.port, head)
            assert (got, problem["code"], problem["status"]) == (status, code, status), problem
            assert problem["type"] == f"/problems/{code}" and problem["title"]
            assert problem["detail"]
            assert headers["x-request-id"] and problem["request_id"] == headers["x-request-id"]
            assert headers["connection"] == "close"
            ids.add(headers["x-request-id"])
        assert len(ids) == len(cases)  # a new id each
        with Client(server.port) as client:
            assert client.call("GET", "/health")[0] == 200  # the worker serves on
            client.conn.request("GET", "/metrics")
            scraped = client.conn.getresponse().read().decode()
    logged = server.log_path.read_text(errors="replace")
    assert logged.count("Invalid request from ip=") >= len(cases)
    for code, (status, _head) in cases.items():
        counted = f'wetbank_http_problems_total{{code="{code}",status="{status}"}} 1.0'
        assert counted in scraped, code
        # and with the requests, under the one route of the refused (the app never saw them)
        assert refused_requests(scraped, status) == 1.0, (code, scraped)
    for request_id in ids:  # each refusal is in the log under the id the client was given
        assert request_id in logged


def test_a_refused_request_never_logs_or_echoes_the_token_it_carried(
    pg_url: str, tmp_path: Path
) -> None:
    """gunicorn quotes the text it refuses (the whole line of a header without its colon); the
    worker logs, and answers, the header's name and how much followed, never the token."""
    token = "wbt_" + secrets.token_urlsafe(32)
    health = f"GET {BASE}/health HTTP/1.1\r\nHost: x\r\n"
    heads = {
        "no colon": f"{health}Authorization Bearer {token}\r\n\r\n",
        "a name with spaces": f"{health}Authorization Bearer {token}: x\r\n\r\n",
        "the token alone": f"{health}{token}\r\n\r\n",
        "folded": f"{health}Authorization: Bearer\r\n {token}\r\n\r\n",
        "in the method": f"{token} {BASE}/health HTTP/1.1\r\nHost: x\r\n\r\n",
        "in the version": f"GET {BASE}/health HTTP/{token}\r\nHost: x\r\n\r\n",
        "in an expectation": f"{health}Expect: {token}\r\n\r\n",
        "in a transfer coding": f"POST {BASE}/holders HTTP/1.1\r\nHost: x\r\n"
        f"Transfer-Encoding: {token}\r\n\r\n",
    }
    with Server(pg_url, 1, tmp_path / "server.log") as server:
        for case, head in heads.items():
            status, _headers, problem = raw_call(server.port, head.encode())
            assert status >= 400, (case, problem)
            assert token not in json.dumps(problem), case
            assert token[4:20] not in json.dumps(problem), case
    logged = server.log_path.read_text(errors="replace")
    assert logged.count("Invalid request from ip=") == len(heads)
    assert token[4:20] not in logged, "a token was logged"
    assert "Invalid HTTP Header: 'Authorization' and" in logged  # the name, for the operator
    assert "characters withheld" in logged
