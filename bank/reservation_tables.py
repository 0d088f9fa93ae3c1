"""The tables of reservations: credits held for a plan, and each lot's share of them, a pending
transfer in the ledger (``bank.reservations`` writes them)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, Index
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import actor_label, moment, part_of, public_id, refers, serial_id, sqft
from ledger.schema import Base


class Reservation(Base):
    """Credits held for a plan until withdrawn, voided or expired."""

    __tablename__ = "reservations"
    #: an account's reservations, oldest first, for its pages (migration 0029)
    __table_args__ = (
        Index("ix_reservations_account_id_created_at_id", "account_id", "created_at", "id"),
    )

    id: Mapped[str] = public_id()
    account_id: Mapped[str] = refers("bank_accounts.id")
    plan_id: Mapped[str] = refers("plans.id", index=True)
    credit_class: Mapped[str] = refers("credit_classes.code")
    lot_id: Mapped[str | None] = refers("lots.id")
    amount_sqft: Mapped[int] = sqft()
    expires_on: Mapped[date] = mapped_column(Date)
    created_at: Mapped[datetime] = moment()
    actor: Mapped[str] = actor_label()


class ReservationLot(Base):
    """One lot's share of a reservation: a pending transfer in the ledger."""

    __tablename__ = "reservation_lots"

    id: Mapped[int] = serial_id()
    reservation_id: Mapped[str] = part_of("reservations.id")
    lot_id: Mapped[str] = refers("lots.id")
    amount_sqft: Mapped[int] = sqft()
    pending_transaction_id: Mapped[int] = refers("ledger_transactions.id", unique=True)
