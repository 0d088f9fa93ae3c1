"""Drawing credits out of an account: whether it may send, which of its lots to draw on, and
the write's last word before it moves them (docs/domain.md §1, §7).

Transfers and reservations (and so withdrawals) draw this way, from the rows of the statement
they begin with (``bank.draw_sources``).  By credit class, the oldest unfrozen
lots with credits available go first; by lot, that lot.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from sqlalchemy import bindparam, select
from sqlalchemy.orm import Session

import ledger
from bank import parties
from bank.access import Actor
from bank.errors import AccountFrozen, Conflict, InsufficientCredits, NotFound, ValidationFailed
from bank.wording import sqft
from ledger import clock, store
from ledger.account_cache import AccountRow
from ledger.locks import held_rows, lock_balances


def check_can_send(account: parties.BankAccount) -> None:
    """A frozen account sends nothing out (docs/domain.md §7); a closed one nothing at all."""
    check_sender_status(account.status, account.number, account.id)


def check_sender_status(status: str, number: str, account_id: str) -> None:
    """``check_can_send`` on an account's status as a statement read it."""
    if status == "frozen":
        raise AccountFrozen(f"account {number} is frozen", account_id=account_id)
    if status == "closed":
        raise Conflict(f"account {number} is closed", account_id=account_id)


def check_sites(frozen_site_ids: list[str]) -> None:
    """Nothing is drawn from lots of a frozen bank site."""
    if frozen_site_ids:
        raise AccountFrozen(
            "the credits asked for are frozen (bank site)", bank_site_ids=frozen_site_ids
        )


# FOR KEY SHARE conflicts only with FOR UPDATE: with a freeze or a close
# (``parties.set_account_status``, ``parties.set_site_frozen``), not with another writer's share,
# its foreign-key checks or its update of ``lot_count``.
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
            check_sender_status(status, number, account_id)
        elif status == "closed":
            raise Conflict("a closed account receives nothing")
    found = session.execute(_CONFIRM_SITES, {"ids": sorted(set(sites))}).all()
    check_sites([site_id for site_id, frozen in found if frozen])


@dataclass(frozen=True, kw_only=True)
class CreditSource:
    """What a request draws credits from: a credit class or one lot (``check_draw``)."""

    credit_class: str | None = None
    lot_id: str | None = None


def check_draw(credit_class: str | None, lot_id: str | None, amount_sqft: int) -> None:
    """Credits are drawn by class or from one lot (exactly one of them named), a whole positive
    number of square feet: the API's and the pages' schemas refuse anything else first, and a
    caller in process hears the same."""
    if (credit_class is None) == (lot_id is None):
        raise ValidationFailed(
            "name either a credit class or a lot",
            {"credit_class": ["give credit_class or lot_id, not both"]},
        )
    if amount_sqft < 1:
        raise ValidationFailed("draw at least 1 sq ft", {"amount_sqft": ["must be at least 1"]})


@dataclass(frozen=True, slots=True)
class Candidate:
    """A lot a draw may take from, as ``draw_sources``' statement reads it, with what it holds
    once locked, and the receiving account's lot already descending from it (if any)."""

    lot_id: str
    ledger_account_id: int
    bank_site_id: str
    deposit_id: str
    posted_sqft: int
    reserved_sqft: int
    frozen: bool
    child_id: str | None
    child_account_id: int | None

    @property
    def available_sqft(self) -> int:
        return 0 if self.frozen else self.posted_sqft - self.reserved_sqft


CandidatesPicked = tuple[list[tuple[Candidate, int]], dict[int, AccountRow]]


def pick_candidates(
    session: Session, rows: Sequence[Sequence[Any]], lot_id: str | None, amount_sqft: int
) -> CandidatesPicked | None:
    """The lots to draw ``amount_sqft`` from, among the candidate ``rows`` (as
    ``draw_sources``' statement gives them) of a source account whose status was checked, and
    what to take from each, with the locked balance rows, for the write (``ledger.transfer``'s
    ``held``).  By lot: that lot.  By class: the oldest first, skipping frozen ones.  Refuses
    with ``account_frozen`` when only frozen credits would cover it, else
    ``insufficient_credits``.  ``None`` when ``rows`` are the oldest candidates only, others
    could give credits (``draw_sources``' count: neither emptied nor held in full when read),
    and, locked, they no longer hold the amount: ``pick_every`` then chooses from them all.

    The statement locked the lots and their receiving children (ascending id, the global lock
    order), so the choice is made from locked balances and no concurrent writer can change it
    before this transaction ends.  When the oldest, locked, hold the amount, the choice is
    theirs: oldest first, it would draw on nothing else.
    """
    candidates, held = _locked(session, rows, lot_id)
    if len(candidates) < rows[0][33] and _available(candidates) < amount_sqft:
        return None
    return _take(candidates, amount_sqft), held


