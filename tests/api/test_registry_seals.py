"""The audit covers the registry: who holds what, and what each transaction did (SQLite and
PostgreSQL).

Every sealed registry table refuses an UPDATE of its sealed columns and any DELETE; an edit made
with the triggers bypassed (as someone with database access) makes ``GET /audit/verify`` and
``wetbank audit verify`` fail, naming the table and the row's id.
"""

from __future__ import annotations

import importlib.util
from datetime import date
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

import ledger
from bank.registry import SEALED_TABLES
from ledger import row_seals
from tests.api.kit import Kit, ok, on
from tests.api.set_once_kit import behind_the_triggers, set_once_bank
from tests.api.test_audit import D4, run_verify_command, workload
from tests.api.test_money import FEE, appealed, draw, hold, pay, project_plan, reverse
from tests.api.test_notice_seals import noticed
from tests.api.test_web_payments import processing_fee

#: per table: a sealed column an attacker would change, and the SQL expression that changes it
#: (``:other`` is another row's value of that column where the column names a party)
EDITS: dict[str, tuple[str, str]] = {
    "bank_sites": ("holder_id", ":other"),
    "bank_accounts": ("holder_id", ":other"),
    "credit_classes": ("service_area", "service_area + 1"),
    "lots": ("account_id", ":other"),
    "deposits": ("total_credit_sqft", "total_credit_sqft + 1"),
    # down, not up: a credit above its cap is refused by a CHECK (0016), triggers off or not
    "deposit_actions": ("credit_sqft", "credit_sqft - 1"),
    "deposit_reversals": ("reason", "reason || ' (edited)'"),
    "bank_site_credit_areas": ("area_sqft", "area_sqft * 2"),
    "transfers": ("amount_sqft", "amount_sqft + 46986"),
    "transfer_lots": ("amount_sqft", "amount_sqft + 1"),
    "reservations": ("amount_sqft", "amount_sqft + 1"),
    "reservation_lots": ("amount_sqft", "amount_sqft + 1"),
    "withdrawals": ("withdrawn_sqft", "withdrawn_sqft - 1"),
    "withdrawal_allocations": ("amount_sqft", "amount_sqft - 1"),
    "payments": ("amount_cents", "amount_cents + 1"),
    "securities": ("amount_cents", "amount_cents + 1"),
    "security_draws": ("amount_cents", "amount_cents - 1"),
    "plan_copy_requests": ("address", "address || ' (edited)'"),
    "plan_notices": ("kind", "CASE kind WHEN 'full' THEN 'summary' ELSE 'full' END"),
    "plan_notice_recipients": ("name", "name || ' (edited)'"),
    # a copy moved to another plan
    "plan_copies_mailed": ("plan_id", ":other"),
    "status_changes": ("actor", "actor || ' (edited)'"),
}


def _every_registry_table_filled(kit: Kit) -> None:
    """The audit workload (deposits, a transfer, reservations, a withdrawal, a payment and a
    security), plus a reversed deposit, an account frozen and unfrozen, a draw on a security, and
    a plan's notice with a copy mailed to one who asked; each sealed table then holds at least
    one row."""
    work = workload(kit)
    with on(D4):
        extra = kit.funded_account(day=D4, service_area=5, unrestricted=1_000)
        reverse = {"effective_on": D4, "reason": "entered in error"}
        ok(kit.api.post(f"/deposits/{extra['deposit']['id']}/reverse", reverse))
        kit.account(extra["holder"]["id"], 5)  # an account with no lot
        for act in ("freeze", "unfreeze"):  # its status history
            ok(kit.api.post(f"/accounts/{extra['id']}/{act}"), 200)
    assert work.withdrawal
    lgu = kit.lgu()
    security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    ok(draw(kit, security, "2026-07-07", 1_000_000, token=lgu["token"]))
    noticed(kit)


def _engine(app: Flask) -> Any:
    return app.extensions["wetbank.db"].engine


def _first_row(connection: Connection, table: str, id_column: str) -> tuple[str, Any]:
    column = EDITS[table][0]
    row = connection.execute(
        text(f"SELECT {id_column}, {column} FROM {table} ORDER BY {id_column} LIMIT 1")
    ).one()
    return str(row[0]), row[1]


def _other_value(connection: Connection, table: str, column: str, value: Any) -> Any:
    """Another holder or plan; for a lot, an account holding no lot (a lot's label is unique
    per account)."""
    source = {
        "holder_id": "holders",
        "account_id": "bank_accounts WHERE id NOT IN (SELECT account_id FROM lots) AND",
        "plan_id": "plans",
    }[column]
    where = "" if " WHERE " in source else " WHERE"
    return connection.execute(
        text(f"SELECT id FROM {source}{where} id <> :v ORDER BY id LIMIT 1"), {"v": value}
    ).scalar_one()


