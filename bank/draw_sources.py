"""The statement a draw of credits begins with: a transfer's (``bank.transfers``) or a
reservation's (``bank.reservations``); ``bank.lot_picking`` chooses from its rows."""

from __future__ import annotations

from sqlalchemy import DateTime

from ledger import locks, store

# What a draw decides from, in one round trip and as plain rows (ORM objects would cost the
# request more than the database spends): the source account and the receiving one (none for a
# reservation: ``:to_account_id`` NULL), and the source's candidate lots (those of
# ``:credit_class``, or lot ``:lot_id``) it will draw on, oldest first, each with its site's
# frozen flag, its credit class, the lot already descending from it in the receiving account (at
# most one: unique), and both lots' balance rows, locked as the ledger's write locks them
# (``ledger.locks.held_cte``, ascending account id, the global lock order), so the choice is made
# from locked balances; and, last, how many candidates could give credits: those that did not
# look idle, and a frozen site's with credits (so that a refusal can say the credits are frozen).
# The lots drawn on are the oldest ones whose credits, read without a lock, reach
# ``:reach_sqft`` (``ranked`` puts them in order with the credits before each; all of them when
# it is NULL), leaving out those that looked idle: a frozen site's, or one with nothing
# available, its credits spent or held by reservations not expired at ``:now`` (one past its
# expiry holds nothing, as the ledger's balance read counts it; only a lot with reservations open
# looks them up).  A draw from an account of many lots ranks them all but joins, locks and sends
# back the one or two it takes, and two draws that share no lot do not wait for each other.  A
# lot left out as idle is drawn on as the statement's snapshot saw it: one that a write credits
# or releases meanwhile is as if this draw came first, even when that write also changed a lot
# the draw then locks and sees as the write left it (a void releasing two lots, say); the credits
# taken are always available when written, only which lot gives them can differ from the
# oldest-first choice of either order.  When the lots drawn on, once locked, no longer hold the
# amount and some that could give credits were left out, the caller asks again for all of them,
# out of the global lock order (``lot_picking.pick_drawn`` says why that may deadlock); a
# refusal from an account whose other lots are idle takes no further lock.  The rows are locked
# only if the caller may draw (``_MAY_SEND``, ``_MAY_RESERVE``): a request refused before the
# choice holds nothing.  One row when there are no candidates, its lot columns NULL; the
# accounts' columns NULL for an account that does not exist.  Labels are issued in order per
# account: they break ties between lots made at once.
#
# A transfer's: the caller is the board or the source's holder (``:board``, ``:holder_id``), the
# source is open, the target another account not closed, and a credit class or a lot is named,
# not both.
_MAY_SEND = """EXISTS (
        SELECT 1 FROM bank_accounts AS s JOIN bank_accounts AS t ON t.id = :to_account_id
        WHERE s.id = :from_account_id AND s.status = 'open' AND t.status <> 'closed'
          AND t.id <> s.id AND (CAST(:board AS BOOLEAN) OR s.holder_id = :holder_id)
          AND (CAST(:credit_class AS TEXT) IS NULL) <> (CAST(:lot_id AS TEXT) IS NULL))"""
# A reservation's: as a transfer's, with no target (the credits stay in the source until the
# reservation is posted).
_MAY_RESERVE = """EXISTS (
        SELECT 1 FROM bank_accounts AS s
        WHERE s.id = :from_account_id AND s.status = 'open'
          AND (CAST(:board AS BOOLEAN) OR s.holder_id = :holder_id)
          AND (CAST(:credit_class AS TEXT) IS NULL) <> (CAST(:lot_id AS TEXT) IS NULL))"""
_HELD = ", ".join(f"h.{column}" for column in locks.HELD_COLUMNS)
_CHILD_HELD = ", ".join(f"hc.{column}" for column in locks.HELD_COLUMNS)


def _sources(may_draw: str) -> store.Statement:
    return store.Statement(
        sql=f"""
WITH candidates AS (
    SELECT lot.id, lot.ledger_account_id, lot.bank_site_id, lot.deposit_id, lot.credit_class,
           site.frozen, lot.created_at, lot.label,
           b.credits_posted - b.debits_posted - b.debits_pending
           + CASE WHEN b.debits_pending > 0
                  THEN coalesce((SELECT sum(p.debits) FROM ledger_open_pending AS p
                                 WHERE p.account_id = lot.ledger_account_id
                                   AND p.expires_at <= :now), 0)
                  ELSE 0 END AS available
    FROM lots AS lot
    JOIN bank_sites AS site ON site.id = lot.bank_site_id
    LEFT JOIN ledger_balances AS b ON b.account_id = lot.ledger_account_id
    WHERE lot.account_id = :from_account_id
      AND (lot.credit_class = :credit_class OR lot.id = :lot_id)
), ranked AS (
    SELECT r.*,
           CASE WHEN r.frozen OR r.available <= 0 THEN 1 ELSE 0 END AS idle,
           sum(CASE WHEN r.frozen THEN 0 ELSE r.available END)
           OVER (ORDER BY r.created_at, length(r.label), r.label
                 ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
    FROM candidates AS r
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
                may_draw,
            )
        }
SELECT s.id, s.number, s.holder_id, s.status, t.id, t.status,
       c.id, c.ledger_account_id, c.bank_site_id, c.deposit_id, c.frozen,
       c.code, c.service_area, c.wetland_type, c.restricted, c.child_id, c.child_account_id,
       {_HELD}, {_CHILD_HELD},
       (SELECT count(*) FROM ranked WHERE ranked.frozen OR ranked.available > 0)
FROM (SELECT 1 AS one) AS base
LEFT JOIN bank_accounts AS s ON s.id = :from_account_id
LEFT JOIN bank_accounts AS t ON t.id = :to_account_id
LEFT JOIN c ON 1 = 1
LEFT JOIN held AS h ON h.account_id = c.ledger_account_id
LEFT JOIN held AS hc ON hc.account_id = c.child_account_id
WHERE (SELECT count(*) FROM held) >= 0
ORDER BY c.created_at, length(c.label), c.label
""",
        types={"now": DateTime(timezone=True)},
    )


#: a transfer's
SOURCES = _sources(_MAY_SEND)
#: a reservation's (``:to_account_id`` NULL)
RESERVATION_SOURCES = _sources(_MAY_RESERVE)
