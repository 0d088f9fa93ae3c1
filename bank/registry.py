"""The registry's sealed tables: every record that says who holds credits or what a transaction
did, and a plan's notices as mailed, sealed like the ledger's own rows (``ledger.row_seals``).

Who holds what: a site's holder, an account's holder, a lot's account and parent, a credit class's
ledger accounts.  What a transaction did: deposits with their actions, reversals and the site's
register; transfers with their lots; reservations, withdrawals and their allocations; payments,
securities and each draw on a security.  A plan's notices (Subd. 6, 7: its legal record): the
members of the public who asked for a copy, each notice as mailed (its date, kind and document,
written with the row: null, and so for good, on a notice recorded before documents were kept;
the database refuses a new notice without one, migration 0031), the people it was mailed to,
and each copy mailed afterwards.  Each change of an account's status or a site's freeze
(``status_changes``: who, when, from what to what, why).  Only the columns that are a
record's changing state are left out: statuses, counters, names and addresses people correct
(a party's; those a notice was mailed to are as mailed), and a security's draws (``drawn_on``
and ``drawn_cents`` move with each draw).  A column written once, after the row,
with what the record says happened then is sealed when it is set (``set_once``): a filing fee's
reversal reason, the transaction that refunded, returned or reversed a payment, the one that
reversed a withdrawal on appeal, and a security's release (its date and reason).  A seal takes
the first value written, so the database also ties a payment's status and reason, and a
security's release, to the transactions in the hash chain that made them (migration 0026's
triggers, outside this list): a payment's compensation is the transaction reversing its own, its
status that transaction's kind (``received`` with none) and its reason the one the reversal's
memo gives; a release is the date and memo of the security's ``security-release:<id>``
transaction.  And a copy mailed names its own plan's request and notice (0030's keys).

An account's ``status`` and a site's ``frozen``, though state, are what the last change in
its history set (``TIES``): a status set at a SQL prompt, with no change recorded, is named.

A security's ``drawn_on`` and ``drawn_cents``, though state, are what its sealed draws say: the
latest draw's date and the sum of their amounts (the database writes them with each draw and
refuses any other value: migration 0027); and each draw is what its transaction in the hash
chain drew, and the transfer it holds again holds what was left of the security.

A payment's amount and a security's, sealed with the row, are what their own transactions in the
hash chain moved: the one keyed ``payment:<id>`` posted the payment's, the pending transfer keyed
``security:<id>`` held the security's (the bank writes each transaction, then its row; the
database refuses a row inserted with any other amount, or naming a transaction not its own:
migration 0032).

``TIES`` declares all of these, so that verify's full pass names a payment, a security or a draw
that disagrees with the hash chain: an edit made behind the triggers, or a row rewritten with its
seals (a database's triggers refuse such values as they are written, but only while they are
on); the check since a checkpoint names one among the rows the seals written since reach.

Migration 0007 installed these, and later migrations changed what a table seals
(``ledger.row_seals.reseal``: 0024, the payments' fee postmark and reversal reason; 0025, the
set-once links and the securities' release) or sealed more (0027, the draws; 0030, the plans'
notices, their recipients, the copy requests and the copies mailed; 0033, the history of each
account's status and each site's freeze); changing this list needs
such a migration (``tests/api/test_registry_seals.py`` checks the list is 0007's with
those changes).
"""

from __future__ import annotations

from ledger.row_seals import SealedTable
from ledger.row_ties import Source, Tie


def _all_but(
    name: str, id_column: str, columns: str, *, mutable: str = "", once: str = ""
) -> SealedTable:
    left_out = mutable.split() + once.split()
    sealed = tuple(c for c in columns.split() if c not in left_out)
    return SealedTable(name, id_column, sealed, tuple(once.split()))


