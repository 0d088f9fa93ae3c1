"""Transfers of credits between bank accounts (DOMAIN.md §1, §7).

Credits keep their class and provenance: each source lot drawn on gives a new lot in the receiving
account pointing at it.  A transferred lot is no longer federally approved (practice).  By credit
class, the oldest unfrozen lots with credits available go first.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    bindparam,
    select,
)
from sqlalchemy.orm import Mapped, Session, aliased, mapped_column

import ledger
from bank import access, credits, parties
from bank.access import Actor
from bank.errors import (
    AccountFrozen,
    Conflict,
    InsufficientCredits,
    NotFound,
    ValidationFailed,
)
from bank.ids import new_id
from ledger import clock, store
from ledger.schema import Base


class Transfer(Base):
    """A transfer of credits of one class from one account to another."""

    __tablename__ = "transfers"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    from_account_id: Mapped[str] = mapped_column(ForeignKey("bank_accounts.id"), index=True)
    to_account_id: Mapped[str] = mapped_column(ForeignKey("bank_accounts.id"), index=True)
    credit_class: Mapped[str] = mapped_column(ForeignKey("credit_classes.code"))
    amount_sqft: Mapped[int] = mapped_column(BigInteger)
    price_per_sqft_cents: Mapped[int | None] = mapped_column(BigInteger)
    memo: Mapped[str | None] = mapped_column(Text)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))


class TransferLot(Base):
    """How much of a transfer came from one source lot, and the lot it made."""

    __tablename__ = "transfer_lots"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    transfer_id: Mapped[str] = mapped_column(ForeignKey("transfers.id"), index=True)
    from_lot_id: Mapped[str] = mapped_column(ForeignKey("lots.id"))
    to_lot_id: Mapped[str] = mapped_column(ForeignKey("lots.id"))
    amount_sqft: Mapped[int] = mapped_column(BigInteger)


@dataclass(frozen=True)
class TransferRequest:
    """``POST /transfers``: by ``credit_class`` or by ``lot_id`` (exactly one)."""

    from_account_id: str
    to_account_id: str
    amount_sqft: int
    credit_class: str | None = None
    lot_id: str | None = None
    price_per_sqft_cents: int | None = None
    memo: str | None = None


# The statements of a transfer, built once: built per call, their cache keys and the ORM's
# bulk-insert path cost SQLAlchemy more than the database spends on them.
# The inserts are Core (the tables'), so no ORM unit of work is involved.
_ACCOUNTS = select(parties.BankAccount).where(
    parties.BankAccount.id.in_(bindparam("ids", expanding=True))
)
_CHILD = aliased(credits.Lot, name="child")
# a source account's lots of a class, oldest first, each with its site's frozen flag, the class,
# and the lot already descending from it in the receiving account (at most one: unique)
_CANDIDATES = (
    credits.LOTS_OF_CLASS.add_columns(credits.CreditClass, _CHILD)
    .join(credits.CreditClass, credits.CreditClass.code == credits.Lot.credit_class)
    .outerjoin(
        _CHILD,
        (_CHILD.parent_lot_id == credits.Lot.id) & (_CHILD.account_id == bindparam("receiving")),
    )
)
_CHILDREN = select(credits.Lot).where(
    credits.Lot.account_id == bindparam("account_id"),
    credits.Lot.parent_lot_id.in_(bindparam("parents", expanding=True)),
)
# The transfer and its lots in one statement: two Core inserts would cost the request more client
# CPU than anything else it runs after the ledger's write.  The lots and the sites travel as JSON.
# It is the transfer's last word too (``confirm_can_send``, ``access.confirm_token``): it locks the
# two accounts, the sites of the lots drawn on and the caller's token FOR KEY SHARE, and inserts
# only if the source is still open, the target not closed, no such site frozen and the token not
# revoked; it answers with what it found.  (A locking read that waited for a freeze or a
# revocation returns the row as that left it.)  The checks' rows are aggregated, so every one of
# them is read, and so locked.  SQLite, whose one writer holds the whole database, runs the same
# checks and inserts as three statements (it has no INSERT inside WITH).
_RECORD_TRANSFER = store.Statement(
    postgresql="""
