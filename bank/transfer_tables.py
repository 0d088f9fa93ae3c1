"""The tables of transfers: each transfer between two accounts, and the lots it drew on and made
(``bank.transfers`` writes them)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import Text
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import actor_label, moment, part_of, public_id, refers, serial_id, sqft
from ledger.schema import Base


class Transfer(Base):
    """A transfer of credits of one class from one account to another."""

    __tablename__ = "transfers"

    id: Mapped[str] = public_id()
    from_account_id: Mapped[str] = refers("bank_accounts.id", index=True)
    to_account_id: Mapped[str] = refers("bank_accounts.id", index=True)
    credit_class: Mapped[str] = refers("credit_classes.code")
    amount_sqft: Mapped[int] = sqft()
    price_per_sqft_cents: Mapped[int | None] = sqft()
    memo: Mapped[str | None] = mapped_column(Text)
    transaction_id: Mapped[int] = refers("ledger_transactions.id")
    recorded_at: Mapped[datetime] = moment()
    actor: Mapped[str] = actor_label()


class TransferLot(Base):
    """How much of a transfer came from one source lot, and the lot it made."""

    __tablename__ = "transfer_lots"

    id: Mapped[int] = serial_id()
    transfer_id: Mapped[str] = part_of("transfers.id")
    from_lot_id: Mapped[str] = refers("lots.id")
    to_lot_id: Mapped[str] = refers("lots.id")
    amount_sqft: Mapped[int] = sqft()
