"""Tables of the notices Subd. 6 and 7 require: who asked for a copy, each notice as mailed
(its kind, its date, and the people it was mailed to), and the copies of a notice mailed
afterwards to someone who asked for one on or before it was mailed."""

from __future__ import annotations

from datetime import date

from sqlalchemy import Date, ForeignKey, Integer, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import part_of, refers
from bank.plan_record_tables import PlanFact
from ledger.schema import Base


class Addressee:
    """Someone mail goes to: a name and a postal address."""

    name: Mapped[str] = mapped_column(String(300))
    address: Mapped[str] = mapped_column(String(1000))


class CopyRequest(PlanFact, Addressee, Base):
    """A member of the public who asked for a copy (Subd. 6 (a), (b); Subd. 7)."""

    __tablename__ = "plan_copy_requests"

    requested_on: Mapped[date] = mapped_column(Date)


class PlanNotice(PlanFact, Base):
    """A notice as mailed: of the application (Subd. 6) or of the decision (Subd. 7)."""

    __tablename__ = "plan_notices"

    #: ``application`` or ``decision``
    notice: Mapped[str] = mapped_column(String(20))
    #: ``full`` or ``summary``, as mailed (a later revision does not change what was mailed)
    kind: Mapped[str] = mapped_column(String(10))
    mailed_on: Mapped[date] = mapped_column(Date)
    #: the document as mailed (``bank.notice_document``, JSON); null for a notice recorded
    #: before the service kept it
    document: Mapped[str | None] = mapped_column(Text)


class NoticeRecipient(Addressee, Base):
    """One person a notice was mailed to, in the order the LGU listed them."""

    __tablename__ = "plan_notice_recipients"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    notice_id: Mapped[str] = mapped_column(ForeignKey("plan_notices.id"), index=True)
    position: Mapped[int] = mapped_column(Integer)
    role: Mapped[str] = mapped_column(String(30))


class CopyMailed(PlanFact, Base):
    """A copy of a notice the LGU mailed to a member of the public after the notice itself: one
    their request was owed (``bank.notices.owed_copies``), recorded once per request and notice."""

    __tablename__ = "plan_copies_mailed"
    __table_args__ = (UniqueConstraint("copy_request_id", "notice_id"),)

    copy_request_id: Mapped[str] = part_of("plan_copy_requests.id")
    notice_id: Mapped[str] = refers("plan_notices.id", index=True)
    mailed_on: Mapped[date] = mapped_column(Date)