SEALED_TABLES: tuple[SealedTable, ...] = (
    _all_but(
        "bank_sites",
        "id",
        "id name holder_id service_area county major_watershed frozen created_at",
        mutable="name county major_watershed frozen",
    ),
    _all_but(
        "bank_accounts",
        "id",
        "id number holder_id service_area county name status lot_count created_at",
        mutable="name status lot_count",
    ),
    _all_but(
        "credit_classes",
        "code",
        "code service_area wetland_type restricted issuance_account_id withdrawn_account_id",
    ),
    _all_but(
        "lots",
        "id",
        "id account_id label credit_class bank_site_id deposit_id parent_lot_id "
        "federally_approved ledger_account_id created_at",
    ),
    _all_but(
        "deposits",
        "id",
        "id account_id bank_site_id effective_on banking_plan_reference banking_plan_approved_on "
        "banking_plan_lgu_id wetland_type completed_on federally_approved "
        "designated_for_replacement paid_by_performer paid_back_with_interest ruleset "
        "transaction_id total_credit_sqft recorded_at actor",
    ),
    _all_but(
        "deposit_actions",
        "id",
        "id deposit_id position category area_sqft credit_sqft cap_sqft restricted credit_class "
        "lot_id details",
    ),
    _all_but(
        "deposit_reversals",
        "deposit_id",
        "deposit_id transaction_id effective_on reason recorded_at actor",
    ),
    _all_but(
        "bank_site_credit_areas",
        "id",
        "id bank_site_id category area_sqft source reason deposit_id recorded_at actor",
    ),
    _all_but(
        "transfers",
        "id",
        "id from_account_id to_account_id credit_class amount_sqft price_per_sqft_cents memo "
        "transaction_id recorded_at actor",
    ),
    _all_but("transfer_lots", "id", "id transfer_id from_lot_id to_lot_id amount_sqft"),
    _all_but(
        "reservations",
        "id",
        "id account_id plan_id credit_class lot_id amount_sqft expires_on created_at actor",
    ),
    _all_but(
        "reservation_lots", "id", "id reservation_id lot_id amount_sqft pending_transaction_id"
    ),
    _all_but(
        "withdrawals",
        "id",
        "id plan_id transaction_id reversal_transaction_id withdrawn_sqft created_at actor",
        once="reversal_transaction_id",
    ),
    _all_but(
        "withdrawal_allocations",
        "id",
        "id withdrawal_id reservation_id lot_id credit_class amount_sqft portion",
    ),
    _all_but(
        "payments",
        "id",
        "id kind amount_cents payer received_on plan_id appeal_id lgu_id transaction_id status "
        "compensation_transaction_id ruleset created_at actor postmarked_on reversal_reason",
        mutable="status",
        once="reversal_reason compensation_transaction_id",
    ),
    _all_but(
        "securities",
        "id",
        "id plan_id kind issuer amount_cents irrevocable issued_on expires_on "
        "pending_transaction_id released_on release_reason drawn_on drawn_cents created_at",
        mutable="drawn_on drawn_cents",
        once="released_on release_reason",
    ),
    _all_but(
        "security_draws",
        "id",
        "id security_id drawn_on amount_cents transaction_id held_transaction_id recorded_at",
    ),
    _all_but("plan_copy_requests", "id", "id plan_id name address requested_on recorded_at"),
    _all_but("plan_notices", "id", "id plan_id notice kind mailed_on document recorded_at"),
    _all_but("plan_notice_recipients", "id", "id notice_id position name address role"),
    _all_but(
        "plan_copies_mailed", "id", "id plan_id copy_request_id notice_id mailed_on recorded_at"
    ),
    _all_but(
        "status_changes",
        "id",
        "id subject_kind subject_id position from_status to_status reason actor recorded_at",
    ),
)

