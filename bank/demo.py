"""A small but realistic demo bank (``wetbank demo``): idempotent, it loads its data once.

Every run prints a fresh token per role, since tokens are shown only when created.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import access, parties
from ledger.db import Database

DEMO_MARKER = "Prairie Creek LLC"


@dataclass(frozen=True)
class DemoTokens:
    """The tokens a demo run created, by role."""

    board: str
    lgu: str
    holder: str


def load(db: Database) -> DemoTokens:
    """Load the demo data unless it is there already; return a new token for each role."""
    with db.transaction() as session:
        holder = session.execute(
            select(parties.Holder).where(parties.Holder.name == DEMO_MARKER)
        ).scalar_one_or_none()
        if holder is None:
            _load_data(session)
        holder_id, lgu_id = _demo_ids(session)
        _row, board = access.create_token(session, role="board", name="demo board")
        _row, lgu = access.create_token(session, role="lgu", name="demo lgu", lgu_id=lgu_id)
        _row, owner = access.create_token(
            session, role="holder", name="demo holder", holder_id=holder_id
        )
    return DemoTokens(board=board, lgu=lgu, holder=owner)


def _load_data(session: Session) -> None:
    parties.create_holder(
        session, name=DEMO_MARKER, email="bank@prairiecreek.example", address="Lyon County, MN"
    )
    parties.create_holder(session, name="Hollis Township", email=None, address=None)
    parties.create_lgu(session, name="Lyon County", kind="county")
    parties.create_lgu(
        session,
        name="City of Buffalo",
        kind="city",
        observes_indigenous_peoples_day=True,
        observes_friday_after_thanksgiving=True,
    )


def _demo_ids(session: Session) -> tuple[str, str]:
    holder = session.execute(
        select(parties.Holder.id).where(parties.Holder.name == DEMO_MARKER)
    ).scalar_one()
    lgu = session.execute(
        select(parties.Lgu.id).where(parties.Lgu.name == "Lyon County")
    ).scalar_one()
    return holder, lgu
