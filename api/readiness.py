"""``GET /api/v1/ready``: may this process be sent traffic?  (``/api/v1/health`` says it is alive.)

Ready when the database answers and takes writes, its schema is at the code's head revision,
and the hash chain's sealing queue holds nothing older than ``WETBANK_READY_MAX_SEAL_AGE_SECONDS``:
a backlog that old means no sealer is keeping up (a stuck or failing one, or writes faster than
it seals), and ``wetbank audit verify`` would have that much unsealed history to seal first.
Otherwise 503 ``service_unavailable`` with ``Retry-After``; both answers carry each check's
result.  A read-only database (a hot standby, ``default_transaction_read_only``) answers reads
but every write there is 503, so a load balancer is told to send nothing: not ready.

A process's sealer (``ledger.sealer``) starts at its first commit.  After a crash the queue may
hold transactions no running process committed, and a load balancer that waits for this check
before sending traffic would wait for ever: so the check wakes the process's sealer whenever it
finds work queued, and a server process runs it once as it starts (``check_at_start``), sealing
what a crash left without any request.  Not on a read-only database, where sealing is refused:
the sealer's own wait decides when it tries again there (``ledger.sealer``).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any

from flask import Flask, current_app
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields
from sqlalchemy import Connection, func, inspect, select, text
from sqlalchemy.exc import SQLAlchemyError

from api.context import database
from api.problems import ApiProblem
from api.schema_check import UPGRADE_HINT, head_revision
from ledger import clock, server_settings
from ledger.schema import LedgerChainLink, LedgerChainQueue, LedgerTransaction
from ledger.sealer import BackgroundSealer

blp = Blueprint("operations", __name__, url_prefix="/api/v1", description="Operations")
log = logging.getLogger(__name__)


READ_ONLY_DETAIL = (
    "read-only: the database takes no writes (a hot standby, or default_transaction_read_only "
    "on), so every write here would be refused with 503"
)


@dataclass(frozen=True)
class Backlog:
    """The hash chain's length and its sealing queue."""

    sealed: int
    queued: int
    oldest_age_seconds: float

    def check(self, max_age_seconds: float) -> dict[str, Any]:
        """What readiness finds of sealing: ok while nothing has waited longer than the limit."""
        return {
            "ok": self.oldest_age_seconds <= max_age_seconds,
            "queued": self.queued,
            "oldest_age_seconds": self.oldest_age_seconds,
            "max_age_seconds": max_age_seconds,
        }


def sealing_backlog(connection: Connection) -> Backlog:
    """How many transactions are sealed, how many wait, and how long the oldest has waited.

    One statement, so one snapshot: read one after the other, a transaction the sealer moved
    from the queue to the chain in between would be counted in neither (or both), and the
    metrics' count of transactions written would go down, which Prometheus takes for a restart.
    """
    waiting = select(LedgerChainQueue.transaction_id).subquery()
    sealed, queued, oldest = connection.execute(
        select(
            select(func.coalesce(func.max(LedgerChainLink.seq), 0)).scalar_subquery(),
            select(func.count()).select_from(waiting).scalar_subquery(),
            select(func.min(LedgerTransaction.recorded_at))
            .join(waiting, LedgerTransaction.id == waiting.c.transaction_id)
            .scalar_subquery(),
        )
    ).one()
    age = 0.0
    if oldest is not None:
        age = max(0.0, (clock.utcnow() - clock.as_utc(oldest)).total_seconds())
    return Backlog(int(sealed or 0), int(queued or 0), round(age, 3))


def checks(max_seal_age: float) -> tuple[bool, dict[str, Any]]:
    """Whether the service is ready, and what each check found."""
    try:
        with database().engine.connect() as connection:
            read_only = server_settings.takes_no_writes(connection)
            revision = _revision(connection)
            backlog = sealing_backlog(connection) if revision == head_revision() else None
    except SQLAlchemyError as error:
        detail = (str(getattr(error, "orig", None) or error).strip().splitlines() or ["?"])[0]
        return False, {"database": {"ok": False, "detail": f"unreachable: {detail}"}}
    found: dict[str, Any] = {"database": {"ok": True}}
    if read_only:
        found["database"] = {"ok": False, "read_only": True, "detail": READ_ONLY_DETAIL}
    head = head_revision()
    found["schema"] = {"ok": revision == head, "revision": revision, "head": head}
    if backlog is None:
        found["schema"]["detail"] = f"the schema is behind: {UPGRADE_HINT}"
        return False, found
    found["sealing"] = backlog.check(max_seal_age)
    if backlog.queued and not read_only:
        # whoever committed it may be gone (a crash): this process's sealer seals it; with the
        # schema at the code's head only, as a commit here would be
        background: BackgroundSealer | None = current_app.extensions.get("wetbank.sealer")
        if background is not None:
            background.wake()
    return all(check["ok"] for check in found.values()), found


def check_at_start(app: Flask) -> None:
    """Run the checks once, in the background, as a server process starts: what a crash left
    queued is sealed without waiting for a request.  In the background, so that the process
    starts (and ``/health`` answers) whatever the database does."""
    if app.extensions.get("wetbank.sealer") is None:
        return  # nothing is ever queued where each write seals its own link (SQLite)

    def run() -> None:
        try:
            with app.app_context():
                checks(float(app.config["WETBANK_READY_MAX_SEAL_AGE_SECONDS"]))
        except Exception:  # /ready runs the checks again, and wakes the sealer then
            log.warning("checking the sealing queue at start failed", exc_info=True)

    threading.Thread(target=run, name="wetbank-ready-at-start", daemon=True).start()


def _revision(connection: Connection) -> str | None:
    """The database's Alembic revision (read directly: Alembic's own reader logs each time)."""
    if not inspect(connection).has_table("alembic_version"):
        return None
    return connection.execute(text("SELECT version_num FROM alembic_version")).scalar()


def _failed(name: str, check: dict[str, Any]) -> str:
    """A failed check as the problem's detail names it: its name, and why where it says."""
    return f"{name} ({check['detail']})" if "detail" in check else name


class ReadyOut(Schema):
    status = fields.String(metadata={"description": "`ready`"})
    checks = fields.Dict(
        metadata={"description": "each check (database, schema, sealing) and what it found"}
    )


@blp.route("/ready")
class Ready(MethodView):
    @blp.response(200, ReadyOut)
    @blp.alt_response(503, description="Not ready: the problem's `checks` say why.")
    def get(self) -> dict[str, Any]:
        """Ready for traffic: database reachable and writable, schema current, chain sealed?"""
        ok, found = checks(float(current_app.config["WETBANK_READY_MAX_SEAL_AGE_SECONDS"]))
        if not ok:
            failed = ", ".join(
                _failed(name, check) for name, check in found.items() if not check["ok"]
            )
            raise ApiProblem(
                503,
                "service_unavailable",
                f"Not ready: {failed}.",
                {"Retry-After": "5"},
                checks=found,
            )
        return {"status": "ready", "checks": found}
