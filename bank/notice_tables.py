"""Tables of the notices Subd. 6 and 7 require: who asked for a copy, each notice as mailed
(its kind, its date, its document, and the people it was mailed to), and the copies of a notice
mailed afterwards to someone who asked for one on or before it was mailed.

They are the plan's legal record of its notices: each is a sealed table (``bank.registry``,
migration 0030), written once and never changed or deleted."""

from __future__ import annotations

from datetime import date

from sqlalchemy import (
    Date,
    ForeignKey,
    ForeignKeyConstraint,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import ID_LENGTH
from bank.plan_record_tables import PlanFact
from ledger.schema import Base


class Addressee:
    """Someone mail goes to: a name and a postal address."""

    name: Mapped[str] = mapped_column(String(300))
    address: Mapped[str] = mapped_column(String(1000))


class CopyRequest(PlanFact, Addressee, Base):
    """A member of the public who asked for a copy (Subd. 6 (a), (b); Subd. 7)."""

    __tablename__ = "plan_copy_requests"
    #: what a copy mailed's foreign key on (request, plan) points at
    __table_args__ = (UniqueConstraint("id", "plan_id", name="uq_plan_copy_requests_id_plan_id"),)

    requested_on: Mapped[date] = mapped_column(Date)


class PlanNotice(PlanFact, Base):
    """A notice as mailed: of the application (Subd. 6) or of the decision (Subd. 7)."""

    __tablename__ = "plan_notices"
    #: what a copy mailed's foreign key on (notice, plan) points at
    __table_args__ = (UniqueConstraint("id", "plan_id", name="uq_plan_notices_id_plan_id"),)

    #: ``application`` or ``decision``
    notice: Mapped[str] = mapped_column(String(20))
    #: ``full`` or ``summary``, as mailed (a later revision does not change what was mailed)
    kind: Mapped[str] = mapped_column(String(10))
    mailed_on: Mapped[date] = mapped_column(Date)
    #: the document as mailed (``bank.notice_document``, JSON), written with the row; null for
    #: a notice recorded before the service kept it (and so forever: the row is sealed), and
    #: refused on a new row (migration 0031)
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
    their request was owed (``bank.notices.owed_copies``), recorded once per request and notice.

    The request and the notice are both of the copy's plan: PostgreSQL by composite foreign
    keys, (copy_request_id, plan_id) and (notice_id, plan_id), to the unique keys (id, plan_id)
    of ``plan_copy_requests`` and ``plan_notices``; SQLite by BEFORE INSERT triggers named as
    those keys (it adds a foreign key only by rebuilding a table), having the unique keys too
    (migration 0030).  The row is sealed, so no UPDATE can change them afterwards."""

    __tablename__ = "plan_copies_mailed"
    __table_args__ = (
        UniqueConstraint("copy_request_id", "notice_id"),
        ForeignKeyConstraint(
            ["copy_request_id", "plan_id"],
            ["plan_copy_requests.id", "plan_copy_requests.plan_id"],
        ),
        ForeignKeyConstraint(["notice_id", "plan_id"], ["plan_notices.id", "plan_notices.plan_id"]),
    )

    copy_request_id: Mapped[str] = mapped_column(String(ID_LENGTH), index=True)
    notice_id: Mapped[str] = mapped_column(String(ID_LENGTH), index=True)
    mailed_on: Mapped[date] = mapped_column(Date)
