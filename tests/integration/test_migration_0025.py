"""Migration 0025 on both databases: a payment's compensation transaction, a withdrawal's reversal
transaction and a security's release become set-once sealed columns.  Existing rows are sealed
only after checking them against their seals and the hash chain (a row that disagrees stops the
upgrade, naming it, and nothing changes); down to 0024 the new seals go and the rows verify as
0024 sealed them; up again they are sealed once more and the registry verifies."""

from __future__ import annotations

import pytest
from alembic import command
from click.testing import CliRunner
from sqlalchemy import create_engine, text
from sqlalchemy.exc import DBAPIError

from api.cli import main
from api.schema_check import alembic_config
from ledger import row_seals
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit
from tests.api.set_once_kit import SetOnce, behind_the_triggers, set_once_bank
from tests.integration.migration_kit import app_on, full_verify_ok, migration, mismatch, version

#: the seals 0025 adds, by their ``table_name``, and the ``SetOnce`` row each is written for
NEW_SEALS = {
    row_seals.once_seal_name("payments", "compensation_transaction_id"): "refunded",
    row_seals.once_seal_name("withdrawals", "reversal_transaction_id"): "reversed_withdrawal",
    row_seals.once_seal_name("securities", "released_on"): "released",
    row_seals.once_seal_name("securities", "release_reason"): "released",
}


def _bank(url: str) -> SetOnce:
    app = app_on(url)
    try:
        ids = set_once_bank(Kit(Api(app.test_client(), make_token(app, "board")), app))
        seal_all(app.extensions["wetbank.db"])
        return ids
    finally:
        app.extensions["wetbank.db"].dispose()


def _new_seals(url: str) -> dict[str, list[str]]:
    engine = create_engine(url)
    try:
        with engine.connect() as connection:
            return {
                name: [
                    str(row[0])
                    for row in connection.execute(
                        text("SELECT row_id FROM ledger_row_seals WHERE table_name = :n"),
                        {"n": name},
                    )
                ]
                for name in NEW_SEALS
            }
    finally:
        engine.dispose()


def test_0025_seals_the_set_once_values_down_and_up_and_they_verify(fresh_db_url: str) -> None:
    revision = migration("0025")
    ids = _bank(fresh_db_url)
    sealed = {name: [getattr(ids, row)] for name, row in NEW_SEALS.items()}
    assert _new_seals(fresh_db_url) == sealed
    assert full_verify_ok(fresh_db_url)

    command.downgrade(alembic_config(fresh_db_url), "0024")
    assert _new_seals(fresh_db_url) == {name: [] for name in NEW_SEALS}
    before = [was for was, _now in revision.RESEALED]
    assert mismatch(fresh_db_url, before) is None  # sealed as 0024 left them

    upgraded = CliRunner().invoke(main, ["db", "upgrade"], env={"DATABASE_URL": fresh_db_url})
    assert upgraded.exit_code == 0, upgraded.output
    assert _new_seals(fresh_db_url) == sealed
    assert full_verify_ok(fresh_db_url)
    # the guards of 0018 and 0019 still refuse a change of a link in their own words
    engine = create_engine(fresh_db_url)
    try:
        for statement, row_id in (
            ("UPDATE payments SET compensation_transaction_id = NULL WHERE id = :id", ids.refunded),
            (
                "UPDATE withdrawals SET reversal_transaction_id = NULL WHERE id = :id",
                ids.reversed_withdrawal,
            ),
        ):
            with pytest.raises(DBAPIError, match="is set once"), engine.begin() as connection:
                connection.execute(text(statement), {"id": row_id})
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(
                text("UPDATE securities SET release_reason = 'x' WHERE id = :id"),
                {"id": ids.released},
            )
    finally:
        engine.dispose()


CHAIN = "that is not the transaction reversing its own"
RELEASE = "that is not its release transaction's effective date and memo"


@pytest.mark.parametrize(
    ("table", "row", "change", "refusal"),
    [
        ("payments", "refunded", "compensation_transaction_id = NULL", CHAIN),
        ("payments", "live_payment", "compensation_transaction_id = transaction_id", CHAIN),
        ("withdrawals", "reversed_withdrawal", "reversal_transaction_id = NULL", CHAIN),
        ("securities", "released", "released_on = '2026-07-01'", RELEASE),
        ("securities", "released", "release_reason = 'expired'", RELEASE),
        (
            "securities",
            "held",
            "released_on = '2026-07-08', "
            "release_reason = 'the rest was released when it was drawn in part'",
            RELEASE,
        ),
        ("securities", "held", "issuer = 'Other Bank'", "differs from what was recorded"),
    ],
    ids=[
        "compensation-cleared",
        "compensation-given",
        "reversal-cleared",
        "release-date",
        "release-reason",
        "release-given-as-legacy",
        "sealed-column",
    ],
)
def test_0025_refuses_a_row_that_disagrees_with_its_seal_or_the_chain(
    fresh_db_url: str, table: str, row: str, change: str, refusal: str
) -> None:
    """Sealing must not make an edit look recorded: a link or release edited behind the
    triggers at 0024 (where no seal covered it), which the hash chain does not give, or a row
    edited against its seal, stops the upgrade naming the row, and the database stays at 0024
    with none of the new seals."""
    ids = _bank(fresh_db_url)
    config = alembic_config(fresh_db_url)
    command.downgrade(config, "0024")
    row_id = getattr(ids, row)
    engine = create_engine(fresh_db_url)
    try:
        behind_the_triggers(engine, table, f"UPDATE {table} SET {change} WHERE id = :id", id=row_id)
    finally:
        engine.dispose()
    with pytest.raises(RuntimeError, match=f"{table} row {row_id}.*{refusal}"):
        command.upgrade(config, "head")
    assert version(fresh_db_url) == "0024"
    assert _new_seals(fresh_db_url) == {name: [] for name in NEW_SEALS}
