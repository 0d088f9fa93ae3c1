"""Ledger accounts the bank creates on first use (credit classes, USD fee and fund accounts),
and the metadata of the USD ledger's transactions."""

from __future__ import annotations

from datetime import date
from typing import TYPE_CHECKING

from sqlalchemy.orm import Session

import ledger

if TYPE_CHECKING:
    from bank.access import Actor


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


# --- the USD ledger (``bank.money``, ``bank.securities``) ------------------------------------

USD = "USD"


def usd_meta(key: str, on: date, memo: str, actor: Actor, request_id: str | None) -> ledger.Meta:
    """The metadata of a USD transaction: its idempotency ``key``, effective date and memo."""
    return ledger.Meta(key, on, memo=memo, actor=actor.label, request_id=request_id)


def _usd(session: Session, code: str, name: str) -> int:
    return ensure_account(session, f"usd:{code}", USD, name)


def payers_account(session: Session) -> int:
    """Money from outside the bank: payers, and the issuers of security instruments."""
    return _usd(session, "external", "External payers and issuers")


def lgu_fee_account(session: Session, lgu_id: str) -> int:
    return _usd(session, f"lgu-fees:{lgu_id}", f"Fee income of LGU {lgu_id}")


def board_fee_account(session: Session) -> int:
    return _usd(session, "board-fees", "Board fee income")


def program_fund_account(session: Session) -> int:
    return _usd(session, "program-fund", "Wetland banking program fund")


def appeal_security_account(session: Session, lgu_id: str) -> int:
    return _usd(session, f"appeal-security:{lgu_id}", f"Appeal security held for {lgu_id}")


def securities_held_account(session: Session, lgu_id: str) -> int:
    return _usd(session, f"securities-held:{lgu_id}", f"Securities held by {lgu_id}")
