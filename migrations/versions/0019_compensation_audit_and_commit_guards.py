"""compensation, audit trail and commit guards: what is written once stays as written

What an ordinary role could still write with plain SQL after 0018, and the bank never would:

* a payment's ``compensation_transaction_id`` goes once from NULL to a transaction reversing the
  payment's own (its ``reverses_id``: the refund or the return of a security, ``bank.money``);
  any other change of it is refused, and a payment is inserted either uncompensated or so (as
  0018 does for a withdrawal's ``reversal_transaction_id``);
* ``audit_events`` (refused requests, tokens created and revoked) is append-only: UPDATE and
  DELETE are refused on both databases, TRUNCATE on PostgreSQL.  Nothing in the code updates or
  deletes an event;
* PostgreSQL: an entry is added to a ledger transaction only by the database transaction that
  writes it; one added to a transaction an earlier database transaction committed is refused at
  COMMIT, in the deferred check that already runs there, with no query of its own
  (``ledger.store.postgresql_ddl``: ``CHECK_ONE_WRITER_FUNCTION``).  SQLite refuses it already:
  an entry goes only into an open transaction, and the engine seals each one before it commits
  (``sqlite_ddl``: ``ledger_entries_only_while_open``).

The upgrade stops, naming a row, if stored rows already break a guard.  On PostgreSQL that
includes a ledger transaction whose stored entries have more than one inserting transaction
(``xmin``): pg_upgrade, point-in-time recovery and a restore of ``pg_dump`` (one COPY per table)
keep one per ledger transaction, but a database loaded row by row, each row committed alone,
would be named here.  Downgrading to 0018 restores 0018's deferred check and drops the
triggers.

Revision ID: 0019
Revises: 0018
Create Date: 2026-12-09 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities, store
from ledger.store import postgresql_ddl

revision: str = "0019"
down_revision: str | None = "0018"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: a transaction reversing the payment's (``{row}``: ``NEW.``), as its compensation must be
_REVERSES_PAYMENT = (
    "EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.id = {row}compensation_transaction_id AND r.reverses_id = {row}transaction_id)"
)
_PAYMENT_REFUSED = (
    "a payment''s compensation_transaction_id is set once, to a transaction reversing its own: "
    "{op} on payments refused"
)
_AUDIT_REFUSED = "audit events are append-only: {op} on audit_events refused"
#: the triggers (both databases; SQLite's audit triggers apart) and PostgreSQL's functions
PAYMENT_TRIGGERS = ("payments_compensation_reverses", "payments_inserted_compensation_reverses")
SQLITE_AUDIT_TRIGGERS = ("audit_events_no_update", "audit_events_no_delete")
_POSTGRESQL = [
    f"""
    CREATE OR REPLACE FUNCTION payments_compensation_reverses() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        IF (TG_OP = 'UPDATE' AND OLD.compensation_transaction_id IS NOT NULL)
                OR NOT {_REVERSES_PAYMENT.format(row="NEW.")} THEN
            RAISE EXCEPTION '{_PAYMENT_REFUSED.format(op="%")}', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    """
    CREATE TRIGGER payments_compensation_reverses
        BEFORE UPDATE OF compensation_transaction_id ON payments FOR EACH ROW
        WHEN (OLD.compensation_transaction_id IS DISTINCT FROM NEW.compensation_transaction_id)
        EXECUTE FUNCTION payments_compensation_reverses()
    """,
    """
    CREATE TRIGGER payments_inserted_compensation_reverses BEFORE INSERT ON payments
        FOR EACH ROW WHEN (NEW.compensation_transaction_id IS NOT NULL)
        EXECUTE FUNCTION payments_compensation_reverses()
    """,
    f"""
    CREATE OR REPLACE FUNCTION audit_events_append_only() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
        RAISE EXCEPTION '{_AUDIT_REFUSED.format(op="%")}', TG_OP
            USING ERRCODE = 'integrity_constraint_violation';
    END $$
    """,
    """
    CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
        FOR EACH ROW EXECUTE FUNCTION audit_events_append_only()
    """,
    """
    CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
        FOR EACH STATEMENT EXECUTE FUNCTION audit_events_append_only()
    """,
]
_SQLITE = [
    f"""
    CREATE TRIGGER payments_compensation_reverses
    BEFORE UPDATE OF compensation_transaction_id ON payments
    WHEN NEW.compensation_transaction_id IS NOT OLD.compensation_transaction_id
        AND (OLD.compensation_transaction_id IS NOT NULL
             OR NOT {_REVERSES_PAYMENT.format(row="NEW.")})
    BEGIN SELECT RAISE(ABORT, '{_PAYMENT_REFUSED.format(op="UPDATE")}'); END
    """,
    f"""
    CREATE TRIGGER payments_inserted_compensation_reverses BEFORE INSERT ON payments
    WHEN NEW.compensation_transaction_id IS NOT NULL
        AND NOT {_REVERSES_PAYMENT.format(row="NEW.")}
    BEGIN SELECT RAISE(ABORT, '{_PAYMENT_REFUSED.format(op="INSERT")}'); END
    """,
    *(
        f"""
    CREATE TRIGGER audit_events_no_{event.lower()} BEFORE {event} ON audit_events
    BEGIN SELECT RAISE(ABORT, '{_AUDIT_REFUSED.format(op=event)}'); END
    """
        for event in ("UPDATE", "DELETE")
    ),
]


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def _first(sql: str) -> object | None:
    return op.get_bind().execute(sa.text(sql + " LIMIT 1")).scalar()


