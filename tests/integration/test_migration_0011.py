"""Migration 0011 (notices and guarantees) on SQLite and PostgreSQL: a security drawn in part
before it (when the ledger released the rest with the draw) reads released, not held again; the
plans and securities already recorded go down and up again with it, and on to the head, where
the securities drawn before draws had rows of their own still verify."""

from __future__ import annotations

from pathlib import Path

import pytest
from alembic import command
from sqlalchemy import create_engine, inspect, text
from sqlalchemy.exc import DBAPIError

from api import create_app
from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.dbs import create_database, drop_database
from tests.integration.migration_kit import full_verify_ok

DAY = "2026-06-01"


def _security(kit: Kit, plan_id: str, amount: int) -> str:
    body = {
        "kind": "letter_of_credit",
        "issuer": "First State Bank",
        "amount_cents": amount,
        "irrevocable": True,
        "issued_on": DAY,
        "expires_on": "2027-06-01",
    }
    return str(ok(kit.api.post(f"/plans/{plan_id}/securities", body))["id"])


def _draw(kit: Kit, security_id: str, amount: int) -> None:
    body = {"drawn_on": DAY, "amount_cents": amount}
    ok(kit.api.post(f"/securities/{security_id}/draw", body))


def test_0011_marks_a_security_drawn_in_part_before_it_released_and_keeps_every_row(
    backend: str, tmp_path: Path
) -> None:
    url = create_database(backend, tmp_path)
    engine = create_engine(url)
    config = alembic_config(url)
    try:
        command.upgrade(config, "head")
        app = create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        with on(DAY):
            lgu = kit.lgu()
            plan = kit.approved_plan(lgu, DAY, method="project_specific")
            in_part, in_full, untouched = (_security(kit, plan["id"], 10_000) for _ in range(3))
            _draw(kit, in_part, 4_000)
            _draw(kit, in_full, 10_000)
        app.extensions["wetbank.db"].dispose()

        # 0010 knew no draw but the last and released the rest with it: as it left the rows
        command.downgrade(config, "0010")
        assert "security_draws" not in inspect(engine).get_table_names()
        assert "location" not in {c["name"] for c in inspect(engine).get_columns("plans")}
        command.upgrade(config, "0011")
        with engine.connect() as connection:
            rows = {
                row.id: (row.released_on, row.release_reason, row.drawn_cents)
                for row in connection.execute(
                    text("SELECT id, released_on, release_reason, drawn_cents FROM securities")
                )
            }
            plans = connection.execute(text("SELECT id, location FROM plans")).all()
        released_on, reason, drawn = rows[in_part]
        assert str(released_on) == DAY and drawn == 4_000
        assert reason == "the rest was released when it was drawn in part"
        assert rows[in_full] == (None, None, 10_000)
        assert rows[untouched] == (None, None, None)
        assert [(p.id, p.location) for p in plans] == [(plan["id"], None)]
        command.upgrade(config, "head")
        # no draw rows (0027 ties a drawn total to them): the transaction that posted each
        # security's own pending transfer gives its total and date, which verify and stay
        assert full_verify_ok(url)
        for cleared in (in_part, in_full):
            with pytest.raises(DBAPIError, match="drawn_cents and drawn_on are its draws"):
                with engine.begin() as connection:
                    connection.execute(
                        text("UPDATE securities SET drawn_cents = NULL WHERE id = :id"),
                        {"id": cleared},
                    )
    finally:
        engine.dispose()
        drop_database(url)
