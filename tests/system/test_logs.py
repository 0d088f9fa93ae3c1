"""What ``wetbank serve`` writes: every line, from its warnings about the database's settings to
gunicorn's last, is one JSON object (docs/operations.md, "Observe")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.system.harness import Client, Server, sql_rows

pytestmark = pytest.mark.system


def test_every_line_wetbank_serve_writes_is_a_json_object(pg_url: str, tmp_path: Path) -> None:
    if sql_rows(pg_url, "SHOW is_superuser")[0][0] != "on":
        pytest.skip("setting track_counts for a session needs a superuser")
    # the server's sessions run without track_counts, which serve warns about before it starts
    url = (
        make_url(pg_url)
        .update_query_dict({"options": "-c track_counts=off"})
        .render_as_string(hide_password=False)
    )
    with Server(url, 1, tmp_path / "server.log") as server:
        with Client(server.port) as client:
            assert client.call("GET", "/health")[0] == 200
    lines = server.log_path.read_text().splitlines()  # its standard output and error
    records = []
    for line in lines:
        try:
            records.append(json.loads(line))
        except ValueError:
            pytest.fail(f"a line that is not JSON: {line!r}")
    assert all(isinstance(r, dict) and r["level"] and r["logger"] for r in records)
    warned = [r["message"] for r in records if r["logger"] == "wetbank.serve"]
    serving = f"serving on http://127.0.0.1:{server.port}/api/v1 with 1 workers of 4 threads"
    assert serving in warned
    before = warned[: warned.index(serving)]
    assert any(m.startswith("PostgreSQL track_counts is off: ") for m in before), warned
    levels = {r["message"]: r["level"] for r in records if r["logger"] == "wetbank.serve"}
    assert {levels[m] for m in before} == {"WARNING"} and levels[serving] == "INFO"
    assert any(r["logger"] == "wetbank.access" for r in records)  # the server did run
