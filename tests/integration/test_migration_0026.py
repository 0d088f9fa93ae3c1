"""Migration 0026 on both databases: a payment's status and reversal reason are tied to its
compensating transaction's kind and memo.  At 0025 the reason's seal takes any first value;
0026's upgrade stops, naming the row, on a reason no reversal gave, and once upgraded the
database refuses one, while the board's reversal still records its own and the ledger verifies,
down and up."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy.exc import DBAPIError

from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok
from tests.api.set_once_kit import set_once_bank
from tests.api.test_money import reverse
from tests.integration.migration_kit import app_on, execute, full_verify_ok, version
from tests.integration.test_migration_0024 import _reversed_and_live_fees

#: a reason given with plain SQL to a fee still received
GIVEN = "UPDATE payments SET reversal_reason = 'reversed: wrong appeal' WHERE id = :id"


def test_0026_stops_on_a_reason_no_reversal_gave(fresh_db_url: str) -> None:
    _reversed_id, live_id = _reversed_and_live_fees(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0025")
    execute(fresh_db_url, GIVEN, id=live_id)  # 0025's seal takes it
    with pytest.raises(RuntimeError, match=f"payments row {live_id}: it has a reversal_reason"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0025"


def test_0026_down_and_up_keeps_the_reversals_reasons_and_refuses_others(
    fresh_db_url: str,
) -> None:
    _reversed_id, live_id = _reversed_and_live_fees(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0025")
    command.upgrade(config, "head")
    assert full_verify_ok(fresh_db_url)
    with pytest.raises(DBAPIError, match="the one its reversal gave"):
        execute(fresh_db_url, GIVEN, id=live_id)
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        done = ok(reverse(kit.api, live_id, "2026-09-12"), 201)
    finally:
        app.extensions["wetbank.db"].dispose()
    assert done["status"] == "reversed" and done["reversal_reason"]
    assert full_verify_ok(fresh_db_url)


@pytest.mark.parametrize(
    "typed",
    [
        "released_on = '2026-07-09', release_reason = 'x'",
        "released_on = '2026-07-09'",
        "release_reason = 'the rest was released when it was drawn in part'",
    ],
    ids=["both", "date-alone", "0011s-reason-alone"],
)
def test_0026_takes_the_releases_the_ledger_made_and_stops_on_one_typed(
    fresh_db_url: str, typed: str
) -> None:
    """A refund, a withdrawal reversed on appeal, a security drawn then released: stored rows the
    ledger wrote pass the upgrade's check, down and up; a release typed on a security still held
    at 0025 (its seal takes it), both columns or either alone, stops the upgrade, naming the
    row."""
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        ids = set_once_bank(kit)
    finally:
        app.extensions["wetbank.db"].dispose()
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0025")
    command.upgrade(config, "head")
    assert full_verify_ok(fresh_db_url)
    command.downgrade(config, "0025")
    execute(fresh_db_url, f"UPDATE securities SET {typed} WHERE id = :id", id=ids.held)
    with pytest.raises(RuntimeError, match=f"securities row {ids.held}: its released_on"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0025"
