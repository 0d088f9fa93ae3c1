"""The board's tokens: list them, create one (its secret shown once) and revoke one, the last two
recorded in the audit trail of access (``/audit/events``).  The tokens themselves are
``bank.access``'s."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import Select, select
from sqlalchemy.orm import Session

from bank import access, keyset, parties, policy
from bank.access import Actor, ApiToken
from bank.errors import NotFound
from bank.party_tables import Holder, Lgu
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
class TokenView:
    """A token as the board sees it: never its secret, nor the hash it is stored as."""

    id: str
    role: str
    name: str
    lgu_id: str | None
    holder_id: str | None
    created_at: datetime
    created_by: str | None
    last_used_at: datetime | None
    revoked_at: datetime | None
    #: the name of the LGU or holder it acts for (``None`` for a board token)
    acts_for: str | None = None


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


def listed(
    db: Database,
    actor: Actor,
    *,
    after: str | None,
    limit: int,
    revoked: bool | None = None,
    role: str | None = None,
) -> list[TokenView]:
    """Up to ``limit + 1`` tokens (board), newest first (by ``created_at``, then id, both
    descending), after the token ``after``: revoked ones only (``revoked`` true), live ones only
    (false) or both (``None``), of ``role`` when given.

    The cursor's token is found whatever the filters say, so a token revoked while a client
    pages through the live ones still marks its place; a cursor naming no token is
    ``UnknownCursor``.  A token created meanwhile is newer than the rows already shown, so it
    is above the cursor, never on a page still to come.  There is no index on ``created_at``:
    the board keeps tens of tokens, not millions."""
    policy.require_board(actor, "list tokens")
    T = ApiToken  # noqa: N806
    query = _with_party()
    if revoked is not None:
        query = query.where(T.revoked_at.is_not(None) if revoked else T.revoked_at.is_(None))
    if role is not None:
        query = query.where(T.role == role)
    if after is not None:
        query = query.where(keyset.before(T.created_at, T.id, after))
    query = query.order_by(T.created_at.desc(), T.id.desc()).limit(limit + 1)
    with db.transaction() as session:
        if after is not None:
            keyset.require_listed(session, T.id, after)
        return [_view(t, lgu, holder) for t, lgu, holder in session.execute(query).all()]


def show(db: Database, actor: Actor, token_id: str) -> TokenView:
    """One token (board); ``NotFound`` for an id no token has."""
    policy.require_board(actor, "see tokens")
    with db.transaction() as session:
        found = session.execute(_with_party().where(ApiToken.id == token_id)).first()
        if found is None:
            raise NotFound(f"token {token_id} does not exist")
        row, lgu_name, holder_name = found
        return _view(row, lgu_name, holder_name)


def _with_party() -> Select[ApiToken, str, str]:
    """Tokens, each with the name of the LGU and of the holder it acts for (``None`` where it
    acts for none)."""
    return (
        select(ApiToken, Lgu.name, Holder.name)
        .outerjoin(Lgu, Lgu.id == ApiToken.lgu_id)
        .outerjoin(Holder, Holder.id == ApiToken.holder_id)
    )


def _view(row: ApiToken, lgu_name: str | None, holder_name: str | None) -> TokenView:
    return TokenView(
        id=row.id,
        role=row.role,
        name=row.name,
        lgu_id=row.lgu_id,
        holder_id=row.holder_id,
        created_at=row.created_at,
        created_by=row.created_by,
        last_used_at=row.last_used_at,
        revoked_at=row.revoked_at,
        acts_for=lgu_name or holder_name,
    )


def _record(session: Session, actor: Actor, request: Request, kind: str, status: int) -> None:
    access.record_event(
        session,
        kind=kind,
        path=request.path,
        status=status,
        actor=actor.label,
        request_id=request.request_id,
    )
