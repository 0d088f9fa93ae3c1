"""Migration 0032 on both databases: a payment's amount is what its own transaction posted, a
security's what its own pending transfer held.  A database at 0031 whose payments (received,
refunded, returned, reversed) and securities (held, drawn in part and in full, released) agree
with the ledger upgrades, verifies, and then refuses a row typed in for another amount; so does
the demo's.  A row typed in at 0031 (nothing refused one then) for another amount than its
transaction moved, or naming another record's transaction, stops the upgrade, naming it, and the
database stays at 0031."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from alembic import command
from alembic.script import ScriptDirectory
from click.testing import CliRunner
from sqlalchemy.exc import IntegrityError

from api.cli import main
from api.schema_check import alembic_config
from ledger import Database
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok
from tests.api.test_amount_guards import OWN, REFUSED, type_in
from tests.api.test_ledger_ties import PAID, acts
from tests.api.test_money import approved, hold, pay, project_plan
from tests.dbs import create_database, drop_database
from tests.integration.migration_kit import app_on, full_verify_ok, rows, version

TRIGGERS = {"payments_tied_amount", "securities_tied_amount"}


def _triggers(url: str) -> set[str]:
    """This migration's triggers the database holds."""
    if url.startswith("sqlite"):
        found = rows(url, "SELECT name FROM sqlite_master WHERE type = 'trigger'")
    else:
        found = rows(url, "SELECT tgname FROM pg_trigger WHERE NOT tgisinternal")
    return {str(name) for (name,) in found} & TRIGGERS


def _typed_in(url: str, table: str, like: str, new_id: str, **how: int) -> None:
    db = Database.from_url(url)
    try:
        type_in(db, table, like, new_id, **how)
    finally:
        db.dispose()


def test_0032_upgrades_a_database_whose_amounts_agree_and_then_refuses_one_typed_in(
    fresh_db_url: str,
) -> None:
    app = app_on(fresh_db_url)
    try:
        ids = acts(Kit(Api(app.test_client(), make_token(app, "board")), app))
    finally:
        app.extensions["wetbank.db"].dispose()
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0031")
    assert version(fresh_db_url) == "0031"
    assert _triggers(fresh_db_url) == set()
    command.upgrade(config, "head")
    assert version(fresh_db_url) == ScriptDirectory.from_config(config).get_current_head()
    assert _triggers(fresh_db_url) == TRIGGERS
    assert full_verify_ok(fresh_db_url)
    for table, like in (("payments", ids.live), ("securities", ids.untouched)):
        ((amount,),) = rows(
            fresh_db_url, f"SELECT amount_cents FROM {table} WHERE id = :id", id=like
        )
        with pytest.raises(IntegrityError, match=re.escape(REFUSED[table])):
            _typed_in(fresh_db_url, table, like, "typed", moved=amount, amount=amount + 1)
        assert rows(fresh_db_url, f"SELECT id FROM {table} WHERE id = 'typed'") == []
    assert full_verify_ok(fresh_db_url)


def test_0032_stops_on_rows_typed_in_before_it_naming_them(fresh_db_url: str) -> None:
    app = app_on(fresh_db_url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        lgu = kit.lgu()
        fee = ok(
            pay(
                kit.api,
                "processing_fee",
                2_500,
                PAID,
                plan_id=approved(kit, lgu, "2026-09-01")["id"],
            )
        )
        security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    finally:
        app.extensions["wetbank.db"].dispose()
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0031")
    # at 0031 nothing refuses them: a fee typed in for a cent more than its transaction posted,
    # a security naming another's pending transfer (and its amount)
    _typed_in(fresh_db_url, "payments", fee["id"], "pay_typed", moved=2_500, amount=2_501)
    link = OWN["securities"][0]
    ((theirs,),) = rows(
        fresh_db_url, f"SELECT {link} FROM securities WHERE id = :id", id=security["id"]
    )
    _typed_in(
        fresh_db_url,
        "securities",
        security["id"],
        "sec_copied",
        amount=security["amount_cents"],
        tx=int(theirs),
    )
    with pytest.raises(RuntimeError) as stopped:
        command.upgrade(config, "head")
    said = str(stopped.value)
    assert (
        "payments row pay_typed: its amount_cents is not what its own transaction (keyed "
        "payment:<its id>) posted" in said
    ), said
    assert (
        "securities row sec_copied: its amount_cents is not what its own pending transfer (keyed "
        "security:<its id>) held" in said
    ), said
    assert fee["id"] not in said and security["id"] not in said
    assert version(fresh_db_url) == "0031"
    assert _triggers(fresh_db_url) == set()


def test_0032_upgrades_the_demo(backend: str, tmp_path: Path) -> None:
    """``wetbank demo``, taken down to 0031, upgrades and verifies (loaded at the head: the code
    writes the tables later revisions add)."""
    url = create_database(backend, tmp_path)
    try:
        config = alembic_config(url)
        command.upgrade(config, "head")
        loaded = CliRunner().invoke(main, ["demo"], env={"DATABASE_URL": url})
        assert loaded.exit_code == 0, loaded.output
        command.downgrade(config, "0031")
        assert _triggers(url) == set()
        command.upgrade(config, "head")
        assert _triggers(url) == TRIGGERS
        assert full_verify_ok(url)
    finally:
        drop_database(url)
