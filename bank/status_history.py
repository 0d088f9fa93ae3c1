"""The history of each account's status and each bank site's freeze: who changed it, when, from
what to what and why.

Every change is a row of ``status_changes``, written in the unit of work that makes it, under the
subject's row lock (``bank.parties``): an account frozen, unfrozen, closed, or reopened by a
reversal on appeal (``bank.withdrawals``, with the reversal's reason); a site frozen or
unfrozen.  An account or site with no change recorded is as it was opened (``open``) or
registered (``unfrozen``).  One that existed before the history was kept starts with a row
from nothing to the status it had then (migration 0033).

The rows are sealed in the registry (``bank.registry``: the database refuses an UPDATE or DELETE,
and verify names a row edited behind its triggers), and an account's ``status`` and a site's
``frozen``, which stay writable state, are tied to their last row, or with none to the status
opened or registered with (``bank.registry.TIES``): verify names one set at a SQL prompt, with
no change recorded.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bank.access import Actor
from bank.ids import new_id
from bank.party_tables import StatusChange as StatusChange
from ledger import clock

ACCOUNT = "bank_account"
SITE = "bank_site"


def site_status(frozen: bool) -> str:
    """How the history names a site's freeze."""
    return "frozen" if frozen else "unfrozen"


def record(
    session: Session,
    kind: str,
    subject_id: str,
    from_status: str | None,
    to_status: str,
    actor: Actor,
    reason: str | None = None,
) -> StatusChange:
    """Record that ``actor`` changed the subject's status (the caller holds its row locked, so
    the next position is its own)."""
    last = session.execute(
        select(func.max(StatusChange.position)).where(StatusChange.subject_id == subject_id)
    ).scalar_one_or_none()
    row = StatusChange(
        id=new_id("stat"),
        subject_kind=kind,
        subject_id=subject_id,
        position=(last or 0) + 1,
        from_status=from_status,
        to_status=to_status,
        reason=reason,
        actor=actor.label,
        recorded_at=clock.utcnow(),
    )
    session.add(row)
    session.flush()
    return row


def history_of(session: Session, subject_id: str) -> list[StatusChange]:
    """The subject's status changes, first to last."""
    return list(
        session.execute(
            select(StatusChange)
            .where(StatusChange.subject_id == subject_id)
            .order_by(StatusChange.position)
        ).scalars()
    )


def status_when_closed(session: Session, account_id: str) -> str:
    """The status the account had when it was last closed (``open`` or ``frozen``): a reopening
    on appeal restores it, so that a freeze stands until the board lifts it."""
    before = session.execute(
        select(StatusChange.from_status)
        .where(StatusChange.subject_id == account_id, StatusChange.to_status == "closed")
        .order_by(StatusChange.position.desc())
        .limit(1)
    ).scalar_one_or_none()
    return before or "open"


@dataclass(frozen=True)
class StatusChangeView:
    """A status change as the API and the pages show it."""

    position: int
    from_status: str | None
    to_status: str
    reason: str | None
    actor: str
    recorded_at: datetime

    @classmethod
    def of(cls, row: StatusChange) -> StatusChangeView:
        """The view of ``row``."""
        return cls(
            row.position, row.from_status, row.to_status, row.reason, row.actor, row.recorded_at
        )
