"""The check since a checkpoint weighs the ties (``bank.registry.TIES``) on what was written
since (docs/reliability.md, "A registry row written after the last full pass's checkpoint";
SQLite and PostgreSQL).

``GET /audit/verify`` on a long chain with a checkpoint checks what was written since it: every
seal written since against its row, and each tie on the rows those seals belong to (a payment,
security or draw written since; a payment refunded, returned or reversed since; a security
released since) or name (a security drawn on since).  A row written since and rewritten with its
seals alike, so that only the hash chain still disagrees, is named as the full pass names it.  A
row sealed before the checkpoint whose seal is rewritten in place (its position kept) is left to
the full pass.  The check reads the tied rows through the keys of the seals written since: its
plan scans none of the tied tables, nor the seals.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import text

from bank import audit as bank_audit
from bank.registry import SEALED_TABLES
from ledger import store
from tests.api.kit import Kit, engine_of, ok, on, sql_rows, statements_sent, verified
from tests.api.set_once_kit import behind_the_triggers
from tests.api.test_amount_ties import PAYMENT, SECURITY
from tests.api.test_audit import run_verify_command
from tests.api.test_ledger_ties import (
    DRAWN,
    PAID,
    RELEASED_ON,
    STATUS,
    acts,
    rewritten,
)
from tests.api.test_money import approved, draw, hold, pay, project_plan

#: the days of the rows before the checkpoint (before ``acts``'s)
BEFORE = "2026-06-02"
DRAWN_TOTAL = "the sum of its draws' amounts"
DRAW_POSTED = "what its transaction posted"
DRAW_DATE = "its transaction's effective date"


@pytest.fixture
def since(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every chain counts as long: ``GET /audit/verify`` checks since the checkpoint."""
    monkeypatch.setattr(bank_audit, "FULL_PASS_BELOW", 0)


def checkpointed(kit: Kit, fees: int = 1) -> dict[str, Any]:
    """A security held and ``fees`` processing fees paid, then the full pass that records the
    checkpoint: the rows before it (``security``, ``fees``)."""
    lgu = kit.lgu()
    security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    plan = approved(kit, lgu, BEFORE)
    paid = [
        ok(pay(kit.api, "processing_fee", 2_500 + n, BEFORE, plan_id=plan["id"]))
        for n in range(fees)
    ]
    first = verified(kit)
    assert (first["ok"], first["mode"]) == (True, "full"), first
    return {"security": security, "fees": paid, "plan_id": plan["id"]}


def since_check(kit: Kit) -> dict[str, Any]:
    report = verified(kit)
    assert report["mode"] == "since_checkpoint", report
    return report


def named(report: dict[str, Any], table: str, row_id: str, column: str, given_by: str) -> None:
    assert report["ok"] is False, report
    broken = report["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        table,
        row_id,
    )
    assert broken["detail"] == f"{table} row {row_id}: its {column} is not {given_by}"


def first_draw(kit: Kit, security_id: str) -> str:
    ((draw_id,),) = sql_rows(
        kit,
        "SELECT id FROM security_draws WHERE security_id = :s ORDER BY transaction_id LIMIT 1",
        s=security_id,
    )
    return str(draw_id)


def test_what_was_written_since_the_checkpoint_verifies(fresh, fresh_db_url, since):
    """Refunds, returns, a reversal, releases and draws since the checkpoint, and a security
    held before it drawn on since: the check since it says ok, as the full pass does."""
    before = checkpointed(fresh)
    acts(fresh)
    ok(draw(fresh, before["security"], DRAWN, 700_000))
    with on(PAID):
        ok(fresh.api.post(f"/payments/{before['fees'][0]['id']}/refund"))
    report = since_check(fresh)
    assert report["ok"] is True, report
    assert run_verify_command(fresh_db_url).exit_code == 0


#: (case id, table, the ``Acts`` row, the SET clause, the column named, what gives it)
REWRITES = [
    ("payment-amount", "payments", "live", "amount_cents = amount_cents + 1", "amount_cents"),
    ("payment-status", "payments", "refunded", "status = 'returned'", "status"),
    ("security-amount", "securities", "untouched", "amount_cents = amount_cents - 1", ""),
    ("security-release", "securities", "released", "released_on = '2026-07-10'", "released_on"),
    ("draw-amount", "security_draws", "held", "amount_cents = amount_cents + 1", "amount_cents"),
    ("draw-date", "security_draws", "held", "drawn_on = '2026-07-10'", "drawn_on"),
]
GIVEN_BY = {
    ("payments", "amount_cents"): PAYMENT,
    ("payments", "status"): STATUS,
    ("securities", "amount_cents"): SECURITY,
    ("securities", "released_on"): RELEASED_ON,
    ("security_draws", "amount_cents"): DRAW_POSTED,
    ("security_draws", "drawn_on"): DRAW_DATE,
}


