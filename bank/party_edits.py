"""The board's corrections of holders, LGUs and bank sites, each with its reason.

Only the names and addresses people correct are editable (a holder's name, email and address;
an LGU's name; a site's name, county and major watershed): who holds what and where a site
lies for the bank (its holder and service area) are sealed in the registry (``bank.registry``).
Every edit that changes something is recorded in ``party_edits``, append-only (its migration
installs triggers that refuse UPDATE and DELETE): who, when, each field from what to what, and
why.
"""

from __future__ import annotations

from typing import Any, TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import policy
from bank.access import Actor
from bank.errors import ValidationFailed, found
from bank.ids import new_id
from bank.party_tables import BankSite, Holder, Lgu
from bank.party_tables import PartyEdit as PartyEdit
from ledger import clock
from ledger.db import Database

Party = TypeVar("Party", Holder, Lgu, BankSite)

#: the kind of party → its table and the fields the board may correct
EDITABLE: dict[str, tuple[type[Any], tuple[str, ...]]] = {
    "holder": (Holder, ("name", "email", "address")),
    "lgu": (Lgu, ("name",)),
    "bank_site": (BankSite, ("name", "county", "major_watershed")),
}

WHAT = {"holder": "holder", "lgu": "LGU", "bank_site": "bank site"}
#: a party's table → its kind
_KIND: dict[type[Any], str] = {model: kind for kind, (model, _fields) in EDITABLE.items()}


def edit_holder(
    db: Database, actor: Actor, holder_id: str, *, reason: str, **changes: Any
) -> Holder:
    """Correct a holder's name, email or address (board), with a reason, recorded."""
    with db.transaction() as session:
        return edit_party(session, actor, Holder, holder_id, changes, reason)


def edit_lgu(db: Database, actor: Actor, lgu_id: str, *, reason: str, **changes: Any) -> Lgu:
    """Correct an LGU's name (board), with a reason, recorded."""
    with db.transaction() as session:
        return edit_party(session, actor, Lgu, lgu_id, changes, reason)


def edit_party(
    session: Session,
    actor: Actor,
    model: type[Party],
    party_id: str,
    changes: dict[str, Any],
    reason: str,
) -> Party:
    """Correct the named fields of a party (board), recording what changed and why.

    The row is locked ``FOR UPDATE`` so that two corrections of one party are recorded in the
    order they were made, each from the value the other left.  A field set to the value it
    already has is no change; an edit that changes nothing records nothing.
    """
    policy.require_board(actor, "correct parties")
    kind = _KIND[model]
    unknown = sorted(set(changes) - set(EDITABLE[kind][1]))
    if unknown:
        raise ValidationFailed(
            f"a {WHAT[kind]}'s {', '.join(unknown)} cannot be edited",
            {name: ["not editable"] for name in unknown},
        )
    if not reason.strip():
        raise ValidationFailed("an edit needs a reason", {"reason": ["required"]})
    row = found(session.get(model, party_id, with_for_update=True), f"no {WHAT[kind]} {party_id}")
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


def field_as_of(session: Session, kind: str, party_id: str, field: str, now: str, at: Any) -> str:
    """What the party's ``field`` was at the moment ``at``, ``now`` being its value today: the
    value the first correction of it recorded after ``at`` changed (its ``from``), else
    ``now``."""
    for edit in edits_of(session, kind, party_id):
        change = edit.changes.get(field)
        if change is not None and clock.as_utc(edit.recorded_at) > clock.as_utc(at):
            return str(change["from"])
    return now


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