WITH accounts AS (
    SELECT id, status FROM bank_accounts
    WHERE id IN (:from_account_id, :to_account_id)
    ORDER BY id
    FOR KEY SHARE
), sites AS (
    SELECT id, frozen FROM bank_sites
    WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text(:site_ids::jsonb)))
    ORDER BY id
    FOR KEY SHARE
), token AS (
    SELECT revoked_at FROM api_tokens WHERE id = :token_id FOR KEY SHARE
), checked AS (
    SELECT (SELECT status FROM accounts WHERE id = :from_account_id) AS source_status,
           (SELECT status FROM accounts WHERE id = :to_account_id) AS target_status,
           (SELECT array_agg(id ORDER BY id) FILTER (WHERE frozen) FROM sites) AS frozen_sites,
           (SELECT count(revoked_at) FROM token) AS revoked
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
        """
INSERT INTO transfers (id, from_account_id, to_account_id, credit_class, amount_sqft,
    price_per_sqft_cents, memo, transaction_id, recorded_at, actor)
SELECT :id, :from_account_id, :to_account_id, :credit_class, :amount_sqft,
    :price_per_sqft_cents, :memo, :transaction_id, :recorded_at, :actor
WHERE (SELECT status FROM bank_accounts WHERE id = :from_account_id) = 'open'
  AND (SELECT status FROM bank_accounts WHERE id = :to_account_id) <> 'closed'
  AND NOT EXISTS (SELECT 1 FROM bank_sites
                  WHERE frozen AND id IN (SELECT value FROM json_each(:site_ids)))
  AND NOT EXISTS (SELECT 1 FROM api_tokens WHERE id = :token_id AND revoked_at IS NOT NULL)
""",
        """
INSERT INTO transfer_lots (transfer_id, from_lot_id, to_lot_id, amount_sqft)
SELECT transfers.id, json_extract(lot.value, '$[0]'), json_extract(lot.value, '$[1]'),
    json_extract(lot.value, '$[2]')
FROM transfers JOIN json_each(:lots) AS lot
WHERE transfers.id = :id
ORDER BY lot.key
""",
        """
SELECT (SELECT status FROM bank_accounts WHERE id = :from_account_id) AS source_status,
       (SELECT status FROM bank_accounts WHERE id = :to_account_id) AS target_status,
       (SELECT json_group_array(id) FROM (
            SELECT id FROM bank_sites
            WHERE frozen AND id IN (SELECT value FROM json_each(:site_ids)) ORDER BY id)
       ) AS frozen_sites,
       (SELECT count(revoked_at) FROM api_tokens WHERE id = :token_id) AS revoked
""",
    ),
    types={"recorded_at": DateTime(timezone=True)},
    columns={"frozen_sites": JSON()},
)


def make_transfer(
    session: Session, actor: Actor, request: TransferRequest, request_id: str | None
) -> dict[str, Any]:
    """Move credits (board, or the holder of the source account), as one ledger transaction."""
    # both accounts in one round trip: while this list holds them, the look-ups below find them
    # in the session's identity map (which keeps only weak references)
    _loaded = session.execute(
        _ACCOUNTS, {"ids": [request.from_account_id, request.to_account_id]}
    ).all()
    source = parties.visible_account(session, actor, request.from_account_id)
    target = session.get(parties.BankAccount, request.to_account_id)
    if target is None:
        raise ValidationFailed("no such account", {"to_account_id": ["no such account"]})
    if target.id == source.id:
        raise ValidationFailed("a transfer needs two accounts", {"to_account_id": ["same"]})
    check_can_send(source)
    if target.status == "closed":
        raise Conflict("a closed account receives nothing")
    picked = pick_lots(
        session, source, request.credit_class, request.lot_id, request.amount_sqft, target
    )
    klass = picked.klass
    transfer_id = new_id("trf")
    legs, made = [], []
    for item, amount in picked.picks:
        child = picked.children.get(item.lot.id) or _receiving_lot(session, target, klass, item.lot)
        legs.append(ledger.Leg(item.lot.ledger_account_id, child.ledger_account_id, amount))
        made.append({"from_lot_id": item.lot.id, "to_lot_id": child.id, "amount_sqft": amount})
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
    )
    row = {
        "id": transfer_id,
        "from_account_id": source.id,
        "to_account_id": target.id,
        "credit_class": klass.code,
        "amount_sqft": request.amount_sqft,
        "price_per_sqft_cents": request.price_per_sqft_cents,
        "memo": request.memo,
        "transaction_id": posted.transaction_id,
        "recorded_at": clock.utcnow(),
        "actor": actor.label,
    }
    sites = {item.lot.bank_site_id for item, _ in picked.picks}
    _record(session, row, made, source, sites, actor)
    return _transfer_dict(row, klass, made)