def _bypassing_triggers(app: Flask, table: str, statement: str, **params: Any) -> None:
    """Run ``statement`` as someone with database access who turned the triggers off (the
    seals' and the guards')."""
    behind_the_triggers(_engine(app), table, statement, **params)


def _verify(kit: Kit) -> dict[str, Any]:
    return dict(ok(kit.api.get("/audit/verify"), 200))


def test_every_registry_table_edited_behind_the_triggers_fails_verify_naming_it(fresh):
    _every_registry_table_filled(fresh)
    assert _verify(fresh)["ok"] is True
    assert {t.name for t in SEALED_TABLES} == set(EDITS)
    for table in SEALED_TABLES:
        column, change = EDITS[table.name]
        with _engine(fresh.app).connect() as connection:
            row_id, original = _first_row(connection, table.name, table.id_column)
            other = _other_value(connection, table.name, column, original) if ":" in change else 0
        where = f"WHERE {table.id_column} = :id"
        _bypassing_triggers(
            fresh.app,
            table.name,
            f"UPDATE {table.name} SET {column} = {change} {where}",
            id=row_id,
            other=other,
        )
        report = _verify(fresh)
        assert report["ok"] is False, table.name
        broken = report["first_broken"]
        assert (broken["kind"], broken["table"], broken["row_id"]) == (
            "sealed_row_changed",
            table.name,
            row_id,
        )
        assert table.name in broken["detail"] and row_id in broken["detail"]
        _bypassing_triggers(
            fresh.app,
            table.name,
            f"UPDATE {table.name} SET {column} = :was {where}",
            id=row_id,
            was=original,
        )
        assert _verify(fresh)["ok"] is True, table.name


def test_a_registry_row_deleted_or_inserted_behind_the_triggers_fails_verify(fresh):
    _every_registry_table_filled(fresh)
    with _engine(fresh.app).connect() as connection:
        lot_row = (
            connection.execute(text("SELECT * FROM transfer_lots ORDER BY id LIMIT 1"))
            .mappings()
            .one()
        )
    _bypassing_triggers(
        fresh.app, "transfer_lots", "DELETE FROM transfer_lots WHERE id = :id", id=lot_row["id"]
    )
    broken = _verify(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_deleted",
        "transfer_lots",
        str(lot_row["id"]),
    )


def test_the_verify_command_covers_the_registry(fresh, fresh_db_url):
    """``UPDATE transfers SET amount_sqft = ...`` moved credits between holders on paper while
    the command still said ok; now it exits 1 naming the transfer."""
    _every_registry_table_filled(fresh)
    assert run_verify_command(fresh_db_url).exit_code == 0
    with _engine(fresh.app).connect() as connection:
        transfer_id = connection.execute(text("SELECT min(id) FROM transfers")).scalar_one()
    _bypassing_triggers(
        fresh.app,
        "transfers",
        "UPDATE transfers SET amount_sqft = amount_sqft + 46986 WHERE id = :id",
        id=transfer_id,
    )
    broken = run_verify_command(fresh_db_url)
    assert broken.exit_code == 1, broken.output
    assert "transfers" in broken.output and transfer_id in broken.output


def test_a_registry_row_inserted_without_its_seal_fails_verify(fresh):
    _every_registry_table_filled(fresh)
    with _engine(fresh.app).connect() as connection:
        row = dict(
            connection.execute(text("SELECT * FROM transfer_lots ORDER BY id LIMIT 1"))
            .mappings()
            .one()
        )
    row["id"] = 10_000_000
    columns = ", ".join(row)
    values = ", ".join(f":{c}" for c in row)
    _bypassing_triggers(
        fresh.app,
        "transfer_lots",
        f"INSERT INTO transfer_lots ({columns}) VALUES ({values})",
        **row,
    )
    broken = _verify(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_unsealed",
        "transfer_lots",
        "10000000",
    )


def test_the_database_refuses_edits_of_sealed_columns_but_not_of_state(fresh):
    _every_registry_table_filled(fresh)
    engine = _engine(fresh.app)
    for statement in (
        "UPDATE lots SET account_id = (SELECT max(id) FROM bank_accounts)",
        "UPDATE bank_accounts SET holder_id = (SELECT max(id) FROM holders)",
        "UPDATE transfers SET amount_sqft = amount_sqft + 1",
        "DELETE FROM deposit_actions",
        "UPDATE ledger_row_seals SET content = content",
        "DELETE FROM ledger_row_seals",
    ):
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(text(statement))
    with engine.begin() as connection:  # a name is state: it may change
        connection.execute(text("UPDATE bank_sites SET name = name || ' (renamed)'"))
    assert _verify(fresh)["ok"] is True
    with engine.begin() as connection:  # so may a status, but not without its history
        connection.execute(text("UPDATE bank_accounts SET status = 'frozen'"))
    broken = _verify(fresh)["first_broken"]
    assert broken["table"] == "bank_accounts" and "its status is not" in broken["detail"]


