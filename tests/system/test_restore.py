"""Issue 25 §5: the restore drill of docs/operations.md, under write load.

A chain head is taken (``wetbank audit verify`` prints it) and kept outside the database; then,
while clients keep posting transfers, ``pg_dump`` dumps the database (one consistent snapshot);
§7's own ``createdb`` and ``pg_restore`` commands, read from docs/operations.md, restore it into a
new database for the service's role (here a role made for the test, no superuser), and
``wetbank audit verify --anchor <head>``, connecting as that role, passes on the restored copy:
nothing up to the head was lost or rewritten, and every balance agrees with its entries.  A head
taken after the dump is not in the copy, and the same check says so, which shows the anchor is
checked, not ignored.  The role owns every table of the copy, as it owned what it migrated, so
the service connecting as that role migrates it, serves it and writes to it.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from tests.dbs import PG_ADMIN_URL, _admin_execute, drop_database, require_postgresql
from tests.system.harness import (
    CREDIT_CLASS,
    ROOT,
    Client,
    Server,
    row_counts,
    seed,
    wetbank,
)
from tests.system.ops_kit import require_program

pytestmark = pytest.mark.system

HEAD = re.compile(r"chain head: (\d+:[0-9a-f]{64})")


def chain_head(url: str) -> str:
    verified = wetbank(url, "audit", "verify", "--processes", "1")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    found = HEAD.search(verified.stdout)
    assert found, verified.stdout
    return found.group(1)


def pg_args(url: str) -> list[str]:
    parsed = make_url(url)
    return ["-h", str(parsed.host), "-p", str(parsed.port), "-U", str(parsed.username)]


class Load:
    """A client posting transfers until stopped (bounded in count and time); counts the 201s."""

    def __init__(self, port: int, token: str, source: str, target: str) -> None:
        self.port, self.token, self.source, self.target = port, token, source, target
        self.created = 0
        self.failed: list[object] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Load:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(60)
        assert not self._thread.is_alive()

    def wait_for(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while self.created < count and time.monotonic() < deadline and not self.failed:
            time.sleep(0.02)
        assert self.created >= count, (self.created, self.failed)

    def _run(self) -> None:
        body = {
            "from_account_id": self.source,
            "to_account_id": self.target,
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 1,
        }
        deadline = time.monotonic() + 120
        with Client(self.port, token=self.token) as client:
            while not self._stop.is_set() and time.monotonic() < deadline and self.created < 5000:
                status, _h, parsed = client.call("POST", "/transfers", body)
                if status == 201:
                    self.created += 1
                else:
                    self.failed.append((status, parsed))
                    return


#: what §7's commands name, in docs/operations.md
DOCUMENTED = {
    "host": "127.0.0.1",
    "admin": "postgres",
    "role": "wetbank",
    "database": "wetbank_restored",
    "dump": "/var/backups/wetbank/wetbank-2026-12-05.pgdump",
}


def documented_restore() -> list[list[str]]:
    """§7's ``createdb`` and ``pg_restore`` commands from a dump, word by word."""
    section = (ROOT / "docs" / "operations.md").read_text().split("## 7. Restore", 1)[1]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = block.replace("\\\n", " ").splitlines()  # a trailing backslash continues
    commands = [
        shlex.split(line) for line in lines if line.startswith(("createdb ", "pg_restore "))
    ]
    assert [c[0] for c in commands] == ["createdb", "pg_restore"], block
    return commands


@dataclass
class Target:
    """Where the test restores to: ``role`` (not a superuser) and its new ``database``."""

    role: str
    database: str

    @property
    def url(self) -> str:
        """The restored database, as the service connects to it: as the role."""
        return (
            make_url(PG_ADMIN_URL)
            .set(username=self.role, password=None, database=self.database)
            .render_as_string(hide_password=False)
        )

    def command(self, words: list[str], programs: dict[str, str], dump: Path) -> list[str]:
        """A documented command, naming this server, role, database and dump instead."""
        admin = make_url(PG_ADMIN_URL)
        instead = {
            DOCUMENTED["host"]: str(admin.host),
            DOCUMENTED["admin"]: str(admin.username),
            DOCUMENTED["role"]: self.role,
            DOCUMENTED["database"]: self.database,
            DOCUMENTED["dump"]: str(dump),
        }
        out = [programs[words[0]], "-p", str(admin.port or 5432)]
        for word in words[1:]:
            flag, equals, value = word.partition("=")
            if equals and flag.startswith("--"):
                out.append(f"{flag}={instead.get(value, value)}")
            else:
                out.append(instead.get(word, word))
        return out


