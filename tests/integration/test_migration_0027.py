"""Migration 0027 on both databases: the draws on securities are sealed, and a security's drawn
total and date are tied to its draws.  Down to 0026 the draws' seals go; up again every stored
draw is sealed and the registry verifies, and the database refuses an edit of a draw or of a
drawn total.  A draw or a drawn total edited at 0026 (nothing refused it then) stops the
upgrade, naming the row, and nothing changes."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy.exc import DBAPIError

from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok
from tests.api.test_money import draw, hold, project_plan
from tests.integration.migration_kit import app_on, execute, full_verify_ok, rows, version

SEALS = "SELECT row_id FROM ledger_row_seals WHERE table_name = 'security_draws' ORDER BY row_id"


def _drawn(url: str) -> tuple[str, list[str]]:
    """A security drawn twice through the API: its id and its draws' ids."""
    app = app_on(url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        lgu = kit.lgu()
        security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
        ok(draw(kit, security, "2026-07-07", 1_000_000, token=lgu["token"]))
        ok(draw(kit, security, "2026-07-09", 600_000, token=lgu["token"]))
    finally:
        app.extensions["wetbank.db"].dispose()
    draws = rows(url, "SELECT id FROM security_draws ORDER BY id")
    return security["id"], [str(row[0]) for row in draws]


def test_0027_seals_the_draws_stored_down_and_up_and_they_verify(fresh_db_url: str) -> None:
    security_id, draws = _drawn(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0026")
    assert rows(fresh_db_url, SEALS) == []
    command.upgrade(config, "head")
    assert [str(row[0]) for row in rows(fresh_db_url, SEALS)] == draws
    assert full_verify_ok(fresh_db_url)
    for statement, refusal in (
        ("UPDATE security_draws SET amount_cents = 1 WHERE id = :id", "immutable"),
        ("DELETE FROM security_draws WHERE id = :id", "immutable"),
    ):
        with pytest.raises(DBAPIError, match=refusal):
            execute(fresh_db_url, statement, id=draws[0])
    with pytest.raises(DBAPIError, match="drawn_cents and drawn_on are its draws"):
        execute(
            fresh_db_url, "UPDATE securities SET drawn_cents = 1 WHERE id = :id", id=security_id
        )
    assert rows(fresh_db_url, "SELECT drawn_cents FROM securities WHERE id = :id", id=security_id)[
        0
    ] == (1_600_000,)


@pytest.mark.parametrize(
    ("table", "change"),
    [
        ("securities", "drawn_cents = drawn_cents - 600000"),
        ("securities", "drawn_on = '2026-07-08'"),
        ("security_draws", "amount_cents = amount_cents + 1"),
        ("security_draws", "drawn_on = '2026-07-08'"),
    ],
    ids=["total", "date", "draw-amount", "draw-date"],
)
def test_0027_stops_on_a_draw_or_a_total_edited_before_it(
    fresh_db_url: str, table: str, change: str
) -> None:
    security_id, draws = _drawn(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0026")
    row_id = security_id if table == "securities" else draws[-1]
    execute(fresh_db_url, f"UPDATE {table} SET {change} WHERE id = :id", id=row_id)
    with pytest.raises(RuntimeError, match=f"{table} row {row_id}: "):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0026"
    assert rows(fresh_db_url, SEALS) == []