def _migration(name: str) -> Any:
    path = Path(__file__).parents[2] / "migrations" / "versions" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"migration_{name}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_migrations_sealed_what_the_registry_declares() -> None:
    """Changing ``bank.registry`` needs a migration: 0007's list, with the payments as 0024
    re-sealed them and the payments, withdrawals and securities as 0025 did, the draws 0027
    sealed, the plans' notices 0030 sealed and the status history 0033 sealed, must be the
    registry's."""
    migrated = _migration("0007_registry").SEALED_TABLES
    resealed = _migration("0024_fee_postmark_and_reason_seal")
    set_once = _migration("0025_set_once_links_and_release_seal")
    changes = [(resealed.PAYMENTS_BEFORE, resealed.PAYMENTS), *set_once.RESEALED]
    for was, now in changes:
        assert was in migrated
        migrated = tuple(now if table == was else table for table in migrated)
    migrated = (*migrated, _migration("0027_security_draws_sealed_and_tied").DRAWS)
    migrated = (*migrated, *_migration("0030_plan_notices_sealed").SEALED)
    migrated = (*migrated, _migration("0033_status_history").SEALED)
    assert migrated == SEALED_TABLES


def _reversed_fee(kit: Kit) -> tuple[str, str]:
    """A filing fee booked on 2026-09-11 and reversed as recorded in error the next day, and a
    live one: their ids."""
    lgu = kit.lgu()
    _plan, wrong = appealed(kit, lgu)
    _plan, right = appealed(kit, lgu)
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=wrong["id"]))
    live = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=right["id"]))
    ok(reverse(kit.api, fee["id"], "2026-09-12"), 201)
    return fee["id"], live["id"]


@pytest.mark.parametrize(
    ("which", "change"),
    [
        ("reversed", "reversal_reason = 'the petitioner asked for it back'"),
        ("reversed", "reversal_reason = NULL"),
        ("live", "reversal_reason = 'never reversed'"),
        ("reversed", "postmarked_on = '2026-09-01'"),
    ],
    ids=["reason-edited", "reason-cleared", "reason-given-behind", "postmark-edited"],
)
def test_a_payments_reversal_reason_or_postmark_edited_behind_the_triggers_fails_verify(
    fresh, fresh_db_url, which, change
):
    """The board's reason for reversing a fee, written after the payment, is sealed when it is
    written, and the fee's postmark with the payment: an edit of either made with the triggers
    off is named by ``GET /audit/verify`` and ``wetbank audit verify``, and undone, verifies."""
    reversed_id, live_id = _reversed_fee(fresh)
    assert _verify(fresh)["ok"] is True
    row_id = {"reversed": reversed_id, "live": live_id}[which]
    column = change.split(" =")[0]
    with _engine(fresh.app).connect() as connection:
        was = connection.execute(
            text(f"SELECT {column} FROM payments WHERE id = :id"), {"id": row_id}
        ).scalar_one()
    where = "WHERE id = :id"
    _bypassing_triggers(fresh.app, "payments", f"UPDATE payments SET {change} {where}", id=row_id)
    broken = _verify(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "payments",
        row_id,
    )
    if column == "reversal_reason":
        assert broken["detail"] == (
            f"payments row {row_id}: its reversal_reason differs from what was recorded when "
            "it was set"
        )
    command = run_verify_command(fresh_db_url)
    assert command.exit_code == 1 and row_id in command.output, command.output
    _bypassing_triggers(
        fresh.app, "payments", f"UPDATE payments SET {column} = :was {where}", id=row_id, was=was
    )
    assert _verify(fresh)["ok"] is True


def test_the_database_refuses_changing_a_reversal_reason_once_set(fresh):
    reversed_id, live_id = _reversed_fee(fresh)
    engine = _engine(fresh.app)
    for statement in (
        "UPDATE payments SET reversal_reason = 'edited' WHERE id = :id",
        "UPDATE payments SET reversal_reason = NULL WHERE id = :id",
        "UPDATE payments SET postmarked_on = NULL WHERE id = :id",
    ):
        with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
            connection.execute(text(statement), {"id": reversed_id})
    with engine.connect() as connection:
        seals = connection.execute(
            text("SELECT row_id FROM ledger_row_seals WHERE table_name = :name"),
            {"name": row_seals.once_seal_name("payments", "reversal_reason")},
        ).all()
    assert [str(row[0]) for row in seals] == [reversed_id]  # the live fee has no reason yet
    assert live_id != reversed_id
    assert _verify(fresh)["ok"] is True


