"""The ``wetbank`` command as an operator meets it (README.md "Command line", docs/operations.md).

``wetbank --version`` is the service's; ``wetbank token create`` holds a token's name to the
API's rule; a command that cannot use its database (or whose role it refuses a table) says so
in one line and exits 3 (for ``wetbank audit verify``: "could not check", not the 1 of a broken
ledger), on both databases.
The commands run as separate processes, as an operator or a scheduler runs them.
"""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import create_engine, func, select
from sqlalchemy import text as sql
from sqlalchemy.engine import make_url

from api import cli
from bank.access import ApiToken
from tests.api.conftest import Api
from tests.dbs import create_database, drop_database
from tests.system.harness import TEST_SECRET_KEY, free_port, wetbank

# --- the version --------------------------------------------------------------------------------


def test_wetbank_version_is_the_services_and_flasks_own_options_are_gone() -> None:
    shown = CliRunner().invoke(cli.main, ["--version"])
    assert shown.exit_code == 0, shown.output
    assert shown.output.startswith("wetbank ") and "(commit " in shown.output
    assert "Flask" not in shown.output and "Werkzeug" not in shown.output
    # -e/--env-file needed python-dotenv, which the service does not install
    refused = CliRunner().invoke(cli.main, ["--env-file", "wetbank.env", "db", "upgrade"])
    assert refused.exit_code == 2 and "No such option" in refused.output


# --- a token's name ------------------------------------------------------------------------------


