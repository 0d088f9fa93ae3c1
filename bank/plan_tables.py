"""Tables of replacement plans and appeals: the recorded facts from which every deadline and
status is computed (``bank.rules.timeline``), so nothing time-dependent is ever stored."""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Index,
    Integer,
    String,
    Text,
    text,
)
from sqlalchemy.orm import Mapped, mapped_column

from bank.columns import moment, part_of, public_id, refers, sqft
from bank.plan_record_tables import ApplicationRecord, PlanFact
from ledger.schema import Base


class Plan(ApplicationRecord, Base):
    """A replacement plan application and the facts recorded about it since (its current
    application's notices and decision: ``ApplicationRecord``)."""

    __tablename__ = "plans"
    #: ``GET /plans``'s order, oldest first: the board's, and an LGU's own (migration 0029)
    __table_args__ = (
        Index("ix_plans_created_at_id", "created_at", "id"),
        Index("ix_plans_lgu_id_created_at_id", "lgu_id", "created_at", "id"),
    )

    id: Mapped[str] = public_id()
    lgu_id: Mapped[str] = refers("lgus.id")
    applicant: Mapped[str] = mapped_column(String(300))
    project: Mapped[str] = mapped_column(String(300))
    #: the receipt of the application as last received as new (Subd. 6 (c) restarts it)
    received_on: Mapped[date] = mapped_column(Date)
    first_received_on: Mapped[date] = mapped_column(Date)
    impact_area_sqft: Mapped[int] = sqft()
    impact_wetland_type: Mapped[str] = mapped_column(String(2))
    impact_service_area: Mapped[int] = mapped_column(Integer)
    impact_county: Mapped[str] = mapped_column(String(100))
    on_agricultural_land: Mapped[bool] = mapped_column(Boolean)
    #: Subd. 1 (a): an approval considers the carbon balance and includes planting trees or shrubs
    impact_peatland: Mapped[bool] = mapped_column(Boolean, default=False)
    replacement_ratio: Mapped[str] = mapped_column(String(20))
    method: Mapped[str] = mapped_column(String(30))
    replacement_outside_service_area: Mapped[bool] = mapped_column(Boolean)
    in_lieu_amount_due_cents: Mapped[int | None] = mapped_column(BigInteger)
    ruleset: Mapped[str] = mapped_column(String(60))
    #: the application its notices and decision (``ApplicationRecord``) belong to: 1, and one
    #: more for each revision that counted as a new application (Subd. 6 (c)); earlier ones are
    #: kept in ``plan_applications``
    application_number: Mapped[int] = mapped_column(Integer, default=1)
    replacement_completed_on: Mapped[date | None] = mapped_column(Date)
    #: Subd. 9: the security (at most $500) the LGU requires of a petitioner; none if null
    appeal_security_required_cents: Mapped[int | None] = mapped_column(BigInteger)
    #: Subd. 6 and 7 mail the managers of the watershed district "if one exists"
    watershed_district: Mapped[str | None] = mapped_column(String(300))
    #: where the impact is: the public's copy must identify it (Subd. 6 (a)); null only on plans
    #: recorded before the service asked for it
    location: Mapped[str | None] = mapped_column(String(1000))
    #: Subd. 3: the security the LGU finds acceptable for a project-specific replacement
    security_required_cents: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = moment()
    #: bumped by every change, so concurrent changes to one plan serialize on its row
    version: Mapped[int] = mapped_column(BigInteger, default=0)
    #: the integrator's own references (``bank.external_refs``); not sealed
    external_refs: Mapped[dict[str, str]] = mapped_column(
        JSON, default=dict, server_default=text("'{}'")
    )


class PlanRevision(PlanFact, Base):
    """A revised application (Subd. 6 (c)), and whether it counted as a new one."""

    __tablename__ = "plan_revisions"

    area_sqft: Mapped[int] = sqft()
    previous_area_sqft: Mapped[int] = sqft()
    displacement_ft: Mapped[int] = mapped_column(BigInteger)
    received_on: Mapped[date] = mapped_column(Date)
    counts_as_new_application: Mapped[bool] = mapped_column(Boolean)


class Appeal(Base):
    """A petition to the board (Subd. 9) and the board's decisions on it."""

    __tablename__ = "appeals"

    id: Mapped[str] = public_id()
    plan_id: Mapped[str] = part_of("plans.id")
    petitioner_kind: Mapped[str] = mapped_column(String(20))
    #: the application of the plan whose decision it appeals (``Plan.application_number``)
    application_number: Mapped[int] = mapped_column(Integer, default=1)
    #: who petitioned and where the board's decision is mailed; null only on petitions recorded
    #: before the service asked for them
    petitioner_name: Mapped[str | None] = mapped_column(String(300))
    petitioner_address: Mapped[str | None] = mapped_column(String(1000))
    resident_count: Mapped[int | None] = mapped_column(BigInteger)
    postmarked_on: Mapped[date] = mapped_column(Date)
    received_on: Mapped[date] = mapped_column(Date)
    filing_fee_cents: Mapped[int] = mapped_column(BigInteger)
    security_cents: Mapped[int | None] = mapped_column(BigInteger)
    ruleset: Mapped[str] = mapped_column(String(60))
    petition_granted: Mapped[bool | None] = mapped_column(Boolean)
    petition_decided_on: Mapped[date | None] = mapped_column(Date)
    petition_reason: Mapped[str | None] = mapped_column(Text)
    #: the Subd. 9 grounds a petition was denied on, comma-separated in ``DENIAL_GROUNDS`` order
    petition_grounds: Mapped[str | None] = mapped_column(String(200))
    #: what the board weighed (the wetland's size, controversy, patterns, consequences of delay)
    factors_considered: Mapped[str | None] = mapped_column(Text)
    outcome: Mapped[str | None] = mapped_column(String(20))
    decided_on: Mapped[date | None] = mapped_column(Date)
    #: the day the decision was served by mail on the parties (starts judicial review)
    served_on: Mapped[date | None] = mapped_column(Date)
    created_at: Mapped[datetime] = moment()
