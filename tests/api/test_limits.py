"""Limits: a per-token write limit (off unless configured) and the body size limit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from api import cli, create_app
from tests.api.conftest import Api, make_token


@pytest.fixture
def limited_app(database_url):
    app = create_app(
        {
            "DATABASE_URL": database_url,
            "PROPAGATE_EXCEPTIONS": False,
            "WETBANK_WRITE_RATE_LIMIT": "3/minute",
            "MAX_CONTENT_LENGTH": 2048,
        }
    )
    yield app
    app.extensions["wetbank.db"].dispose()


def test_writes_beyond_the_limit_get_429_with_retry_after_while_reads_go_on(limited_app):
    api = Api(limited_app.test_client(), make_token(limited_app, "board"))
    statuses = [api.post("/holders", {"name": f"h{i}"}).status_code for i in range(4)]
    assert statuses == [201, 201, 201, 429]
    refused = api.post("/holders", {"name": "again"})
    assert refused.json["code"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) >= 1
    assert api.get("/me").status_code == 200


def test_the_limit_is_per_token(limited_app):
    first = Api(limited_app.test_client(), make_token(limited_app, "board"))
    second = Api(limited_app.test_client(), make_token(limited_app, "board"))
    for i in range(3):
        assert first.post("/holders", {"name": f"a{i}"}).status_code == 201
    assert first.post("/holders", {"name": "a4"}).status_code == 429
    assert second.post("/holders", {"name": "b"}).status_code == 201


def test_there_is_no_write_limit_unless_configured(api):
    assert all(api.post("/holders", {"name": f"x{i}"}).status_code == 201 for i in range(6))


def test_a_body_over_the_configured_size_gets_413(limited_app):
    api = Api(limited_app.test_client(), make_token(limited_app, "board"))
    response = api.post("/holders", {"name": "x" * 5000})
    assert response.status_code == 413
    assert response.json["code"] == "payload_too_large"


@pytest.mark.parametrize("limit", ["0/minute", "00/hour"])
def test_a_write_limit_of_zero_is_refused_at_start_naming_the_variable(
    limit: str, database_url: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A limit under one write would refuse every write (and made each a 500): ``wetbank
    serve`` refuses it in one line, as any setting it cannot read, and starts no server."""
    started: list[Any] = []
    monkeypatch.setattr(cli.os, "execvp", lambda *args: started.append(args))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "metrics"))
    served = CliRunner().invoke(
        cli.main,
        ["serve", "--port", "1"],
        env={
            "DATABASE_URL": database_url,
            "WETBANK_SECRET_KEY": "k" * 64,
            "WETBANK_WRITE_RATE_LIMIT": limit,
        },
    )
    assert (served.exit_code, started) == (1, []), served.output
    assert served.output.startswith("Error: WETBANK_WRITE_RATE_LIMIT must be at least 1 write")
    assert repr(limit) in served.output and "Traceback" not in served.output
    assert len(served.output.strip().splitlines()) == 1
    with pytest.raises(ValueError, match="WETBANK_WRITE_RATE_LIMIT"):
        create_app({"DATABASE_URL": database_url, "WETBANK_WRITE_RATE_LIMIT": limit})