def _record(
    session: Session,
    row: dict[str, Any],
    made: list[dict[str, Any]],
    source: parties.BankAccount,
    sites: set[str],
    actor: Actor,
) -> None:
    """Insert the transfer and the lots it drew on and made (in ``made``'s order), once the
    source account, the receiving one and the ``sites`` drawn on are confirmed as they were."""
    lots = [[m["from_lot_id"], m["to_lot_id"], m["amount_sqft"]] for m in made]
    params = dict(
        row,
        lots=json.dumps(lots),
        site_ids=json.dumps(sorted(sites)),
        token_id=actor.token_id,
    )
    (found,) = store.of(session).run(session, _RECORD_TRANSFER, params)
    source_status, target_status, frozen_sites, revoked = found
    if revoked:
        raise access.TokenRevoked("the bearer token was revoked")
    access.token_confirmed(session, actor.token_id)
    _check_sender_status(source_status, source.number, source.id)
    if target_status == "closed":
        raise Conflict("a closed account receives nothing")
    _check_sites(frozen_sites or [])


def _existing_children(
    session: Session, target: parties.BankAccount, parents: list[credits.Lot]
) -> dict[str, credits.Lot]:
    """The receiving account's lots that already descend from ``parents``, by parent lot id."""
    lots = session.execute(
        _CHILDREN, {"account_id": target.id, "parents": [lot.id for lot in parents]}
    ).scalars()
    return {str(lot.parent_lot_id): lot for lot in lots}


def _receiving_lot(
    session: Session, target: parties.BankAccount, klass: credits.CreditClass, parent: credits.Lot
) -> credits.Lot:
    """The receiving account's lot for credits from ``parent``: one per parent lot, so repeated
    transfers from the same lot accumulate in one child (provenance stays exact).

    Looked up again here, after ``pick_lots`` locked ``parent``: a concurrent transfer from the
    same lot may have created the child and committed while we waited for that lock.
    """
    existing = _existing_children(session, target, [parent]).get(parent.id)
    if existing is not None:
        return existing
    return credits.new_lot(
        session,
        target,
        klass,
        bank_site_id=parent.bank_site_id,
        deposit_id=parent.deposit_id,
        parent_lot_id=parent.id,
        federally_approved=False,
    )


def check_can_send(account: parties.BankAccount) -> None:
    """A frozen account sends nothing out (DOMAIN.md §7); a closed one nothing at all."""
    _check_sender_status(account.status, account.number, account.id)


def _check_sender_status(status: str, number: str, account_id: str) -> None:
    if status == "frozen":
        raise AccountFrozen(f"account {number} is frozen", account_id=account_id)
    if status == "closed":
        raise Conflict(f"account {number} is closed", account_id=account_id)


def _check_sites(frozen_site_ids: list[str]) -> None:
    if frozen_site_ids:
        raise AccountFrozen(
            "the credits asked for are frozen (bank site)", bank_site_ids=frozen_site_ids
        )


# Built once, as the statements above.  FOR KEY SHARE conflicts only with FOR UPDATE: with a
# freeze or a close (``parties.set_account_status``, ``parties.set_site_frozen``), not with
# another writer's share, its foreign-key checks or its update of ``lot_count``.
_CONFIRM_ACCOUNTS = (
    select(parties.BankAccount.id, parties.BankAccount.number, parties.BankAccount.status)
    .where(parties.BankAccount.id.in_(bindparam("ids", expanding=True)))
    .order_by(parties.BankAccount.id)
    .with_for_update(read=True, key_share=True)
)
_CONFIRM_SITES = (
    select(parties.BankSite.id, parties.BankSite.frozen)
    .where(parties.BankSite.id.in_(bindparam("ids", expanding=True)))
    .order_by(parties.BankSite.id)
    .with_for_update(read=True, key_share=True)
)