@pytest.fixture
def target() -> Iterator[Target]:
    """A login role of the test's own, neither superuser nor able to create databases, and the
    name of the database §7 restores into; both dropped at the end."""
    require_postgresql()
    suffix = uuid.uuid4().hex[:10]
    made = Target(role=f"wetbank_test_svc_{suffix}", database=f"wetbank_test_restored_{suffix}")
    _admin_execute(f"CREATE ROLE {made.role} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE")
    try:
        yield made
    finally:
        drop_database(make_url(PG_ADMIN_URL).set(database=made.database).render_as_string())
        _admin_execute(f"DROP ROLE IF EXISTS {made.role}")


def owned_by_others(url: str, role: str) -> list[str]:
    """The copy's tables, sequences, views and functions that ``role`` does not own."""
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return list(
                connection.execute(
                    text(
                        "SELECT c.relname FROM pg_class c JOIN pg_namespace n "
                        "ON n.oid = c.relnamespace WHERE n.nspname = 'public' "
                        "AND c.relkind IN ('r', 'S', 'v', 'm', 'p') "
                        "AND pg_get_userbyid(c.relowner) <> :role "
                        "UNION ALL SELECT p.proname FROM pg_proc p JOIN pg_namespace n "
                        "ON n.oid = p.pronamespace WHERE n.nspname = 'public' "
                        "AND pg_get_userbyid(p.proowner) <> :role"
                    ),
                    {"role": role},
                ).scalars()
            )
    finally:
        engine.dispose()


def test_a_dump_taken_under_write_load_restores_as_documented_verifies_and_is_served_by_its_role(
    pg_url: str, target: Target, tmp_path: Path
) -> None:
    pg_dump = require_program("pg_dump", "postgresql-client")
    programs = {
        name: require_program(name, "postgresql-client") for name in ("createdb", "pg_restore")
    }
    dump = tmp_path / "wetbank.pgdump"
    with (
        Server(pg_url, workers=2, log_path=tmp_path / "server.log") as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [10**6, 0])
        with Load(server.port, bank.holder_token, *bank.accounts) as load:
            load.wait_for(20)
            head = chain_head(pg_url)  # kept outside the database, as an operator would
            during = load.created
            subprocess.run(
                [pg_dump, *pg_args(pg_url), "--format=custom", "--file", str(dump)]
                + [str(make_url(pg_url).database)],
                check=True,
                capture_output=True,
                timeout=300,
            )
            during = load.created - during
            load.wait_for(load.created + 5)  # and on after the dump
        assert not load.failed, load.failed
        assert during > 0, "no transfer was written while pg_dump ran"
        later_head = chain_head(pg_url)

    for words in documented_restore():  # createdb, then pg_restore
        args = target.command(words, programs, dump)
        restored = subprocess.run(args, capture_output=True, text=True, timeout=300, check=False)
        assert restored.returncode == 0, f"{shlex.join(args)}: {restored.stderr}"
    restored_url = target.url

    verified = wetbank(restored_url, "audit", "verify", "--processes", "1", "--anchor", head)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert verified.stdout.startswith("ok:")
    # the copy holds everything up to the head, and the dump's snapshot is whole
    anchored_seq = int(head.split(":")[0])
    copied = row_counts(restored_url)
    assert copied["ledger_transactions"] >= anchored_seq
    assert copied["transfers"] >= 20

    # a head from after the dump is not in the copy: the anchor is checked, not ignored
    assert int(later_head.split(":")[0]) > copied["ledger_transactions"]
    missing = wetbank(restored_url, "audit", "verify", "--processes", "1", "--anchor", later_head)
    assert missing.returncode == 1, missing.stdout + missing.stderr
    assert "BROKEN" in missing.stderr

    # the service, as its role, takes the copy over: migrates it, serves it, writes to it
    upgraded = wetbank(restored_url, "db", "upgrade")
    assert upgraded.returncode == 0, upgraded.stdout + upgraded.stderr
    with (
        Server(restored_url, workers=1, log_path=tmp_path / "restored.log") as server,
        Client(server.port, token=bank.holder_token) as client,
    ):
        status, _h, moved = client.call(
            "POST",
            "/transfers",
            {
                "from_account_id": bank.accounts[0],
                "to_account_id": bank.accounts[1],
                "credit_class": CREDIT_CLASS,
                "amount_sqft": 1,
            },
        )
        assert status == 201, moved
    assert row_counts(restored_url)["transfers"] == copied["transfers"] + 1
    # and owns the copy, as it owns what it migrated (the source's are postgres's): a later
    # migration may alter any table of it
    assert owned_by_others(restored_url, target.role) == []
