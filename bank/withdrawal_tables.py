"""The tables of withdrawals: what was withdrawn for a plan, and which credits met which portion
of its requirement (``bank.withdrawals`` writes them)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import JSON, BigInteger, DateTime, ForeignKey, Integer, String, text
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class Withdrawal(Base):
    """Credits withdrawn for a plan; ``reversal_transaction_id`` is set, once, if an appeal undid
    it: a transaction reversing the withdrawal's (migration 0018), sealed when it is set
    (``bank.registry``)."""

    __tablename__ = "withdrawals"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.id"), index=True)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    reversal_transaction_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_transactions.id")
    )
    withdrawn_sqft: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))
    #: the integrator's own references (``bank.external_refs``); not sealed
    external_refs: Mapped[dict[str, str]] = mapped_column(
        JSON, default=dict, server_default=text("'{}'")
    )


class WithdrawalAllocation(Base):
    """Which credits met which portion of the requirement."""

    __tablename__ = "withdrawal_allocations"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    withdrawal_id: Mapped[str] = mapped_column(ForeignKey("withdrawals.id"), index=True)
    reservation_id: Mapped[str] = mapped_column(ForeignKey("reservations.id"))
    lot_id: Mapped[str] = mapped_column(ForeignKey("lots.id"))
    credit_class: Mapped[str] = mapped_column(ForeignKey("credit_classes.code"))
    amount_sqft: Mapped[int] = mapped_column(BigInteger)
    portion: Mapped[str] = mapped_column(String(20))
