"""Errors the ledger engine raises.  Each has a stable ``code`` and structured ``fields``."""

from __future__ import annotations

from typing import Any


class LedgerError(Exception):
    """Base of every refused ledger operation; the database was left unchanged."""

    code = "conflict"

    def __init__(self, detail: str, **fields: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.fields = fields


class UnbalancedTransaction(LedgerError):
    code = "unbalanced"


class InsufficientFunds(LedgerError):
    """A debit would take a no-overdraft account below zero (pending debits counted), or a credit
    a no-overcredit account past its debits."""

    code = "insufficient_funds"


class IdempotencyConflict(LedgerError):
    """The idempotency key was used before with a different request."""

    code = "idempotency_conflict"


class AlreadyResolved(LedgerError):
    """The pending transfer was already posted, voided or expired."""

    code = "conflict"


class PendingExpired(LedgerError):
    """The pending transfer's expiry has passed: it reserves nothing and cannot be posted."""

    code = "conflict"


class AlreadyReversed(LedgerError):
    code = "conflict"


class UnknownAccount(LedgerError):
    code = "not_found"


class UnknownTransaction(LedgerError):
    code = "not_found"
