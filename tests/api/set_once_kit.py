"""A bank whose set-once registry columns are set by the bank's own acts, and unset beside them:
a payment refunded and one live, a withdrawal reversed on appeal and one standing, a security
drawn in part then released and one held (``tests/api/test_set_once_seals.py``,
``test_audit_checkpoint.py``, ``tests/integration/test_migration_0025.py``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask
from sqlalchemy import Engine, text

from tests.api.kit import Kit, ok, on
from tests.api.test_appeals import grant, petition, rule
from tests.api.test_audit import payment, workload
from tests.api.test_money import draw, hold, project_plan, release
from tests.api.test_plans_revisions import final_approved_plan

#: the acts' days, after the audit workload's (May 2026) and the plans' (June)
PETITIONED, GRANTED, REVERSED = "2026-06-26", "2026-06-29", "2026-07-06"
DRAWN, RELEASED, REFUNDED = "2026-07-07", "2026-07-08", "2026-07-08"


@dataclass
class SetOnce:
    """The rows' ids: each table's row with its set-once columns set, and one without."""

    refunded: str
    live_payment: str
    reversed_withdrawal: str
    standing_withdrawal: str
    released: str
    held: str


def _scalar(app: Flask, sql: str, **params: Any) -> Any:
    with app.extensions["wetbank.db"].engine.connect() as connection:
        return connection.execute(text(sql), params).scalar_one()


def set_once_bank(kit: Kit, *, between: Callable[[], None] | None = None) -> SetOnce:
    """The rows first, then (after ``between``, e.g. a checkpoint) the acts that set their
    set-once columns: a refund, a reversal of the approval on appeal, a release."""
    work = workload(kit)
    lgu = kit.lgu()
    securities_plan = project_plan(kit, lgu)
    released, held = (ok(hold(kit, securities_plan, token=lgu["token"])) for _ in range(2))
    plan, _bank = final_approved_plan(kit, lgu)
    appeal = ok(petition(kit, plan, postmarked="2026-06-24", received=PETITIONED))
    ok(grant(kit, appeal, GRANTED))
    with on(GRANTED):
        refunded = payment(kit, work.plan["id"], 2_500)
    app = kit.app
    by_transaction = "SELECT id FROM {} WHERE transaction_id = :t"
    ids = SetOnce(
        refunded=_scalar(app, by_transaction.format("payments"), t=int(refunded)),
        live_payment=_scalar(app, by_transaction.format("payments"), t=int(work.payments[0])),
        reversed_withdrawal=_scalar(
            app, "SELECT id FROM withdrawals WHERE plan_id = :p", p=plan["id"]
        ),
        standing_withdrawal=_scalar(
            app, by_transaction.format("withdrawals"), t=int(work.withdrawal)
        ),
        released=released["id"],
        held=held["id"],
    )
    if between is not None:
        between()
    ok(rule(kit, appeal, REVERSED))
    ok(draw(kit, released, DRAWN, 1_000_000, token=lgu["token"]))
    ok(release(kit, released, RELEASED, token=lgu["token"]))
    with on(REFUNDED):
        ok(kit.api.post(f"/payments/{ids.refunded}/refund"))
    return ids


def behind_the_triggers(engine: Engine, table: str, statement: str, **params: Any) -> None:
    """Run ``statement`` as someone with database access who turned every trigger of ``table``
    off (the seals' and the guards' of 0018 and 0019), and back on."""
    with engine.begin() as connection:
        if engine.dialect.name == "postgresql":
            connection.execute(text("SET LOCAL session_replication_role = replica"))
            connection.execute(text(statement), params)
            return
        triggers = connection.execute(
            text(
                "SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND tbl_name = :t "
                "ORDER BY rowid"
            ),
            {"t": table},
        ).all()
        for name, _sql in triggers:
            connection.exec_driver_sql(f'DROP TRIGGER "{name}"')
        connection.execute(text(statement), params)
        for _name, sql in triggers:
            connection.exec_driver_sql(sql)