def _rows_that_break_the_guards() -> list[str]:
    """A row of each guard that stored rows already break, named."""
    found = []
    payment = _first(
        "SELECT p.id FROM payments AS p WHERE p.compensation_transaction_id IS NOT NULL "
        f"AND NOT {_REVERSES_PAYMENT.format(row='p.')} ORDER BY p.id"
    )
    if payment is not None:
        found.append(
            f"payments row {payment} (its compensation_transaction_id does not reverse its "
            "transaction)"
        )
    if _is_postgresql():  # SQLite never took an entry into a sealed transaction
        added = _first(
            "SELECT transaction_id FROM ledger_entries GROUP BY transaction_id "
            "HAVING min(age(xmin)) <> max(age(xmin)) ORDER BY transaction_id"
        )
        if added is not None:
            found.append(
                f"ledger_transactions row {added} (its entries were written by more than one "
                "database transaction)"
            )
    return found


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    broken = _rows_that_break_the_guards()
    if broken:
        raise RuntimeError(
            "cannot add the compensation, audit trail and commit guards: stored rows break "
            "them: " + "; ".join(broken)
        )
    if _is_postgresql():
        for statement in [postgresql_ddl.CHECK_ONE_WRITER_FUNCTION, *_POSTGRESQL]:
            op.execute(statement)
        return
    for statement in _SQLITE:
        op.execute(statement)
    _quantity_guards_first({"payments"})


def _quantity_guards_first(tables: set[str]) -> None:
    """SQLite fires a table's triggers newest first: the quantity guards (0008) of the tables
    guarded here are made again, after the guards, so that a value that is not an integer is
    refused as such first (as 0016 and 0018 do)."""
    bind = op.get_bind()
    for table, column, nullable in store.of(bind).ddl.quantity_columns(bind):
        if table in tables:
            quantities.drop_sqlite(bind, table, [column])
            quantities.install_sqlite(bind, table, [(column, nullable)])


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    if _is_postgresql():
        op.execute("DROP TRIGGER IF EXISTS audit_events_no_truncate ON audit_events")
        op.execute("DROP TRIGGER IF EXISTS audit_events_append_only ON audit_events")
        for name in reversed(PAYMENT_TRIGGERS):
            op.execute(f"DROP TRIGGER IF EXISTS {name} ON payments")
        op.execute("DROP FUNCTION IF EXISTS audit_events_append_only()")
        op.execute("DROP FUNCTION IF EXISTS payments_compensation_reverses()")
        op.execute(postgresql_ddl.CHECK_SEALED_FUNCTION)  # as 0018 made it
        return
    for name in (*reversed(SQLITE_AUDIT_TRIGGERS), *reversed(PAYMENT_TRIGGERS)):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