@pytest.mark.parametrize(
    ("table", "row", "change", "column"),
    [r[1:] for r in REWRITES],
    ids=[r[0] for r in REWRITES],
)
def test_a_row_written_since_and_rewritten_with_its_seals_is_named_by_the_check_since(
    fresh, since, table, row, change, column
):
    """A payment, security or draw written after the checkpoint, rewritten behind the triggers
    with its seals written again to agree: its seals are newer than the checkpoint, so the check
    since it weighs the row's ties and names the row and the column."""
    checkpointed(fresh)
    ids = acts(fresh)
    assert since_check(fresh)["ok"] is True
    column = column or change.split(" =")[0]
    row_id = getattr(ids, row)
    if table == "security_draws":
        row_id = first_draw(fresh, row_id)
    rewritten(fresh, table, row_id, change)
    named(since_check(fresh), table, row_id, column, GIVEN_BY[(table, column)])


def test_a_security_held_before_and_drawn_on_since_is_weighed_with_its_draws(fresh, since):
    """A security's drawn total is state, sealed nowhere: held before the checkpoint and drawn
    on after it, its total edited behind the triggers is named, found through its draw's
    seal."""
    before = checkpointed(fresh)
    security = before["security"]
    ok(draw(fresh, security, DRAWN, 700_000))
    assert since_check(fresh)["ok"] is True
    behind_the_triggers(
        engine_of(fresh),
        "securities",
        "UPDATE securities SET drawn_cents = drawn_cents - 1 WHERE id = :id",
        id=security["id"],
    )
    named(since_check(fresh), "securities", security["id"], "drawn_cents", DRAWN_TOTAL)


@pytest.mark.parametrize("rewritten_first", [True, False], ids=["then drawn", "once drawn"])
def test_a_security_reached_through_a_draw_since_is_weighed_on_every_tie(
    fresh, fresh_db_url, since, rewritten_first
):
    """A security held before the checkpoint, its amount rewritten with its seal, and drawn on
    since (before or after the rewrite): the draw's seal reaches the security for each of its
    ties, so the check since names its amount, as the full pass does, not one of its draws."""
    security = checkpointed(fresh)["security"]
    change = "amount_cents = amount_cents + 100000"
    if rewritten_first:
        rewritten_in_place(fresh, "securities", security["id"], change)
    ok(draw(fresh, security, DRAWN, 700_000))
    if not rewritten_first:
        rewritten_in_place(fresh, "securities", security["id"], change)
    named(since_check(fresh), "securities", security["id"], "amount_cents", SECURITY)
    full = run_verify_command(fresh_db_url)
    assert full.exit_code == 1 and security["id"] in full.output, full.output


def test_a_payment_paid_before_and_refunded_since_is_weighed_with_its_compensation(fresh, since):
    """A payment's status is state: paid before the checkpoint and refunded after it, its
    status edited behind the triggers is named, found through its compensation's seal."""
    fee = checkpointed(fresh)["fees"][0]
    with on(PAID):
        ok(fresh.api.post(f"/payments/{fee['id']}/refund"))
    assert since_check(fresh)["ok"] is True
    behind_the_triggers(
        engine_of(fresh),
        "payments",
        "UPDATE payments SET status = 'returned' WHERE id = :id",
        id=fee["id"],
    )
    named(since_check(fresh), "payments", fee["id"], "status", STATUS)


def rewritten_in_place(kit: Kit, table_name: str, row_id: str, change: str) -> None:
    """``UPDATE table SET change`` on one row with every trigger off, and its seal's content
    written again in place (its position kept), as someone with database access could."""
    engine = engine_of(kit)
    behind_the_triggers(
        engine, table_name, f"UPDATE {table_name} SET {change} WHERE id = :id", id=row_id
    )
    (table,) = (t for t in SEALED_TABLES if t.name == table_name)
    with engine.connect() as connection:
        ddl = store.of(connection).ddl
        content = ddl.sealed_content(table.columns, "t")
    with engine.begin() as connection:
        for statement in ddl.in_utc:
            connection.execute(text(statement))
        if engine.dialect.name == "postgresql":
            connection.execute(text("SET LOCAL session_replication_role = replica"))
        else:
            for statement in ddl.unguard_seals:
                connection.execute(text(statement))
        connection.execute(
            text(
                f"UPDATE ledger_row_seals SET content = (SELECT {content} FROM {table_name} AS t "
                "WHERE t.id = :id) WHERE table_name = :table AND row_id = :id"
            ),
            {"id": row_id, "table": table_name},
        )
        if engine.dialect.name != "postgresql":
            for statement in ddl.seal_functions:
                connection.execute(text(statement))


