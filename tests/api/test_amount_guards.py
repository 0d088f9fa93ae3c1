"""The database takes a payment only for what its own transaction posted, and a security only for
what its own pending transfer held (migration 0032; SQLite and PostgreSQL).

The bank writes each row after its transaction, of the same amount (``bank.money``,
``bank.securities``).  Someone at a SQL prompt who writes a transaction keyed ``payment:<id>``
(or a pending transfer keyed ``security:<id>``) and then the row with another amount, or a row
naming another record's transaction, is refused as the row is inserted: nothing of the unit of
work is written, the API does not know the row, and verify still says ok.  The same row of the
amount its transaction moved is taken, and verifies.  Payments received, refunded, returned and
reversed, and securities held, drawn in part and in full, and released through the API go
through and verify.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

import ledger
from bank.money_tables import Payment, Security
from ledger import Database
from ledger.schema import LedgerTransaction
from tests.api.kit import Kit, ok, on, sql_rows, verified
from tests.api.test_audit import run_verify_command
from tests.api.test_ledger_ties import GRANTED, PAID, acts
from tests.api.test_money import approved, hold, pay, project_plan

#: the database's refusals, on both databases
REFUSED = {
    "payments": "a payment's amount_cents is what its own transaction (keyed payment:<its id>) "
    "posted: INSERT on payments refused",
    "securities": "a security's amount_cents is what its own pending transfer (keyed "
    "security:<its id>) held: INSERT on securities refused",
}
#: per table: the column naming its own transaction, that transaction's key prefix and phase
OWN = {
    "payments": ("transaction_id", "payment", "posted"),
    "securities": ("pending_transaction_id", "security", "pending"),
}
#: what a row typed in starts without, whatever the row it copies has come to
FRESH = {
    "payments": {
        "status": "'received'",
        "compensation_transaction_id": "NULL",
        "reversal_reason": "NULL",
    },
    "securities": {
        "released_on": "NULL",
        "release_reason": "NULL",
        "drawn_on": "NULL",
        "drawn_cents": "NULL",
    },
}
COLUMNS = {
    "payments": list(Payment.__table__.columns.keys()),
    "securities": list(Security.__table__.columns.keys()),
}


def _own_transaction(session: Any, table: str, like: str, key: str, moved: int) -> int:
    """A transaction keyed ``key`` moving ``moved`` between the accounts the row ``like``'s own
    transaction moved between, on its date: posted for a payment, held for a security."""
    link, _prefix, phase = OWN[table]
    tx = session.execute(text(f"SELECT {link} FROM {table} WHERE id = :id"), {"id": like}).scalar()
    header = session.get(LedgerTransaction, tx)
    entries = session.execute(
        text(
            "SELECT account_id, amount FROM ledger_entries "
            "WHERE transaction_id = :tx AND phase = :p"
        ),
        {"tx": tx, "p": phase},
    ).all()
    (debit,) = [account for account, amount in entries if amount < 0]
    (credit,) = [account for account, amount in entries if amount > 0]
    legs = [ledger.Leg(debit, credit, moved)]
    meta = ledger.Meta(key, header.effective_on)
    if table == "payments":
        return ledger.transfer(session, "payment_processing_fee", legs, meta).transaction_id
    return ledger.reserve(
        session, "security_held", legs, meta, expires_at=header.expires_at
    ).transaction_id


def type_in(
    db: Database,
    table: str,
    like: str,
    new_id: str,
    *,
    amount: int,
    moved: int | None = None,
    tx: int | None = None,
) -> None:
    """Write a row of ``table`` ``new_id`` like the row ``like`` with SQL, as someone with
    database access could, in one unit of work: its own transaction (keyed
    ``payment:<new_id>`` or ``security:<new_id>``) moving ``moved``, then the row of
    ``amount_cents`` ``amount`` naming it; with ``tx``, no transaction of its own, the row naming
    ``tx``."""
    link, prefix, _phase = OWN[table]
    with db.transaction() as session:
        if tx is None:
            assert moved is not None
            tx = _own_transaction(session, table, like, f"{prefix}:{new_id}", moved)
        values = {c: c for c in COLUMNS[table]}
        values.update(FRESH[table], id=":new", amount_cents=":amount")
        values[link] = ":tx"
        columns = ", ".join(COLUMNS[table])
        chosen = ", ".join(values[c] for c in COLUMNS[table])
        session.execute(
            text(f"INSERT INTO {table} ({columns}) SELECT {chosen} FROM {table} WHERE id = :like"),
            {"new": new_id, "tx": tx, "amount": amount, "like": like},
        )


def _records(kit: Kit) -> dict[str, dict[str, Any]]:
    """A processing fee of $25 received on a plan, and a security of $25,000 held for another."""
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-09-01")
    fee = ok(pay(kit.api, "processing_fee", 2_500, PAID, plan_id=plan["id"]))
    security = ok(hold(kit, project_plan(kit, lgu), token=lgu["token"]))
    return {"payments": fee, "securities": security}


def _nothing_written(kit: Kit, table: str, row_id: str) -> None:
    """No row ``row_id``, nor its own transaction; the API does not know it; verify says ok."""
    _link, prefix, _phase = OWN[table]
    assert sql_rows(kit, f"SELECT id FROM {table} WHERE id = :id", id=row_id) == []
    key = f"{prefix}:{row_id}"
    found = "SELECT id FROM ledger_transactions WHERE idempotency_key = :key"
    assert sql_rows(kit, found, key=key) == []
    with on(GRANTED):
        assert kit.api.get(f"/{table}/{row_id}").status_code == 404
    assert verified(kit)["ok"] is True


@pytest.mark.parametrize("table", ["payments", "securities"])
@pytest.mark.parametrize("off_by", [1, -1], ids=["more", "less"])
def test_a_row_typed_in_for_another_amount_than_its_transaction_moved_is_refused(
    fresh: Kit, table: str, off_by: int
) -> None:
    """Its own transaction moved the amount, the row says a cent more or less: refused, and the
    whole unit of work with it."""
    like = _records(fresh)[table]
    db = fresh.app.extensions["wetbank.db"]
    new_id = f"{table[:3]}_typed"
    moved = like["amount_cents"]
    with pytest.raises(IntegrityError, match=re.escape(REFUSED[table])):
        type_in(db, table, like["id"], new_id, moved=moved, amount=moved + off_by)
    _nothing_written(fresh, table, new_id)


@pytest.mark.parametrize("table", ["payments", "securities"])
def test_a_row_naming_another_records_transaction_is_refused_even_of_its_amount(
    fresh: Kit, table: str
) -> None:
    """The row names the transaction of the record it copies, and that record's amount: the
    amount is what that transaction moved, but the transaction is keyed to the other record, so
    nothing of the new row's own moved it."""
    like = _records(fresh)[table]
    db = fresh.app.extensions["wetbank.db"]
    link = OWN[table][0]
    ((tx,),) = sql_rows(fresh, f"SELECT {link} FROM {table} WHERE id = :id", id=like["id"])
    new_id = f"{table[:3]}_copied"
    with pytest.raises(IntegrityError, match=re.escape(REFUSED[table])):
        type_in(db, table, like["id"], new_id, amount=like["amount_cents"], tx=int(tx))
    _nothing_written(fresh, table, new_id)


