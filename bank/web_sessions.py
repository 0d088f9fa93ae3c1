"""Sign-in sessions of the read-only web pages: a token pasted once, kept server-side.

The browser holds only a random session secret (in an HTTP-only cookie); the database holds its
SHA-256 hash, the token it stands for and a CSRF secret for the session's forms.  A session acts
exactly as its token does, so revoking the token ends every session made from it, and signing out
deletes the row: a copied cookie stops working at once.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from sqlalchemy import DateTime, ForeignKey, String, delete, select
from sqlalchemy.orm import Mapped, Session, mapped_column

from bank import access
from ledger import clock
from ledger.schema import Base

#: a session ends this long after sign-in, whatever its use (sign in again to go on)
LIFETIME = timedelta(hours=8)


class WebSession(Base):
    """One signed-in browser."""

    __tablename__ = "web_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_id: Mapped[str] = mapped_column(ForeignKey("api_tokens.id"), index=True)
    csrf_secret: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)


@dataclass(frozen=True)
class SignedIn:
    """A live session: who it acts for and the secret its forms must echo."""

    actor: access.Actor
    csrf_secret: str


def sign_in(session: Session, token_secret: str) -> tuple[str, SignedIn] | None:
    """Start a session for a valid, unrevoked token: ``(cookie secret, session)``, else ``None``."""
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


def resume(session: Session, cookie: str) -> SignedIn | None:
    """The session a cookie names, if it has not ended and its token is not revoked."""
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


def sign_out(session: Session, cookie: str) -> None:
    """End the session a cookie names (harmless if it has ended already)."""
    session.execute(delete(WebSession).where(WebSession.id_hash == access.hash_token(cookie)))
