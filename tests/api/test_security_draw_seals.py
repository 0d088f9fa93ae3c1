"""Draws on securities are sealed registry rows, and a security's drawn total is its draws'
(SQLite and PostgreSQL).

A draw made through the API is sealed; the database refuses an UPDATE or DELETE of a draw, a
draw typed in with SQL that its transaction did not draw, and a security whose ``drawn_cents``
or ``drawn_on`` disagrees with its draws, so what a security shows as drawn and as left to draw
(``undrawn_cents``) is what was drawn.  An edit of either made behind the triggers makes
``GET /audit/verify`` and ``wetbank audit verify`` fail, naming the table, the row and (for a
tied column) the column; so does a draw rewritten together with its seal, which no longer agrees
with its transaction in the hash chain.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from bank.registry import SEALED_TABLES
from ledger import store
from tests.api.kit import Kit, engine_of, ok, on, sql_rows, verified
from tests.api.set_once_kit import behind_the_triggers
from tests.api.test_audit import run_verify_command
from tests.api.test_money import draw, hold, project_plan

FIRST, SECOND = "2026-07-07", "2026-07-09"
TIED = "drawn_cents and drawn_on are its draws"


def _security(kit: Kit, security_id: str) -> dict[str, Any]:
    with on(SECOND):
        return dict(ok(kit.api.get(f"/securities/{security_id}"), 200))


def _drawn_twice(kit: Kit) -> tuple[str, list[str], str]:
    """A $25,000 security drawn $10,000 then $6,000 (still held), and one never drawn: the
    drawn one's id, its draws' ids, the other's id."""
    lgu = kit.lgu()
    plan = project_plan(kit, lgu)
    drawn, untouched = (ok(hold(kit, plan, token=lgu["token"])) for _ in range(2))
    ok(draw(kit, drawn, FIRST, 1_000_000, token=lgu["token"]))
    ok(draw(kit, drawn, SECOND, 600_000, token=lgu["token"]))
    draws = [
        str(row[0])
        for row in sql_rows(
            kit,
            "SELECT id FROM security_draws WHERE security_id = :s ORDER BY drawn_on",
            s=drawn["id"],
        )
    ]
    return drawn["id"], draws, untouched["id"]


