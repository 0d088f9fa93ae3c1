"""What a writer knows of the accounts it touches: their asset, limits and slots, then balances.

Accounts never change once created, so their asset, limits and slot count are kept per engine
where an id always names the same account (``Store.ids_are_never_reused``); a write then reads
nothing about an account it has written before, until it locks the limited ones
(``ledger.locks``).  Nor about a limited account whose balance row its caller locked already
(``held``): that row carries the account's asset and limits, and a limited account keeps one
balance row (``ledger.accounts.create_account``).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ledger import store
from ledger.errors import UnknownAccount
from ledger.schema import LedgerAccount


@dataclass
class AccountRow:
    """An account as a writer sees it; the balance columns are filled when it is locked."""

    account_id: int
    asset: str
    no_overdraft: bool
    no_overcredit: bool
    debits_posted: int = 0
    credits_posted: int = 0
    debits_pending: int = 0
    credits_pending: int = 0
    slots: int = 1

    @property
    def limited(self) -> bool:
        return self.no_overdraft or self.no_overcredit


AccountFacts = tuple[str, bool, bool, int]  # asset, no_overdraft, no_overcredit, slots

#: per engine: account id -> its facts (only where ids are never reused)
_FACTS: weakref.WeakKeyDictionary[Any, dict[int, AccountFacts]] = weakref.WeakKeyDictionary()

_FACTS_OF = select(
    LedgerAccount.id,
    LedgerAccount.asset,
    LedgerAccount.no_overdraft,
    LedgerAccount.no_overcredit,
    LedgerAccount.slots,
)


def accounts_for(
    session: Session, account_ids: set[int], held: Mapping[int, AccountRow] | None = None
) -> dict[int, AccountRow]:
    """The accounts ``account_ids`` name; ``UnknownAccount`` if any does not exist.

    ``held``: balance rows of limited accounts locked earlier in this unit of work
    (``ledger.locks``); their accounts' facts are taken from them, not read again.
    """
    engine = session.get_bind().engine
    cacheable = store.of(session).ids_are_never_reused
    cache = _FACTS.setdefault(engine, {}) if cacheable else {}
    found = {a: _row(a, cache[a]) for a in account_ids if a in cache}
    for a in account_ids - set(found):
        row = held.get(a) if held else None
        if row is not None and row.limited:
            facts = (row.asset, row.no_overdraft, row.no_overcredit, 1)
            found[a] = _row(a, facts)
            if cacheable:
                cache[a] = facts
    wanted = account_ids - set(found)
    if wanted:
        for r in session.execute(_FACTS_OF.where(LedgerAccount.id.in_(sorted(wanted)))):
            facts = (r.asset, r.no_overdraft, r.no_overcredit, r.slots)
            found[r.id] = _row(r.id, facts)
            if cacheable:
                cache[r.id] = facts
    missing = account_ids - set(found)
    if missing:
        raise UnknownAccount(f"unknown ledger account(s) {sorted(missing)}")
    return found


def _row(account_id: int, facts: AccountFacts) -> AccountRow:
    asset, no_overdraft, no_overcredit, slots = facts
    return AccountRow(account_id, asset, no_overdraft, no_overcredit, slots=slots)