@pytest.mark.parametrize("table", ["payments", "securities"])
def test_a_row_typed_in_for_what_its_transaction_moved_is_taken_and_verifies(
    fresh: Kit, table: str, fresh_db_url: str
) -> None:
    """The guard weighs the amount, nothing else of the row: the same row written for what its
    own transaction moved is taken, shown by the API and verified."""
    like = _records(fresh)[table]
    db = fresh.app.extensions["wetbank.db"]
    new_id = f"{table[:3]}_typed"
    type_in(db, table, like["id"], new_id, moved=1_234, amount=1_234)
    with on(GRANTED):
        shown = ok(fresh.api.get(f"/{table}/{new_id}"), 200)
    assert shown["amount_cents"] == 1_234
    assert verified(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0


def test_payments_and_securities_through_their_histories_are_taken_and_verify(
    fresh: Kit, fresh_db_url: str
) -> None:
    """Each act that writes a payment or a security, or a value of one, through the API under
    the guards: payments received, refunded, returned and reversed; securities held, drawn in
    part, drawn in full and released."""
    ids = acts(fresh)
    with on(GRANTED):
        statuses = {
            name: ok(fresh.api.get(f"/payments/{getattr(ids, name)}"), 200)["status"]
            for name in ("refunded", "returned", "reversed", "live")
        } | {
            name: ok(fresh.api.get(f"/securities/{getattr(ids, name)}"), 200)["status"]
            for name in ("released", "held", "drawn", "untouched")
        }
    assert statuses == {
        "refunded": "refunded",
        "returned": "returned",
        "reversed": "reversed",
        "live": "received",
        "released": "released",
        "held": "held",
        "drawn": "drawn",
        "untouched": "held",
    }
    assert verified(fresh)["ok"] is True
    assert run_verify_command(fresh_db_url).exit_code == 0
