"""The board's tokens: create one (its secret shown once) and revoke one, each recorded in the
audit trail of access (``/audit/events``).  The tokens themselves are ``bank.access``'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.orm import Session

from bank import access, parties, policy
from bank.access import Actor
from ledger.db import Database


@dataclass(frozen=True)
class IssuedToken:
    """A new token and its secret (``token``), which is never stored or shown again."""

    id: str
    token: str
    role: str
    name: str
    lgu_id: str | None
    holder_id: str | None
    created_at: datetime


@dataclass(frozen=True)
class Request:
    """Where an access event came from: ``METHOD /path`` and the request's id."""

    path: str
    request_id: str | None = None


def create(
    db: Database,
    actor: Actor,
    request: Request,
    *,
    role: str,
    name: str,
    lgu_id: str | None = None,
    holder_id: str | None = None,
) -> IssuedToken:
    """Create a token (board) for a role, and the LGU or holder it acts for, which must exist."""
    policy.require_board(actor, "create tokens")
    with db.transaction() as session:
        parties.check_token_party(session, role, lgu_id, holder_id)
        row, secret = access.create_token(
            session,
            role=role,
            name=name,
            lgu_id=lgu_id,
            holder_id=holder_id,
            created_by=actor.token_id,
        )
        _record(session, actor, request, "token_created", 201)
        return IssuedToken(
            row.id, secret, row.role, row.name, row.lgu_id, row.holder_id, row.created_at
        )


def revoke(db: Database, actor: Actor, request: Request, token_id: str) -> None:
    """Revoke a token (board): it stops working at once.  Revoking it again changes nothing and
    records no second ``token_revoked`` event: the audit trail has one revocation per token,
    the one that stopped it (the row lock in ``access.revoke_token`` makes two revocations at
    once take turns, so only the first records one)."""
    policy.require_board(actor, "revoke tokens")
    with db.transaction() as session:
        if access.revoke_token(session, token_id, by=actor.token_id):
            _record(session, actor, request, "token_revoked", 204)


def _record(session: Session, actor: Actor, request: Request, kind: str, status: int) -> None:
    access.record_event(
        session,
        kind=kind,
        path=request.path,
        status=status,
        actor=actor.label,
        request_id=request.request_id,
    )
