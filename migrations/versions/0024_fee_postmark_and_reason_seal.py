"""the filing fee's postmark, and the payments' seal covering it and the reversal reason

Subd. 9: an appeal "may be obtained by mailing a petition and payment of a filing fee of $200 ...
within 15 days after the postmarked date of the mailing" of the notice of decision.  The petition's
postmark was recorded and checked; the fee's was not, so a fee mailed after the window was booked
and the petition treated as paid.  ``payments.postmarked_on`` holds the filing fee's postmark
(``bank.money``: the petition's when the fee came in its envelope; one after the window is refused
as a late petition is).  The database holds that only a filing fee has a postmark, and that it is
on or before the fee's receipt (PostgreSQL: a CHECK; SQLite: an insert trigger, the column being
sealed, so no UPDATE can change it afterwards).

Fees booked before this revision keep a null postmark: nobody recorded one.  Their received day is
only a bound (the fee was mailed on or before it), not the postmark: written here as one, it would
state what no one saw on the envelope, and make a fee mailed in time read as late.

The payments' seal (``bank.registry``, ``ledger.row_seals``) now covers the postmark, and
``reversal_reason`` (0022), which the board writes after the row, when it reverses a filing fee
recorded in error: a set-once column, sealed when it is set and refused any change afterwards,
so that an edit of either made behind the triggers is named by ``wetbank audit verify``.
Existing rows are re-sealed (``ledger.row_seals.reseal``): every payment is first checked against
its seal as it stands, and every reason already stored against its reversal's memo in the hash
chain (``payment <id> reversed: <reason>``, ``bank.money``); a row that disagrees stops the
upgrade, naming it, so that re-sealing never makes an edit look recorded.  Then each payment's
seal is rewritten with the postmark and each reason stored is sealed.

Downgrading to 0023 checks the payments against their seals again, re-seals them without the
postmark, drops the reasons' seals and their triggers (the reason is mutable again, as 0022 left
it), the guards and the column.

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-10 09:00:00
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from ledger import quantities, row_seals, store
from ledger.row_seals import SealedTable

revision: str = "0024"
down_revision: str | None = "0023"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_COLUMNS = (
    "id kind amount_cents payer received_on plan_id appeal_id lgu_id transaction_id ruleset "
    "created_at actor"
)
#: what sealed the payments before this revision (0007), and what seals them since
PAYMENTS_BEFORE = SealedTable("payments", "id", tuple(_COLUMNS.split()))
PAYMENTS = SealedTable(
    "payments", "id", (*_COLUMNS.split(), "postmarked_on"), set_once=("reversal_reason",)
)

_POSTMARK_OK = (
    "{row}postmarked_on IS NULL OR ({row}kind = 'appeal_filing_fee' "
    "AND {row}postmarked_on <= {row}received_on)"
)
_CHECK = "ck_payments_postmark"
_SQLITE_TRIGGER = "payments_postmark"
_REFUSED = "only a filing fee has a postmark, on or before its receipt: INSERT on payments refused"

#: a stored reversal reason that is not the one its reversal's memo (chained) gives
_REASON_NOT_IN_MEMO = """
SELECT p.id FROM payments AS p
LEFT JOIN ledger_transactions AS t ON t.id = p.compensation_transaction_id
WHERE p.reversal_reason IS NOT NULL
  AND (t.memo IS NULL OR t.memo <> 'payment ' || p.id || ' reversed: ' || p.reversal_reason)
ORDER BY p.id LIMIT 1
"""


def _is_postgresql() -> bool:
    return bool(op.get_bind().dialect.name == "postgresql")


def upgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)  # as ledger.ddl does: no sealer deadlock
    unreasoned = bind.execute(sa.text(_REASON_NOT_IN_MEMO)).scalar()
    if unreasoned is not None:
        raise RuntimeError(
            f"cannot seal the payments' reversal reasons: payments row {unreasoned} has a "
            "reversal_reason its reversal's memo does not give"
        )
    op.add_column("payments", sa.Column("postmarked_on", sa.Date(), nullable=True))
    row_seals.reseal(bind, PAYMENTS_BEFORE, PAYMENTS)
    if _is_postgresql():
        op.execute(
            f"ALTER TABLE payments ADD CONSTRAINT {_CHECK} CHECK ({_POSTMARK_OK.format(row='')})"
        )
        return
    op.execute(
        f"""CREATE TRIGGER {_SQLITE_TRIGGER} BEFORE INSERT ON payments
        WHEN NOT ({_POSTMARK_OK.format(row="NEW.")})
        BEGIN SELECT RAISE(ABORT, '{_REFUSED}'); END"""
    )
    _quantity_guards_first()


def _quantity_guards_first() -> None:
    """SQLite fires a table's triggers newest first: the payments' quantity guards (0008) are
    made again, after the postmark's, so that an amount that is not an integer is refused as
    such first (as 0019 does)."""
    bind = op.get_bind()
    for table, column, nullable in store.of(bind).ddl.quantity_columns(bind):
        if table == "payments":
            quantities.drop_sqlite(bind, table, [column])
            quantities.install_sqlite(bind, table, [(column, nullable)])


def downgrade() -> None:
    bind = op.get_bind()
    store.of(bind).take_sealer_lock(bind, wait=True)
    row_seals.reseal(bind, PAYMENTS, PAYMENTS_BEFORE)
    if _is_postgresql():
        op.execute(f"ALTER TABLE payments DROP CONSTRAINT IF EXISTS {_CHECK}")
    else:
        op.execute(f"DROP TRIGGER IF EXISTS {_SQLITE_TRIGGER}")
    op.drop_column("payments", "postmarked_on")
