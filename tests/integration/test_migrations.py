"""Alembic: upgrade → downgrade → upgrade on both databases; a schema behind the code is refused."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from click.testing import CliRunner
from sqlalchemy import create_engine, inspect

from api import create_app
from api.cli import main
from api.schema_check import alembic_config
from tests.dbs import create_database, drop_database

LEDGER_TABLES = {"ledger_accounts", "ledger_balances", "ledger_transactions", "ledger_entries"}


def _tables(url: str) -> set[str]:
    engine = create_engine(url)
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_migrations_upgrade_downgrade_and_upgrade_again(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    try:
        config = alembic_config(url)
        command.upgrade(config, "head")
        assert LEDGER_TABLES | {"lots", "plans", "payments"} <= _tables(url)
        command.downgrade(config, "base")
        assert not (LEDGER_TABLES & _tables(url))
        command.upgrade(config, "head")
        assert LEDGER_TABLES <= _tables(url)
    finally:
        drop_database(url)


def test_a_database_behind_the_code_is_refused_with_the_command_to_run(
    backend: str, tmp_path: Path
) -> None:
    url = create_database(backend, tmp_path)
    app = create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})
    try:
        response = app.test_client().get("/api/v1/health")
        assert response.status_code == 503
        assert response.json["code"] == "schema_behind"
        assert "wetbank db upgrade" in response.json["detail"]
        runner = CliRunner()
        served = runner.invoke(main, ["serve", "--port", "1"], env={"DATABASE_URL": url})
        assert served.exit_code != 0
        assert "wetbank db upgrade" in served.output
        upgraded = runner.invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url})
        assert upgraded.exit_code == 0, upgraded.output
        assert app.test_client().get("/api/v1/health").status_code == 200
    finally:
        app.extensions["wetbank.db"].dispose()
        drop_database(url)


def test_the_demo_loads_once_and_prints_a_token_per_role(backend: str, tmp_path: Path) -> None:
    url = create_database(backend, tmp_path)
    runner = CliRunner()
    try:
        assert runner.invoke(main, ["db", "upgrade"], env={"DATABASE_URL": url}).exit_code == 0
        first = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        second = runner.invoke(main, ["demo"], env={"DATABASE_URL": url})
        assert first.exit_code == 0 and second.exit_code == 0, first.output + second.output
        for role in ("holder", "lgu", "board"):
            assert f"{role} token:" in first.output
        app = create_app({"DATABASE_URL": url})
        token = second.output.strip().splitlines()[-1].split()[-1]
        client = app.test_client()
        headers = {"Authorization": f"Bearer {token}"}
        accounts = client.get("/api/v1/accounts", headers=headers).json["items"]
        assert len(accounts) == 2  # loaded once, not twice
        assert client.get("/api/v1/audit/verify", headers=headers).json["ok"] is True
        app.extensions["wetbank.db"].dispose()
        verified = runner.invoke(main, ["audit", "verify"], env={"DATABASE_URL": url})
        assert verified.exit_code == 0 and verified.output.startswith("ok:")
    finally:
        drop_database(url)
