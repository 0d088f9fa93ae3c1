"""Storing a fact recorded on a plan (``bank.plan_record_tables.PlanFact``): an extension, a
referral to the panel, a revision, a notice, a copy request."""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy.orm import Session

from bank.ids import new_id
from ledger import clock
from ledger.schema import Base

Fact = TypeVar("Fact", bound=Base)


def add_fact(session: Session, table: type[Fact], prefix: str, plan_id: str, **values: Any) -> Fact:
    """Store a fact on the plan now, under a new id with ``prefix``."""
    row = table(id=new_id(prefix), plan_id=plan_id, recorded_at=clock.utcnow(), **values)
    session.add(row)
    session.flush()
    return row
