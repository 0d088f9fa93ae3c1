"""What an ordinary role could still write with plain SQL after 0018 (migration 0019), on SQLite and
PostgreSQL: a payment's compensation is a transaction reversing its own; the audit trail of
refused requests and token changes is append-only; an entry is added to a ledger transaction
only by the database transaction that writes it.  The bank's and the engine's own writes go
through beside each refusal.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from api import create_app
from ledger import Database, reverse, verification
from ledger.sealer import seal_all
from tests.api.conftest import Api, make_token
from tests.api.kit import Kit, ok, on
from tests.api.test_audit import D4, Workload, events, payment, workload
from tests.integration.ledger_kit import (
    insert_raw_entry,
    insert_raw_header,
    meta,
    move,
    open_accounts,
    row_counts,
    scalar,
    seal_raw,
    stored_rows,
    unique,
)


def _run(db: Database, statement: str, **params: Any) -> None:
    with db.engine.begin() as connection:
        connection.execute(text(statement), params)


def _verified(db: Database) -> bool:
    seal_all(db)
    with db.engine.connect() as connection:
        return verification.verify(connection).ok


@dataclass
class Bank:
    app: Flask
    kit: Kit
    work: Workload

    @property
    def db(self) -> Database:
        return self.app.extensions["wetbank.db"]  # type: ignore[no-any-return]


@pytest.fixture
def bank(fresh_db_url: str) -> Iterator[Bank]:
    """A fresh database holding the audit workload: deposits, a transfer, a withdrawal, a
    processing fee received."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    kit = Kit(Api(application.test_client(), make_token(application, "board")), application)
    yield Bank(application, kit, workload(kit))
    application.extensions["wetbank.db"].dispose()


# --- 1. a payment's compensation reverses its own transaction ------------------------------------

PAYMENT_REFUSED = "compensation_transaction_id is set once, to a transaction reversing its own"
SET_COMPENSATION = "UPDATE payments SET compensation_transaction_id = :r WHERE id = :p"


def _payment_id(db: Database, transaction_id: str) -> str:
    return str(scalar(db, "SELECT id FROM payments WHERE transaction_id = :t", t=transaction_id))


def test_a_payment_is_compensated_only_by_a_transaction_reversing_its_own(bank):
    db, kit, work = bank.db, bank.kit, bank.work
    fee = _payment_id(db, work.payments[0])
    received = ok(kit.api.get(f"/payments/{fee}"), 200)
    assert (received["status"], received["compensation_transaction_id"]) == ("received", None)
    with db.transaction() as session:  # a real reversal, of another transaction
        other_reversal = reverse(session, int(work.transfer), meta()).transaction_id
    # an unrelated transaction, the payment's own, a reversal of another: none compensates it
    for unrelated in (int(work.transfer), int(work.payments[0]), other_reversal):
        with pytest.raises(IntegrityError, match=PAYMENT_REFUSED):
            _run(db, SET_COMPENSATION, r=unrelated, p=fee)
    with pytest.raises(IntegrityError, match=PAYMENT_REFUSED):  # nor is one inserted so
        _run(
            db,
            "INSERT INTO payments (id, kind, amount_cents, payer, received_on, plan_id, "
            "appeal_id, lgu_id, transaction_id, status, compensation_transaction_id, ruleset, "
            "created_at, actor, external_refs) SELECT 'pay-forged', kind, amount_cents, payer, "
            "received_on, plan_id, appeal_id, lgu_id, transaction_id, 'refunded', :r, ruleset, "
            "created_at, actor, external_refs FROM payments WHERE id = :p",
            r=int(work.transfer),
            p=fee,
        )
    assert ok(kit.api.get(f"/payments/{fee}"), 200) == received
    assert scalar(db, "SELECT count(*) FROM payments WHERE id = 'pay-forged'") == 0
    # the bank's own refund goes through, pointing at a transaction reversing the payment's
    with on(D4):
        refunded = ok(kit.api.post(f"/payments/{fee}/refund"))
        second = _payment_id(db, payment(kit, work.plan["id"], 2_500))
        second_refund = ok(kit.api.post(f"/payments/{second}/refund"))
    compensation = int(refunded["compensation_transaction_id"])
    assert scalar(
        db, "SELECT reverses_id FROM ledger_transactions WHERE id = :r", r=compensation
    ) == int(work.payments[0])
    # once set, it does not move (not even to another payment's refund), nor go back to NULL;
    # the same value again is no change
    _run(db, SET_COMPENSATION, r=compensation, p=fee)
    for other in (int(second_refund["compensation_transaction_id"]), None):
        with pytest.raises(IntegrityError, match=PAYMENT_REFUSED):
            _run(db, SET_COMPENSATION, r=other, p=fee)
    assert ok(kit.api.get(f"/payments/{fee}"), 200) == refunded
    assert _verified(db)


# --- 2. the audit trail is append-only ------------------------------------------------------------

AUDIT_REFUSED = "audit events are append-only"


@pytest.fixture
def app(fresh_db_url: str) -> Iterator[Flask]:
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


