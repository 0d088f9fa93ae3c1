"""The tables of deposits: each deposit, its Subd. 12 (c) actions, and its reversal if any.

A deposit's rows are sealed (``bank.registry``): what it credited, to whom, never changes; a
mistaken deposit is undone by a reversal, a compensating ledger transaction recorded beside it.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, Date, DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class Deposit(Base):
    """A deposit of credits certified for an approved banking plan."""

    __tablename__ = "deposits"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    account_id: Mapped[str] = mapped_column(ForeignKey("bank_accounts.id"), index=True)
    bank_site_id: Mapped[str] = mapped_column(ForeignKey("bank_sites.id"))
    effective_on: Mapped[date] = mapped_column(Date)
    banking_plan_reference: Mapped[str] = mapped_column(String(100))
    banking_plan_approved_on: Mapped[date] = mapped_column(Date)
    banking_plan_lgu_id: Mapped[str] = mapped_column(ForeignKey("lgus.id"))
    wetland_type: Mapped[str] = mapped_column(String(2))
    completed_on: Mapped[date] = mapped_column(Date)
    federally_approved: Mapped[bool] = mapped_column(Boolean)
    designated_for_replacement: Mapped[bool] = mapped_column(Boolean)
    paid_by_performer: Mapped[bool] = mapped_column(Boolean)
    paid_back_with_interest: Mapped[bool] = mapped_column(Boolean)
    ruleset: Mapped[str] = mapped_column(String(60))
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"))
    total_credit_sqft: Mapped[int] = mapped_column(BigInteger)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))


class DepositAction(Base):
    """One Subd. 12 (c) action of a deposit, with the cap that applied and the lot it made."""

    __tablename__ = "deposit_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    deposit_id: Mapped[str] = mapped_column(ForeignKey("deposits.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    category: Mapped[str] = mapped_column(String(40))
    area_sqft: Mapped[int] = mapped_column(BigInteger)
    credit_sqft: Mapped[int] = mapped_column(BigInteger)
    cap_sqft: Mapped[int] = mapped_column(BigInteger)
    restricted: Mapped[bool] = mapped_column(Boolean)
    credit_class: Mapped[str] = mapped_column(ForeignKey("credit_classes.code"))
    lot_id: Mapped[str] = mapped_column(ForeignKey("lots.id"))
    #: the category's precondition fields as certified (qualifying_years, established_on, ...)
    details: Mapped[dict[str, Any]] = mapped_column(JSON)


class DepositReversal(Base):
    """The compensating transaction that removed a mistaken deposit's credits (at most one)."""

    __tablename__ = "deposit_reversals"

    deposit_id: Mapped[str] = mapped_column(ForeignKey("deposits.id"), primary_key=True)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"), unique=True)
    effective_on: Mapped[date] = mapped_column(Date)
    reason: Mapped[str] = mapped_column(Text)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))
