"""Ledger accounts the bank creates on first use (credit classes, USD fee and fund accounts)."""

from __future__ import annotations

from sqlalchemy.orm import Session

import ledger


def ensure_account(
    session: Session, code: str, asset: str, name: str, *, no_overdraft: bool = False
) -> int:
    """The ledger account ``code``, created the first time it is needed."""
    found = ledger.account_by_code(session, code)
    if found is not None:
        return found
    ledger.advisory_lock(session, code)
    found = ledger.account_by_code(session, code)
    if found is not None:
        return found
    return ledger.create_account(
        session, code=code, asset=asset, name=name, no_overdraft=no_overdraft
    )
