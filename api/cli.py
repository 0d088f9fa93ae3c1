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
from flask.cli import FlaskGroup, ScriptInfo
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from api import create_app, version
from api.config import shared_secret_problem
from api.context import database
from api.schema_check import alembic_config, schema_problem
from bank import access
from bank import audit as bank_audit
from ledger import sealer, server_settings, verification
from ledger.db import refuses_writes


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


#: ``wetbank`` exits with this when it could not use the database (unreachable, missing, not
#: migrated, or refusing the command's role a table): for ``audit verify``, "could not check",
#: not "broken" (1)
EXIT_NO_DATABASE = 3
#: what a command that writes (``audit verify`` seals what is queued and records a checkpoint)
#: says on a database that takes no writes: a standby answers reads only
READ_ONLY_HINT = (
    "the database takes no writes, a hot standby or default_transaction_read_only on: "
    "run the command against the primary"
)
#: PostgreSQL's SQLSTATE for "permission denied" (insufficient_privilege): the role the command
#: connects as lacks a GRANT, which the operator fixes; nothing in the ledger is wrong
_NO_PRIVILEGE = "42501"


class DatabaseUnavailable(click.ClickException):
    exit_code = EXIT_NO_DATABASE


class _Group(FlaskGroup):
    """Flask's command group without Flask's own options: ``--version`` is the service's, not
    Flask's; ``-e/--env-file`` needs python-dotenv, which the service does not install, and
    ``-A/--app`` and ``--debug`` mean nothing here.  A database that cannot be used (or that
    refuses the command's role a table) ends any command with one line and exit 3, not a page
    of traceback."""

    def __init__(self, **extra: Any) -> None:
        super().__init__(add_version_option=False, load_dotenv=False, **extra)
        self.params = [p for p in self.params if p.name not in ("env_file", "app", "debug")]

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except DBAPIError as error:
            if not _unusable(error):
                raise
            why = _first_line(error)
            if refuses_writes(error):
                why += f" ({READ_ONLY_HINT})"
            raise DatabaseUnavailable(f"cannot use {_database_named(ctx)}: {why}") from None


def _database_named(ctx: click.Context) -> str:
    try:  # the app this command made (FlaskGroup keeps it), whose context may be gone by now
        url = ctx.ensure_object(ScriptInfo).load_app().extensions["wetbank.db"].engine.url
    except Exception:  # no app could be made: say what could not be used without naming it
        return "the database"
    return f"the database at {url.render_as_string()}"  # with no password


def _unusable(error: DBAPIError) -> bool:
    """Whether ``error`` says the database cannot be used as configured (unreachable, gone,
    permission denied, taking no writes) rather than that the code asked it something wrong."""
    if isinstance(error, (OperationalError, InterfaceError)) or refuses_writes(error):
        return True
    return getattr(error.orig, "sqlstate", None) == _NO_PRIVILEGE


def _first_line(error: DBAPIError) -> str:
    """The driver's own message, on one line (without SQLAlchemy's statement and link)."""
    return " ".join(str(error.orig).split()) or type(error.orig).__name__


def _print_version(ctx: click.Context, _param: click.Parameter, value: bool) -> None:
    if value and not ctx.resilient_parsing:
        click.echo(version.describe())
        ctx.exit()


@click.group(cls=_Group, create_app=_app, add_default_commands=False)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    is_eager=True,
    callback=_print_version,
    help="Show the service's version and the commit it was built from, and exit.",
)
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
@click.option(
    "--name",
    required=True,
    callback=lambda _ctx, _param, value: _token_name(value),
    help=f"Who or what uses it (1 to {access.TOKEN_NAME_MAX_LENGTH} characters).",
)
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


def _token_name(name: str) -> str:
    """The API's rule for a token's name (``bank.access``), checked before the database is
    touched: a bad name is bad input (exit 2), as a bad ``--role`` is."""
    from bank.errors import ValidationFailed

    try:
        access.check_token_name(name)
    except ValidationFailed as refused:
        raise click.BadParameter(
            "; ".join(refused.fields["errors"].get("name") or [refused.detail])
        ) from None
    return name


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
    audit page check what is written later.  Exit 0: intact; 1: broken (a link, a balance or
    a seal, or an anchor missing or different); 3: could not check (the database cannot be
    reached, does not exist, is not migrated to this code, refuses the role a table or takes
    no writes: it seals what is queued and records a checkpoint, so it runs on the primary)."""
    db_ = database()
    behind = schema_problem(db_)
    if behind:  # not a break: there is nothing this code can check yet
        raise DatabaseUnavailable(
            f"cannot check {_database_named(click.get_current_context())}: {behind}"
        )
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
