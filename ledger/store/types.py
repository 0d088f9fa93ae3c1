"""Column types that differ between the databases, for the ledger's and the bank's tables."""

from __future__ import annotations

from sqlalchemy import BigInteger, Integer, Text
from sqlalchemy.dialects.postgresql import JSONB

#: an auto-incrementing 64-bit key (SQLite only auto-increments an INTEGER PRIMARY KEY)
BigId = BigInteger().with_variant(Integer(), "sqlite")

#: a sealed row's content: JSONB on PostgreSQL (compared by value), JSON text on SQLite
SealContent = Text().with_variant(JSONB(), "postgresql")

__all__ = ["BigId", "SealContent"]