def confirm_can_send(
    session: Session,
    senders: Collection[str],
    sites: Collection[str],
    *,
    receiving: str | None = None,
) -> None:
    """A write's last word before it moves credits out of ``senders`` (accounts) drawn from lots
    of ``sites``: each sender still open, no such site frozen, ``receiving`` not closed.

    ``check_can_send`` and the lots' frozen flags were read without a lock when the write began,
    and the write may have waited since (for a busy lot's lock): a freeze that answered meanwhile
    is seen here, a freeze still running waits for this transaction, since the rows stay locked
    (FOR KEY SHARE) until it ends.  So once a freeze has answered, nothing it froze moves.  Run
    after every statement that may wait for a lock.  (SQLite: one writer at a time; the rows
    read here are those the write began with.)
    """
    ids = set(senders) | ({receiving} if receiving is not None else set())
    for account_id, number, status in session.execute(_CONFIRM_ACCOUNTS, {"ids": sorted(ids)}):
        if account_id in senders:
            _check_sender_status(status, number, account_id)
        elif status == "closed":
            raise Conflict("a closed account receives nothing")
    found = session.execute(_CONFIRM_SITES, {"ids": sorted(set(sites))}).all()
    _check_sites([site_id for site_id, frozen in found if frozen])


@dataclass(frozen=True)
class Picked:
    """The lots chosen for a draw, what to take from each, their credit class, and (for a
    transfer) the receiving account's lots already descending from them, by parent lot id."""

    picks: list[tuple[credits.LotBalance, int]]
    klass: credits.CreditClass
    children: dict[str, credits.Lot]


def pick_lots(
    session: Session,
    account: parties.BankAccount,
    credit_class: str | None,
    lot_id: str | None,
    amount_sqft: int,
    receiving: parties.BankAccount | None = None,
) -> Picked:
    """Choose the lots to draw ``amount_sqft`` from, and lock them.

    By lot: that lot.  By class: the oldest lots first, skipping frozen ones.  Refuses with
    ``account_frozen`` when only frozen credits would cover it, else ``insufficient_credits``.
    The candidate lots are read in one statement with their class and, for a transfer, the
    ``receiving`` account's lots descending from them.  All of those lots are locked in ONE
    statement in ascending id, the global lock order, so two transfers in opposite directions
    cannot deadlock; the choice is made from the locked balances, so no concurrent writer can
    change it before this transaction ends.
    """
    if (credit_class is None) == (lot_id is None):
        raise ValidationFailed(
            "name either a credit class or a lot",
            {"credit_class": ["give credit_class or lot_id, not both"]},
        )
    if lot_id is not None:
        lot = session.get(credits.Lot, lot_id)
        if lot is None or lot.account_id != account.id:
            raise NotFound(f"no lot {lot_id} in account {account.number}")
        credit_class = lot.credit_class
    rows = session.execute(
        _CANDIDATES,
        {
            "account_id": account.id,
            "credit_class": credit_class,
            "receiving": receiving.id if receiving is not None else None,
        },
    ).all()
    if lot_id is not None:
        rows = [row for row in rows if row[0].id == lot_id]
    children = {lot.id: child for lot, _, _, child in rows if child is not None}
    lock_ids = [lot.ledger_account_id for lot, *_ in rows]
    lock_ids += [child.ledger_account_id for child in children.values()]
    locked = ledger.lock(session, lock_ids)
    lots = [(lot, bool(frozen)) for lot, frozen, _, _ in rows]
    picks = _take(credits.with_balances(account, lots, locked), amount_sqft)
    return Picked(picks, rows[0][2], children)  # _take refused if there were no rows


def _take(items: list[credits.LotBalance], amount: int) -> list[tuple[credits.LotBalance, int]]:
    usable = [item for item in items if item.available_sqft > 0]
    available = sum(item.available_sqft for item in usable)
    if available < amount:
        unfrozen_if = sum(max(item.posted_sqft - item.reserved_sqft, 0) for item in items)
        if unfrozen_if >= amount:
            raise AccountFrozen(
                "the credits asked for are frozen (account or bank site)",
                available_sqft=available,
                requested_sqft=amount,
            )
        raise InsufficientCredits(
            f"only {available} sq ft available", available_sqft=available, requested_sqft=amount
        )
    picks, left = [], amount
    for item in usable:
        take = min(left, item.available_sqft)
        picks.append((item, take))
        left -= take
        if left == 0:
            break
    return picks


def _transfer_dict(
    row: dict[str, Any], klass: credits.CreditClass, lots: list[dict[str, Any]]
) -> dict[str, Any]:
    """A transfer as the API shows it, from what was written."""
    return {
        "id": row["id"],
        "transaction_id": str(row["transaction_id"]),
        "from_account_id": row["from_account_id"],
        "to_account_id": row["to_account_id"],
        "credit_class": credits.class_dict(klass),
        "amount_sqft": row["amount_sqft"],
        "price_per_sqft_cents": row["price_per_sqft_cents"],
        "memo": row["memo"],
        "recorded_at": row["recorded_at"],
        "lots": lots,
    }
