"""a payment's status and reversal reason, and a security's release, are what the ledger says

A payment's ``status`` (received, refunded, returned, reversed) is state, and its
``reversal_reason`` (0022) is sealed once set (0024); both are written with the compensating
transaction that refunds, returns or reverses the payment (``bank.money._compensate``), whose kind
(``payment_<status>``) and memo (``payment <id> reversed: <reason>``) are in the hash chain.  A
security's ``released_on`` and ``release_reason`` (sealed once set, 0025) are written with its
release transaction, keyed ``security-release:<id>``, whose effective date and memo give them
(``bank.guarantees.release``).  Until this revision a plain ``UPDATE`` could set a refunded
payment back to ``received`` (the payments list then showed money the ledger had paid back), and a
set-once seal took whatever value was written first: a reason given to a fee still received, or a
release typed on a security still held, was sealed, verified, and then made the real reversal or
release fail.  The database now ties them to the ledger, on both databases:

* a payment is ``received`` with no compensation, or its ``compensation_transaction_id`` names a
  transaction of kind ``payment_<status>`` (on INSERT, and on any UPDATE changing ``status`` or
  ``compensation_transaction_id``);
* a payment holds a reason only when it is ``reversed`` and its compensation's memo gives that
  reason (on INSERT, and on an UPDATE of the reason or the status that leaves one);
* a security is released only by its release transaction: ``released_on`` and ``release_reason``
  are that transaction's effective date and memo (on INSERT, and on an UPDATE giving either a
  value it did not have).

Changing a reason or a release once set stays the seals' refusal (0024, 0025), in their words.
The triggers fire on those columns only, and after each table's older triggers (SQLite's are made
again after them; PostgreSQL fires a table's triggers by name, and these are named to sort last),
so a change 0019's guard or a seal refuses is still refused in their words.  The bank writes each
status, link, reason and release in one statement.

The upgrade stops, naming the row, if a stored row already breaks a rule (a security 0011 marked
released when it was drawn in part, with 0011's reason and its draw's date and no release
transaction, is accepted: it was never released otherwise).  Downgrading to 0025 drops the
triggers (and PostgreSQL's functions).

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-07 12:40:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import store
from ledger.store import sqlite_ddl

revision: str = "0026"
down_revision: str | None = "0025"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: named to sort after each table's other triggers (``<table>_sealed``, 0019's guards):
#: PostgreSQL fires a table's triggers by name, so theirs refuse first, in their words
STATUS = "payments_tied_status"
REASON = "payments_tied_reason"
RELEASE = "securities_tied_release"
#: an UPDATE releasing a security held (``OLD``: neither column set)
_RELEASED_FROM_NOTHING = (
    "(OLD.released_on IS NULL AND NEW.released_on IS NOT NULL) "
    "OR (OLD.release_reason IS NULL AND NEW.release_reason IS NOT NULL)"
)
#: the rules (``{row}``: ``NEW.`` in a trigger, ``p.`` over stored rows)
_STATUS_RULE = (
    "(({row}status = 'received' AND {row}compensation_transaction_id IS NULL) "
    "OR EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.id = {row}compensation_transaction_id AND r.kind = 'payment_' || {row}status))"
)
_REASON_RULE = (
    "({row}status = 'reversed' AND EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.id = {row}compensation_transaction_id "
    "AND r.memo = 'payment ' || {row}id || ' reversed: ' || {row}reversal_reason))"
)
_STATUS_REFUSED = (
    "a payment''s status is its compensation''s: received with none, else the kind "
    "payment_<status> of its compensation_transaction_id"
)
_REASON_REFUSED = (
    "a payment''s reversal_reason is the one its reversal gave: only on a reversed payment whose "
    "compensation transaction''s memo gives it"
)
_RELEASE_RULE = (
    "EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "WHERE r.idempotency_key = 'security-release:' || {row}id "
    "AND r.effective_on = {row}released_on AND r.memo = {row}release_reason)"
)
_RELEASE_REFUSED = (
    "a security''s release is its release transaction''s: released_on and release_reason are "
    "the effective date and memo of the transaction keyed security-release:<id>"
)
#: (table, name, rule, refusal, when on INSERT, the columns of an UPDATE, and when on it:
#: PostgreSQL's, SQLite's)
_RULES = (
    (
        "payments",
        STATUS,
        _STATUS_RULE,
        _STATUS_REFUSED,
        "NOT (NEW.status = 'received' AND NEW.compensation_transaction_id IS NULL)",
        "status, compensation_transaction_id",
        (
            "OLD.status IS DISTINCT FROM NEW.status OR OLD.compensation_transaction_id IS "
            "DISTINCT FROM NEW.compensation_transaction_id",
            "OLD.status IS NOT NEW.status OR OLD.compensation_transaction_id IS NOT "
            "NEW.compensation_transaction_id",
        ),
    ),
    (
        "payments",
        REASON,
        _REASON_RULE,
        _REASON_REFUSED,
        "NEW.reversal_reason IS NOT NULL",
        "reversal_reason, status",
        (
            "NEW.reversal_reason IS NOT NULL AND (OLD.reversal_reason IS NULL "
            "OR NEW.reversal_reason IS NOT DISTINCT FROM OLD.reversal_reason)",
            "NEW.reversal_reason IS NOT NULL AND (OLD.reversal_reason IS NULL "
            "OR NEW.reversal_reason IS OLD.reversal_reason)",
        ),
    ),
    # released once, from nothing (a change once released is 0025's seals' to refuse)
    (
        "securities",
        RELEASE,
        _RELEASE_RULE,
        _RELEASE_REFUSED,
        "NEW.released_on IS NOT NULL OR NEW.release_reason IS NOT NULL",
        "released_on, release_reason",
        (_RELEASED_FROM_NOTHING, _RELEASED_FROM_NOTHING),
    ),
)


def _postgresql() -> list[str]:
    statements = []
    for table, name, rule, refused, on_insert, columns, on_update in _RULES:
        statements += [
            f"""
            CREATE OR REPLACE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF NOT {rule.format(row="NEW.")} THEN
                    RAISE EXCEPTION '{refused}: % on {table} refused', TG_OP
                        USING ERRCODE = 'integrity_constraint_violation';
                END IF;
                RETURN NEW;
            END $$
            """,
            f"""
            CREATE TRIGGER {name}_insert BEFORE INSERT ON {table} FOR EACH ROW
                WHEN ({on_insert}) EXECUTE FUNCTION {name}()
            """,
            f"""
            CREATE TRIGGER {name}_update BEFORE UPDATE OF {columns} ON {table} FOR EACH ROW
                WHEN ({on_update[0]}) EXECUTE FUNCTION {name}()
            """,
        ]
    return statements


def _sqlite() -> list[str]:
    statements = []
    for table, name, rule, refused, on_insert, columns, on_update in _RULES:
        statements += [
            f"""
            CREATE TRIGGER {name}_insert BEFORE INSERT ON {table}
            WHEN ({on_insert}) AND NOT {rule.format(row="NEW.")}
            BEGIN SELECT RAISE(ABORT, '{refused}: INSERT on {table} refused'); END
            """,
            f"""
            CREATE TRIGGER {name}_update BEFORE UPDATE OF {columns} ON {table}
            WHEN ({on_update[1]}) AND NOT {rule.format(row="NEW.")}
            BEGIN SELECT RAISE(ABORT, '{refused}: UPDATE on {table} refused'); END
            """,
        ]
    return statements


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


#: 0025's reason for a security drawn in part before it, released with that draw: stored rows
#: may hold it with no release transaction (the ledger released the rest with the draw)
LEGACY_RELEASE = "the rest was released when it was drawn in part"
#: per rule, stored rows it accepts (``{row}``: the alias), and the refusal naming one that breaks
_STORED = (
    (
        "payments",
        _STATUS_RULE,
        "its status is not what its compensating transaction says",
    ),
    (
        "payments",
        f"({{row}}reversal_reason IS NULL OR {_REASON_RULE})",
        "it has a reversal_reason but is not reversed, or its reversal's memo does not give it",
    ),
    (
        "securities",
        "(({row}released_on IS NULL AND {row}release_reason IS NULL) OR "
        f"{_RELEASE_RULE} OR COALESCE({{row}}release_reason = '{LEGACY_RELEASE}' "
        "AND {row}released_on = {row}drawn_on, FALSE) AND NOT EXISTS (SELECT 1 FROM "
        "ledger_transactions AS k WHERE k.idempotency_key = 'security-release:' || {row}id))",
        "its released_on or release_reason is not its release transaction's effective date and "
        "memo",
    ),
)


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    for table, rule, what in _STORED:
        broken = bind.execute(
            sa.text(
                f"SELECT t.id FROM {table} AS t WHERE NOT {rule.format(row='t.')} "
                "ORDER BY t.id LIMIT 1"
            )
        ).scalar()
        if broken is not None:
            raise RuntimeError(
                f"cannot tie the {table} to the ledger's record: {table} row {broken}: {what}"
            )
    if _is_postgresql():
        for statement in _postgresql():
            op.execute(statement)
        return
    for statement in _sqlite():
        op.execute(statement)
    for table in ("payments", "securities"):
        _older_triggers_first(table)


def _older_triggers_first(table: str) -> None:
    """SQLite fires a table's triggers newest first: make every other trigger of ``table``
    again, in the order they were made, so that they fire before these (a change 0019's guard or
    a seal refuses is refused in its words, as before).  PostgreSQL fires them by name, and
    these are named to sort last."""
    ours = {f"{name}_{event}" for _t, name, *_rest in _RULES for event in ("insert", "update")}
    sqlite_ddl.fire_before(op.get_bind(), table, ours)


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    for table, name, *_rest in reversed(_RULES):
        on = f" ON {table}" if _is_postgresql() else ""
        for event in ("update", "insert"):
            op.execute(f"DROP TRIGGER IF EXISTS {name}_{event}{on}")
        if _is_postgresql():
            op.execute(f"DROP FUNCTION IF EXISTS {name}()")
