"""The tables of transfers: each transfer between two accounts, and the lots it drew on and made
(``bank.transfers`` writes them); and the statement a transfer begins with."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Text
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import actor_label, moment, part_of, public_id, refers, serial_id, sqft
from ledger import locks, store
from ledger.schema import Base


class Transfer(Base):
    """A transfer of credits of one class from one account to another."""

    __tablename__ = "transfers"

    id: Mapped[str] = public_id()
    from_account_id: Mapped[str] = refers("bank_accounts.id", index=True)
    to_account_id: Mapped[str] = refers("bank_accounts.id", index=True)
    credit_class: Mapped[str] = refers("credit_classes.code")
    amount_sqft: Mapped[int] = sqft()
    price_per_sqft_cents: Mapped[int | None] = sqft()
    memo: Mapped[str | None] = mapped_column(Text)
    transaction_id: Mapped[int] = refers("ledger_transactions.id")
    recorded_at: Mapped[datetime] = moment()
    actor: Mapped[str] = actor_label()


class TransferLot(Base):
    """How much of a transfer came from one source lot, and the lot it made."""

    __tablename__ = "transfer_lots"

    id: Mapped[int] = serial_id()
    transfer_id: Mapped[str] = part_of("transfers.id")
    from_lot_id: Mapped[str] = refers("lots.id")
    to_lot_id: Mapped[str] = refers("lots.id")
    amount_sqft: Mapped[int] = sqft()


# What a transfer decides from, in one round trip and as plain rows (ORM objects would cost the
# request more than the database spends): the two accounts, and the source's candidate lots
# (those of ``:credit_class``, or lot ``:lot_id``) it will draw on, oldest first, each with its
# site's frozen flag, its credit class, the lot already descending from it in the receiving
# account (at most one: unique), and both lots' balance rows, locked as the ledger's write locks
# them (``ledger.locks.held_cte``, ascending account id, the global lock order), so the choice is
# made from locked balances; and, last, how many candidates there are.  The lots drawn on are
# the oldest ones whose credits, read without a lock, reach ``:reach_sqft`` (``ranked`` puts
# them in order with the credits before each; all of them when it is NULL), leaving out those
# that looked idle (a frozen site's, or emptied with nothing reserved: a lot a reservation holds
# may hold more than it shows, its reservation past expiry); a transfer from an account of many
# lots ranks them all but joins, locks and sends back the one or two it takes, and two transfers
# that share no lot they draw on do not wait for each other.  (A lot left out as emptied that a
# write credits meanwhile is as if this transfer came first.)  When those, once locked, no
# longer hold the amount, ``transfers.make_transfer`` asks again for all of them, out of the
# global lock order (see there).  The rows are locked only if the caller may send from the
# source to the target (``:board``, or the source's holder ``:holder_id``; source open, target
# another account not closed; a credit class or a lot named, not both): a request refused before
# the choice holds nothing.  One row when there are no candidates, its lot columns NULL; the
# accounts' columns NULL for an account that does not exist.  Labels are issued in order per
# account: they break ties between lots made at once.
_MAY_SEND = """EXISTS (
        SELECT 1 FROM bank_accounts AS s JOIN bank_accounts AS t ON t.id = :to_account_id
        WHERE s.id = :from_account_id AND s.status = 'open' AND t.status <> 'closed'
          AND t.id <> s.id AND (CAST(:board AS BOOLEAN) OR s.holder_id = :holder_id)
          AND (CAST(:credit_class AS TEXT) IS NULL) <> (CAST(:lot_id AS TEXT) IS NULL))"""
_HELD = ", ".join(f"h.{column}" for column in locks.HELD_COLUMNS)
_CHILD_HELD = ", ".join(f"hc.{column}" for column in locks.HELD_COLUMNS)
SOURCES = store.Statement(
    sql=f"""
WITH ranked AS (
    SELECT lot.id, lot.ledger_account_id, lot.bank_site_id, lot.deposit_id, lot.credit_class,
           site.frozen, lot.created_at, lot.label,
           CASE WHEN site.frozen THEN 1
                WHEN b.credits_posted - b.debits_posted <= 0 AND b.debits_pending = 0 THEN 1
                ELSE 0 END AS idle,
           sum(CASE WHEN site.frozen THEN 0
                    ELSE b.credits_posted - b.debits_posted - b.debits_pending END)
           OVER (ORDER BY lot.created_at, length(lot.label), lot.label
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
    FROM lots AS lot
    JOIN bank_sites AS site ON site.id = lot.bank_site_id
    LEFT JOIN ledger_balances AS b ON b.account_id = lot.ledger_account_id
    WHERE lot.account_id = :from_account_id
      AND (lot.credit_class = :credit_class OR lot.id = :lot_id)
), c AS (
    SELECT r.id, r.ledger_account_id, r.bank_site_id, r.deposit_id, r.frozen,
           k.code, k.service_area, k.wetland_type, k.restricted,
           child.id AS child_id, child.ledger_account_id AS child_account_id,
           r.created_at, r.label
    FROM ranked AS r
    JOIN credit_classes AS k ON k.code = r.credit_class
    LEFT JOIN lots AS child
        ON child.parent_lot_id = r.id AND child.account_id = :to_account_id
    WHERE CAST(:reach_sqft AS BIGINT) IS NULL
       OR (coalesce(r.before, 0) < :reach_sqft AND (r.idle = 0 OR r.id = :lot_id))
), {
        locks.held_cte(
            "SELECT ledger_account_id FROM c UNION SELECT child_account_id FROM c",
            _MAY_SEND,
        )
    }
SELECT s.id, s.number, s.holder_id, s.status, t.id, t.status,
       c.id, c.ledger_account_id, c.bank_site_id, c.deposit_id, c.frozen,
       c.code, c.service_area, c.wetland_type, c.restricted, c.child_id, c.child_account_id,
       {_HELD}, {_CHILD_HELD}, (SELECT count(*) FROM ranked)
FROM (SELECT 1 AS one) AS base
LEFT JOIN bank_accounts AS s ON s.id = :from_account_id
LEFT JOIN bank_accounts AS t ON t.id = :to_account_id
LEFT JOIN c ON 1 = 1
LEFT JOIN held AS h ON h.account_id = c.ledger_account_id
LEFT JOIN held AS hc ON hc.account_id = c.child_account_id
WHERE (SELECT count(*) FROM held) >= 0
ORDER BY c.created_at, length(c.label), c.label
"""
)
