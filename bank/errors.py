"""Domain errors of the wetland bank.

Each error has a stable machine-readable ``code`` (docs/http.md "Errors") and structured fields;
none knows about HTTP.  ``api/problems.py`` alone maps codes to statuses.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ledger.errors import InsufficientFunds, LedgerError

T = TypeVar("T")


class BankError(LedgerError):
    """A refused request: nothing was written."""

    code = "conflict"


class NotFound(BankError):
    code = "not_found"


def found(row: T | None, detail: str) -> T:
    """``row`` as read (``session.get``), or ``not_found`` with ``detail`` when there is none."""
    if row is None:
        raise NotFound(detail)
    return row


class UnknownCursor(BankError):
    """A well-formed cursor naming no row of its listing: another account's, one the caller
    may not see, or none at all (docs/http.md "Lists, cursors and CSV")."""

    code = "bad_request"

    def __init__(self) -> None:
        super().__init__("The cursor is not one this listing gave.")


class Forbidden(BankError):
    code = "forbidden"


class Conflict(BankError):
    """The state does not allow the action (deciding twice, releasing a released security)."""

    code = "conflict"


class ValidationFailed(BankError):
    """A field is well-formed but not acceptable (a date in the future, an expiry before issue)."""

    code = "validation_error"

    def __init__(self, detail: str, errors: dict[str, Any] | None = None) -> None:
        super().__init__(detail, errors=errors or {})


class CapExceeded(BankError):
    code = "cap_exceeded"


class NotEligible(BankError):
    code = "not_eligible"


class RestrictedCreditMisuse(BankError):
    code = "restricted_credit_misuse"


class RatioTooLow(BankError):
    code = "ratio_too_low"


class CommentPeriodOpen(BankError):
    code = "comment_period_open"


class DeadlinePassed(BankError):
    code = "deadline_passed"


class AppealWindowClosed(BankError):
    code = "appeal_window_closed"


class InvalidFee(BankError):
    code = "invalid_fee"


class SecurityRequired(BankError):
    code = "security_required"


class AccountFrozen(BankError):
    code = "account_frozen"


class InsufficientCredits(BankError, InsufficientFunds):
    """Too few credits (or dollars) are available for what was asked: the ledger's
    ``InsufficientFunds`` in the bank's word."""

    code = "insufficient_credits"


#: the bank's word for an engine refusal that reaches a caller as the engine raised it
_BANK_CODES = {InsufficientFunds.code: InsufficientCredits.code}


def code_of(error: LedgerError) -> str:
    """The stable code a caller is shown for ``error`` (docs/http.md "Errors")."""
    return _BANK_CODES.get(error.code, error.code)