#: what a ledger transaction ``{tx}`` posted: the sum of its posted credits
_POSTED = (
    "(SELECT SUM(p.amount) FROM ledger_entries AS p "
    "WHERE p.transaction_id = {tx} AND p.phase = 'posted' AND p.amount > 0)"
)
#: the draws of the security ``t``
_ITS_DRAWS = "FROM security_draws AS d WHERE d.security_id = t.id"
#: a security drawn before each draw had a row (migration 0011): none, and its own pending
#: transfer posted by a ``security_drawn`` transaction of its ``drawn_on`` and ``drawn_cents``
#: (scalar subqueries, which PostgreSQL runs per row through the indexes, where it may run an
#: ``EXISTS`` once over the whole table to hash it: a pending transfer is resolved by one
#: transaction, its release entries' ``transaction_id``)
_DRAWN_BEFORE_DRAW_ROWS = (
    f"((SELECT COUNT(*) {_ITS_DRAWS}) = 0 AND COALESCE((SELECT r.kind = 'security_drawn' "
    f"AND r.effective_on = t.drawn_on AND {_POSTED.format(tx='r.id')} = t.drawn_cents "
    "FROM ledger_transactions AS r WHERE r.id = (SELECT MIN(x.transaction_id) "
    "FROM ledger_entries AS x WHERE x.resolves_id = t.pending_transaction_id "
    "AND x.resolution = 'posted')), FALSE))"
)
#: a draw's transaction (``t``: the draw) is its own (keyed ``security-draw:<id>``), a draw, and
#: posts what its security held: the security's own pending transfer or the rest an earlier draw
#: of it held again
_DRAWS_ITS_SECURITY = (
    "EXISTS (SELECT 1 FROM ledger_transactions AS r "
    "JOIN ledger_entries AS x ON x.transaction_id = r.id "
    "JOIN securities AS sc ON sc.id = t.security_id "
    "WHERE r.id = t.transaction_id AND r.kind = 'security_drawn' "
    "AND r.idempotency_key = 'security-draw:' || t.id AND x.resolution = 'posted' "
    "AND (x.resolves_id = sc.pending_transaction_id OR x.resolves_id IN ("
    "SELECT o.held_transaction_id FROM security_draws AS o WHERE o.security_id = t.security_id)))"
)

#: what was left of the security of the draw ``t`` once it was drawn: the security's amount less
#: its draws posted up to this one (in the order they were posted, as its transactions were)
_LEFT_AFTER = (
    "((SELECT sc.amount_cents FROM securities AS sc WHERE sc.id = t.security_id) - "
    "(SELECT SUM(o.amount_cents) FROM security_draws AS o "
    "WHERE o.security_id = t.security_id AND o.transaction_id <= t.transaction_id))"
)
#: what the pending transfer ``{tx}`` holds: the sum of its pending credits (none: 0)
_HOLDS = (
    "COALESCE((SELECT SUM(p.amount) FROM ledger_entries AS p "
    "WHERE p.transaction_id = {tx} AND p.phase = 'pending' AND p.amount > 0), 0)"
)
#: the release transaction of the security ``t`` (its ``{column}``)
_RELEASE = (
    "(SELECT r.{column} FROM ledger_transactions AS r "
    "WHERE r.idempotency_key = 'security-release:' || t.id)"
)
#: the reason migration 0011 gave a security drawn in part before it: the ledger released the
#: rest with that draw, before a release had a transaction of its own
LEGACY_RELEASE = "the rest was released when it was drawn in part"
#: a security 0011 marked released (``t``): drawn in part before draws had rows, released on that
#: draw's date with 0011's reason, and no release transaction
_RELEASED_BY_0011 = (
    f"(COALESCE(t.release_reason = '{LEGACY_RELEASE}' AND t.released_on = t.drawn_on "
    "AND t.drawn_cents < t.amount_cents, FALSE) "
    f"AND {_RELEASE.format(column='id')} IS NULL AND {_DRAWN_BEFORE_DRAW_ROWS})"
)
#: what a record's own transaction moved: the sum of the credits of phase ``{phase}`` of the
#: transaction ``{tx}``, if it is the one keyed ``{key}`` (none otherwise: NULL); one row by its
#: key, its entries by theirs
_OWN_MOVED = (
    "(SELECT SUM(p.amount) FROM ledger_transactions AS r "
    "JOIN ledger_entries AS p ON p.transaction_id = r.id "
    "WHERE r.id = {tx} AND r.idempotency_key = {key} AND p.phase = '{phase}' AND p.amount > 0)"
)
#: the amount the payment ``t`` was booked with: its transaction, keyed ``payment:<id>``
#: (``bank.money.receive_payment``), posted it
_PAID = _OWN_MOVED.format(tx="t.transaction_id", key="'payment:' || t.id", phase="posted")
#: the amount the security ``t`` was given for: its pending transfer, keyed ``security:<id>``
#: (``bank.securities.hold_security``), held it (its pending entries stay when it is drawn on,
#: released or lapses: a resolution is entries of another transaction)
_HELD = _OWN_MOVED.format(tx="t.pending_transaction_id", key="'security:' || t.id", phase="pending")
#: a security's draws, which give its drawn total and date: a draw sealed since a checkpoint has
#: the check since it weigh its security's
_DRAWS = Source("security_draws", "id", "security_id")
#: the compensation transaction of the payment ``t`` (its ``{column}``)
_COMPENSATION = (
    "(SELECT r.{column} FROM ledger_transactions AS r WHERE r.id = t.compensation_transaction_id)"
)

