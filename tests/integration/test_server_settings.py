"""`wetbank serve` warns when PostgreSQL runs without the settings the ledger relies on."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from api import cli
from ledger.server_settings import setting_warnings, warnings_for


def test_a_setting_is_warned_about_only_when_it_is_off() -> None:
    assert warnings_for({"autovacuum": "on", "track_counts": "on"}) == []
    assert warnings_for({}) == []  # a server that does not report a setting is not blamed
    (off,) = warnings_for({"autovacuum": "off", "track_counts": "on"})
    assert off.startswith("PostgreSQL autovacuum is off: planner statistics are never refreshed")
    assert "docs/scaling.md" in off
    both = warnings_for({"autovacuum": "off", "track_counts": "off"})
    assert [w.split(":")[0] for w in both] == [
        "PostgreSQL autovacuum is off",
        "PostgreSQL track_counts is off",
    ]


def _with_track_counts_off(url: str) -> str:
    """``url`` whose sessions run with track_counts off: a superuser may set it per session, so
    the real server can be shown both ways without changing its configuration for others."""
    if _server_setting(url, "is_superuser") != "on":
        pytest.skip("setting track_counts for a session needs a superuser")
    parsed = make_url(url)
    options = " ".join(filter(None, [str(parsed.query.get("options", "")), "-c track_counts=off"]))
    return parsed.update_query_dict({"options": options}).render_as_string(hide_password=False)


def _server_setting(url: str, name: str) -> str:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return str(connection.execute(text(f"SHOW {name}")).scalar_one())
    finally:
        engine.dispose()


def test_the_servers_own_settings_are_read(backend: str, database_url: str) -> None:
    engine = create_engine(database_url)
    try:
        found = setting_warnings(engine)
    finally:
        engine.dispose()
    if backend == "sqlite":
        assert found == []
        return
    for name in ("autovacuum", "track_counts"):
        off = _server_setting(database_url, name) == "off"
        assert any(w.startswith(f"PostgreSQL {name} is off") for w in found) == off

    engine = create_engine(_with_track_counts_off(database_url))
    try:
        found = setting_warnings(engine)
    finally:
        engine.dispose()
    assert any(w.startswith("PostgreSQL track_counts is off") for w in found)


def test_serve_logs_the_warnings_before_it_starts_the_server(
    backend: str,
    database_url: str,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """As log records of ``wetbank.serve``, which the service's handler writes as JSON lines
    like every other (a real server's output: tests/system/test_logs.py)."""
    caplog.set_level(logging.INFO, logger="wetbank.serve")
    started: list[list[str]] = []

    def record_instead_of_replacing_this_process(_file: str, args: list[str]) -> Any:
        started.append(args)

    monkeypatch.setattr(cli.os, "execvp", record_instead_of_replacing_this_process)
    # what serve sets up for gunicorn goes back as it was after the test
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(tmp_path / "metrics"))
    url = database_url if backend == "sqlite" else _with_track_counts_off(database_url)
    served = CliRunner().invoke(
        cli.main,
        ["serve", "--port", "1"],
        env={"DATABASE_URL": url, "WETBANK_SECRET_KEY": "k" * 64},
    )
    assert served.exit_code == 0, served.output
    assert len(started) == 1 and "gunicorn" in started[0]
    assert served.output == ""  # nothing in plain text
    logged = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "wetbank.serve"]
    warned = [
        i
        for i, (level, message) in enumerate(logged)
        if level == "WARNING" and message.startswith("PostgreSQL track_counts is off")
    ]
    assert bool(warned) == (backend == "postgresql")
    serving = next(i for i, (_, message) in enumerate(logged) if message.startswith("serving on"))
    assert logged[serving][0] == "INFO" and all(i < serving for i in warned)
