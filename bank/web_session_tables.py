"""The table of the web pages' sign-in sessions (``bank.web_sessions``)."""

from __future__ import annotations

from datetime import datetime

from sqlalchemy import DateTime, ForeignKey, String
from sqlalchemy.orm import Mapped, mapped_column

from ledger.schema import Base


class WebSession(Base):
    """One signed-in browser."""

    __tablename__ = "web_sessions"

    id_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    token_id: Mapped[str] = mapped_column(ForeignKey("api_tokens.id"), index=True)
    csrf_secret: Mapped[str] = mapped_column(String(64))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    expires_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), index=True)
