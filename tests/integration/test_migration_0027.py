"""Migration 0027 on both databases: the draws on securities are sealed, and a security's drawn
total and date are tied to its draws.  Down to 0026 the draws' seals go; up again every stored
draw is sealed and the registry verifies, and the database refuses an edit of a draw or of a
drawn total.  A draw or a drawn total edited at 0026 (nothing refused it then) stops the
upgrade, naming the row, and nothing changes."""

from __future__ import annotations

import logging

import pytest
from alembic import command
from alembic.script import ScriptDirectory
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
    "change",
    ["amount_cents = amount_cents + 1", "drawn_on = '2026-07-08'"],
    ids=["draw-amount", "draw-date"],
)
def test_0027_stops_on_a_draw_edited_before_it(fresh_db_url: str, change: str) -> None:
    security_id, draws = _drawn(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0026")
    execute(fresh_db_url, f"UPDATE security_draws SET {change} WHERE id = :id", id=draws[-1])
    with pytest.raises(RuntimeError, match=f"security_draws row {draws[-1]}: "):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0026"
    assert rows(fresh_db_url, SEALS) == []


@pytest.mark.parametrize(
    "change",
    [
        "drawn_cents = drawn_cents - 600000",
        # as earlier versions left a draw dated before the one drawn last: drawn_on moved back
        "drawn_on = '2026-07-08'",
        "drawn_cents = NULL, drawn_on = NULL",
    ],
    ids=["total", "date", "none"],
)
def test_0027_gives_a_security_its_draws_total_and_date_naming_it(
    fresh_db_url: str, change: str, caplog: pytest.LogCaptureFixture
) -> None:
    """The draws agree with the ledger: a security's drawn total or date that disagrees with
    them (state, before 0027) is given theirs, and the upgrade names the security."""
    security_id, draws = _drawn(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0026")
    execute(fresh_db_url, f"UPDATE securities SET {change} WHERE id = :id", id=security_id)
    with caplog.at_level(logging.WARNING, logger="alembic.runtime.migration"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == ScriptDirectory.from_config(config).get_current_head()
    drawn = "SELECT drawn_cents, drawn_on FROM securities WHERE id = :id"
    assert [tuple(map(str, row)) for row in rows(fresh_db_url, drawn, id=security_id)] == [
        ("1600000", "2026-07-09")
    ]
    assert f"securities row {security_id}: its drawn_cents and drawn_on are set" in caplog.text
    assert [str(row[0]) for row in rows(fresh_db_url, SEALS)] == draws
    assert full_verify_ok(fresh_db_url)


def test_0027_stops_on_a_drawn_total_with_no_draws_behind_it(fresh_db_url: str) -> None:
    """A security with no draws shows a drawn total only as a draw before 0011 gave it: one
    typed in is no record the upgrade can restore, and it stops naming the security."""
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        lgu = kit.lgu()
        security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    finally:
        app.extensions["wetbank.db"].dispose()
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0026")
    execute(
        fresh_db_url,
        "UPDATE securities SET drawn_cents = 5, drawn_on = '2026-07-07' WHERE id = :id",
        id=security["id"],
    )
    with pytest.raises(RuntimeError, match=f"securities row {security['id']}: it has no draws"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0026"
