"""a payment's reversal reason is the one its reversal gave

``payments.reversal_reason`` (0022) is the board's reason for reversing a filing fee recorded in
error (``bank.money.reverse_in_error``); 0024 seals it once it is set.  But the seal takes
whatever value is written first: a plain ``UPDATE`` giving a reason to a payment still received
was sealed, verified, and then made the board's real reversal fail.  The reason is written in
the hash chain too, in the memo of the compensating transaction (``payment <id> reversed:
<reason>``), so the database now ties the column to it: a payment holds a reason only when it is
``reversed`` and its ``compensation_transaction_id`` names a transaction whose memo gives that
reason, on INSERT and on any UPDATE that sets the reason or keeps one (changing a reason once set
is 0024's seal's refusal, in its words).  The bank writes the status, the link and the reason in one statement.

The upgrade stops, naming the row, if a stored reason already breaks the rule (0024 checked the
reasons against their memos once; a row may have been given one since).  Downgrading to 0025
drops the triggers (and PostgreSQL's function).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07 12:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import store

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TRIGGER = "payments_reason_is_the_reversals"
#: the rule (``{row}``: ``NEW.`` in a trigger, ``p.`` over stored rows)
_GIVEN_BY_REVERSAL = (
    "({row}status = 'reversed' AND EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.id = {row}compensation_transaction_id "
    "AND r.memo = 'payment ' || {row}id || ' reversed: ' || {row}reversal_reason))"
)
_REFUSED = (
    "a payment''s reversal_reason is the one its reversal gave: only on a reversed payment whose "
    "compensation transaction''s memo gives it"
)
_POSTGRESQL = [
    f"""
    CREATE OR REPLACE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF NOT {_GIVEN_BY_REVERSAL.format(row="NEW.")} THEN
            RAISE EXCEPTION '{_REFUSED}: % on payments refused', TG_OP
                USING ERRCODE = 'integrity_constraint_violation';
        END IF;
        RETURN NEW;
    END $$
    """,
    f"""
    CREATE TRIGGER {TRIGGER}_insert BEFORE INSERT ON payments FOR EACH ROW
        WHEN (NEW.reversal_reason IS NOT NULL)
        EXECUTE FUNCTION {TRIGGER}()
    """,
    # a changed reason is the set-once seal's to refuse (0024), in its words
    f"""
    CREATE TRIGGER {TRIGGER}_update BEFORE UPDATE ON payments FOR EACH ROW
        WHEN (NEW.reversal_reason IS NOT NULL AND (OLD.reversal_reason IS NULL
              OR NEW.reversal_reason IS NOT DISTINCT FROM OLD.reversal_reason))
        EXECUTE FUNCTION {TRIGGER}()
    """,
]
_SQLITE = [
    f"""
    CREATE TRIGGER {TRIGGER}_insert BEFORE INSERT ON payments
    WHEN NEW.reversal_reason IS NOT NULL AND NOT {_GIVEN_BY_REVERSAL.format(row="NEW.")}
    BEGIN SELECT RAISE(ABORT, '{_REFUSED}: INSERT on payments refused'); END
    """,
    f"""
    CREATE TRIGGER {TRIGGER}_update BEFORE UPDATE ON payments
    WHEN NEW.reversal_reason IS NOT NULL
        AND (OLD.reversal_reason IS NULL OR NEW.reversal_reason IS OLD.reversal_reason)
        AND NOT {_GIVEN_BY_REVERSAL.format(row="NEW.")}
    BEGIN SELECT RAISE(ABORT, '{_REFUSED}: UPDATE on payments refused'); END
    """,
]


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    broken = bind.execute(
        sa.text(
            "SELECT p.id FROM payments AS p WHERE p.reversal_reason IS NOT NULL "
            f"AND NOT {_GIVEN_BY_REVERSAL.format(row='p.')} ORDER BY p.id LIMIT 1"
        )
    ).scalar()
    if broken is not None:
        raise RuntimeError(
            f"cannot tie the reversal reasons to their reversals: payments row {broken} has a "
            "reversal_reason but is not reversed, or its reversal's memo does not give it"
        )
    for statement in _POSTGRESQL if _is_postgresql() else _SQLITE:
        op.execute(statement)


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    for name in (f"{TRIGGER}_update", f"{TRIGGER}_insert"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (" ON payments" if _is_postgresql() else ""))
    if _is_postgresql():
        op.execute(f"DROP FUNCTION IF EXISTS {TRIGGER}()")
