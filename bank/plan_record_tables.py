"""Tables of a plan's record beyond its timeline's dates: the extensions of the decision deadline,
the technical evaluation panel's referral and determination, and the earlier applications a
revision counting as new superseded (each keyed by the plan's ``application_number``).

Two sets of columns are shared: ``PlanFact`` (a fact recorded on a plan: its id, the plan, when
it was recorded) and ``ApplicationRecord`` (an application's notices and decision, which the plan
holds for its current application and ``PlanApplication`` for each earlier one)."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    Date,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import moment, part_of, public_id, refers, sqft
from ledger.schema import Base


class PlanFact:
    """The columns of a fact recorded on a plan."""

    id: Mapped[str] = public_id()
    plan_id: Mapped[str] = part_of("plans.id")
    recorded_at: Mapped[datetime] = moment()


class ApplicationRecord:
    """An application's notices and the LGU's decision with its record."""

    notice_mailed_on: Mapped[date | None] = mapped_column(Date)
    #: the LGU's own decision (``approved`` or ``denied``; null for a deemed approval)
    decision_outcome: Mapped[str | None] = mapped_column(String(10))
    decided_on: Mapped[date | None] = mapped_column(Date)
    #: Subd. 1 (b): the governing body's resolution approving the plan (null only on decisions
    #: recorded before the service asked for it)
    decision_resolution_number: Mapped[str | None] = mapped_column(String(100))
    decision_resolution_adopted_on: Mapped[date | None] = mapped_column(Date)
    #: Minn. Stat. 15.99 subd. 2: a denial states its reasons in writing
    decision_reasons: Mapped[str | None] = mapped_column(Text)
    tep_recommendation: Mapped[str | None] = mapped_column(Text)
    #: Subd. 1 (a), a peatland's approval: the carbon balance considered, the trees or shrubs
    decision_carbon_balance_considered: Mapped[bool | None] = mapped_column(Boolean)
    decision_trees_or_shrubs: Mapped[str | None] = mapped_column(Text)
    decision_notice_mailed_on: Mapped[date | None] = mapped_column(Date)


#: the names of the ``ApplicationRecord`` columns, which a revision counting as new keeps
APPLICATION_RECORD = tuple(ApplicationRecord.__annotations__)


class PlanExtension(PlanFact, Base):
    """An extension of the decision deadline (Minn. Stat. 15.99 subd. 3 (f), (g))."""

    __tablename__ = "plan_extensions"

    application_number: Mapped[int] = mapped_column(Integer)
    notified_on: Mapped[date] = mapped_column(Date)
    days: Mapped[int] = mapped_column(BigInteger)
    reason: Mapped[str] = mapped_column(Text)
    #: (g): with the applicant's written approval or at its request; the LGU's own is (f)
    applicant_agreed: Mapped[bool] = mapped_column(Boolean)


class PlanPanel(PlanFact, Base):
    """Subd. 2: questions referred to the technical evaluation panel, and its determination."""

    __tablename__ = "plan_panels"
    __table_args__ = (UniqueConstraint("plan_id", "application_number"),)

    application_number: Mapped[int] = mapped_column(Integer)
    referred_on: Mapped[date] = mapped_column(Date)
    #: ``public_value``, ``location``, ``size``, ``type``: comma-separated in that order
    questions: Mapped[str] = mapped_column(String(100))
    #: the determination, after an on-site inspection; all null until it is recorded
    inspected_on: Mapped[date | None] = mapped_column(Date)
    #: the three members: a board professional, an SWCD professional, the LGU's appointee
    member_board: Mapped[str | None] = mapped_column(String(300))
    member_swcd: Mapped[str | None] = mapped_column(String(300))
    member_lgu: Mapped[str | None] = mapped_column(String(300))
    determination: Mapped[str | None] = mapped_column(Text)
    #: ``approve``, ``deny`` or null (the panel "may recommend")
    recommendation: Mapped[str | None] = mapped_column(String(10))
    determined_at: Mapped[datetime | None] = moment()


class PlanApplication(ApplicationRecord, Base):
    """An earlier application of a plan, as it stood when a revised application counting as new
    (Subd. 6 (c)) superseded it: its dates and its decision record."""

    __tablename__ = "plan_applications"
    __table_args__ = (UniqueConstraint("plan_id", "number"),)

    id: Mapped[str] = public_id()
    plan_id: Mapped[str] = part_of("plans.id")
    number: Mapped[int] = mapped_column(Integer)
    received_on: Mapped[date] = mapped_column(Date)
    impact_area_sqft: Mapped[int] = sqft()
    #: its outcome when superseded (``approved`` or ``deemed_approved``, after any appeal)
    outcome: Mapped[str | None] = mapped_column(String(20))
    #: the revision that superseded it, and the day that revision was received
    revision_id: Mapped[str] = refers("plan_revisions.id")
    superseded_on: Mapped[date] = mapped_column(Date)
    #: Subd. 9: the security the LGU required of its petitioners, as it stood when superseded (a
    #: petition mailed within its window may reach the board later; the new application's may
    #: differ)
    appeal_security_required_cents: Mapped[int | None] = mapped_column(BigInteger)
