"""Ledger accounts and their balances: current (O(1), from the stored row) and as of a date."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import case, func, insert, select
from sqlalchemy.orm import Session

from ledger import clock, pending, store
from ledger.errors import UnknownAccount
from ledger.schema import (
    PHASE_PENDING,
    PHASE_POSTED,
    PHASE_RELEASE,
    LedgerAccount,
    LedgerBalance,
    LedgerEntry,
    LedgerOpenPending,
    LedgerTransaction,
)


@dataclass(frozen=True)
class Balance:
    """An account's balance.  ``reserved_debits`` counts only pending transfers not yet expired."""

    account_id: int
    asset: str
    debits_posted: int
    credits_posted: int
    reserved_debits: int
    reserved_credits: int
    version: int

    @property
    def posted(self) -> int:
        """Net posted balance, credits minus debits."""
        return self.credits_posted - self.debits_posted

    @property
    def available(self) -> int:
        """Posted balance less what live pending transfers reserve out of it."""
        return self.posted - self.reserved_debits


#: the most balance rows one account may spread over
MAX_SLOTS = 64


def create_account(
    session: Session,
    *,
    code: str,
    asset: str,
    name: str,
    no_overdraft: bool = False,
    no_overcredit: bool = False,
    slots: int = 1,
) -> int:
    """Create an account and its zero balance row(s); returns the account id.

    ``slots`` > 1 spreads a hot account's balance over that many rows, so that concurrent
    writers of it need not wait for each other's commits (its balance is their sum).  Only an
    account without limits may have more than one: a limit is checked against one locked row.
    """
    if not 1 <= slots <= MAX_SLOTS:
        raise ValueError(f"slots must be 1 to {MAX_SLOTS}")
    if slots > 1 and (no_overdraft or no_overcredit):
        raise ValueError("an account with a limit keeps its balance in one slot")
    account_id = session.execute(
        insert(LedgerAccount)
        .values(
            code=code,
            asset=asset,
            name=name,
            no_overdraft=no_overdraft,
            no_overcredit=no_overcredit,
            created_at=clock.utcnow(),
            slots=slots,
        )
        .returning(LedgerAccount.id)
    ).scalar_one()
    session.execute(
        insert(LedgerBalance),
        [
            {
                "account_id": account_id,
                "slot": slot,
                "asset": asset,
                "no_overdraft": no_overdraft,
                "no_overcredit": no_overcredit,
                "debits_posted": 0,
                "credits_posted": 0,
                "debits_pending": 0,
                "credits_pending": 0,
                "version": 0,
            }
            for slot in range(slots)
        ],
    )
    return int(account_id)


def account_by_code(session: Session, code: str) -> int | None:
    """The id of the account with ``code``, or ``None``."""
    return session.execute(
        select(LedgerAccount.id).where(LedgerAccount.code == code)
    ).scalar_one_or_none()


def balances(
    session: Session, account_ids: Iterable[int], now: datetime | None = None
) -> dict[int, Balance]:
    """Current balances, read from the stored rows: O(1) per account whatever its history.

    Pending transfers past their expiry are left out even if no writer has expired them yet.
    """
    return _read(session, account_ids, now, for_update=False)


def _read(
    session: Session, account_ids: Iterable[int], now: datetime | None, *, for_update: bool
) -> dict[int, Balance]:
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    rows = store.of(session).read_balances(
        session, ids, now or clock.utcnow(), for_update=for_update
    )
    found = {int(r[0]): Balance(*r) for r in rows}
    _check_found(ids, found)
    return found


def _check_found(ids: list[int], found: dict[int, Balance]) -> None:
    missing = set(ids) - set(found)
    if missing:
        raise UnknownAccount(f"unknown ledger account(s) {sorted(missing)}")


