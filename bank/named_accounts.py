"""Ledger accounts the bank creates on first use (credit classes, USD fee and fund accounts)."""

from __future__ import annotations

import hashlib

from sqlalchemy import text
from sqlalchemy.orm import Session

import ledger


def advisory_lock(session: Session, name: str) -> None:
    """Serialize first-time creators of ``name`` on PostgreSQL (SQLite has one writer anyway)."""
    if session.bind is not None and session.bind.dialect.name == "postgresql":
        key = int.from_bytes(hashlib.sha256(name.encode()).digest()[:7], "big")
        session.execute(text("SELECT pg_advisory_xact_lock(:k)"), {"k": key})


def ensure_account(
    session: Session, code: str, asset: str, name: str, *, no_overdraft: bool = False
) -> int:
    """The ledger account ``code``, created the first time it is needed."""
    found = ledger.account_by_code(session, code)
    if found is not None:
        return found
    advisory_lock(session, code)
    found = ledger.account_by_code(session, code)
    if found is not None:
        return found
    return ledger.create_account(
        session, code=code, asset=asset, name=name, no_overdraft=no_overdraft
    )
