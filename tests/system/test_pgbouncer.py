"""Issue 25 §2: every write path through Debian's PgBouncer in transaction mode, with no 5xx.

PgBouncer runs with its own configuration on a free port (``pool_mode = transaction``, a small
server pool so that clients share server connections), in front of the test's PostgreSQL
database.  First the control: with server-side prepares on, two client connections that each
prepare a statement collide on the server connection they share, which is the issue's
``prepared statement "_pg3_0" already exists``.  Then ``wetbank serve`` with
``WETBANK_PG_PREPARE=off`` takes deposits, transfers, reservations, withdrawals and payments
from concurrent clients through the pooler: every one succeeds, and the ledger verifies.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psycopg
import pytest
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.pool import NullPool

from ledger.db import make_engine
from ledger.store.postgresql import execute
from tests.system.harness import (
    CREDIT_CLASS,
    HOST,
    Bank,
    Client,
    Server,
    approved_plan,
    available,
    days_ago,
    free_port,
    open_account,
    posted,
    run_together,
    scale,
    seed,
)
from tests.system.ops_kit import Daemon, require_program

pytestmark = pytest.mark.system

CLIENTS = scale(6, 16)


@pytest.fixture
def bouncer(pg_url: str) -> Iterator[Callable[[int], str]]:
    """``bouncer(n)``: ``pg_url`` through a PgBouncer of this test's own in transaction mode,
    sharing ``n`` server connections among its clients."""
    program = require_program("pgbouncer", "pgbouncer")
    target = make_url(pg_url)
    as_root = os.geteuid() == 0
    with ExitStack() as stack:

        def start(pool_size: int) -> str:
            # PgBouncer refuses to run as root: as root it runs as postgres, in a folder of its
            # own that postgres can reach
            folder = Path(tempfile.mkdtemp(prefix="wetbank-pgbouncer-"))
            stack.callback(shutil.rmtree, folder, ignore_errors=True)
            port = free_port()
            (folder / "users.txt").write_text(f'"{target.username}" ""\n')
            config = folder / "pgbouncer.ini"
            config.write_text(
                textwrap.dedent(
                    f"""\
                    [databases]
                    * = host={target.host} port={target.port}

                    [pgbouncer]
                    listen_addr = {HOST}
                    listen_port = {port}
                    unix_socket_dir =
                    auth_type = trust
                    auth_file = {folder}/users.txt
                    pool_mode = transaction
                    default_pool_size = {pool_size}
                    max_client_conn = 500
                    pidfile = {folder}/pgbouncer.pid
                    """
                )
            )
            if as_root:
                for path in (folder, *folder.iterdir()):
                    shutil.chown(path, "postgres", "postgres")
            args = [program, *(["-u", "postgres"] if as_root else []), str(config)]
            stack.enter_context(Daemon(args, folder / "pgbouncer.log", port))
            return target.set(port=port).render_as_string(hide_password=False)

        yield start


def _prepare_on_two_connections(url: str, prepared: bool) -> list[BaseException]:
    """Run a statement the way the ledger's hot paths do (``ledger.store.postgresql.execute``) on
    two client connections held open, as a pool holds them, one after the other; the errors."""
    engine = make_engine(url, prepared_statements=prepared, poolclass=NullPool)
    errors: list[BaseException] = []
    first, second = engine.connect(), engine.connect()
    try:
        for connection in (first, second):
            try:
                # at its end the pooler hands the server connection to the next client
                with connection.begin():
                    execute(connection, "SELECT %s::int", (1,)).fetchall()
            except DBAPIError as error:
                errors.append(error)
    finally:
        first.close()
        second.close()
        engine.dispose()
    return errors


def test_prepared_statements_collide_behind_the_pooler_and_are_off_with_the_setting(
    bouncer: Callable[[int], str],
) -> None:
    bouncer_url = bouncer(1)  # every client on the one server connection
    collided = _prepare_on_two_connections(bouncer_url, prepared=True)
    assert len(collided) == 1
    assert isinstance(collided[0].orig, psycopg.errors.DuplicatePreparedStatement)  # type: ignore[attr-defined]
    assert _prepare_on_two_connections(bouncer_url, prepared=False) == []


def _writes(client: Client, bank: Bank, i: int) -> list[tuple[str, int, Any]]:
    """One client's share: a deposit, transfers, a plan with a reservation, its withdrawal, and
    a payment; ``(what, status, body)`` of each write."""
    done: list[tuple[str, int, Any]] = []

    def call(what: str, method: str, path: str, body: Any, token: str) -> Any:
        status, _headers, parsed = client.call(method, path, body, token=token)
        done.append((what, status, parsed))
        return parsed if status == 201 else None

    account = open_account(client, bank, 6_000)  # an account and a deposit into it
    done.append(("deposit", 201, None))
    for _ in range(3):
        transfer = {
            "from_account_id": account,
            "to_account_id": bank.accounts[i % len(bank.accounts)],
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 100,
        }
        call("transfer", "POST", "/transfers", transfer, bank.holder_token)
    plan = approved_plan(client, bank, area_sqft=1_000)  # 2,000 sq ft at 2:1
    reservation = call(
        "reservation",
        "POST",
        f"/accounts/{account}/reservations",
        {
            "plan_id": plan["id"],
            "credit_class": CREDIT_CLASS,
            "amount_sqft": 2_000,
            "expires_on": days_ago(-30),
        },
        bank.holder_token,
    )
    if reservation:
        call(
            "withdrawal",
            "POST",
            f"/plans/{plan['id']}/withdrawals",
            {"reservation_ids": [reservation["id"]]},
            bank.lgu_token,
        )
    call(
        "payment",
        "POST",
        "/payments",
        {
            "kind": "processing_fee",
            "amount_cents": 1_000,
            "payer": "Applicant",
            "received_on": days_ago(1),
            "plan_id": plan["id"],
        },
        bank.board,
    )
    assert posted(client, account, bank.board) == 6_000 - 300 - 2_000
    assert available(client, account, bank.board) == 6_000 - 300 - 2_000
    return done


def test_every_write_path_through_pgbouncer_in_transaction_mode_answers_without_5xx(
    bouncer: Callable[[int], str], pg_url: str, tmp_path: Path
) -> None:
    bouncer_url = bouncer(4)  # far fewer server connections than the service's clients
    env = {"WETBANK_PG_PREPARE": "off", "WETBANK_POOL_SIZE": "4", "WETBANK_POOL_OVERFLOW": "4"}
    with (
        Server(bouncer_url, workers=2, log_path=tmp_path / "server.log", env=env) as server,
        Client(server.port) as client,
    ):
        bank = seed(client, pg_url, [1_000, 1_000])

        def prepare(_i: int) -> Client:
            return Client(server.port, timeout=60)

        def act(i: int, own: Client) -> list[tuple[str, int, Any]]:
            try:
                return _writes(own, bank, i)
            finally:
                own.close()

        results = run_together(CLIENTS, prepare, act, timeout=240)
        errors = [r for r in results if isinstance(r, BaseException)]
        assert not errors, errors[:3]
        writes = [w for share in results for w in share]
        failed = [w for w in writes if w[1] != 201]
        assert not failed, failed[:5]
        kinds = {what for what, _s, _b in writes}
        assert kinds == {"deposit", "transfer", "reservation", "withdrawal", "payment"}
        assert len(writes) == CLIENTS * 7

        verify = client.ok("GET", "/audit/verify", status=200, token=bank.board)
        assert verify["ok"], verify
        for account in bank.accounts:
            assert posted(client, account, bank.board) == 1_000 + 300 * CLIENTS // 2
    log = server.log_path.read_text()
    assert "prepared statement" not in log and '"status": 5' not in log
