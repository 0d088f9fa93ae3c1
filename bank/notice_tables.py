"""Tables of the notices Subd. 6 and 7 require: who asked for a copy, and each notice as mailed
(its kind, its date, and the people it was mailed to)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import Date, DateTime, ForeignKey, Integer, String
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class CopyRequest(Base):
    """A member of the public who asked for a copy (Subd. 6 (a), (b); Subd. 7)."""

    __tablename__ = "plan_copy_requests"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.id"), index=True)
    name: Mapped[str] = mapped_column(String(300))
    address: Mapped[str] = mapped_column(String(1000))
    requested_on: Mapped[date] = mapped_column(Date)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class PlanNotice(Base):
    """A notice as mailed: of the application (Subd. 6) or of the decision (Subd. 7)."""

    __tablename__ = "plan_notices"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    plan_id: Mapped[str] = mapped_column(ForeignKey("plans.id"), index=True)
    #: ``application`` or ``decision``
    notice: Mapped[str] = mapped_column(String(20))
    #: ``full`` or ``summary``, as mailed (a later revision does not change what was mailed)
    kind: Mapped[str] = mapped_column(String(10))
    mailed_on: Mapped[date] = mapped_column(Date)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class NoticeRecipient(Base):
    """One person a notice was mailed to, in the order the LGU listed them."""

    __tablename__ = "plan_notice_recipients"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    notice_id: Mapped[str] = mapped_column(ForeignKey("plan_notices.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    name: Mapped[str] = mapped_column(String(300))
    address: Mapped[str] = mapped_column(String(1000))
    role: Mapped[str] = mapped_column(String(30))
