"""The tables of parties and places: holders, LGUs, bank sites and their credit registers,
bank accounts and their numbers, the board's recorded corrections of parties, and the history of
each account's status and each site's freeze.

Bank service areas are numbered 1..N (practice: ten).  A bank account has a human ``number`` and a
status: open, frozen (accepts deposits, nothing out: docs/domain.md §7) or closed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class Holder(Base):
    """A bank account holder."""

    __tablename__ = "holders"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    email: Mapped[str | None] = mapped_column(String(300))
    address: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Lgu(Base):
    """A local government unit; it chooses whether to observe two holidays (645.44 subd. 5)."""

    __tablename__ = "lgus"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(40))
    observes_indigenous_peoples_day: Mapped[bool] = mapped_column(Boolean, default=False)
    observes_friday_after_thanksgiving: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class BankSite(Base):
    """Where credits come from; freezing it freezes its credits wherever they now sit."""

    __tablename__ = "bank_sites"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    holder_id: Mapped[str] = mapped_column(ForeignKey("holders.id"))
    service_area: Mapped[int] = mapped_column(Integer)
    county: Mapped[str] = mapped_column(String(100))
    major_watershed: Mapped[str | None] = mapped_column(String(200))
    frozen: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class SiteCreditArea(Base):
    """One entry of a site's register: a category's area from ``recorded_at`` on
    (``bank.site_register``)."""

    __tablename__ = "bank_site_credit_areas"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    bank_site_id: Mapped[str] = mapped_column(ForeignKey("bank_sites.id"), index=True)
    category: Mapped[str] = mapped_column(String(40))
    area_sqft: Mapped[int] = mapped_column(BigInteger)
    #: registered with the site, first credited by a deposit, or amended by the board
    source: Mapped[str] = mapped_column(String(20))
    reason: Mapped[str | None] = mapped_column(Text)
    deposit_id: Mapped[str | None] = mapped_column(String(40))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str] = mapped_column(String(300))


class BankAccount(Base):
    """A holder's account in the wetland bank."""

    __tablename__ = "bank_accounts"
    __table_args__ = (
        CheckConstraint("status IN ('open', 'frozen', 'closed')", name="status"),
        #: ``GET /accounts``'s order, oldest first: the board's, and a holder's own (0029)
        Index("ix_bank_accounts_created_at_id", "created_at", "id"),
        Index("ix_bank_accounts_holder_id_created_at_id", "holder_id", "created_at", "id"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    number: Mapped[str] = mapped_column(String(20), unique=True)
    holder_id: Mapped[str] = mapped_column(ForeignKey("holders.id"))
    service_area: Mapped[int] = mapped_column(Integer)
    county: Mapped[str] = mapped_column(String(100))
    name: Mapped[str | None] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(String(10), default="open")
    #: how many lots the account has had: the next lot's label (A, B, ..., Z, AA, ...)
    lot_count: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AccountNumber(Base):
    """Issues human account numbers in order (a one-row counter, locked by its UPDATE)."""

    __tablename__ = "account_numbers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last: Mapped[int] = mapped_column(BigInteger, default=0)


class PartyEdit(Base):
    """One correction of a party: the fields changed (``{"name": {"from": .., "to": ..}}``),
    append-only (its migration installs triggers that refuse UPDATE and DELETE)."""

    __tablename__ = "party_edits"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    party_kind: Mapped[str] = mapped_column(String(20))
    party_id: Mapped[str] = mapped_column(String(40), index=True)
    changes: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String(300))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class StatusChange(Base):
    """One change of an account's status or a site's freeze (``bank.status_history``): its
    ``position`` among its subject's changes (1: the status it was opened or registered with,
    ``from_status`` NULL), sealed in the registry (``bank.registry``)."""

    __tablename__ = "status_changes"
    __table_args__ = (
        UniqueConstraint("subject_id", "position"),
        CheckConstraint("subject_kind IN ('bank_account', 'bank_site')", name="subject_kind"),
        CheckConstraint("to_status IN ('open', 'frozen', 'closed', 'unfrozen')", name="to_status"),
    )

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    subject_kind: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str] = mapped_column(String(40))
    position: Mapped[int] = mapped_column(Integer)
    from_status: Mapped[str | None] = mapped_column(String(10))
    to_status: Mapped[str] = mapped_column(String(10))
    reason: Mapped[str | None] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String(300))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
