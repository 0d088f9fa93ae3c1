"""Sign-in sessions of the read-only web pages: a token pasted once, kept server-side.

The browser holds only a random session secret (in an HTTP-only cookie); the database holds its
SHA-256 hash, the token it stands for and a CSRF secret for the session's forms.  A session acts
exactly as its token does, so revoking the token ends every session made from it, and signing out
deletes the row: a copied cookie stops working at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import timedelta

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from bank import access
from bank.web_session_tables import WebSession as WebSession
from ledger import clock
from ledger.db import Database

#: a session ends this long after sign-in, whatever its use (sign in again to go on)
LIFETIME = timedelta(hours=8)


@dataclass(frozen=True)
class SignedIn:
    """A live session: who it acts for and the secret its forms must echo."""

    actor: access.Actor
    csrf_secret: str


@dataclass(frozen=True)
class Trail:
    """What the access trail records of a sign-in or sign-out request."""

    path: str
    request_id: str | None


def sign_in(
    db: Database, token_secret: str, earlier: str | None, trail: Trail
) -> tuple[str, SignedIn] | None:
    """Start a session for a valid, unrevoked token: ``(cookie secret, session)``, else
    ``None``.  Signing in again (perhaps as someone else) ends the browser's ``earlier`` session;
    the attempt is recorded in the access trail either way."""
    with db.transaction() as session:
        if earlier:
            _end(session, earlier)
        started = _start(session, token_secret)
        kind, status = ("signed_in", 303) if started else ("unauthorized", 401)
        _record(session, trail, kind, status, started[1] if started else None)
        return started


def resume(db: Database, cookie: str) -> SignedIn | None:
    """The session a cookie names, if it has not ended and its token is not revoked."""
    with db.transaction() as session:
        return _resume(session, cookie)


def ended_by_revocation(db: Database, cookie: str) -> bool:
    """Whether the session a cookie names was ended by its token's revocation (rather than never
    started, signed out or run out): the sign-in page then says why it is asked for again.  A
    session past its lifetime ran out, whatever became of its token since: an old cookie learns
    nothing of the token."""
    with db.transaction() as session:
        revoked_at = session.execute(
            select(access.ApiToken.revoked_at)
            .join(WebSession, WebSession.token_id == access.ApiToken.id)
            .where(
                WebSession.id_hash == access.hash_token(cookie),
                WebSession.expires_at > clock.utcnow(),
            )
        ).scalar_one_or_none()
        return revoked_at is not None


def sign_out(db: Database, cookie: str, who: SignedIn, trail: Trail) -> None:
    """End the session a cookie names (harmless if it has ended already), recorded."""
    with db.transaction() as session:
        _end(session, cookie)
        _record(session, trail, "signed_out", 303, who)


def _record(session: Session, trail: Trail, kind: str, status: int, who: SignedIn | None) -> None:
    access.record_event(
        session,
        kind=kind,
        path=trail.path,
        status=status,
        actor=who.actor.label if who else None,
        request_id=trail.request_id,
    )


def _start(session: Session, token_secret: str) -> tuple[str, SignedIn] | None:
    actor = access.authenticate(session, token_secret)
    if actor is None:
        return None
    now = clock.utcnow()
    # sessions past their end are of no use to anyone: sweep them while we are writing anyway
    session.execute(delete(WebSession).where(WebSession.expires_at < now))
    cookie = secrets.token_urlsafe(32)
    csrf = secrets.token_urlsafe(32)
    session.add(
        WebSession(
            id_hash=access.hash_token(cookie),
            token_id=actor.token_id,
            csrf_secret=csrf,
            created_at=now,
            expires_at=now + LIFETIME,
        )
    )
    session.flush()
    return cookie, SignedIn(actor, csrf)


def _resume(session: Session, cookie: str) -> SignedIn | None:
    row = session.execute(
        select(WebSession, access.ApiToken)
        .join(access.ApiToken, access.ApiToken.id == WebSession.token_id)
        .where(WebSession.id_hash == access.hash_token(cookie))
    ).one_or_none()
    if row is None:
        return None
    web, token = row
    if token.revoked_at is not None or clock.as_utc(web.expires_at) <= clock.utcnow():
        return None
    actor = access.Actor(token.id, token.role, token.name, token.lgu_id, token.holder_id)
    return SignedIn(actor, web.csrf_secret)


def _end(session: Session, cookie: str) -> None:
    session.execute(delete(WebSession).where(WebSession.id_hash == access.hash_token(cookie)))
