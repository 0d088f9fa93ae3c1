"""a payment's amount is what its transaction posted, a security's what its pending transfer held

The bank books a payment as one transaction keyed ``payment:<id>`` posting its amount, and then
writes the row with that amount (``bank.money.receive_payment``); it holds a security as a
pending transfer keyed ``security:<id>`` of its amount, and then writes the row
(``bank.securities.hold_security``).  Both amounts are sealed with the row, and verify's full
pass ties each to its transaction (``bank.registry.TIES``); but nothing refused a row inserted
with another amount: a payment typed in with SQL for more than its transaction posted was sealed
so, listed and counted (an appeal's fee, the security an appeal holds), and only the full pass
named it.  Now, on both databases, the database refuses it as it is written:

* a payment is inserted only if its ``transaction_id`` is the transaction keyed
  ``payment:<id>`` and its ``amount_cents`` what that transaction posted (the sum of its posted
  credits);
* a security is inserted only if its ``pending_transaction_id`` is the transfer keyed
  ``security:<id>`` and its ``amount_cents`` what that transfer held (the sum of its pending
  credits, which stay when it is drawn on, released or lapses).

The transaction is written before the row, in the same unit of work, so a row-level trigger sees
its entries.  The triggers fire AFTER INSERT: every older guard of the row (its bounds and
checks, 0019's and 0026's triggers, 0021's unique index of live appeal payments) refuses first,
in its words, and no older trigger needs making again to fire before these on SQLite.  An UPDATE
of either amount, or of the id or the transaction it is weighed against, is the seals' to refuse
(0007), so no trigger weighs one.

The upgrade weighs the rows stored, and stops naming those that disagree: no version of the
service wrote one (since the first, each row took its amount from the request its transaction
moved, under its own id's key), so such a row was typed in.  Downgrading to 0031 drops the
triggers (and PostgreSQL's functions).

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-07 19:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import store

revision: str = "0032"
down_revision: str | None = "0031"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: what the row ``{row}``'s own transaction (its ``{link}``, keyed ``{key}<id>``) moved in
#: phase ``{phase}`` is its amount (``{row}``: ``NEW.`` in a trigger, ``t.`` over stored rows);
#: a transaction not its own moved nothing of it (NULL: refused)
_TIED = (
    "COALESCE((SELECT SUM(p.amount) FROM ledger_transactions AS r "
    "JOIN ledger_entries AS p ON p.transaction_id = r.id "
    "WHERE r.id = {{row}}{link} AND r.idempotency_key = '{key}' || {{row}}id "
    "AND p.phase = '{phase}' AND p.amount > 0) = {{row}}amount_cents, FALSE)"
)
PAYMENT = "payments_tied_amount"
SECURITY = "securities_tied_amount"
#: (table, trigger, rule, the row's noun, what gives the amount)
_RULES = (
    (
        "payments",
        PAYMENT,
        _TIED.format(link="transaction_id", key="payment:", phase="posted"),
        "payment",
        "what its own transaction (keyed payment:<its id>) posted",
    ),
    (
        "securities",
        SECURITY,
        _TIED.format(link="pending_transaction_id", key="security:", phase="pending"),
        "security",
        "what its own pending transfer (keyed security:<its id>) held",
    ),
)


def refusal(noun: str, given_by: str) -> str:
    """The database's error on both databases, as a user reads it."""
    return f"a {noun}'s amount_cents is {given_by}"


def _postgresql() -> list[str]:
    statements = []
    for table, name, rule, noun, given_by in _RULES:
        refused = refusal(noun, given_by).replace("'", "''")
        statements += [
            f"""
            CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT {rule.format(row="NEW.")} THEN
                    RAISE EXCEPTION '{refused}: % on {table} refused', TG_OP
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NULL;
            END $$
            """,
            f"""
            CREATE TRIGGER {name} AFTER INSERT ON {table} FOR EACH ROW
                EXECUTE FUNCTION {name}()
            """,
        ]
    return statements


def _sqlite() -> list[str]:
    statements = []
    for table, name, rule, noun, given_by in _RULES:
        refused = refusal(noun, given_by).replace("'", "''")
        statements.append(
            f"""
            CREATE TRIGGER {name} AFTER INSERT ON {table}
            WHEN NOT {rule.format(row="NEW.")}
            BEGIN SELECT RAISE(ABORT, '{refused}: INSERT on {table} refused'); END
            """
        )
    return statements


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


#: how many disagreeing rows of a table the upgrade's refusal names
NAMED = 10


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    broken = []
    for table, _name, rule, _noun, given_by in _RULES:
        ids = bind.execute(
            sa.text(f"SELECT t.id FROM {table} AS t WHERE NOT {rule.format(row='t.')} ORDER BY t.id")
        ).scalars()
        found = [str(row_id) for row_id in ids]
        if found:
            more = f" (and {len(found) - NAMED} more)" if len(found) > NAMED else ""
            named = ", ".join(f"{table} row {row_id}" for row_id in found[:NAMED])
            broken.append(f"{named}{more}: its amount_cents is not {given_by}")
    if broken:
        raise RuntimeError(
            "cannot tie the payments' and securities' amounts to the ledger: " + "; ".join(broken)
        )
    statements = _postgresql() if _is_postgresql() else _sqlite()
    for statement in statements:
        op.execute(statement)


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    pg = _is_postgresql()
    for table, name, *_rest in reversed(_RULES):
        op.execute(f"DROP TRIGGER IF EXISTS {name}" + (f" ON {table}" if pg else ""))
        if pg:
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
