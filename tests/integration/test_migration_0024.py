"""Migration 0024 on both databases: ``payments.postmarked_on`` (the filing fee's postmark), and
the payments' seal covering it and the reversal reason.  Existing payments are re-sealed (after
checking them against their seals, and each reason against its reversal's memo) and verify; down
to 0023 they are re-sealed as 0022 sealed them, and verify as such."""

from __future__ import annotations

import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import create_engine, text

from api.cli import main
from api.schema_check import alembic_config
from ledger import row_seals
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok
from tests.api.test_money import FEE, appealed, pay, reverse
from tests.integration.migration_kit import (
    app_on,
    full_verify_ok,
    migration,
    mismatch,
    rows,
    version,
)

REASONS = row_seals.once_seal_name("payments", "reversal_reason")


def _reversed_and_live_fees(url: str) -> tuple[str, str]:
    app = app_on(url)
    try:
        kit = Kit(Api(app.test_client(), make_token(app, "board")), app)
        lgu = kit.lgu()
        _plan, wrong = appealed(kit, lgu)
        _plan, other = appealed(kit, lgu)
        fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=wrong["id"]))
        kept = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=other["id"]))
        ok(reverse(kit.api, fee["id"], "2026-09-12"), 201)
        seal_all(app.extensions["wetbank.db"])
        return str(fee["id"]), str(kept["id"])
    finally:
        app.extensions["wetbank.db"].dispose()


def _columns(url: str) -> list[str]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return list(connection.execute(text("SELECT * FROM payments")).keys())
    finally:
        engine.dispose()


def test_0024_reseals_the_payments_down_and_up_and_they_verify(fresh_db_url: str) -> None:
    revision = migration("0024")
    reversed_id, live_id = _reversed_and_live_fees(fresh_db_url)
    assert rows(
        fresh_db_url, "SELECT row_id FROM ledger_row_seals WHERE table_name = :n", n=REASONS
    ) == [(reversed_id,)]
    command.downgrade(alembic_config(fresh_db_url), "0023")
    assert "postmarked_on" not in _columns(fresh_db_url)
    assert mismatch(fresh_db_url, [revision.PAYMENTS_BEFORE]) is None  # sealed as 0022 sealed
    assert rows(
        fresh_db_url, "SELECT count(*) FROM ledger_row_seals WHERE table_name = :n", n=REASONS
    ) == [(0,)]
    with_reasons = "SELECT id, reversal_reason IS NOT NULL FROM payments ORDER BY id"
    before = rows(fresh_db_url, with_reasons)
    assert dict(before) == {reversed_id: True, live_id: False}

    upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": fresh_db_url})
    assert upgraded.exit_code == 0, upgraded.output
    assert rows(fresh_db_url, with_reasons) == before
    # fees booked before postmarks were recorded keep none: nobody saw one
    assert rows(fresh_db_url, "SELECT DISTINCT postmarked_on FROM payments") == [(None,)]
    assert rows(
        fresh_db_url, "SELECT row_id FROM ledger_row_seals WHERE table_name = :n", n=REASONS
    ) == [(reversed_id,)]
    assert full_verify_ok(fresh_db_url)


@pytest.mark.parametrize(
    ("change", "refusal"),
    [
        ("reversal_reason = 'edited'", "has a reversal_reason its reversal's memo does not give"),
        ("payer = 'someone else'", "differs from what was recorded when it was written"),
    ],
    ids=["reason", "sealed-column"],
)
def test_0024_refuses_a_payment_that_disagrees_with_its_seal_or_memo(
    fresh_db_url: str, change: str, refusal: str
) -> None:
    """Re-sealing must not make an edit look recorded: a payment edited behind the triggers at
    0022, or a reason (unsealed then) its reversal's memo in the hash chain does not give, stops
    the upgrade, naming the row, and the database stays at 0023."""
    reversed_id, _live_id = _reversed_and_live_fees(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0023")
    engine = create_engine(fresh_db_url)
    try:
        with engine.begin() as connection:
            if engine.dialect.name == "postgresql":
                connection.execute(text("SET LOCAL session_replication_role = replica"))
            else:
                row_seals.uninstall(connection, [migration("0024").PAYMENTS_BEFORE])
            connection.execute(
                text(f"UPDATE payments SET {change} WHERE id = :id"), {"id": reversed_id}
            )
    finally:
        engine.dispose()
    with pytest.raises(RuntimeError, match=f"payments row {reversed_id}.*{refusal}"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0023"
    assert "postmarked_on" not in _columns(fresh_db_url)  # nothing of 0024 was left behind
