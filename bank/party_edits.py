"""The board's corrections of holders, LGUs and bank sites, each with its reason.

Only the names and addresses people correct are editable (a holder's name, email and address;
an LGU's name; a site's name, county and major watershed): who holds what and where a site
lies for the bank (its holder and service area) are sealed in the registry (``bank.registry``).
Every edit that changes something is recorded in ``party_edits``, append-only (its migration
installs triggers that refuse UPDATE and DELETE): who, when, each field from what to what, and
why.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import JSON, DateTime, String, Text, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from bank.access import Actor
from bank.errors import NotFound, ValidationFailed
from bank.ids import new_id
from bank.parties import BankSite, Holder, Lgu
from ledger import clock
from ledger.schema import Base

#: the kind of party → its table and the fields the board may correct
EDITABLE: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    "holder": (Holder, ("name", "email", "address")),
    "lgu": (Lgu, ("name",)),
    "bank_site": (BankSite, ("name", "county", "major_watershed")),
}

WHAT = {"holder": "holder", "lgu": "LGU", "bank_site": "bank site"}


class PartyEdit(Base):
    """One correction of a party: the fields changed (``{"name": {"from": .., "to": ..}}``)."""

    __tablename__ = "party_edits"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    party_kind: Mapped[str] = mapped_column(String(20))
    party_id: Mapped[str] = mapped_column(String(40), index=True)
    changes: Mapped[dict[str, Any]] = mapped_column(JSON)
    reason: Mapped[str] = mapped_column(Text)
    actor: Mapped[str] = mapped_column(String(300))
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


def edit_party(
    session: Session,
    actor: Actor,
    kind: str,
    party_id: str,
    changes: dict[str, Any],
    reason: str,
) -> Any:
    """Correct the named fields of a party (board), recording what changed and why.

    The row is locked ``FOR UPDATE`` so that two corrections of one party are recorded in the
    order they were made, each from the value the other left.  A field set to the value it
    already has is no change; an edit that changes nothing records nothing.
    """
    model, fields = EDITABLE[kind]
    unknown = sorted(set(changes) - set(fields))
    if unknown:
        raise ValidationFailed(
            f"a {WHAT[kind]}'s {', '.join(unknown)} cannot be edited",
            {name: ["not editable"] for name in unknown},
        )
    if not reason.strip():
        raise ValidationFailed("an edit needs a reason", {"reason": ["required"]})
    row = session.get(model, party_id, with_for_update=True)
    if row is None:
        raise NotFound(f"no {WHAT[kind]} {party_id}")
    diff = {
        name: {"from": getattr(row, name), "to": value}
        for name, value in changes.items()
        if getattr(row, name) != value
    }
    if diff:
        for name, change in diff.items():
            setattr(row, name, change["to"])
        session.add(
            PartyEdit(
                id=new_id("pedit"),
                party_kind=kind,
                party_id=party_id,
                changes=diff,
                reason=reason,
                actor=actor.label,
                recorded_at=clock.utcnow(),
            )
        )
        session.flush()
    return row


def edits_of(session: Session, kind: str, party_id: str) -> list[PartyEdit]:
    """The recorded corrections of a party, oldest first."""
    query = (
        select(PartyEdit)
        .where(PartyEdit.party_kind == kind, PartyEdit.party_id == party_id)
        .order_by(PartyEdit.recorded_at, PartyEdit.id)
    )
    return list(session.execute(query).scalars())


def as_record(edit: PartyEdit) -> dict[str, Any]:
    """A recorded correction as the audit shows it."""
    return {
        "id": edit.id,
        "party_kind": edit.party_kind,
        "party_id": edit.party_id,
        "changes": edit.changes,
        "reason": edit.reason,
        "actor": edit.actor,
        "recorded_at": edit.recorded_at,
    }