def test_a_draw_made_through_the_api_is_sealed_and_verifies(fresh, fresh_db_url):
    security_id, draws, _untouched = _drawn_twice(fresh)
    sealed = sql_rows(
        fresh, "SELECT row_id FROM ledger_row_seals WHERE table_name = 'security_draws'"
    )
    assert sorted(str(row[0]) for row in sealed) == sorted(draws) and len(draws) == 2
    shown = _security(fresh, security_id)
    assert (shown["status"], shown["drawn_on"]) == ("held", SECOND)
    assert (shown["drawn_cents"], shown["undrawn_cents"]) == (1_600_000, 900_000)
    assert verified(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0


def test_the_database_refuses_editing_deleting_or_typing_in_a_draw(fresh):
    security_id, draws, untouched = _drawn_twice(fresh)
    engine = engine_of(fresh)
    for statement in (
        "UPDATE security_draws SET amount_cents = amount_cents + 100000 WHERE id = :id",
        "UPDATE security_draws SET drawn_on = '2026-07-08' WHERE id = :id",
        "DELETE FROM security_draws WHERE id = :id",
    ):
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(text(statement), {"id": draws[0]})
    # a draw typed in with SQL, on a transaction that did not draw it (another draw's, or on
    # another security), is refused: the security would show more drawn than the ledger did
    copy = (
        "INSERT INTO security_draws (id, security_id, drawn_on, amount_cents, transaction_id, "
        "held_transaction_id, recorded_at) SELECT 'draw_typed', :security, drawn_on, "
        "amount_cents, transaction_id, NULL, recorded_at FROM security_draws WHERE id = :id"
    )
    for security in (security_id, untouched):
        with pytest.raises(DBAPIError, match="is what its transaction drew"):
            with engine.begin() as connection:
                connection.execute(text(copy), {"security": security, "id": draws[0]})
    shown = _security(fresh, security_id)
    assert (shown["drawn_cents"], shown["undrawn_cents"]) == (1_600_000, 900_000)
    assert [d["amount_cents"] for d in shown["draws"]] == [1_000_000, 600_000]
    assert _security(fresh, untouched)["drawn_cents"] is None
    assert verified(fresh)["ok"] is True


@pytest.mark.parametrize(
    ("which", "change"),
    [
        ("drawn", "drawn_cents = drawn_cents - 600000"),
        ("drawn", "drawn_cents = NULL, drawn_on = NULL"),
        ("drawn", "drawn_on = '2026-07-07'"),
        ("untouched", "drawn_cents = 2500000, drawn_on = '2026-07-07'"),
    ],
    ids=["less-drawn", "never-drawn", "earlier-date", "drawn-with-no-draw"],
)
def test_the_database_keeps_a_securitys_drawn_total_its_draws(fresh, which, change):
    """``drawn_cents`` decides what is left to draw and whether a security is still held: a
    value its draws do not give is refused, so the security shows what was drawn."""
    security_id, _draws, untouched = _drawn_twice(fresh)
    row_id = {"drawn": security_id, "untouched": untouched}[which]
    before = _security(fresh, row_id)
    with pytest.raises(DBAPIError, match=TIED), engine_of(fresh).begin() as connection:
        connection.execute(text(f"UPDATE securities SET {change} WHERE id = :id"), {"id": row_id})
    assert _security(fresh, row_id) == before
    assert verified(fresh)["ok"] is True


def test_a_draw_edited_behind_the_triggers_fails_verify(fresh, fresh_db_url):
    _security_id, draws, _untouched = _drawn_twice(fresh)
    statement = "UPDATE security_draws SET amount_cents = {} WHERE id = :id"
    behind_the_triggers(engine_of(fresh), "security_draws", statement.format(1), id=draws[1])
    broken = verified(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "security_draws",
        draws[1],
    )
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1 and draws[1] in command.output, command.output
    behind_the_triggers(engine_of(fresh), "security_draws", statement.format(600_000), id=draws[1])
    assert verified(fresh)["ok"] is True


def test_a_draw_rewritten_with_its_seal_disagrees_with_its_transaction(fresh):
    """Someone who rewrites a draw and its seal alike is not caught by the seal, but the draw
    no longer says what its transaction in the hash chain posted."""
    _security_id, draws, _untouched = _drawn_twice(fresh)
    engine = engine_of(fresh)
    behind_the_triggers(
        engine,
        "security_draws",
        "UPDATE security_draws SET amount_cents = 1 WHERE id = :id",
        id=draws[1],
    )
    (table,) = (t for t in SEALED_TABLES if t.name == "security_draws")
    with engine.connect() as connection:
        content = store.of(connection).ddl.sealed_content(table.columns, "t")
    behind_the_triggers(
        engine,
        "ledger_row_seals",
        f"""UPDATE ledger_row_seals SET content = (SELECT {content} FROM security_draws AS t
        WHERE t.id = :id) WHERE table_name = 'security_draws' AND row_id = :id""",
        id=draws[1],
    )
    broken = verified(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "security_draws",
        draws[1],
    )
    assert broken["detail"] == (
        f"security_draws row {draws[1]}: its amount_cents is not what its transaction posted"
    )


@pytest.mark.parametrize(
    ("which", "change", "column", "given_by"),
    [
        ("drawn", "drawn_cents = drawn_cents - 600000", "drawn_cents", "the sum of its draws"),
        ("drawn", "drawn_on = '2026-07-08'", "drawn_on", "the date of its latest draw"),
        ("untouched", "drawn_cents = 2500000", "drawn_cents", "the sum of its draws"),
    ],
    ids=["total", "date", "no-draw"],
)
def test_a_securitys_drawn_total_edited_behind_the_triggers_fails_verify(
    fresh, fresh_db_url, which, change, column, given_by
):
    security_id, _draws, untouched = _drawn_twice(fresh)
    row_id = {"drawn": security_id, "untouched": untouched}[which]
    (was,) = sql_rows(
        fresh, "SELECT drawn_on, drawn_cents FROM securities WHERE id = :id", id=row_id
    )
    statement = f"UPDATE securities SET {change} WHERE id = :id"
    behind_the_triggers(engine_of(fresh), "securities", statement, id=row_id)
    broken = verified(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "securities",
        row_id,
    )
    assert broken["detail"].startswith(f"securities row {row_id}: its {column} is not {given_by}")
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1 and row_id in command.output, command.output
    behind_the_triggers(
        engine_of(fresh),
        "securities",
        "UPDATE securities SET drawn_on = :on, drawn_cents = :cents WHERE id = :id",
        on=was[0],
        cents=was[1],
        id=row_id,
    )
    assert verified(fresh)["ok"] is True
