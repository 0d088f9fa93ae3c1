"""Migration 0022 on both databases: ``payments.reversal_reason`` holds the board's reason for
reversing a filing fee recorded in error; down to 0021 the column is gone (the reason stays in
the reversal's memo), and up again it is read back from that memo."""

from __future__ import annotations

from alembic import command
from click.testing import CliRunner
from flask import Flask
from sqlalchemy import create_engine, text

from api import create_app
from api.cli import main
from api.schema_check import alembic_config
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok
from tests.api.test_money import FEE, WRONG, appealed, pay, reverse


def _reasons(url: str) -> dict[str, tuple[str, str | None]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            rows = connection.execute(text("SELECT id, status, reversal_reason FROM payments"))
            return {str(i): (str(s), r) for i, s, r in rows}
    finally:
        engine.dispose()


def _app(url: str) -> Flask:
    return create_app({"DATABASE_URL": url, "PROPAGATE_EXCEPTIONS": False})


def test_0022_restores_a_reversal_reason_from_its_memo_after_a_downgrade(
    fresh_db_url: str,
) -> None:
    app = _app(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        lgu = kit.lgu()
        _plan, wrong = appealed(kit, lgu)
        _plan, other = appealed(kit, lgu)
        fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=wrong["id"]))
        kept = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=other["id"]))
        ok(reverse(kit.api, fee["id"], "2026-09-12"), 201)
        seal_all(app.extensions["wetbank.db"])
    finally:
        app.extensions["wetbank.db"].dispose()
    before = _reasons(fresh_db_url)
    assert before[fee["id"]] == ("reversed", WRONG)
    assert before[kept["id"]] == ("received", None)
    command.downgrade(alembic_config(fresh_db_url), "0021")
    engine = create_engine(fresh_db_url)
    try:
        with engine.connect() as connection:
            columns = connection.execute(text("SELECT * FROM payments")).keys()
    finally:
        engine.dispose()
    assert "reversal_reason" not in columns
    upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": fresh_db_url})
    assert upgraded.exit_code == 0, upgraded.output
    assert _reasons(fresh_db_url) == before