def balances_as_of(
    session: Session, account_ids: Iterable[int], day: date, now: datetime | None = None
) -> dict[int, Balance]:
    """Balances at the end of ``day`` (by effective date), recomputed from the entries; a day
    not over at ``now`` (the clock's by default) reads as it stands then, so a pending transfer
    expiring at the end of it still reserves, as ``balances`` says."""
    ids = sorted(set(account_ids))
    if not ids:
        return {}
    entry = LedgerEntry
    debit = case((entry.amount < 0, -entry.amount), else_=0)
    credit = case((entry.amount > 0, entry.amount), else_=0)
    sign = case((entry.phase == PHASE_RELEASE, -1), else_=1)
    posted = entry.phase == PHASE_POSTED
    rows = session.execute(
        select(
            entry.account_id,
            func.sum(case((posted, debit), else_=0)),
            func.sum(case((posted, credit), else_=0)),
            func.sum(case((~posted, debit * sign), else_=0)),
            func.sum(case((~posted, credit * sign), else_=0)),
        )
        .where(entry.account_id.in_(ids), entry.effective_on <= day)
        .group_by(entry.account_id)
    ).all()
    sums = {r[0]: [int(x or 0) for x in r[1:]] for r in rows}
    _subtract_expired_unresolved(
        session, ids, day, min(clock.end_of_day(day), now or clock.utcnow()), sums
    )
    assets = dict(
        session.execute(
            select(LedgerAccount.id, LedgerAccount.asset).where(LedgerAccount.id.in_(ids))
        ).all()
    )
    return {
        a: Balance(a, assets[a], *sums.get(a, [0, 0, 0, 0]), version=0)  # type: ignore[misc]
        for a in ids
    }


def _subtract_expired_unresolved(
    session: Session, ids: list[int], day: date, moment: datetime, sums: dict[int, list[int]]
) -> None:
    """Pending transfers made by ``day`` that had expired by ``moment`` (the end of ``day``, or
    now if sooner) but no writer has expired yet."""
    reservation, header = LedgerOpenPending, LedgerTransaction
    for r in session.execute(
        select(reservation.account_id, reservation.debits, reservation.credits)
        .join(header, header.id == reservation.transaction_id)
        .where(
            reservation.account_id.in_(ids),
            reservation.expires_at <= moment,
            header.effective_on <= day,
        )
    ):
        entry = sums.setdefault(r.account_id, [0, 0, 0, 0])
        entry[2] -= r.debits
        entry[3] -= r.credits


def last_effective_on(session: Session, account_ids: Iterable[int]) -> date | None:
    """The last day the accounts' past changes on: the latest effective date of their entries,
    or of the expiry of a pending transfer on them that no writer has expired yet (a balance as
    of a day reads both).  ``None`` for accounts with no history."""
    ids = sorted(set(account_ids))
    if not ids:
        return None
    latest: date | None = session.execute(
        select(func.max(LedgerEntry.effective_on)).where(LedgerEntry.account_id.in_(ids))
    ).scalar_one()
    expiries = session.execute(
        select(func.max(LedgerOpenPending.expires_at)).where(LedgerOpenPending.account_id.in_(ids))
    ).scalar_one()
    if expiries is not None:  # dated as the expiry's own entry will be, when it is written
        expired_on = pending.expired_on(expiries)
        latest = expired_on if latest is None else max(latest, expired_on)
    return latest


def lock(
    session: Session, account_ids: Iterable[int], now: datetime | None = None
) -> dict[int, Balance]:
    """Lock accounts ``FOR UPDATE`` in ascending id and return their balances.

    For callers that choose among accounts by balance (oldest lots first) before they post, so the
    choice cannot be overtaken by a concurrent writer.  (SQLite's writer holds the whole database.)
    """
    return _read(session, account_ids, now, for_update=True)


__all__ = [
    "Balance",
    "PHASE_PENDING",
    "account_by_code",
    "balances",
    "balances_as_of",
    "last_effective_on",
    "lock",
    "create_account",
]