def draw_params(
    actor: Actor, source_id: str, target_id: str | None, source: CreditSource, amount_sqft: int
) -> dict[str, Any]:
    """The parameters of a draw's first statement (``bank.draw_sources``): from ``source_id``
    (to ``target_id``, a transfer's), by ``actor``, as of now; refused first if the draw names
    no single source or less than 1 sq ft (``check_draw``)."""
    check_draw(source.credit_class, source.lot_id, amount_sqft)
    return {
        "from_account_id": source_id,
        "to_account_id": target_id,
        "credit_class": source.credit_class,
        "lot_id": source.lot_id,
        "reach_sqft": amount_sqft,
        "now": clock.utcnow(),
        "board": actor.is_board,
        "holder_id": actor.holder_id,
    }


def pick_drawn(
    session: Session,
    statement: store.Statement,
    params: dict[str, Any],
    rows: Sequence[Sequence[Any]],
) -> tuple[Sequence[Sequence[Any]], CandidatesPicked]:
    """``pick_candidates`` on the first statement's ``rows``; when the oldest lots, once locked,
    no longer hold the amount (drawn on meanwhile), the statement again for every candidate and
    ``pick_every``.  Those locks come after the first ones, out of the global order: a write that
    locks, in order, one of the lots not held yet and then one held (a transfer back from the
    receiving account, say) can deadlock with this one; PostgreSQL then refuses one of the two,
    and the caller's unit of work is retried (``Database.run``, as the API's and the pages'
    writes run it).  Returns the rows chosen from, and the choice."""
    lot_id, amount = params["lot_id"], params["reach_sqft"]
    picked = pick_candidates(session, rows, lot_id, amount)
    if picked is None:
        rows = store.of(session).run(session, statement, dict(params, reach_sqft=None))
        picked = pick_every(session, rows, lot_id, amount)
    return rows, picked


def pick_every(
    session: Session, rows: Sequence[Sequence[Any]], lot_id: str | None, amount_sqft: int
) -> CandidatesPicked:
    """``pick_candidates`` on every candidate lot (the statement without ``:reach_sqft``)."""
    candidates, held = _locked(session, rows, lot_id)
    return _take(candidates, amount_sqft), held


def _locked(
    session: Session, rows: Sequence[Sequence[Any]], lot_id: str | None
) -> tuple[list[Candidate], dict[int, AccountRow]]:
    """The candidates in ``rows``, oldest first, with the balance rows the statement locked: as
    they hold when no reservation is open on any of them, else as ``ledger.lock`` reads them
    (net of reservations past their expiry)."""
    lots = [row[6:17] for row in rows if row[6] is not None]
    if lot_id is not None and not lots:
        raise NotFound(f"no lot {lot_id} in account {rows[0][1]}")
    held = held_rows([row[17:25] for row in rows] + [row[25:33] for row in rows])
    lock_ids = _lock_ids(lots)
    if not lock_ids <= held.keys():
        held.update(lock_balances(session, lock_ids))
    return _candidates(session, lots, held), held


def _available(items: Sequence[Candidate]) -> int:
    return sum(item.available_sqft for item in items)


def _lock_ids(lots: Sequence[Sequence[Any]]) -> set[int]:
    """The balance rows drawing on ``lots`` locks: theirs, and their receiving children's."""
    return {row[1] for row in lots} | {row[10] for row in lots if row[10] is not None}


def _candidates(
    session: Session, lots: Sequence[Sequence[Any]], held: dict[int, AccountRow]
) -> list[Candidate]:
    """``lots`` (the statement's lot columns), oldest first, with their locked balances."""
    lock_ids = {row[1] for row in lots}
    balances = {
        a: (row.credits_posted - row.debits_posted, 0)
        for a, row in held.items()
        if a in lock_ids and not row.debits_pending and not row.credits_pending
    }
    if not lock_ids <= balances.keys():
        locked = ledger.lock(session, lock_ids)
        balances = {a: (b.posted, b.reserved_debits) for a, b in locked.items()}
    return [
        Candidate(
            lot,
            account,
            site,
            deposit,
            *balances[account],
            bool(frozen),  # a frozen source account was refused before its lots were read
            child,
            child_account,
        )
        for lot, account, site, deposit, frozen, *_, child, child_account in lots
    ]


class _Drawable(Protocol):
    @property
    def posted_sqft(self) -> int: ...
    @property
    def reserved_sqft(self) -> int: ...
    @property
    def available_sqft(self) -> int: ...


_Item = TypeVar("_Item", bound=_Drawable)


def _take(items: list[_Item], amount: int) -> list[tuple[_Item, int]]:
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
            f"only {sqft(available)} available", available_sqft=available, requested_sqft=amount
        )
    picks, left = [], amount
    for item in usable:
        take = min(left, item.available_sqft)
        picks.append((item, take))
        left -= take
        if left == 0:
            break
    return picks
