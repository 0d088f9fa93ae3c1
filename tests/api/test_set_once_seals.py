"""The registry's set-once columns (SQLite and PostgreSQL): a payment's compensation transaction,
a withdrawal's reversal transaction and a security's release are sealed when the bank sets them,
so an edit made behind the triggers (changed, cleared, or given to a row the bank never set it
on) makes ``GET /audit/verify`` and ``wetbank audit verify`` fail naming the table, the row and
the column; the acts that set them verify, and the database refuses changing them once set."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from ledger import row_seals
from tests.api.kit import Kit, ok, on
from tests.api.set_once_kit import SetOnce, behind_the_triggers, set_once_bank
from tests.api.test_audit import run_verify_command


def _rows(app: Flask, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    with app.extensions["wetbank.db"].engine.connect() as connection:
        return [tuple(row) for row in connection.execute(text(sql), params)]


def _verify(kit: Kit) -> dict[str, Any]:
    return dict(ok(kit.api.get("/audit/verify"), 200))


#: (table, column): the rows of ``SetOnce`` that have it set, and that have not
SET_ONCE = {
    ("payments", "compensation_transaction_id"): ("refunded", "live_payment"),
    ("withdrawals", "reversal_transaction_id"): ("reversed_withdrawal", "standing_withdrawal"),
    ("securities", "released_on"): ("released", "held"),
    ("securities", "release_reason"): ("released", "held"),
}


def test_the_acts_that_set_them_seal_each_value_once_and_verify(fresh, fresh_db_url):
    """A refund, a reversal on appeal, a draw and a release: each set-once value has its seal,
    the rows left unset have none, and the registry verifies, by both the API and the command
    (a draw moves ``drawn_on`` and ``drawn_cents``, state its sealed draws give)."""
    ids = set_once_bank(fresh)
    for (table, column), (set_row, unset_row) in SET_ONCE.items():
        value = _rows(
            fresh.app, f"SELECT {column} FROM {table} WHERE id = :id", id=getattr(ids, set_row)
        )
        assert value[0][0] is not None, (table, column)
        sealed = _rows(
            fresh.app,
            "SELECT row_id FROM ledger_row_seals WHERE table_name = :name",
            name=row_seals.once_seal_name(table, column),
        )
        assert sealed == [(getattr(ids, set_row),)], (table, column)
        assert getattr(ids, unset_row) not in {row[0] for row in sealed}
    assert _rows(
        fresh.app, "SELECT drawn_cents FROM securities WHERE id = :id", id=ids.released
    ) == [(1_000_000,)]
    assert _verify(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0


#: (case id, table, the ``SetOnce`` row, the SET clause an attacker runs)
EDITS = [
    (
        "compensation-edited",
        "payments",
        "refunded",
        "compensation_transaction_id = transaction_id",
    ),
    ("compensation-cleared", "payments", "refunded", "compensation_transaction_id = NULL"),
    (
        "compensation-given-behind",
        "payments",
        "live_payment",
        "compensation_transaction_id = (SELECT max(id) FROM ledger_transactions)",
    ),
    (
        "reversal-edited",
        "withdrawals",
        "reversed_withdrawal",
        "reversal_transaction_id = transaction_id",
    ),
    ("reversal-cleared", "withdrawals", "reversed_withdrawal", "reversal_transaction_id = NULL"),
    (
        "reversal-given-behind",
        "withdrawals",
        "standing_withdrawal",
        "reversal_transaction_id = (SELECT max(id) FROM ledger_transactions)",
    ),
    ("release-date-edited", "securities", "released", "released_on = '2026-07-01'"),
    ("release-date-cleared", "securities", "released", "released_on = NULL"),
    ("release-reason-edited", "securities", "released", "release_reason = 'expired'"),
    ("release-given-behind", "securities", "held", "released_on = '2026-07-08'"),
]


@pytest.mark.parametrize(
    ("table", "row", "change"), [e[1:] for e in EDITS], ids=[e[0] for e in EDITS]
)
def test_a_set_once_column_edited_behind_the_triggers_fails_verify(
    fresh, fresh_db_url, table, row, change
):
    ids: SetOnce = set_once_bank(fresh)
    assert _verify(fresh)["ok"] is True
    row_id = getattr(ids, row)
    column = change.split(" =")[0]
    (was,) = _rows(fresh.app, f"SELECT {column} FROM {table} WHERE id = :id", id=row_id)[0]
    engine = fresh.app.extensions["wetbank.db"].engine
    where = "WHERE id = :id"
    behind_the_triggers(engine, table, f"UPDATE {table} SET {change} {where}", id=row_id)
    broken = _verify(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert broken["detail"] == (
        f"{table} row {row_id}: its {column} differs from what was recorded when it was set"
    )
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1, command.output
    assert row_id in command.output and column in command.output
    behind_the_triggers(
        engine, table, f"UPDATE {table} SET {column} = :was {where}", id=row_id, was=was
    )
    assert _verify(fresh)["ok"] is True


COMPENSATION_REFUSED = "compensation_transaction_id is set once"
REVERSAL_REFUSED = "reversal_transaction_id is set once"


def test_the_database_refuses_changing_a_set_once_value(fresh):
    """A release is refused any change once made (as a compensation or a reversal link is, by
    0018's and 0019's guards, which still refuse in their own words); the same value again is
    no change (a security's drawn total, which its draws give, is refused any other: 0027)."""
    ids = set_once_bank(fresh)
    engine = fresh.app.extensions["wetbank.db"].engine
    refused = [
        (
            "UPDATE securities SET released_on = '2026-07-09' WHERE id = :id",
            ids.released,
            "immutable",
        ),
        ("UPDATE securities SET released_on = NULL WHERE id = :id", ids.released, "immutable"),
        ("UPDATE securities SET release_reason = 'x' WHERE id = :id", ids.released, "immutable"),
        ("UPDATE securities SET release_reason = NULL WHERE id = :id", ids.released, "immutable"),
        (
            "UPDATE payments SET compensation_transaction_id = NULL WHERE id = :id",
            ids.refunded,
            COMPENSATION_REFUSED,
        ),
        (
            "UPDATE withdrawals SET reversal_transaction_id = NULL WHERE id = :id",
            ids.reversed_withdrawal,
            REVERSAL_REFUSED,
        ),
    ]
    for statement, row_id, refusal in refused:
        with pytest.raises(DBAPIError, match=refusal), engine.begin() as connection:
            connection.execute(text(statement), {"id": row_id})
    with engine.begin() as connection:  # the same value again is no change
        connection.execute(
            text(
                "UPDATE securities SET released_on = released_on, drawn_cents = drawn_cents "
                "WHERE id = :id"
            ),
            {"id": ids.released},
        )
    assert _verify(fresh)["ok"] is True


def test_a_security_is_released_only_by_its_release_transaction(fresh):
    """A seal takes the first value written: a release typed on a security still held (its
    date, its reason, or both) is refused (0026), so the LGU's own release later records its
    own and verifies."""
    ids = set_once_bank(fresh)
    engine = fresh.app.extensions["wetbank.db"].engine
    for change in (
        "released_on = '2026-07-09', release_reason = 'typed at a SQL prompt'",
        "released_on = '2026-07-09'",
        "release_reason = 'the rest was released when it was drawn in part'",
    ):
        with (
            pytest.raises(DBAPIError, match="release is its release transaction"),
            engine.begin() as connection,
        ):
            connection.execute(
                text(f"UPDATE securities SET {change} WHERE id = :id"), {"id": ids.held}
            )
    assert _rows(fresh.app, "SELECT released_on FROM securities WHERE id = :id", id=ids.held) == [
        (None,)
    ]
    with on("2026-07-09"):
        path = f"/securities/{ids.held}/release"
        done = ok(fresh.api.post(path, {"released_on": "2026-07-09", "reason": "replaced"}))
    assert done["status"] == "released"
    assert _verify(fresh)["ok"] is True
