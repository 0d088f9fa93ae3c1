"""Migration 0033 on both databases: the history of each account's status and each site's
freeze.  Down to 0032 the table, its triggers and its seals go, and every account and site stays
as it was; up again each account and site stored gets one sealed row, the status it has then
(one frozen at 0032, with no history, frozen), and the registry verifies; the database refuses
an edit of those rows, and a status changed behind them is named by verify."""

from __future__ import annotations

from typing import Any

import pytest
from alembic import command
from sqlalchemy.exc import DBAPIError

from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.integration.migration_kit import (
    app_on,
    execute,
    full_verify_ok,
    migration,
    rows,
    version,
)

STATUSES = (
    "SELECT t.id, t.status FROM bank_accounts AS t UNION ALL SELECT s.id, CASE WHEN s.frozen "
    "THEN 'frozen' ELSE 'unfrozen' END FROM bank_sites AS s ORDER BY 1"
)
HISTORY = (
    "SELECT subject_id, position, from_status, to_status, actor FROM status_changes "
    "ORDER BY subject_id, position"
)


def _bank(url: str) -> dict[str, Any]:
    """An account frozen, one closed, one open, and a site frozen, through the API."""
    app = app_on(url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        with on("2026-06-01"):
            funded = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=1_000)
            holder = funded["holder"]["id"]
            closed, other = kit.account(holder, 5, "Wright"), kit.account(holder, 5, "Wright")
            ok(kit.api.post(f"/accounts/{funded['id']}/freeze"), 200)
            ok(kit.api.post(f"/accounts/{closed}/close"), 200)
            ok(kit.api.post(f"/bank-sites/{funded['site_id']}/freeze"), 200)
        return {"frozen": funded["id"], "closed": closed, "open": other}
    finally:
        app.extensions["wetbank.db"].dispose()


def _sealed(url: str) -> list[str]:
    sql = "SELECT row_id FROM ledger_row_seals WHERE table_name = 'status_changes' ORDER BY 1"
    return [str(row[0]) for row in rows(url, sql)]


def test_0033_starts_each_history_from_the_status_stored_down_and_up(fresh_db_url: str) -> None:
    ids = _bank(fresh_db_url)
    before = rows(fresh_db_url, STATUSES)
    assert len(rows(fresh_db_url, HISTORY)) == 3  # the three acts
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0032")
    assert version(fresh_db_url) == "0032" and _sealed(fresh_db_url) == []
    assert rows(fresh_db_url, STATUSES) == before
    with pytest.raises(DBAPIError):
        rows(fresh_db_url, "SELECT count(*) FROM status_changes")
    # at 0032 a freeze recorded no history: the open account is frozen as the code did then
    execute(
        fresh_db_url, "UPDATE bank_accounts SET status = 'frozen' WHERE id = :id", id=ids["open"]
    )
    now = rows(fresh_db_url, STATUSES)
    command.upgrade(config, "head")
    started = migration("0033")
    assert rows(fresh_db_url, HISTORY) == [
        (subject, 1, None, status, started.ACTOR) for subject, status in now
    ]
    assert _sealed(fresh_db_url) == sorted(f"stat0033_{subject}" for subject, _ in now)
    assert full_verify_ok(fresh_db_url)
    with pytest.raises(DBAPIError, match="immutable"):
        execute(fresh_db_url, "UPDATE status_changes SET to_status = 'open'")
    execute(fresh_db_url, "UPDATE bank_accounts SET status = 'open' WHERE id = :id", id=ids["open"])
    assert not full_verify_ok(fresh_db_url)