def _audited(app: Flask) -> tuple[Api, list[dict[str, Any]]]:
    """A refused request, a token created and the token revoked: three audit events."""
    api = Api(app.test_client(), make_token(app, "board"))
    assert api.get("/accounts", token="").status_code == 401
    created = ok(api.post("/tokens", {"role": "board", "name": "audited"}), 201)
    assert api.delete(f"/tokens/{created['id']}").status_code == 204
    trail = events(api)
    assert {e["kind"] for e in trail} >= {"token_created", "token_revoked"}
    assert 401 in {e["status"] for e in trail}
    return api, trail


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE audit_events SET status = 200 WHERE status = 401",
        "UPDATE audit_events SET actor = 'someone else', path = '/elsewhere'",
        "DELETE FROM audit_events WHERE status = 401",
        "DELETE FROM audit_events",
    ],
)
def test_an_audit_event_refuses_update_and_delete(app, statement):
    api, trail = _audited(app)
    db = app.extensions["wetbank.db"]
    with pytest.raises(IntegrityError, match=AUDIT_REFUSED):
        _run(db, statement)
    assert events(api) == trail
    # the trail still grows: a refused request is recorded after the refused edit
    assert api.get("/accounts", token="wbt_not-a-real-token").status_code == 401
    after = events(api)
    assert after[: len(trail)] == trail and len(after) == len(trail) + 1


def test_postgresql_refuses_truncate_of_the_audit_trail(app, backend):
    if backend != "postgresql":
        pytest.skip("SQLite has no TRUNCATE (a DELETE without WHERE is refused above)")
    api, trail = _audited(app)
    db = app.extensions["wetbank.db"]
    for statement in ("TRUNCATE audit_events", "TRUNCATE audit_events CASCADE"):
        with pytest.raises(IntegrityError, match=f"{AUDIT_REFUSED}: TRUNCATE"):
            _run(db, statement)
    assert events(api) == trail


# --- 3. an entry is added to a ledger transaction only by the one writing it -------------------

#: PostgreSQL refuses at COMMIT (0019); SQLite refuses the INSERT: a committed transaction is
#: sealed, and a sealed one takes no entry
ADDED_REFUSED = "only by the database transaction that writes it|sealed or missing: entry refused"


@pytest.mark.parametrize("how", ["alone", "beside_a_new_transaction", "checked_early"])
def test_a_balanced_pair_added_to_a_committed_transaction_is_refused(fresh_db, how):
    """Balanced, the pair passes the balance check; it is refused because the transaction was
    committed by an earlier database transaction.  Nothing changes, and the ledger verifies."""
    db = fresh_db
    asset = unique("X")
    issuer, a, b = open_accounts(db, asset, False, True, True)
    move(db, issuer, a, 50)
    earlier = move(db, a, b, 20).transaction_id
    postgresql = db.dialect == "postgresql"
    before = row_counts(db), stored_rows(db, [issuer, a, b])
    with pytest.raises(IntegrityError, match=ADDED_REFUSED):
        with db.engine.begin() as connection:
            if how == "beside_a_new_transaction":
                tx_id = insert_raw_header(connection, "sealed" if postgresql else "open")
                insert_raw_entry(connection, tx_id, a, asset, -3)
                insert_raw_entry(connection, tx_id, b, asset, 3)
                if not postgresql:
                    seal_raw(connection, tx_id)
            insert_raw_entry(connection, earlier, b, asset, -20)
            insert_raw_entry(connection, earlier, a, asset, 20)
            if how == "checked_early" and postgresql:
                connection.execute(text("SET CONSTRAINTS ALL IMMEDIATE"))
    assert (row_counts(db), stored_rows(db, [issuer, a, b])) == before
    assert scalar(db, "SELECT count(*) FROM ledger_entries WHERE transaction_id = :t", t=earlier)
    assert _verified(db)


@pytest.mark.parametrize("inside", ["everything", "entries"])
def test_a_transaction_written_inside_a_savepoint_still_commits(db, inside):
    """Entries inserted by one savepoint share its transaction id: the guard takes them."""
    asset = unique("X")
    a, b = open_accounts(db, asset, False, False)
    postgresql = db.dialect == "postgresql"
    with db.engine.begin() as connection:
        outer = connection.begin_nested() if inside == "everything" else None
        tx_id = insert_raw_header(connection, "sealed" if postgresql else "open")
        with connection.begin_nested():
            insert_raw_entry(connection, tx_id, a, asset, -4)
            insert_raw_entry(connection, tx_id, b, asset, 4)
        if not postgresql:
            seal_raw(connection, tx_id)
        if outer is not None:
            outer.commit()
    assert scalar(db, "SELECT count(*) FROM ledger_entries WHERE transaction_id = :t", t=tx_id) == 2


def test_postgresql_refuses_the_entries_of_one_transaction_written_in_two_savepoints(db, backend):
    """Each savepoint is a database transaction of its own: a ledger transaction whose entries two
    of them wrote is refused, as one whose entries two committed transactions wrote (the engine
    writes a transaction's entries in one statement)."""
    if backend != "postgresql":
        pytest.skip("SQLite checks a transaction's entries when it is sealed, not who wrote them")
    asset = unique("X")
    a, b = open_accounts(db, asset, False, False)
    before = row_counts(db)
    with pytest.raises(IntegrityError, match=ADDED_REFUSED):
        with db.engine.begin() as connection:
            tx_id = insert_raw_header(connection, "sealed")
            for account_id, amount in ((a, -4), (b, 4)):
                with connection.begin_nested():
                    insert_raw_entry(connection, tx_id, account_id, asset, amount)
    assert row_counts(db) == before
