"""Transfers of credits between bank accounts (docs/domain.md §1, §7).

Credits keep their class and provenance: each source lot drawn on gives a new lot in the receiving
account pointing at it.  A transferred lot is no longer federally approved (practice).  Which lots
are drawn on, and whether the source may send: ``bank.lot_picking``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, bindparam, select
from sqlalchemy.orm import Session

import ledger
from bank import credits, last_word, parties, policy
from bank.access import Actor
from bank.draw_sources import SOURCES
from bank.errors import Conflict, NotFound, ValidationFailed, found
from bank.ids import new_id
from bank.lot_picking import (
    Candidate,
    CreditSource,
    check_sender_status,
    draw_params,
    pick_drawn,
)
from bank.transfer_tables import Transfer as Transfer
from bank.transfer_tables import TransferLot as TransferLot
from ledger import clock, store
from ledger.db import Database


@dataclass(frozen=True)
class TransferRequest(CreditSource):
    """``POST /transfers``: by ``credit_class`` or by ``lot_id`` (exactly one)."""

    from_account_id: str
    to_account_id: str
    amount_sqft: int
    price_per_sqft_cents: int | None = None
    memo: str | None = None


@dataclass(frozen=True)
class TransferLotView:
    """How much of a transfer came from one source lot, and the lot it went to."""

    from_lot_id: str
    to_lot_id: str
    amount_sqft: int


@dataclass(frozen=True)
class TransferView:
    """A transfer as recorded, with its lots in the order drawn (its ledger transaction's id as
    text, as the API shows it)."""

    id: str
    transaction_id: str
    from_account_id: str
    to_account_id: str
    credit_class: credits.CreditClass
    amount_sqft: int
    price_per_sqft_cents: int | None
    memo: str | None
    recorded_at: datetime
    lots: tuple[TransferLotView, ...]


# The statements of a transfer, built once: built per call, their cache keys cost SQLAlchemy
# more than the database spends on them.
_CHILD = select(credits.Lot).where(
    credits.Lot.account_id == bindparam("account_id"),
    credits.Lot.parent_lot_id == bindparam("parent"),
)
# The transfer and its lots in one statement: two Core inserts would cost the request more client
# CPU than anything else it runs after the ledger's write.  The lots and the sites travel as JSON.
# It is the transfer's last word too (``bank.last_word``): it locks the two accounts FOR KEY
# SHARE, as it does the sites and the token, and inserts only if the source is still open, the
# target not closed, no such site frozen and the token not revoked; it answers with what it
# found.  SQLite runs the same checks and inserts as three statements (it has no INSERT inside
# WITH).
_RECORD_TRANSFER = store.Statement(
    postgresql=f"""
WITH accounts AS (
    SELECT id, status FROM bank_accounts
    WHERE id IN (:from_account_id, :to_account_id)
    ORDER BY id
    FOR KEY SHARE
), {last_word.SITES_AND_TOKEN}, checked AS (
    SELECT (SELECT status FROM accounts WHERE id = :from_account_id) AS source_status,
           (SELECT status FROM accounts WHERE id = :to_account_id) AS target_status,
           {last_word.FROZEN_SITES} AS frozen_sites,
           {last_word.REVOKED} AS revoked
), made AS (
    INSERT INTO transfers (id, from_account_id, to_account_id, credit_class, amount_sqft,
        price_per_sqft_cents, memo, transaction_id, recorded_at, actor)
    SELECT :id, :from_account_id, :to_account_id, :credit_class, :amount_sqft,
        :price_per_sqft_cents, :memo, :transaction_id, :recorded_at, :actor
    FROM checked
    WHERE source_status = 'open' AND target_status <> 'closed' AND frozen_sites IS NULL
      AND revoked = 0
    RETURNING id
), lots AS (
    INSERT INTO transfer_lots (transfer_id, from_lot_id, to_lot_id, amount_sqft)
    SELECT made.id, lot->>0, lot->>1, (lot->>2)::bigint
    FROM made CROSS JOIN jsonb_array_elements(:lots::jsonb) WITH ORDINALITY AS l(lot, n)
    ORDER BY l.n
)
SELECT source_status, target_status, frozen_sites, revoked FROM checked
""",
    sqlite=(
        f"""
INSERT INTO transfers (id, from_account_id, to_account_id, credit_class, amount_sqft,
    price_per_sqft_cents, memo, transaction_id, recorded_at, actor)
SELECT :id, :from_account_id, :to_account_id, :credit_class, :amount_sqft,
    :price_per_sqft_cents, :memo, :transaction_id, :recorded_at, :actor
WHERE (SELECT status FROM bank_accounts WHERE id = :from_account_id) = 'open'
  AND (SELECT status FROM bank_accounts WHERE id = :to_account_id) <> 'closed'
  AND {last_word.NOT_FROZEN_NOR_REVOKED}
""",
        """
INSERT INTO transfer_lots (transfer_id, from_lot_id, to_lot_id, amount_sqft)
SELECT transfers.id, json_extract(lot.value, '$[0]'), json_extract(lot.value, '$[1]'),
    json_extract(lot.value, '$[2]')
FROM transfers JOIN json_each(:lots) AS lot
WHERE transfers.id = :id
ORDER BY lot.key
""",
        f"""
SELECT (SELECT status FROM bank_accounts WHERE id = :from_account_id) AS source_status,
       (SELECT status FROM bank_accounts WHERE id = :to_account_id) AS target_status,
       {last_word.FROZEN_SITES_SQLITE} AS frozen_sites,
       {last_word.REVOKED_SQLITE} AS revoked
