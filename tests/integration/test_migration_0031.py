"""Migration 0031 on both databases: a new notice is stored with its document.  A database
holding a notice recorded before documents were kept upgrades, and that notice keeps none and
verifies; at the head a notice typed in without a document is refused.  Down to 0030 such a row
is taken again, and up again the upgrade weighs none of the rows stored."""

from __future__ import annotations

import pytest
from alembic import command
from sqlalchemy.exc import DBAPIError

from api.schema_check import alembic_config
from tests.api.test_notice_document_required import REFUSED, TYPED
from tests.integration.migration_kit import execute, full_verify_ok, rows, version
from tests.integration.test_migration_0030 import _noticed

DOCUMENT = "SELECT document FROM plan_notices WHERE id = :id"


def test_0031_upgrades_over_notices_without_a_document_and_refuses_new_ones(
    fresh_db_url: str,
) -> None:
    (ids,) = _noticed(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0029")
    # at 0029 nothing refuses a plain UPDATE: a notice stored as before documents were kept
    execute(
        fresh_db_url, "UPDATE plan_notices SET document = NULL WHERE id = :id", id=ids["notice"]
    )
    command.upgrade(config, "0030")
    command.upgrade(config, "0031")
    assert version(fresh_db_url) == "0031"
    assert rows(fresh_db_url, DOCUMENT, id=ids["notice"]) == [(None,)]
    command.upgrade(config, "head")  # the code verifies the tables later revisions add too
    assert full_verify_ok(fresh_db_url)
    with pytest.raises(DBAPIError, match=REFUSED):
        execute(fresh_db_url, TYPED, new="ntc_typed", document=None, id=ids["notice"])
    assert rows(fresh_db_url, DOCUMENT, id="ntc_typed") == []

    command.downgrade(config, "0030")
    execute(fresh_db_url, TYPED, new="ntc_typed", document=None, id=ids["notice"])
    command.upgrade(config, "0031")
    assert version(fresh_db_url) == "0031"
    assert rows(fresh_db_url, DOCUMENT, id="ntc_typed") == [(None,)]
    command.upgrade(config, "head")
    assert full_verify_ok(fresh_db_url)
    with pytest.raises(DBAPIError, match=REFUSED):
        execute(fresh_db_url, TYPED, new="ntc_typed_again", document=None, id=ids["notice"])
