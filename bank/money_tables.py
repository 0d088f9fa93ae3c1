"""Tables of money received (payments) and of security instruments and the draws on them.

What a record is worth lives in the USD ledger (``bank.money``, ``bank.securities``); these rows
say what each ledger transaction was for and keep the facts the status is computed from.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import JSON, BigInteger, Boolean, Date, Index, String, Text, text
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import actor_label, moment, part_of, public_id, refers
from ledger.schema import Base

PAYMENT_KINDS = ("in_lieu", "processing_fee", "appeal_filing_fee", "appeal_security")
#: ``received``, then at most once refunded, returned (appeal security, the petition granted) or
#: reversed (a filing fee recorded in error)
PAYMENT_STATUSES = ("received", "refunded", "returned", "reversed")
#: an appeal's live payments (received, not refunded, returned or reversed): one of each kind at
#: most
_LIVE_APPEAL_PAYMENT = text(
    "status = 'received' AND kind IN ('appeal_filing_fee', 'appeal_security')"
)
SECURITY_KINDS = ("letter_of_credit", "cashiers_check", "cash", "other")


class Referenced:
    """A record carrying the integrator's own references (``bank.external_refs``); not sealed."""

    external_refs: Mapped[dict[str, str]] = mapped_column(
        JSON, default=dict, server_default=text("'{}'")
    )


class Payment(Referenced, Base):
    """Money received; ``status`` becomes refunded, returned or (a filing fee recorded in error)
    reversed by a compensating transaction, which ``compensation_transaction_id`` names once: the
    database refuses any transaction but one reversing the payment's, and any later change
    (migration 0019), and seals it when it is set (``bank.registry``).  An appeal has at most
    one live filing fee and one live security: the database refuses a second (migration 0021),
    and takes another once the first is refunded, returned or reversed.  A filing fee's postmark
    falls within the appeal window and on or before its receipt (``bank.money``; the database
    holds the latter, and that only a filing fee has a postmark: migration 0024)."""

    __tablename__ = "payments"
    __table_args__ = (
        Index(
            "uq_payments_live_appeal_kind",
            "appeal_id",
            "kind",
            unique=True,
            sqlite_where=_LIVE_APPEAL_PAYMENT,
            postgresql_where=_LIVE_APPEAL_PAYMENT,
        ),
        #: ``GET /payments``'s order, oldest first (migration 0028)
        Index("ix_payments_created_at_id", "created_at", "id"),
    )

    id: Mapped[str] = public_id()
    kind: Mapped[str] = mapped_column(String(30))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    payer: Mapped[str] = mapped_column(String(300))
    received_on: Mapped[date] = mapped_column(Date)
    #: the filing fee's postmark (Subd. 9: mailed within the appeal window); null for any other
    #: payment, and for a fee booked before postmarks were recorded (migration 0024)
    postmarked_on: Mapped[date | None] = mapped_column(Date)
    plan_id: Mapped[str | None] = refers("plans.id", index=True)
    appeal_id: Mapped[str | None] = refers("appeals.id", index=True)
    lgu_id: Mapped[str | None] = refers("lgus.id")
    transaction_id: Mapped[int] = refers("ledger_transactions.id")
    status: Mapped[str] = mapped_column(String(10))
    compensation_transaction_id: Mapped[int | None] = refers("ledger_transactions.id")
    #: why the board reversed the payment as recorded in error (only when ``reversed``); sealed
    #: once set (``bank.registry``)
    reversal_reason: Mapped[str | None] = mapped_column(Text)
    ruleset: Mapped[str] = mapped_column(String(60))
    created_at: Mapped[datetime] = moment()
    actor: Mapped[str] = actor_label()


class Security(Referenced, Base):
    """A security instrument given to the LGU to guarantee a replacement (Subd. 3).  Its release
    (``released_on``, ``release_reason``) is written once and sealed when it is (``bank.registry``);
    ``drawn_on`` and ``drawn_cents`` move with each draw: the database keeps them its draws' latest
    date and sum, and refuses any other value (migration 0027)."""

    __tablename__ = "securities"
    #: ``GET /securities``'s order, soonest expiry first (migration 0028)
    __table_args__ = (Index("ix_securities_expires_on_id", "expires_on", "id"),)

    id: Mapped[str] = public_id()
    plan_id: Mapped[str] = refers("plans.id", index=True)
    kind: Mapped[str] = mapped_column(String(20))
    issuer: Mapped[str] = mapped_column(String(300))
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    irrevocable: Mapped[bool] = mapped_column(Boolean)
    issued_on: Mapped[date] = mapped_column(Date)
    expires_on: Mapped[date] = mapped_column(Date)
    pending_transaction_id: Mapped[int] = refers("ledger_transactions.id")
    released_on: Mapped[date | None] = mapped_column(Date)
    release_reason: Mapped[str | None] = mapped_column(Text)
    drawn_on: Mapped[date | None] = mapped_column(Date)
    drawn_cents: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = moment()


class SecurityDraw(Base):
    """One draw on a security, and the pending transfer that holds what is left of it.  Sealed
    (``bank.registry``); the database takes only a draw that is what its transaction drew, and
    writes the security's ``drawn_on`` and ``drawn_cents`` with it (migration 0027)."""

    __tablename__ = "security_draws"

    id: Mapped[str] = public_id()
    security_id: Mapped[str] = part_of("securities.id")
    drawn_on: Mapped[date] = mapped_column(Date)
    amount_cents: Mapped[int] = mapped_column(BigInteger)
    transaction_id: Mapped[int] = refers("ledger_transactions.id")
    #: the pending transfer holding the rest; null once nothing is left
    held_transaction_id: Mapped[int | None] = refers("ledger_transactions.id")
    recorded_at: Mapped[datetime] = moment()
