"""The ``wetbank`` command: a Flask CLI group bound to the app (README.md, docs/operations.md)."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import click
from alembic import command
from flask import Flask, current_app
from flask.cli import FlaskGroup

from api import create_app
from api.config import shared_secret_problem
from api.context import database
from api.schema_check import alembic_config, schema_problem
from bank import access
from bank import audit as bank_audit
from ledger import sealer, server_settings, verification


def _app(*_args: Any) -> Flask:
    # the CLI migrates the database itself, so it must not refuse a schema that is behind
    try:
        app = create_app({"WETBANK_CHECK_SCHEMA": False})
    except ValueError as wrong:  # a setting that cannot be read: say which, not a traceback
        raise click.ClickException(str(wrong)) from None
    context = click.get_current_context(silent=True)
    if context is not None:
        # stop the background sealer and close the pool when the command is done
        context.call_on_close(app.extensions["wetbank.db"].dispose)
    return app


@click.group(cls=FlaskGroup, create_app=_app, add_default_commands=False)
def main() -> None:
    """Wetland bank ledger service."""


@main.group()
def db() -> None:
    """Database schema."""


@db.command("upgrade")
def db_upgrade() -> None:
    """Migrate the database to the latest revision."""
    engine = database().engine
    url = engine.url.render_as_string(hide_password=False)
    with engine.begin() as connection:
        config = alembic_config(url)
        config.attributes["connection"] = connection
        command.upgrade(config, "head")
    click.echo(f"database at {engine.url.render_as_string()} is up to date")


@main.group()
def token() -> None:
    """API tokens."""


@token.command("create")
@click.option("--role", type=click.Choice(access.ROLES), required=True)
@click.option("--name", required=True)
@click.option("--lgu", "lgu_id", default=None, help="the LGU an lgu token acts for")
@click.option("--holder", "holder_id", default=None, help="the holder a holder token acts for")
def token_create(role: str, name: str, lgu_id: str | None, holder_id: str | None) -> None:
    """Create a token; prints it alone on the last line.  Its creation is in the audit trail
    (``GET /audit/events``: ``token_created`` by ``cli``), as one made through the API is."""
    from bank import parties
    from bank.errors import BankError

    flags = {"lgu_id": "--lgu", "holder_id": "--holder", "name": "--name", "role": "--role"}
    try:
        with database().transaction() as session:
            parties.check_token_party(session, role, lgu_id, holder_id)
            row, secret = access.create_token(
                session, role=role, name=name, lgu_id=lgu_id, holder_id=holder_id, created_by="cli"
            )
            access.record_event(
                session,
                kind="token_created",
                path="wetbank token create",
                status=201,
                actor="cli",
                request_id=None,
            )
    except BankError as refused:  # a clear message naming the flag, not a traceback
        errors = refused.fields.get("errors") or {}
        named = ", ".join(f"{flags.get(f, f)}: {'; '.join(m)}" for f, m in errors.items())
        raise click.ClickException(refused.detail + (f" ({named})" if named else "")) from None
    click.echo(f"token {row.id} ({role}, {name}) created; it is shown only once:")
    click.echo(secret)


@main.group()
def audit() -> None:
    """Audit the ledger."""


@audit.command("verify")
@click.option(
    "--processes",
    type=click.IntRange(min=1),
    default=os.cpu_count() or 1,
    show_default="the number of CPUs",
    help="Workers checking a long chain in segments, in parallel (on PostgreSQL each is a "
    "database connection; on SQLite a process).",
)
@click.option(
    "--anchor",
    "anchors",
    multiple=True,
    metavar="SEQ:HASH",
    callback=lambda _ctx, _param, values: [_anchor(v) for v in values],
    help="A chain head printed by an earlier verify and kept outside the database: the link "
    "must still be there with that hash (nothing up to it removed or rewritten). Repeatable.",
)
def audit_verify(processes: int, anchors: list[verification.Anchor]) -> None:
    """Recompute the hash chain, every stored balance and every registry seal (the full pass);
    when everything is intact, record a checkpoint, from which ``GET /audit/verify`` and the
    audit page check what is written later.  Exit 1 on any break."""
    db_ = database()
    sealer.seal_all(db_)
    show = sys.stderr.isatty()
    total = _transaction_count(db_)
    started = time.monotonic()

    def progress(done: int) -> None:
        if show:
            _progress_line(done, total, started)

    report = bank_audit.verify_full(db_, progress, processes, anchors)
    if show:
        click.echo("", err=True)
    broken = report.first_broken
    if broken is not None:
        click.echo(f"BROKEN: {broken.detail} ({broken.as_dict()})", err=True)
        sys.exit(1)
    click.echo(
        f"ok: {report.transactions_checked} transactions and "
        f"{report.accounts_checked} balances verified"
    )
    if report.head is not None:
        click.echo(
            f"chain head: {report.head} (keep it outside this database; "
            f"`wetbank audit verify --anchor {report.head}` later shows that no link up to "
            "it was removed or rewritten)"
        )
    if report.checkpoint is not None:
        click.echo(
            f"checkpoint recorded at link {report.checkpoint.seq}: GET /audit/verify and "
            "the audit page check what is written after it"
        )


def _anchor(text: str) -> verification.Anchor:
    try:
        return verification.Anchor.parse(text)
    except ValueError as error:
        raise click.BadParameter(str(error)) from error


def _transaction_count(db_: Any) -> int:
    from sqlalchemy import func, select

    from ledger.schema import LedgerChainLink

    with db_.engine.connect() as connection:
        return int(connection.execute(select(func.count()).select_from(LedgerChainLink)).scalar())


def _progress_line(done: int, total: int, started: float) -> None:
    elapsed = max(time.monotonic() - started, 1e-6)
    rate = done / elapsed
    left = (total - done) / rate if rate and total > done else 0
    width = 30
    filled = int(width * done / total) if total else width
    bar = "#" * filled + "-" * (width - filled)
    click.echo(
        f"\r[{bar}] {done}/{total} tx  {rate:,.0f} tx/s  {left:,.0f}s left", err=True, nl=False
    )


def _server_count(flag: str, default: int, meaning: str, *, envvar: str) -> Any:
    """A positive ``serve`` option that the environment variable ``envvar`` may set too."""
    return click.option(
        flag,
        default=default,
        show_default=True,
        type=click.IntRange(min=1),
        envvar=envvar,
        help=f"{meaning} [env: {envvar}].",
    )


@main.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8000, show_default=True, type=int)
@_server_count("--workers", 2, "Worker processes", envvar="WETBANK_WORKERS")
@_server_count(
    "--threads",
    4,
    "Threads per worker, each serving one request at a time",
    envvar="WETBANK_THREADS",
)
@_server_count(
    "--timeout",
    30,
    "Seconds a worker may go silent (a request stuck that long) before gunicorn replaces "
    "it; also how long a stopping worker may finish its requests",
    envvar="WETBANK_TIMEOUT",
)
def serve(host: str, port: int, workers: int, threads: int, timeout: int) -> None:
    """Serve the API with gunicorn (a production WSGI server)."""
    import logging

    # JSON lines on standard error (api.logs), as everything the server logs once it runs
    log = logging.getLogger("wetbank.serve")
    db_ = database()
    reason = shared_secret_problem(current_app.config) or schema_problem(db_)
    if reason:
        raise click.ClickException(reason)
    for warning in server_settings.setting_warnings(db_.engine):
        log.warning(warning)
    os.environ.setdefault("DATABASE_URL", current_app.config["DATABASE_URL"])
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = _metrics_folder()
    args = [
        "gunicorn",
        "--config",
        "python:api.gunicorn_config",
        "--bind",
        f"{host}:{port}",
        "--workers",
        str(workers),
        "--worker-class",
        "api.gunicorn_worker.ThreadWorker",  # gthread, with a quick shutdown that exits
        "--threads",
        str(threads),
        "--timeout",
        str(timeout),
        "--graceful-timeout",
        str(timeout),
        "--keep-alive",
        "30",
        "api.wsgi:app",
    ]
    log.info(
        "serving on http://%s:%s/api/v1 with %s workers of %s threads", host, port, workers, threads
    )
    os.execvp(sys.executable, [sys.executable, "-m", *args])


def _metrics_folder() -> str:
    """Where gunicorn's workers keep their metrics: ``PROMETHEUS_MULTIPROC_DIR`` emptied of an
    earlier run's counts, or a new temporary folder that gunicorn removes when it exits."""
    configured = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if configured:
        folder = Path(configured)
        folder.mkdir(parents=True, exist_ok=True)
        for stale in folder.glob("*.db"):
            stale.unlink()
        return str(folder)
    from api.gunicorn_config import TEMPORARY_MARKER

    folder = Path(tempfile.mkdtemp(prefix="wetbank-metrics-"))
    (folder / TEMPORARY_MARKER).touch()
    return str(folder)


@main.command("demo")
def demo() -> None:
    """Load the demo data (once) and print a new token for each role."""
    from bank import demo as demo_data

    tokens = demo_data.load(database())
    click.echo("demo data loaded; tokens (shown once):")
    click.echo(f"  holder token: {tokens.holder}")
    click.echo(f"  lgu token:    {tokens.lgu}")
    click.echo(f"  board token:  {tokens.board}")


if __name__ == "__main__":
    main()