def tokens_named(url: str, name: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            query = select(func.count()).select_from(ApiToken).where(ApiToken.name == name)
            return int(connection.execute(query).scalar_one())
    finally:
        engine.dispose()


def test_token_create_holds_a_name_to_the_apis_limit(
    database_url: str, api: Api, app: Flask
) -> None:
    too_long = "n" * 201 + uuid.uuid4().hex
    created = wetbank(database_url, "token", "create", "--role", "board", "--name", too_long)
    assert created.returncode == 2, created.stdout + created.stderr
    assert "Invalid value for '--name': at most 200 characters" in created.stderr
    assert "Traceback" not in created.stderr and "wbt_" not in created.stdout + created.stderr
    assert tokens_named(database_url, too_long) == 0
    blank = wetbank(database_url, "token", "create", "--role", "board", "--name", "   ")
    assert blank.returncode == 2 and "must not be blank" in blank.stderr
    # the API's own answer to the same name: one rule for both
    refused = api.post("/tokens", {"role": "board", "name": too_long})
    assert refused.status_code == 422
    assert "name" in refused.json["errors"]
    # and the longest name it takes, the command takes too
    longest = "m" * 168 + uuid.uuid4().hex  # 200 characters
    made = wetbank(database_url, "token", "create", "--role", "board", "--name", longest)
    assert made.returncode == 0, made.stderr
    assert tokens_named(database_url, longest) == 1


# --- a database the command cannot use ----------------------------------------------------------


def unreachable(backend: str, tmp_path: Path) -> str:
    """A database nothing answers for: a closed loopback port, or a folder that is not there."""
    if backend == "sqlite":
        return f"sqlite:///{tmp_path / 'no-such-folder' / 'wetbank.sqlite3'}"
    return f"postgresql+psycopg://postgres@127.0.0.1:{free_port()}/wetbank?connect_timeout=5"


def assert_one_line(done: subprocess.CompletedProcess[str], *expected: str) -> None:
    """Exit 3, and one line on standard error saying why, not a traceback (beside the JSON log
    records standard error carries, alembic's as it reads the schema's revision)."""
    err = done.stderr
    assert done.returncode == 3, done.stdout + err
    said = [line for line in err.splitlines() if not line.startswith('{"timestamp"')]
    assert "Traceback" not in err and len(said) == 1, err
    for text in expected:
        assert text in err, err


def test_audit_verify_exits_3_when_it_could_not_check(backend: str, tmp_path: Path) -> None:
    verify = ("audit", "verify", "--processes", "1")
    down = wetbank(unreachable(backend, tmp_path), *verify)
    assert_one_line(down, "Error: cannot use the database at ")
    assert down.stdout == ""

    never_migrated = create_database(backend, tmp_path)
    try:
        behind = wetbank(never_migrated, *verify)
        assert_one_line(behind, "schema is at revision none", "wetbank db upgrade")
    finally:
        drop_database(never_migrated)

    if backend == "postgresql":
        missing = make_url(never_migrated).set(database=f"wetbank_test_{uuid.uuid4().hex[:12]}")
        gone = wetbank(missing.render_as_string(hide_password=False), *verify)
        assert_one_line(gone, f'database "{missing.database}" does not exist')


@pytest.fixture
def role_without_the_chain(backend: str, fresh_db_url: str) -> Iterator[str]:
    """A PostgreSQL role that may read and write every table of a migrated database but
    ``ledger_chain`` (a GRANT forgotten); its URL.  Dropped after, with its privileges."""
    if backend != "postgresql":
        pytest.skip("SQLite has no roles: whoever may open the file may read every table")
    role = f"wetbank_test_{uuid.uuid4().hex[:12]}"
    admin = create_engine(fresh_db_url, isolation_level="AUTOCOMMIT")
    grants = (
        f"CREATE ROLE {role} LOGIN",
        f"GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA public TO {role}",
        f"GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO {role}",
        f"REVOKE SELECT ON ledger_chain FROM {role}",
    )
    try:
        with admin.connect() as connection:
            for statement in grants:
                connection.execute(sql(statement))
        yield make_url(fresh_db_url).set(username=role).render_as_string(hide_password=False)
    finally:
        with admin.connect() as connection:
            connection.execute(sql(f"DROP OWNED BY {role}"))  # its grants, so it can go
            connection.execute(sql(f"DROP ROLE {role}"))
        admin.dispose()


@pytest.mark.parametrize("processes", ["1", "2"])
def test_audit_verify_refused_a_table_says_it_could_not_check_in_one_line(
    role_without_the_chain: str, processes: str
) -> None:
    """A role without SELECT on a table is not a broken chain (1) nor a traceback: exit 3 and
    the database's own reason, as for a database that cannot be reached."""
    refused = wetbank(role_without_the_chain, "audit", "verify", "--processes", processes)
    assert_one_line(
        refused, "Error: cannot use the database at ", "permission denied for table ledger_chain"
    )
    assert refused.stdout == ""


@pytest.mark.parametrize(
    "command", [("db", "upgrade"), ("serve",), ("demo",)], ids=lambda c: " ".join(c)
)
def test_a_command_whose_database_is_down_says_so_in_one_line(
    backend: str, command: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WETBANK_SECRET_KEY", TEST_SECRET_KEY)  # serve checks it first
    down = wetbank(unreachable(backend, tmp_path), *command)
    assert_one_line(down, "Error: cannot use the database at ")


def test_audit_verify_on_a_database_taking_no_writes_says_so_in_one_line(
    backend: str, fresh_db_url: str
) -> None:
    """A standby (``default_transaction_read_only``, as a failover leaves one) answers reads, but
    ``audit verify`` seals what is queued and records a checkpoint: it could not check there
    (3, one line naming the primary), not a broken ledger (1) with a traceback."""
    if backend != "postgresql":
        pytest.skip("SQLite has no read-only mode of its own")
    name = make_url(fresh_db_url).database
    admin = create_engine(fresh_db_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as connection:
            connection.execute(sql(f"ALTER DATABASE {name} SET default_transaction_read_only = on"))
        refused = wetbank(fresh_db_url, "audit", "verify", "--processes", "1")
        assert_one_line(
            refused, "Error: cannot use the database at ", "takes no writes", "against the primary"
        )
        assert refused.stdout == ""
    finally:
        with admin.connect() as connection:
            connection.execute(
                sql(f"ALTER DATABASE {name} SET default_transaction_read_only = off")
            )
        admin.dispose()
