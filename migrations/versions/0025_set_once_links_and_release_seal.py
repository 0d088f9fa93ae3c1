"""set-once seals of the compensation and reversal links and of a security's release

Three sealed registry tables have columns the bank writes once, after the row, with what the record
says happened then, and never again; until this revision none of them was in a seal, so an edit
made behind the triggers was not named by ``wetbank audit verify``:

* ``payments.compensation_transaction_id``: the transaction that refunded, returned or reversed
  the payment (``bank.money``).  0019's triggers refuse setting it to anything but a transaction
  reversing the payment's, and any change once set;
* ``withdrawals.reversal_transaction_id``: the transaction that reversed the withdrawal on appeal
  (``bank.withdrawals``), guarded the same way by 0018's triggers;
* ``securities.released_on`` and ``release_reason``: the day the rest of a held security was
  given back and why (``bank.guarantees.release``); a security released is never held again.

Each is now ``set_once`` (``bank.registry``, ``ledger.row_seals``): sealed when it is set, in a
seal of its own, and refused any change afterwards.  A security's ``drawn_on`` and
``drawn_cents`` stay state: each draw moves them.

Existing rows are sealed only after checking them.  Every row of the three tables is first
checked against its seal as it stands, and every value stored against what the hash chain says
(a transaction reverses at most one, by ``reverses_id``, and a release's transaction is the one
keyed ``security-release:<id>``):

* a payment's compensation transaction is the transaction reversing the payment's own, and a
  payment whose transaction is reversed names it;
* a withdrawal's reversal transaction is likewise the one reversing the withdrawal's;
* a released security's date and reason are its release transaction's effective date and memo;
  a security with no release transaction is unreleased, or one 0011 marked released when it was
  drawn in part (its reason 0011's, its date the draw's: the ledger released the rest with that
  draw, before releases had a transaction of their own).

A row that disagrees stops the upgrade, naming it, and nothing is changed: sealing it would make
an edit look recorded.

SQLite fires a table's triggers newest first: the three tables' other triggers (0018's and 0019's
guards, the quantity guards, 0024's postmark check) are made again after the seals, so that they
still fire first and a refused change is refused with their words, as before.

Downgrading to 0024 checks the rows against their seals again, drops the new seals and their
triggers (the four columns unsealed again, as 0024 left them; 0018's and 0019's guards stay).

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-11 09:00:00
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import row_seals, store
from ledger.store import sqlite_ddl
from ledger.row_seals import SealedTable

revision: str = "0025"
down_revision: str | None = "0024"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PAYMENT_COLUMNS = (
    "id kind amount_cents payer received_on plan_id appeal_id lgu_id transaction_id ruleset "
    "created_at actor postmarked_on"
).split()
_WITHDRAWAL_COLUMNS = "id plan_id transaction_id withdrawn_sqft created_at actor".split()
_SECURITY_COLUMNS = (
    "id plan_id kind issuer amount_cents irrevocable issued_on expires_on "
    "pending_transaction_id created_at"
).split()

#: what sealed the three tables before this revision (0007; the payments as 0024 re-sealed them)
PAYMENTS_BEFORE = SealedTable(
    "payments", "id", tuple(_PAYMENT_COLUMNS), set_once=("reversal_reason",)
)
WITHDRAWALS_BEFORE = SealedTable("withdrawals", "id", tuple(_WITHDRAWAL_COLUMNS))
SECURITIES_BEFORE = SealedTable("securities", "id", tuple(_SECURITY_COLUMNS))
#: and what seals them since
PAYMENTS = SealedTable(
    "payments",
    "id",
    tuple(_PAYMENT_COLUMNS),
    set_once=("reversal_reason", "compensation_transaction_id"),
)
WITHDRAWALS = SealedTable(
    "withdrawals", "id", tuple(_WITHDRAWAL_COLUMNS), set_once=("reversal_transaction_id",)
)
SECURITIES = SealedTable(
    "securities", "id", tuple(_SECURITY_COLUMNS), set_once=("released_on", "release_reason")
)
RESEALED = (
    (PAYMENTS_BEFORE, PAYMENTS),
    (WITHDRAWALS_BEFORE, WITHDRAWALS),
    (SECURITIES_BEFORE, SECURITIES),
)

#: the reason 0011 gave a security drawn in part before it, released with that draw
LEGACY_RELEASE = "the rest was released when it was drawn in part"

#: per check of stored values against the hash chain: the query finding the first row that
#: disagrees, and the refusal naming it
_CHAIN_CHECKS = (
    (
        """SELECT p.id FROM payments AS p
        LEFT JOIN ledger_transactions AS r ON r.reverses_id = p.transaction_id
        WHERE COALESCE(p.compensation_transaction_id, 0) <> COALESCE(r.id, 0)
        ORDER BY p.id LIMIT 1""",
        "cannot seal the payments' compensation transactions: payments row {row} has a "
        "compensation_transaction_id that is not the transaction reversing its own",
    ),
    (
        """SELECT w.id FROM withdrawals AS w
        LEFT JOIN ledger_transactions AS r ON r.reverses_id = w.transaction_id
        WHERE COALESCE(w.reversal_transaction_id, 0) <> COALESCE(r.id, 0)
        ORDER BY w.id LIMIT 1""",
        "cannot seal the withdrawals' reversal transactions: withdrawals row {row} has a "
        "reversal_transaction_id that is not the transaction reversing its own",
    ),
    (
        """SELECT s.id FROM securities AS s
        LEFT JOIN ledger_transactions AS r ON r.idempotency_key = 'security-release:' || s.id
        WHERE (r.id IS NOT NULL AND (s.released_on IS NULL OR s.release_reason IS NULL
                OR s.released_on <> r.effective_on OR s.release_reason <> r.memo))
            OR (r.id IS NULL AND (s.released_on IS NOT NULL OR s.release_reason IS NOT NULL)
                AND NOT COALESCE(
                    s.release_reason = :legacy AND s.released_on = s.drawn_on, FALSE))
        ORDER BY s.id LIMIT 1""",
        "cannot seal the securities' releases: securities row {row} has a released_on or "
        "release_reason that is not its release transaction's effective date and memo",
    ),
)


def _check_against_the_chain() -> None:
    """Refuse (``RuntimeError`` naming the row) a row that disagrees with its seal as it stands,
    or a stored link or release that disagrees with the hash chain."""
    bind = op.get_bind()
    found = row_seals.first_mismatch(bind, [was for was, _now in RESEALED])
    if found is not None:
        raise RuntimeError(f"cannot re-seal {found.table}: {found.detail}")
    for query, refusal in _CHAIN_CHECKS:
        row = bind.execute(sa.text(query), {"legacy": LEGACY_RELEASE}).scalar()
        if row is not None:
            raise RuntimeError(refusal.format(row=row))


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    _check_against_the_chain()
    for was, now in RESEALED:
        row_seals.reseal(bind, was, now)
    _other_triggers_first()


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    for was, now in RESEALED:
        row_seals.reseal(bind, now, was)
    _other_triggers_first()


def _seal_triggers(table: str) -> set[str]:
    """The names of the triggers ``ledger.row_seals.install`` makes for ``table``, sealed as
    before this revision or since."""
    ddl = store.of(op.get_bind()).ddl
    statements = []
    for sealed in (t for pair in RESEALED for t in pair if t.name == table):
        statements += ddl.seal_table(sealed.name, sealed.id_column, sealed.columns)
        for column in sealed.set_once:
            statements += ddl.seal_once(sealed.name, sealed.id_column, column)
    return {m.group(1) for s in statements for m in re.finditer(r"CREATE TRIGGER (\w+)", s)}


def _other_triggers_first() -> None:
    """SQLite fires a table's triggers newest first: make each re-sealed table's triggers other
    than its seals again, in the order they were made, so that they fire before the seals (a
    guard refuses a change in its own words, as before the re-seal).  PostgreSQL fires them by
    name, whoever made them last."""
    bind = op.get_bind()
    if bind.dialect.name != "sqlite":
        return
    for table in (now.name for _was, now in RESEALED):
        sqlite_ddl.fire_before(bind, table, _seal_triggers(table))
