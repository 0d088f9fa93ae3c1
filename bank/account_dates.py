"""An account's history starts the day it was opened: nothing in it is effective earlier.

A deposit or a reversal dated before the account existed would give it balances on days it had
none: a statement for a period before its opening would show credits, and statements already
issued would change their opening balance (docs/reliability.md: statements are continuous).
The other writes into an account (transfers, reservations, voids, withdrawals, their reversals
on appeal, expiries) are dated today or by a reservation's own dates, never before its opening.
"""

from __future__ import annotations

from datetime import date

from bank.errors import ValidationFailed
from bank.party_tables import BankAccount
from ledger import clock


def opened_on(account: BankAccount) -> date:
    """The Minnesota date the account was opened (``POST /accounts``)."""
    return clock.business_date(account.created_at)


def check_not_before_opening(account: BankAccount, day: date, field: str = "effective_on") -> None:
    """Refuse ``day`` (``field`` of the request) if it is before the account was opened
    (``validation_error``)."""
    opened = opened_on(account)
    if day < opened:
        raise ValidationFailed(
            f"account {account.number} was opened on {opened.isoformat()}: nothing in it can be "
            f"effective before then ({day.isoformat()})",
            {field: [f"before the account was opened ({opened.isoformat()})"]},
        )
