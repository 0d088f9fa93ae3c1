"""A plan's notices are sealed registry rows, and a copy mailed is of its own plan's request and
notice (SQLite and PostgreSQL).

The notices a plan mailed (Subd. 6, 7: when, of what kind, as what document), the people each
was mailed to, the members of the public who asked for a copy and the copies mailed to them are
its legal record.  Recorded through the API they are sealed and verify; the database refuses an
UPDATE or DELETE of any of them (a notice recorded before documents were kept keeps none), and
an edit made behind the triggers makes ``GET /audit/verify`` and ``wetbank audit verify`` fail,
naming the table and the row.  A copy mailed typed in with SQL naming another plan's notice or
copy request is refused, so the plan's listing never meets one.
"""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import DBAPIError

from tests.api.kit import Kit, engine_of, ok, on, sql_rows, verified
from tests.api.set_once_kit import behind_the_triggers
from tests.api.test_audit import run_verify_command
from tests.api.test_copies_mailed import mail_copy, owing
from tests.api.test_notice_list import document_not_kept

TABLES = ("plan_copy_requests", "plan_notices", "plan_notice_recipients", "plan_copies_mailed")
#: the day the copy was mailed, and the day the world is looked at
COPIED, SEEN = "2026-06-24", "2026-06-26"


def noticed(kit: Kit) -> dict[str, Any]:
    """A plan whose notice of application was mailed 06-22 (``owing``), three members of the
    public who asked, and a copy of the notice mailed 06-24 to the one it was owed: the ids of
    the plan, the notice, its first recipient, the requests and the copy."""
    lgu = kit.lgu()
    world = owing(kit, lgu)
    plan, sent, asked = world["plan"], world["notice"], world["owed"]
    body = {"notice_id": sent["id"], "mailed_on": COPIED}
    ok(mail_copy(kit, plan, asked["id"], body, lgu["token"], "2026-06-25"))
    recipient = sql_rows(
        kit,
        "SELECT id FROM plan_notice_recipients WHERE notice_id = :n ORDER BY position",
        n=sent["id"],
    )[0][0]
    copy = sql_rows(kit, "SELECT id FROM plan_copies_mailed WHERE notice_id = :n", n=sent["id"])
    return {
        "plan": plan["id"],
        "notice": sent["id"],
        "recipient": str(recipient),
        "request": asked["id"],
        "after": world["after"]["id"],
        "copy": str(copy[0][0]),
        "lgu": lgu,
    }


def _shown(kit: Kit, plan_id: str) -> dict[str, Any]:
    """The plan's notices and copy requests as the API shows them."""
    with on(SEEN):
        listed = ok(kit.api.get(f"/plans/{plan_id}/notices"), 200)["items"]
        return {"notices": listed, "copy_requests": kit.get_plan(plan_id)["copy_requests"]}