def test_the_database_takes_a_reversal_reason_only_from_the_reversal_that_gave_it(fresh):
    """The seal would take any first value: a reason given with plain SQL to a fee still
    received, or a reversed fee set back to received keeping its reason, is refused (0026),
    so the board's own reversal later still records its reason and verifies."""
    reversed_id, live_id = _reversed_fee(fresh)
    engine = _engine(fresh.app)
    for statement, row_id in (
        ("UPDATE payments SET reversal_reason = 'reversed: wrong appeal' WHERE id = :id", live_id),
        ("UPDATE payments SET status = 'received' WHERE id = :id", reversed_id),
    ):
        with (
            pytest.raises(DBAPIError, match="the one its reversal gave"),
            engine.begin() as connection,
        ):
            connection.execute(text(statement), {"id": row_id})
    with engine.connect() as connection:
        live_reason = connection.execute(
            text("SELECT reversal_reason FROM payments WHERE id = :id"), {"id": live_id}
        ).scalar_one()
    assert live_reason is None
    done = ok(reverse(fresh.api, live_id, "2026-09-12"), 201)
    assert done["status"] == "reversed" and done["reversal_reason"]
    assert _verify(fresh)["ok"] is True


def test_the_database_keeps_a_payments_status_what_its_compensation_says(fresh):
    """A status is state, but the compensating transaction's kind (``payment_<status>``) is in
    the hash chain: a refunded fee set back to received, or called returned, and a live one
    called refunded with no refund, are refused (0026); a refund booked in the ledger alone, with
    no link, is refused its link by a plain UPDATE and named by verify."""
    _plan, _lgu, refunded = processing_fee(fresh)
    _plan, _lgu, live = processing_fee(fresh)
    with on("2026-06-02"):
        ok(fresh.api.post(f"/payments/{refunded['id']}/refund"))
    engine = _engine(fresh.app)
    for status, row_id in (
        ("received", refunded["id"]),
        ("returned", refunded["id"]),
        ("refunded", live["id"]),
    ):
        with (
            pytest.raises(DBAPIError, match="status is its compensation"),
            engine.begin() as connection,
        ):
            connection.execute(
                text("UPDATE payments SET status = :status WHERE id = :id"),
                {"status": status, "id": row_id},
            )
    with engine.connect() as connection:
        statuses = dict(
            connection.execute(
                text("SELECT id, status FROM payments WHERE id IN (:a, :b)"),
                {"a": refunded["id"], "b": live["id"]},
            ).all()
        )
    assert statuses == {refunded["id"]: "refunded", live["id"]: "received"}
    # a refund booked in the ledger alone does not make a received payment's link (its status
    # would still say received): the link is given with the status, by the bank
    with fresh.app.extensions["wetbank.db"].transaction() as session:
        paid = session.execute(
            text("SELECT transaction_id FROM payments WHERE id = :id"), {"id": live["id"]}
        ).scalar_one()
        booked = ledger.reverse(
            session,
            int(paid),
            ledger.Meta("typed-refund", date(2026, 6, 2)),
            kind="payment_refunded",
        ).transaction_id
    with (
        pytest.raises(DBAPIError, match="status is its compensation"),
        engine.begin() as connection,
    ):
        connection.execute(
            text("UPDATE payments SET compensation_transaction_id = :r WHERE id = :id"),
            {"r": booked, "id": live["id"]},
        )
    # the chain now pays back a payment that still says received and links nothing: verify's
    # full pass names it (its link is not the transaction reversing its own)
    broken = _verify(fresh)["first_broken"]
    assert (broken["kind"], broken["table"], broken["row_id"]) == (
        "sealed_row_changed",
        "payments",
        live["id"],
    )
    assert "its compensation_transaction_id is not the transaction reversing" in broken["detail"]


def test_a_seal_refuses_in_its_own_words_before_the_ledger_ties_are_checked(fresh):
    """A change of a sealed column refused is refused as such on both databases, though it also
    gives a reason or a release no transaction made (0026's triggers come after the seals')."""
    reversed_id, live_id = _reversed_fee(fresh)
    engine = _engine(fresh.app)
    with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
        connection.execute(
            text("UPDATE payments SET amount_cents = 1, reversal_reason = 'x' WHERE id = :id"),
            {"id": live_id},
        )
    assert reversed_id != live_id
    ids = set_once_bank(fresh)
    with pytest.raises(DBAPIError, match="immutable"), engine.begin() as connection:
        connection.execute(
            text("UPDATE securities SET issuer = 'x', released_on = '2026-07-09' WHERE id = :id"),
            {"id": ids.held},
        )