#: the status the last recorded change of the account or site ``t`` set, or with none the one it
#: was opened (``open``) or registered (``unfrozen``) with (``bank.status_history``; by the unique
#: key of its subject and position)
_LAST_STATUS = (
    "COALESCE((SELECT h.to_status FROM status_changes AS h WHERE h.subject_id = t.id "
    "ORDER BY h.position DESC LIMIT 1), '{first}')"
)
#: a status change sealed since a checkpoint has the check since it weigh its account or site
_HISTORY = Source("status_changes", "id", "subject_id")

TIES: tuple[Tie, ...] = (
    Tie(
        "withdrawals",
        "id",
        "reversal_transaction_id",
        "COALESCE(t.reversal_transaction_id, 0) = COALESCE((SELECT r.id FROM "
        "ledger_transactions AS r WHERE r.reverses_id = t.transaction_id), 0)",
        "the transaction reversing its own (none while nothing has)",
    ),
    Tie(
        "payments",
        "id",
        "amount_cents",
        f"COALESCE({_PAID} = t.amount_cents, FALSE)",
        "what its own transaction (keyed payment:<its id>) posted",
    ),
    Tie(
        "payments",
        "id",
        "compensation_transaction_id",
        "COALESCE(t.compensation_transaction_id, 0) = COALESCE((SELECT r.id FROM "
        "ledger_transactions AS r WHERE r.reverses_id = t.transaction_id), 0)",
        "the transaction reversing its own (none while nothing has)",
    ),
    Tie(
        "payments",
        "id",
        "status",
        "COALESCE(t.status = 'received' AND t.compensation_transaction_id IS NULL, FALSE) "
        f"OR COALESCE({_COMPENSATION.format(column='kind')} = 'payment_' || t.status, FALSE)",
        "its compensation's kind (received with none, else payment_<status>)",
    ),
    Tie(
        "payments",
        "id",
        "reversal_reason",
        "CASE WHEN t.status = 'reversed' THEN "
        f"COALESCE({_COMPENSATION.format(column='memo')} = "
        "'payment ' || t.id || ' reversed' || COALESCE(': ' || t.reversal_reason, ''), FALSE) "
        "ELSE t.reversal_reason IS NULL END",
        "the reason its reversal's memo gives (none unless reversed)",
    ),
    # before the draws' ties, which weigh a security's amount: an amount rewritten is named on
    # the security, not on the draws it makes disagree
    Tie(
        "securities",
        "id",
        "amount_cents",
        f"COALESCE({_HELD} = t.amount_cents, FALSE)",
        "what its own pending transfer (keyed security:<its id>) held",
    ),
    Tie(
        "securities",
        "id",
        "released_on",
        f"COALESCE(t.released_on, '0001-01-01') = "
        f"COALESCE({_RELEASE.format(column='effective_on')}, '0001-01-01') "
        f"OR {_RELEASED_BY_0011}",
        "its release transaction's effective date (none while it has none)",
    ),
    Tie(
        "securities",
        "id",
        "release_reason",
        f"COALESCE(t.release_reason IS NULL AND {_RELEASE.format(column='id')} IS NULL "
        f"OR {_RELEASE.format(column='memo')} = t.release_reason, FALSE) "
        f"OR {_RELEASED_BY_0011}",
        "its release transaction's memo (none while it has none)",
    ),
    Tie(
        "security_draws",
        "id",
        "transaction_id",
        _DRAWS_ITS_SECURITY,
        "a security_drawn transaction keyed security-draw:<its id> posting what its security held",
    ),
    Tie(
        "security_draws",
        "id",
        "drawn_on",
        "COALESCE((SELECT r.effective_on FROM ledger_transactions AS r "
        "WHERE r.id = t.transaction_id) = t.drawn_on, FALSE)",
        "its transaction's effective date",
    ),
    Tie(
        "security_draws",
        "id",
        "amount_cents",
        f"COALESCE({_POSTED.format(tx='t.transaction_id')} = t.amount_cents, FALSE)",
        "what its transaction posted",
    ),
    Tie(
        "security_draws",
        "id",
        "held_transaction_id",
        "COALESCE(t.held_transaction_id, 0) = COALESCE((SELECT h.id FROM ledger_transactions "
        "AS h WHERE h.idempotency_key = 'security-rest:' || t.id), 0)",
        "the transfer keyed security-rest:<its id> that holds the rest (none when nothing is left)",
    ),
    Tie(
        "security_draws",
        "id",
        "held_transaction_id",
        f"COALESCE({_HOLDS.format(tx='t.held_transaction_id')} = {_LEFT_AFTER}, FALSE)",
        "a transfer holding what was left of its security (its amount less its draws up to "
        "this one; none when nothing was left)",
    ),
    Tie(
        "securities",
        "id",
        "drawn_cents",
        f"COALESCE(t.drawn_cents, -1) = COALESCE((SELECT SUM(d.amount_cents) {_ITS_DRAWS}), -1) "
        f"OR {_DRAWN_BEFORE_DRAW_ROWS}",
        "the sum of its draws' amounts",
        (_DRAWS,),
    ),
    Tie(
        "securities",
        "id",
        "drawn_on",
        f"COALESCE(t.drawn_on, '0001-01-01') = "
        f"COALESCE((SELECT MAX(d.drawn_on) {_ITS_DRAWS}), '0001-01-01') "
        f"OR {_DRAWN_BEFORE_DRAW_ROWS}",
        "the date of its latest draw",
        (_DRAWS,),
    ),
    Tie(
        "bank_accounts",
        "id",
        "status",
        f"{_LAST_STATUS.format(first='open')} = t.status",
        "the status the last change in its history set (open with none)",
        (_HISTORY,),
    ),
    Tie(
        "bank_sites",
        "id",
        "frozen",
        f"{_LAST_STATUS.format(first='unfrozen')} = "
        "CASE WHEN t.frozen THEN 'frozen' ELSE 'unfrozen' END",
        "the freeze the last change in its history set (unfrozen with none)",
        (_HISTORY,),
    ),
)
"""Columns whose value other records give (``ledger.row_ties.Tie``), checked by verify's full
pass, one statement each, every row's look-ups by index: a payment's amount is what its own
transaction posted, and its compensation, status and reversal reason are its reversal's; a
security's amount is what its own pending transfer held, and its release is its release
transaction's; each draw
is what its transaction drew and holds again what was left; a security's drawn total and date
are its draws'; an account's status and a site's freeze are what the last change in its history
(``bank.status_history``) set.  The check since a checkpoint weighs them, one statement each, on
the rows written since or given a set-once value since (their seals' positions), on the
securities drawn on since, and on the accounts and sites whose status changed since."""