def test_notices_requests_and_copies_recorded_through_the_api_are_sealed_and_verify(
    fresh, fresh_db_url
):
    ids = noticed(fresh)
    for table in TABLES:
        stored = sql_rows(fresh, f"SELECT id FROM {table} ORDER BY id")
        sealed = sql_rows(
            fresh,
            "SELECT row_id FROM ledger_row_seals WHERE table_name = :t ORDER BY row_id",
            t=table,
        )
        assert stored and [str(r[0]) for r in sealed] == [str(r[0]) for r in stored], table
    shown = _shown(fresh, ids["plan"])
    (copied,) = (c for c in shown["copy_requests"] if c["id"] == ids["request"])
    assert [(c["notice_id"], c["mailed_on"]) for c in copied["copies_mailed"]] == [
        (ids["notice"], COPIED)
    ]
    assert [n["document_kept"] for n in shown["notices"]] == [True]
    assert verified(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0


#: each change the database refuses: the statement, and which row (``noticed``'s id) it names
REFUSED = (
    ("UPDATE plan_notices SET mailed_on = '2026-06-20' WHERE id = :id", "notice"),
    ("UPDATE plan_notices SET document = NULL WHERE id = :id", "notice"),
    ("UPDATE plan_notices SET kind = 'summary' WHERE id = :id", "notice"),
    ("DELETE FROM plan_notices WHERE id = :id", "notice"),
    ("UPDATE plan_notice_recipients SET name = 'Someone Else' WHERE id = :id", "recipient"),
    ("DELETE FROM plan_notice_recipients WHERE id = :id", "recipient"),
    ("UPDATE plan_copy_requests SET requested_on = '2026-06-23' WHERE id = :id", "request"),
    ("DELETE FROM plan_copy_requests WHERE id = :id", "after"),
    ("UPDATE plan_copies_mailed SET mailed_on = '2026-06-25' WHERE id = :id", "copy"),
    ("DELETE FROM plan_copies_mailed WHERE id = :id", "copy"),
)


def test_the_database_refuses_changing_or_deleting_a_notice_a_recipient_a_request_or_a_copy(
    fresh,
):
    ids = noticed(fresh)
    before = _shown(fresh, ids["plan"])
    engine = engine_of(fresh)
    for statement, which in REFUSED:
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(text(statement), {"id": ids[which]})
    assert _shown(fresh, ids["plan"]) == before
    assert verified(fresh)["ok"] is True


def test_a_notice_recorded_before_documents_were_kept_verifies_and_is_given_none(fresh):
    """Sealed without a document (as migration 0030 seals one stored before 0017): it
    verifies, and a document typed in afterwards, which would print as what was mailed, is
    refused."""
    ids = noticed(fresh)
    document_not_kept(fresh.app, ids["notice"])
    assert verified(fresh)["ok"] is True
    forged = "UPDATE plan_notices SET document = :doc WHERE id = :id"
    with pytest.raises(DBAPIError, match="immutable"), engine_of(fresh).begin() as connection:
        connection.execute(text(forged), {"doc": '{"title": "forged"}', "id": ids["notice"]})
    assert [n["document_kept"] for n in _shown(fresh, ids["plan"])["notices"]] == [False]


@pytest.mark.parametrize(
    ("table", "column", "value", "which"),
    [
        ("plan_notices", "mailed_on", "2026-06-20", "notice"),
        ("plan_notices", "document", None, "notice"),
        ("plan_notice_recipients", "address", "1 Other St, Elsewhere, MN", "recipient"),
        ("plan_copy_requests", "requested_on", "2026-06-23", "request"),
        ("plan_copies_mailed", "mailed_on", "2026-06-25", "copy"),
    ],
    ids=["notice-date", "notice-document", "recipient", "request-date", "copy-date"],
)
def test_an_edit_behind_the_triggers_fails_verify_naming_the_row(
    fresh, fresh_db_url, table, column, value, which
):
    ids = noticed(fresh)
    row_id = ids[which]
    ((was,),) = sql_rows(fresh, f"SELECT {column} FROM {table} WHERE id = :id", id=row_id)
    statement = f"UPDATE {table} SET {column} = :value WHERE id = :id"
    behind_the_triggers(engine_of(fresh), table, statement, value=value, id=row_id)
    broken = verified(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert broken["detail"] == (
        f"{table} row {row_id} differs from what was recorded when it was written"
    )
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1, command.output
    assert table in command.output and row_id in command.output
    behind_the_triggers(engine_of(fresh), table, statement, value=was, id=row_id)
    assert verified(fresh)["ok"] is True


@pytest.mark.parametrize(
    ("other", "key"),
    [
        ("notice", "fk_plan_copies_mailed_notice_id_plan_notices"),
        ("request", "fk_plan_copies_mailed_copy_request_id_plan_copy_requests"),
    ],
)
def test_a_copy_mailed_of_another_plans_notice_or_request_is_refused(fresh, other, key):
    """Typed in with SQL, a copy of plan A's request naming plan B's notice (or of B's request
    naming A's notice) is refused by the database; the plan still lists as before."""
    mine, theirs = noticed(fresh), noticed(fresh)
    names = {
        "notice": (mine["request"], theirs["notice"]),
        "request": (theirs["request"], mine["notice"]),
    }[other]
    before = _shown(fresh, mine["plan"])
    typed = (
        "INSERT INTO plan_copies_mailed (id, plan_id, copy_request_id, notice_id, mailed_on, "
        "recorded_at) SELECT 'cpy_typed', :plan, :request, :notice, mailed_on, recorded_at "
        "FROM plan_copies_mailed WHERE id = :copy"
    )
    with pytest.raises(DBAPIError, match=key), engine_of(fresh).begin() as connection:
        connection.execute(
            text(typed),
            {"plan": mine["plan"], "request": names[0], "notice": names[1], "copy": mine["copy"]},
        )
    assert sql_rows(fresh, "SELECT id FROM plan_copies_mailed WHERE id = 'cpy_typed'") == []
    assert _shown(fresh, mine["plan"]) == before
    assert verified(fresh)["ok"] is True
