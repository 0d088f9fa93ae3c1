"""The tables of access: bearer tokens, the audit trail of access, and the stored results of
idempotent writes (``bank.access`` reads and writes them)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, Integer, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class ApiToken(Base):
    """A bearer token: its hash, role, and the LGU or holder it acts for."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    role: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(String(200))  # bank.access.TOKEN_NAME_MAX_LENGTH
    lgu_id: Mapped[str | None] = mapped_column(String(40))
    holder_id: Mapped[str | None] = mapped_column(String(40))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    created_by: Mapped[str | None] = mapped_column(String(40))
    last_used_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class AuditEvent(Base):
    """A refused request (401/403) or a token created or revoked (``GET /audit/events``).
    Append-only: the database refuses UPDATE, DELETE and (PostgreSQL) TRUNCATE (migration
    0019)."""

    __tablename__ = "audit_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
    actor: Mapped[str | None] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(40))
    path: Mapped[str] = mapped_column(String(500))
    request_id: Mapped[str | None] = mapped_column(String(200))
    status: Mapped[int] = mapped_column(Integer)


class IdempotencyRecord(Base):
    """The stored result of a successful write, under the key its caller sent."""

    __tablename__ = "idempotency_records"

    token_id: Mapped[str] = mapped_column(ForeignKey("api_tokens.id"), primary_key=True)
    key: Mapped[str] = mapped_column(String(300), primary_key=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    status: Mapped[int | None] = mapped_column(Integer)
    body: Mapped[str | None] = mapped_column(Text)
    content_type: Mapped[str | None] = mapped_column(String(100))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
