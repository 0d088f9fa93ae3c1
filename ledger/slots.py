"""Which slot row of a hot account a write changes.

An account without limits may keep its balance in several slot rows (``create_account(slots=)``),
so that concurrent writers of it rarely wait for each other: each write changes one slot, chosen at
random, and the account's balance is the sum of its slots.  A store whose writers take turns
anyway (SQLite) writes slot 0 only and never asks.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence

from sqlalchemy.orm import Session

from ledger.account_cache import AccountRow
from ledger.lines import Line
from ledger.schema import PHASE_POSTED

#: ``Session.info`` key: the slot each hot account uses in this unit of work
_TAKEN = "ledger.slots_taken"


def choose(
    session: Session, lines: Sequence[Line], accounts: Mapping[int, AccountRow]
) -> dict[int, int]:
    """The slot this write changes, per account with more than one (others: slot 0).

    Pending and release lines go to slot 0, where the reservation they make or undo is held (a
    slot's pending columns never go negative).

    One slot per account for the whole unit of work: two writes in one database transaction
    taking two slots of an account could take them in the opposite order to another's, and
    deadlock.  The first slot it takes is the one it keeps; at most it adds slot 0 after it
    for a reservation, and no unit holding slot 0 then asks for another.
    """
    spread = sorted(a for a, row in accounts.items() if row.slots > 1)
    if not spread:
        return {}
    taken: dict[int, int] = session.info.setdefault(_TAKEN, {})
    reserving = {line.account_id for line in lines if line.phase != PHASE_POSTED}
    chosen = {}
    for account in spread:
        if account in reserving:
            chosen[account] = 0
            taken.setdefault(account, 0)  # later postings of this unit stay in slot 0 too
        else:
            if account not in taken:
                taken[account] = random.randrange(accounts[account].slots)
            chosen[account] = taken[account]
    return chosen