def test_a_row_sealed_before_the_checkpoint_is_left_to_the_full_pass_unless_resealed_since(
    fresh, fresh_db_url, since
):
    """A payment paid before the checkpoint, its amount rewritten after it with its seal
    rewritten in place: no seal is newer than the checkpoint, so the check since it says ok and
    the full pass names the payment.  Its seal deleted and written again, as ``rewritten``
    does, after a seal written since (SQLite numbers a row past the largest rowid left, which
    the deleted seal's own may have been), is newer than the checkpoint: the check since it
    names the payment."""
    before = checkpointed(fresh)
    fee, plan_id = before["fees"][0], before["plan_id"]
    ok(pay(fresh.api, "processing_fee", 3_000, PAID, plan_id=plan_id))
    rewritten_in_place(fresh, "payments", fee["id"], "amount_cents = amount_cents + 1")
    assert since_check(fresh)["ok"] is True  # by design: the checkpoint vouches for the row
    full = run_verify_command(fresh_db_url)
    assert full.exit_code == 1 and fee["id"] in full.output, full.output
    assert "its amount_cents is not" in full.output, full.output
    rewritten(fresh, "payments", fee["id"], "amount_cents = amount_cents + 1")
    named(since_check(fresh), "payments", fee["id"], "amount_cents", PAYMENT)


@contextmanager
def seal_statements(kit: Kit) -> Iterator[list[tuple[str, Any]]]:
    """The statements that read the seals written since the checkpoint, with their
    parameters."""
    with statements_sent(engine_of(kit)) as sent:
        yield sent
    sent[:] = [(statement, given) for statement, given in sent if "sealed_since" in statement]


def plan_of(kit: Kit, statement: str, parameters: Any) -> str:
    """The plan the database would run ``statement`` with were its tables large (PostgreSQL:
    with sequential scans off, which it otherwise takes on tables this small)."""
    engine = engine_of(kit)
    raw = engine.raw_connection()
    try:
        cursor = raw.cursor()
        if engine.dialect.name == "postgresql":
            cursor.execute("SET enable_seqscan = off")
            cursor.execute("EXPLAIN (COSTS OFF) " + statement, parameters)
            return "\n".join(str(row[0]) for row in cursor.fetchall())
        cursor.execute("EXPLAIN QUERY PLAN " + statement, parameters)
        return "\n".join(str(row[-1]) for row in cursor.fetchall())
    finally:
        raw.rollback()
        raw.close()


#: the tables the check would read whole were it to scan them
READ_BY_KEY = ("payments", "securities", "security_draws", "withdrawals", "ledger_row_seals")


def reads(statement: str, plan: str, table: str, postgresql: bool) -> list[str]:
    """How ``plan`` reads ``table``: each scan of it, with the condition its index is searched
    by (none: the whole table, or the whole index).  SQLite names a table by its alias in
    ``statement``."""
    lines = plan.splitlines()
    found = []
    if postgresql:
        heading = re.compile(
            rf"(Seq Scan|Index (Only )?Scan using \S+|Bitmap Heap Scan) on {table}\b"
        )
        for n, line in enumerate(lines):
            scan = heading.search(line)
            if scan is None:
                continue
            depth = len(line) - len(line.lstrip())
            conditions = []
            for detail in lines[n + 1 :]:
                inner = detail.lstrip().startswith(("->", "SubPlan", "InitPlan"))
                if len(detail) - len(detail.lstrip()) <= depth or inner:
                    break  # the node's own lines end where another node's start
                if "Index Cond:" in detail or "Recheck Cond:" in detail:
                    conditions.append(detail.strip())
            found.append(f"{scan.group(1)} {conditions}")
        return found
    aliases = {table, *re.findall(rf"\b{table} AS (\w+)", statement)}
    for line in lines:
        words = line.split()
        if len(words) > 1 and words[0] in ("SCAN", "SEARCH") and words[1] in aliases:
            found.append(line)
    return found


def by_key(read: str) -> bool:
    """Whether a scan ``reads`` describes searches an index by a condition."""
    return ("Cond:" in read) or (read.startswith("SEARCH") and "(" in read)


def by_position(read: str) -> bool:
    """Whether a scan of the seals searches them by their position."""
    return "position" in read or "rowid>" in read


def test_the_check_since_reads_only_the_rows_sealed_since(fresh, since):
    """Forty fees before the checkpoint, one after and a draw: one statement a tie, and one a
    sealed table's seals, each reading the seals written since by their position and the rows
    they reach by key, never a tied or sealed table or the seals end to end, whatever they
    hold."""
    before = checkpointed(fresh, fees=40)
    ok(draw(fresh, before["security"], DRAWN, 700_000))
    ok(pay(fresh.api, "processing_fee", 2_500, PAID, plan_id=before["plan_id"]))
    with seal_statements(fresh) as sent:
        assert since_check(fresh)["ok"] is True
    ties = [(s, p) for s, p in sent if "SELECT u.row_id" in s]
    assert len(ties) == len(bank_audit.TIES)
    assert len(sent) == len(ties) + sum(1 + len(t.set_once) for t in SEALED_TABLES)
    postgresql = engine_of(fresh).dialect.name == "postgresql"
    for statement, parameters in sent:
        plan = plan_of(fresh, statement, parameters)
        for table in READ_BY_KEY:
            for read in reads(statement, plan, table, postgresql):
                assert by_key(read), (table, read, plan)
        seals = reads(statement, plan, "ledger_row_seals", postgresql)
        assert seals and all(by_position(read) for read in seals), (seals, plan)