""",
    ),
    types={"recorded_at": DateTime(timezone=True)},
    columns={"frozen_sites": JSON()},
)


def transfer(
    db: Database, actor: Actor, request: TransferRequest, request_id: str | None
) -> TransferView:
    """Move credits (board, or the holder of the source account), as one ledger transaction, in a
    unit of work of its own or the caller's, retried after a deadlock (``lot_picking.pick_drawn``
    says where one may occur)."""
    return db.run(make_transfer, actor, request, request_id)


def make_transfer(
    session: Session, actor: Actor, request: TransferRequest, request_id: str | None
) -> TransferView:
    """``transfer`` in the caller's unit of work."""
    params = draw_params(
        actor, request.from_account_id, request.to_account_id, request, request.amount_sqft
    )  # refuses a draw of no single source, or of nothing, before any statement
    rows = store.of(session).run(session, SOURCES, params)
    source_id, number, _status, target_id = _check_accounts(actor, request, rows[0])
    chosen_from, (picks, held) = pick_drawn(session, SOURCES, params, rows)
    # _take refused if there were no candidates
    code, service_area, wetland_type, restricted = chosen_from[0][11:15]
    klass = credits.CreditClass(
        code=code, service_area=service_area, wetland_type=wetland_type, restricted=bool(restricted)
    )
    transfer_id = new_id("trf")
    legs, lots = [], []
    for item, amount in picks:
        child_id, child_account = item.child_id, item.child_account_id
        if child_id is None or child_account is None:
            child = _receiving_lot(session, target_id, klass, item)
            child_id, child_account = child.id, child.ledger_account_id
        legs.append(ledger.Leg(item.ledger_account_id, child_account, amount))
        lots.append(TransferLotView(item.lot_id, child_id, amount))
    posted = ledger.transfer(
        session,
        "transfer",
        legs,
        ledger.Meta(
            f"transfer:{transfer_id}",
            clock.today(),
            memo=request.memo,
            actor=actor.label,
            request_id=request_id,
        ),
        held=held,
    )
    done = TransferView(
        id=transfer_id,
        transaction_id=str(posted.transaction_id),
        from_account_id=source_id,
        to_account_id=target_id,
        credit_class=klass,
        amount_sqft=request.amount_sqft,
        price_per_sqft_cents=request.price_per_sqft_cents,
        memo=request.memo,
        recorded_at=clock.utcnow(),
        lots=tuple(lots),
    )
    sites = {item.bank_site_id for item, _ in picks}
    _record(session, done, posted.transaction_id, number, sites, actor)
    return done


def _check_accounts(
    actor: Actor, request: TransferRequest, row: Sequence[Any]
) -> tuple[str, str, str, str]:
    """The source account's id, number and status and the target's id, from ``SOURCES``' first
    row, once the caller may send from the source (board, or its holder) to the target."""
    source_id, number, holder_id, status, target_id, target_status = row[:6]
    if source_id is None or not policy.sees_holdings(actor, holder_id):
        raise NotFound(f"no account {request.from_account_id}")
    if target_id is None:
        raise ValidationFailed("no such account", {"to_account_id": ["no such account"]})
    if target_id == source_id:
        raise ValidationFailed("a transfer needs two accounts", {"to_account_id": ["same"]})
    check_sender_status(status, number, source_id)
    if target_status == "closed":
        raise Conflict("a closed account receives nothing")
    return source_id, number, status, target_id


def _record(
    session: Session,
    done: TransferView,
    transaction_id: int,
    source_number: str,
    sites: set[str],
    actor: Actor,
) -> None:
    """Insert the transfer and the lots it drew on and made (in ``done.lots``' order), once the
    source account, the receiving one and the ``sites`` drawn on are confirmed as they were."""
    lots = [[lot.from_lot_id, lot.to_lot_id, lot.amount_sqft] for lot in done.lots]
    params = {
        "id": done.id,
        "from_account_id": done.from_account_id,
        "to_account_id": done.to_account_id,
        "credit_class": done.credit_class.code,
        "amount_sqft": done.amount_sqft,
        "price_per_sqft_cents": done.price_per_sqft_cents,
        "memo": done.memo,
        "transaction_id": transaction_id,
        "recorded_at": done.recorded_at,
        "actor": actor.label,
        "lots": json.dumps(lots),
        "site_ids": json.dumps(sorted(sites)),
        "token_id": actor.token_id,
    }
    (found,) = store.of(session).run(session, _RECORD_TRANSFER, params)
    source_status, target_status, frozen_sites, revoked = found

    def check_accounts() -> None:
        check_sender_status(source_status, source_number, done.from_account_id)
        if target_status == "closed":
            raise Conflict("a closed account receives nothing")

    last_word.confirm(session, actor, frozen_sites, revoked, check_accounts)


def _receiving_lot(
    session: Session, target_id: str, klass: credits.CreditClass, parent: Candidate
) -> credits.Lot:
    """The receiving account's lot for credits from ``parent``: one per parent lot, so repeated
    transfers from the same lot accumulate in one child (provenance stays exact).

    Looked up again here, after the draw locked ``parent`` (``draw_sources.SOURCES``, or
    ``lot_picking.pick_drawn``'s second pass): a concurrent transfer from the same lot may have
    created the child and committed while we waited for that lock.
    """
    existing = session.execute(
        _CHILD, {"account_id": target_id, "parent": parent.lot_id}
    ).scalar_one_or_none()
    if existing is not None:
        return existing
    target = found(session.get(parties.BankAccount, target_id), f"no account {target_id}")
    return credits.new_lot(
        session,
        target,
        klass,
        bank_site_id=parent.bank_site_id,
        deposit_id=parent.deposit_id,
        parent_lot_id=parent.lot_id,
        federally_approved=False,
    )
