"""Migration 0030 on both databases: a plan's notices, their recipients, the copy requests and
the copies mailed are sealed, and a copy mailed is of its own plan's request and notice.  Down
to 0029 the seals and keys go (a plain UPDATE is taken again); up again every stored row is
sealed, a notice recorded before documents were kept among them, and the registry verifies.  A
copy stored at 0029 naming another plan's notice or request stops the upgrade, naming it, and
nothing changes."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy.exc import DBAPIError

from api.schema_check import alembic_config
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit
from tests.api.test_notice_seals import TABLES, noticed
from tests.integration.migration_kit import app_on, execute, full_verify_ok, rows, version

SEALS = "SELECT row_id FROM ledger_row_seals WHERE table_name = :t ORDER BY row_id"


def _noticed(url: str, plans: int = 1) -> list[dict[str, str]]:
    """``plans`` plans each with a notice mailed, three copy requests and a copy mailed."""
    app = app_on(url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        return [noticed(kit) for _ in range(plans)]
    finally:
        app.extensions["wetbank.db"].dispose()


def _sealed(url: str) -> dict[str, list[str]]:
    return {table: [str(row[0]) for row in rows(url, SEALS, t=table)] for table in TABLES}


def _stored(url: str) -> dict[str, list[str]]:
    return {
        table: [str(row[0]) for row in rows(url, f"SELECT id FROM {table} ORDER BY id")]
        for table in TABLES
    }


def test_0030_seals_the_rows_stored_down_and_up_and_they_verify(fresh_db_url: str) -> None:
    (ids,) = _noticed(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0029")
    assert all(sealed == [] for sealed in _sealed(fresh_db_url).values())
    # at 0029 nothing refuses a plain UPDATE: a notice stored as before documents were kept
    execute(
        fresh_db_url, "UPDATE plan_notices SET document = NULL WHERE id = :id", id=ids["notice"]
    )
    command.upgrade(config, "head")
    stored = _stored(fresh_db_url)
    assert all(stored.values()) and _sealed(fresh_db_url) == stored
    assert full_verify_ok(fresh_db_url)
    for statement, which in (
        ("UPDATE plan_notices SET mailed_on = '2026-06-20' WHERE id = :id", "notice"),
        ("UPDATE plan_notices SET document = '{}' WHERE id = :id", "notice"),
        ("DELETE FROM plan_notice_recipients WHERE id = :id", "recipient"),
        ("UPDATE plan_copy_requests SET requested_on = '2026-06-23' WHERE id = :id", "request"),
        ("UPDATE plan_copies_mailed SET mailed_on = '2026-06-25' WHERE id = :id", "copy"),
    ):
        with pytest.raises(DBAPIError, match="immutable"):
            execute(fresh_db_url, statement, id=ids[which])
    assert rows(fresh_db_url, "SELECT document FROM plan_notices WHERE id = :id", id=ids["notice"])[
        0
    ] == (None,)


@pytest.mark.parametrize(
    ("column", "which", "what"),
    [("notice_id", "notice", "notice"), ("copy_request_id", "request", "copy request")],
    ids=["notice", "request"],
)
def test_0030_stops_on_a_copy_of_another_plans_notice_or_request(
    fresh_db_url: str, column: str, which: str, what: str
) -> None:
    mine, theirs = _noticed(fresh_db_url, plans=2)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0029")
    execute(
        fresh_db_url,
        f"UPDATE plan_copies_mailed SET {column} = :other WHERE id = :id",
        other=theirs[which],
        id=mine["copy"],
    )
    refusal = f"plan_copies_mailed row {mine['copy']} names a {what} of another plan"
    with pytest.raises(RuntimeError, match=refusal):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0029"
    assert all(sealed == [] for sealed in _sealed(fresh_db_url).values())
