"""Issue 25 §5: the restore drill of docs/operations.md, under write load.

A chain head is taken (``wetbank audit verify`` prints it) and kept outside the database; then,
while clients keep posting transfers, ``pg_dump`` dumps the database (one consistent snapshot);
``pg_restore`` restores it into a new database, and ``wetbank audit verify --anchor <head>``
passes on the restored copy: nothing up to the head was lost or rewritten, and every balance
agrees with its entries.  A head taken after the dump is not in the copy, and the same check
says so, which shows the anchor is checked, not ignored.
"""

from __future__ import annotations

import re
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from tests.dbs import create_database, drop_database
from tests.system.harness import (
    CREDIT_CLASS,
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


@pytest.fixture
def restored_url(tmp_path: Path) -> Iterator[str]:
    """A new, empty PostgreSQL database to restore into."""
    url = create_database("postgresql", tmp_path)
    yield url
    drop_database(url)


def test_a_dump_taken_under_write_load_restores_and_verifies_against_an_earlier_head(
    pg_url: str, restored_url: str, tmp_path: Path
) -> None:
    pg_dump = require_program("pg_dump", "postgresql-client")
    pg_restore = require_program("pg_restore", "postgresql-client")
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

    restored = subprocess.run(
        [pg_restore, *pg_args(restored_url), "--no-owner", "--exit-on-error"]
        + ["--single-transaction", "--dbname", str(make_url(restored_url).database), str(dump)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert restored.returncode == 0, restored.stderr

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
