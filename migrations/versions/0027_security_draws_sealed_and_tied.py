"""each draw on a security sealed, and a security's drawn total and date its draws'

A draw (``security_draws``: its date, amount, the transaction that posted it and the pending
transfer holding the rest) was not sealed, and a security's ``drawn_on`` and ``drawn_cents`` are
state: a plain ``UPDATE`` could change what a draw drew, or what a security shows as drawn and so
what is left to draw (``undrawn_cents``), and ``wetbank audit verify`` still said ok.  Now, on
both databases:

* every draw is sealed (``bank.registry``, ``ledger.row_seals``): an UPDATE or DELETE of one is
  refused, and an edit made behind the triggers is named by verify;
* a draw is taken only if it is what its transaction drew: the transaction keyed
  ``security-draw:<id>``, of kind ``security_drawn``, posting what its security held (the
  security's own pending transfer, or the rest an earlier draw of it held again), effective on
  the draw's date, posting its amount; and its ``held_transaction_id`` is the transfer keyed
  ``security-rest:<id>`` holding the rest, or none when nothing is left;
* the database writes a security's ``drawn_cents`` (the sum of its draws' amounts) and
  ``drawn_on`` (the latest draw's date) with each draw, and refuses a security whose ``drawn_*``
  disagree with its draws (on INSERT, and on an UPDATE changing either).  A security drawn before
  each draw had a row (0011) has none: its ``drawn_*`` are those of the ``security_drawn``
  transaction that posted its own pending transfer, and stay so.

Verify's full pass checks the same ties (``bank.registry.TIES``).  The triggers are named to sort
after each table's older ones on PostgreSQL, and SQLite's older ones are made again after them, so
a change a seal or a guard refuses is still refused in its words.

The upgrade stops, naming the row, if a stored draw is not what its transaction drew, or a
security with no draws shows a drawn total or date no transaction gives.  A security whose drawn
total or date disagrees with its draws, which agree with the ledger, is given theirs, and a
warning names it: earlier versions of the service took a draw dated before an earlier draw
and moved ``drawn_on`` back to it, and a total typed in behind the application is restored from
the record the ledger bears out.  Then it seals the draws stored.  Downgrading to 0026 drops the triggers (and PostgreSQL's functions) and
the draws' seals.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-12 09:00:00
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import row_seals, store
from ledger.row_seals import SealedTable
from ledger.store import sqlite_ddl

revision: str = "0027"
down_revision: str | None = "0026"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: the draws' seal, as this revision made it
DRAWS = SealedTable(
    "security_draws",
    "id",
    tuple(
        "id security_id drawn_on amount_cents transaction_id held_transaction_id "
        "recorded_at".split()
    ),
)

#: named to sort after each table's other triggers (``<table>_seal``, ``<table>_sealed``):
#: PostgreSQL fires a table's triggers by name
DRAW = "security_draws_tied"
TOTAL = "security_draws_total"
DRAWN = "securities_tied_draws"

#: what a ledger transaction ``{tx}`` posted: the sum of its posted credits
_POSTED = (
    "(SELECT SUM(p.amount) FROM ledger_entries AS p "
    "WHERE p.transaction_id = {tx} AND p.phase = 'posted' AND p.amount > 0)"
)
#: a draw (``{row}``: ``NEW.`` in a trigger, ``t.`` over stored rows) is what its transaction drew
_DRAW_RULE = (
    "(EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "JOIN ledger_entries AS x ON x.transaction_id = r.id "
    "JOIN securities AS s ON s.id = {row}security_id "
    "WHERE r.id = {row}transaction_id AND r.kind = 'security_drawn' "
    "AND r.idempotency_key = 'security-draw:' || {row}id "
    "AND r.effective_on = {row}drawn_on AND x.resolution = 'posted' "
    "AND (x.resolves_id = s.pending_transaction_id OR x.resolves_id IN ("
    "SELECT o.held_transaction_id FROM security_draws AS o "
    "WHERE o.security_id = {row}security_id))) "
    "AND COALESCE(" + _POSTED.format(tx="{row}transaction_id") + " = {row}amount_cents, FALSE) "
    "AND COALESCE({row}held_transaction_id, 0) = COALESCE((SELECT h.id FROM ledger_transactions "
    "AS h WHERE h.idempotency_key = 'security-rest:' || {row}id), 0))"
)
_DRAW_REFUSED = (
    "a draw is what its transaction drew: the security_drawn transaction keyed "
    "security-draw:<id> posting what its security held, on its date and of its amount, the "
    "rest held by the transfer keyed security-rest:<id>"
)
#: the draws of the security ``{row}``
_ITS_DRAWS = "FROM security_draws AS d WHERE d.security_id = {row}id"
_DRAWN_RULE = (
    "((COALESCE({row}drawn_cents, -1) = COALESCE((SELECT SUM(d.amount_cents) "
    + _ITS_DRAWS
    + "), -1) AND COALESCE({row}drawn_on, '0001-01-01') = COALESCE((SELECT MAX(d.drawn_on) "
    + _ITS_DRAWS
    + "), '0001-01-01')) "
    # drawn before each draw had a row (0011): its own pending transfer's draw gives them
    "OR (NOT EXISTS (SELECT 1 " + _ITS_DRAWS + ") AND EXISTS (SELECT 1 FROM ledger_entries AS x "
    "JOIN ledger_transactions AS r ON r.id = x.transaction_id "
    "WHERE x.resolves_id = {row}pending_transaction_id AND x.resolution = 'posted' "
    "AND r.kind = 'security_drawn' AND r.effective_on = {row}drawn_on "
    "AND " + _POSTED.format(tx="r.id") + " = {row}drawn_cents)))"
)
_DRAWN_REFUSED = (
    "a security''s drawn_cents and drawn_on are its draws'': their sum and the latest draw''s date"
)
_DRAWN_ON_INSERT = "NEW.drawn_on IS NOT NULL OR NEW.drawn_cents IS NOT NULL"
#: PostgreSQL's, SQLite's
_DRAWN_ON_UPDATE = (
    "OLD.drawn_on IS DISTINCT FROM NEW.drawn_on OR OLD.drawn_cents IS DISTINCT FROM NEW.drawn_cents",
    "OLD.drawn_on IS NOT NEW.drawn_on OR OLD.drawn_cents IS NOT NEW.drawn_cents",
)
#: a security's drawn total and date, written from its draws (``{id}``: the security's id)
_TOTAL = (
    "UPDATE securities SET "
    "drawn_cents = (SELECT SUM(d.amount_cents) FROM security_draws AS d "
    "WHERE d.security_id = {id}), "
    "drawn_on = (SELECT MAX(d.drawn_on) FROM security_draws AS d WHERE d.security_id = {id}) "
    "WHERE id = {id}"
)


def _postgresql() -> list[str]:
    new = "NEW."
    return [
        f"""
        CREATE OR REPLACE FUNCTION {DRAW}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT {_DRAW_RULE.format(row=new)} THEN
                RAISE EXCEPTION '{_DRAW_REFUSED}: % on security_draws refused', TG_OP
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END $$
        """,
        f"""
        CREATE TRIGGER {DRAW} BEFORE INSERT ON security_draws FOR EACH ROW
            EXECUTE FUNCTION {DRAW}()
        """,
        # the security locked first: a draw inserted meanwhile is then counted (the total's
        # statement starts after the lock is taken)
        f"""
        CREATE OR REPLACE FUNCTION {TOTAL}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            PERFORM 1 FROM securities WHERE id = NEW.security_id FOR UPDATE;
            {_TOTAL.format(id="NEW.security_id")};
            RETURN NULL;
        END $$
        """,
        f"""
        CREATE TRIGGER {TOTAL} AFTER INSERT ON security_draws FOR EACH ROW
            EXECUTE FUNCTION {TOTAL}()
        """,
        f"""
        CREATE OR REPLACE FUNCTION {DRAWN}() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT {_DRAWN_RULE.format(row=new)} THEN
                RAISE EXCEPTION '{_DRAWN_REFUSED}: % on securities refused', TG_OP
                    USING ERRCODE = 'integrity_constraint_violation';
            END IF;
            RETURN NEW;
        END $$
        """,
        f"""
        CREATE TRIGGER {DRAWN}_insert BEFORE INSERT ON securities FOR EACH ROW
            WHEN ({_DRAWN_ON_INSERT}) EXECUTE FUNCTION {DRAWN}()
        """,
        f"""
        CREATE TRIGGER {DRAWN}_update BEFORE UPDATE OF drawn_on, drawn_cents ON securities
            FOR EACH ROW WHEN ({_DRAWN_ON_UPDATE[0]}) EXECUTE FUNCTION {DRAWN}()
        """,
    ]


def _sqlite() -> list[str]:
    new = "NEW."
    return [
        f"""
        CREATE TRIGGER {DRAW} BEFORE INSERT ON security_draws
        WHEN NOT {_DRAW_RULE.format(row=new)}
        BEGIN SELECT RAISE(ABORT, '{_DRAW_REFUSED}: INSERT on security_draws refused'); END
        """,
        f"""
        CREATE TRIGGER {TOTAL} AFTER INSERT ON security_draws
        BEGIN {_TOTAL.format(id="NEW.security_id")}; END
        """,
        f"""
        CREATE TRIGGER {DRAWN}_insert BEFORE INSERT ON securities
        WHEN ({_DRAWN_ON_INSERT}) AND NOT {_DRAWN_RULE.format(row=new)}
        BEGIN SELECT RAISE(ABORT, '{_DRAWN_REFUSED}: INSERT on securities refused'); END
        """,
        f"""
        CREATE TRIGGER {DRAWN}_update BEFORE UPDATE OF drawn_on, drawn_cents ON securities
        WHEN ({_DRAWN_ON_UPDATE[1]}) AND NOT {_DRAWN_RULE.format(row=new)}
        BEGIN SELECT RAISE(ABORT, '{_DRAWN_REFUSED}: UPDATE on securities refused'); END
        """,
    ]


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


#: per rule, the table it holds for, and the refusal naming a stored row that breaks it
_STORED = (
    (
        "security_draws",
        _DRAW_RULE,
        "it is not what its transaction drew (the security_drawn transaction keyed "
        "security-draw:<id> posting what its security held, on its date and of its amount, the "
        "rest held by the transfer keyed security-rest:<id>)",
    ),
    (
        "securities",
        f"(EXISTS (SELECT 1 {_ITS_DRAWS}) OR {_DRAWN_RULE})",
        "it has no draws, and its drawn_cents and drawn_on are not what the security_drawn "
        "transaction of its own pending transfer gives",
    ),
)
#: the securities whose drawn total or date is not their draws': given their draws' (``_TOTAL``)
_UNTIED = (
    "SELECT t.id FROM securities AS t WHERE EXISTS (SELECT 1 "
    + _ITS_DRAWS.format(row="t.")
    + ") AND NOT "
    + _DRAWN_RULE.format(row="t.")
    + " ORDER BY t.id"
)
log = logging.getLogger("alembic.runtime.migration")


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
                f"cannot seal the draws and tie the securities to them: {table} row {broken}: "
                f"{what}"
            )
    for (security_id,) in bind.execute(sa.text(_UNTIED)).all():
        log.warning(
            "0027: securities row %s: its drawn_cents and drawn_on are set to its draws' sum "
            "and latest date (they disagreed)",
            security_id,
        )
        bind.execute(sa.text(_TOTAL.format(id=":id")), {"id": security_id})
    row_seals.install(bind, [DRAWS])
    row_seals.seal_existing(bind, DRAWS)
    if _is_postgresql():
        for statement in _postgresql():
            op.execute(statement)
        return
    for statement in _sqlite():
        op.execute(statement)
    _older_triggers_first()


def _ours(table: str) -> set[str]:
    """The triggers of ``table`` this revision makes: its tie's, and the draws' seal."""
    names = {
        "security_draws": {DRAW, TOTAL},
        "securities": {f"{DRAWN}_insert", f"{DRAWN}_update"},
    }[table]
    if table == DRAWS.name:
        ddl = store.of(op.get_bind()).ddl
        statements = ddl.seal_table(DRAWS.name, DRAWS.id_column, DRAWS.columns)
        names |= {m.group(1) for s in statements for m in re.finditer(r"CREATE TRIGGER (\w+)", s)}
    return names


def _older_triggers_first() -> None:
    """SQLite fires a table's triggers newest first: make every other trigger of the two tables
    again, in the order they were made, so that they fire before these (a change an older guard
    or seal refuses is refused in its words, as before).  PostgreSQL fires them by name."""
    for table in ("security_draws", "securities"):
        sqlite_ddl.fire_before(op.get_bind(), table, _ours(table))


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    pg = _is_postgresql()
    for table, trigger in (
        ("securities", f"{DRAWN}_update"),
        ("securities", f"{DRAWN}_insert"),
        ("security_draws", TOTAL),
        ("security_draws", DRAW),
    ):
        op.execute(f"DROP TRIGGER IF EXISTS {trigger}" + (f" ON {table}" if pg else ""))
    if pg:
        for function in (DRAWN, TOTAL, DRAW):
            op.execute(f"DROP FUNCTION IF EXISTS {function}()")
    row_seals.uninstall(bind, [DRAWS])
    ddl = store.of(bind).ddl
    for statement in [
        *ddl.unguard_seals,
        f"DELETE FROM ledger_row_seals WHERE table_name = '{DRAWS.name}'",
    ]:
        op.execute(statement)
    row_seals.install(bind, [])  # the seals' own guards again
