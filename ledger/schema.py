"""The ledger's tables.  ``Base.metadata`` is the one metadata Alembic migrates.

Quantities are signed 64-bit integers; an entry's ``amount`` is positive for a credit to its
account and negative for a debit, so every transaction's amounts sum to zero per asset.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Date,
    DateTime,
    ForeignKey,
    ForeignKeyConstraint,
    Index,
    MetaData,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ledger.store.types import BigId, SealContent

NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}

PHASE_POSTED, PHASE_PENDING, PHASE_RELEASE = "posted", "pending", "release"


class Base(DeclarativeBase):
    """Declarative base shared by ``ledger`` and ``bank`` tables."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class LedgerAccount(Base):
    """An account holding one asset.  Immutable once created: triggers refuse UPDATE, DELETE
    and (PostgreSQL) TRUNCATE (migration 0016).

    The two unique keys beside the id are what the entries' and balance rows' composite foreign
    keys point at, so that an entry is in its account's asset and a balance row carries its
    account's asset and limits (PostgreSQL; SQLite checks the same with insert triggers, having
    the unique keys but not the composite foreign keys, which it could add only by rebuilding
    the tables).
    """

    __tablename__ = "ledger_accounts"
    __table_args__ = (
        UniqueConstraint("id", "asset", name="uq_ledger_accounts_id_asset"),
        UniqueConstraint(
            "id", "asset", "no_overdraft", "no_overcredit", name="uq_ledger_accounts_id_limits"
        ),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    code: Mapped[str] = mapped_column(String(200), unique=True)
    asset: Mapped[str] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(300))
    #: "debits must not exceed credits": every holder account
    no_overdraft: Mapped[bool] = mapped_column(Boolean, default=False)
    #: "credits must not exceed debits"
    no_overcredit: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    #: balance rows (slots) a writer spreads this account's changes over; more than one only
    #: for a hot account without limits, so that its writers need not take turns
    slots: Mapped[int] = mapped_column(SmallInteger, default=1, server_default="1")


class LedgerBalance(Base):
    """The stored balance of one account (the sum of its slot rows), changed only with its
    entries, in the same transaction.

    The flags are copied here so that CHECK constraints (which cannot look at another table) refuse
    an overdraft even from a raw UPDATE; an account with a limit has one row only, slot 0, so its
    check sees its whole balance.  The copies are the account's: a foreign key on (account, asset,
    limits) (PostgreSQL; SQLite: an insert trigger), and a trigger refuses an UPDATE of the
    account, slot, asset or limits and any DELETE, while the running totals stay the engine's to
    update (migration 0016).
    """

    __tablename__ = "ledger_balances"
    __table_args__ = (
        ForeignKeyConstraint(
            ["account_id", "asset", "no_overdraft", "no_overcredit"],
            [
                "ledger_accounts.id",
                "ledger_accounts.asset",
                "ledger_accounts.no_overdraft",
                "ledger_accounts.no_overcredit",
            ],
        ),
        CheckConstraint(
            "debits_posted >= 0 AND credits_posted >= 0 AND debits_pending >= 0 "
            "AND credits_pending >= 0",
            name="non_negative",
        ),
        CheckConstraint(
            "NOT no_overdraft OR debits_posted + debits_pending <= credits_posted",
            name="no_overdraft",
        ),
        CheckConstraint(
            "NOT no_overcredit OR credits_posted + credits_pending <= debits_posted",
            name="no_overcredit",
        ),
        CheckConstraint(
            "slot >= 0 AND (slot = 0 OR NOT (no_overdraft OR no_overcredit))", name="slot"
        ),
    )

    account_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True, default=0, server_default="0")
    asset: Mapped[str] = mapped_column(String(100))
    no_overdraft: Mapped[bool] = mapped_column(Boolean)
    no_overcredit: Mapped[bool] = mapped_column(Boolean)
    debits_posted: Mapped[int] = mapped_column(BigInteger, default=0)
    credits_posted: Mapped[int] = mapped_column(BigInteger, default=0)
    debits_pending: Mapped[int] = mapped_column(BigInteger, default=0)
    credits_pending: Mapped[int] = mapped_column(BigInteger, default=0)
    version: Mapped[int] = mapped_column(BigInteger, default=0)


class LedgerTransaction(Base):
    """A balanced set of entries.  Never updated (on SQLite it is sealed once, see ddl.py), and
    queued or chained only sealed (migration 0018: SQLite refuses an open one in the queue and
    the chain; PostgreSQL, which inserts it sealed, refuses any other at COMMIT)."""

    __tablename__ = "ledger_transactions"
    __table_args__ = (CheckConstraint("state IN ('open', 'sealed')", name="state"),)

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    kind: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(8))
    pending: Mapped[bool] = mapped_column(Boolean, default=False)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    #: the transaction this one reverses: at most once (unique)
    reverses_id: Mapped[int | None] = mapped_column(
        ForeignKey("ledger_transactions.id"), unique=True
    )
    idempotency_key: Mapped[str] = mapped_column(String(300), unique=True)
    request_hash: Mapped[str] = mapped_column(String(64))
    effective_on: Mapped[date] = mapped_column(Date)
    recorded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    actor: Mapped[str | None] = mapped_column(String(300))
    request_id: Mapped[str | None] = mapped_column(String(200))
    memo: Mapped[str | None] = mapped_column(Text)


class LedgerEntry(Base):
    """One line of a transaction.  Immutable: triggers refuse UPDATE and DELETE.  Its asset is
    its account's: a foreign key on (account, asset) (PostgreSQL, no more costly per row than one
    on the account alone; SQLite: an insert trigger; migration 0016).  A release entry releases a
    pending entry of its account, the same amount, in the pending transfer it resolves
    (migration 0018).  It is written by the database transaction that writes its ledger
    transaction, never added to one committed before (SQLite: only while the transaction is
    open; PostgreSQL: the deferred check, migration 0019)."""

    __tablename__ = "ledger_entries"
    __table_args__ = (
        ForeignKeyConstraint(
            ["account_id", "asset"], ["ledger_accounts.id", "ledger_accounts.asset"]
        ),
        CheckConstraint("amount <> 0", name="non_zero"),
        CheckConstraint("phase IN ('posted', 'pending', 'release')", name="phase"),
        CheckConstraint(
            "(phase = 'release') = (resolves_id IS NOT NULL) "
            "AND (resolves_id IS NULL) = (resolution IS NULL) "
            "AND (resolution IS NULL OR resolution IN ('posted', 'voided', 'expired'))",
            name="release",
        ),
        # a pending transfer is resolved at most once: a second release of it is refused
        UniqueConstraint("resolves_id", "account_id", name="uq_ledger_entries_resolves_once"),
        Index("ix_ledger_entries_account_effective", "account_id", "effective_on", "id"),
        Index("ix_ledger_entries_account_id_id", "account_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"), index=True)
    account_id: Mapped[int] = mapped_column(BigId)
    asset: Mapped[str] = mapped_column(String(100))
    #: signed: + credit to the account, − debit
    amount: Mapped[int] = mapped_column(BigInteger)
    #: posted changes the posted balance; pending reserves; release undoes a pending reservation
    phase: Mapped[str] = mapped_column(String(8))
    #: the account's posted balance (credits − debits) after this entry
    balance_after: Mapped[int] = mapped_column(BigInteger)
    #: the account's balance version after this entry
    account_version: Mapped[int] = mapped_column(BigInteger)
    #: the balance slot this entry changed; on an account with several slots, ``balance_after``
    #: and ``account_version`` are that slot's
    slot: Mapped[int] = mapped_column(SmallInteger, default=0, server_default="0")
    effective_on: Mapped[date] = mapped_column(Date)
    #: on a release entry: the pending transaction it resolves, and how
    resolves_id: Mapped[int | None] = mapped_column(ForeignKey("ledger_transactions.id"))
    resolution: Mapped[str | None] = mapped_column(String(8))


class LedgerOpenPending(Base):
    """Index of unresolved pending transactions per account (derived; checked by verify, which
    compares each row with its pending transfer's entries and header: ``ledger.verify_pending``).

    It lets a read subtract reservations whose expiry has passed without any sweeper, and lets a
    writer expire them lazily, in O(open pendings) rather than O(history).
    """

    __tablename__ = "ledger_open_pending"

    transaction_id: Mapped[int] = mapped_column(
        ForeignKey("ledger_transactions.id"), primary_key=True
    )
    account_id: Mapped[int] = mapped_column(ForeignKey("ledger_accounts.id"), primary_key=True)
    debits: Mapped[int] = mapped_column(BigInteger, default=0)
    credits: Mapped[int] = mapped_column(BigInteger, default=0)
    expires_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __table_args__ = (Index("ix_ledger_open_pending_account", "account_id", "expires_at"),)


class LedgerChainLink(Base):
    """A transaction's place in the SHA-256 hash chain, sealed after commit in seal order."""

    __tablename__ = "ledger_chain"

    seq: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    transaction_id: Mapped[int] = mapped_column(ForeignKey("ledger_transactions.id"), unique=True)
    prev_hash: Mapped[str] = mapped_column(String(64))
    hash: Mapped[str] = mapped_column(String(64))
    chained_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class LedgerChainQueue(Base):
    """Committed transactions waiting for their place in the chain (written by each writer)."""

    __tablename__ = "ledger_chain_queue"

    transaction_id: Mapped[int] = mapped_column(
        ForeignKey("ledger_transactions.id"), primary_key=True, autoincrement=False
    )


class LedgerRowSeal(Base):
    """What a sealed row held when it was written (``ledger.row_seals``); written by triggers."""

    __tablename__ = "ledger_row_seals"

    table_name: Mapped[str] = mapped_column(String(63), primary_key=True)
    row_id: Mapped[str] = mapped_column(String(100), primary_key=True)
    content: Mapped[str] = mapped_column(SealContent)
    # PostgreSQL adds ``position`` (an identity column, migration 0012): the order seals were
    # written in, so that a verify since a checkpoint reads only the newer ones.  SQLite's
    # implicit rowid orders them there (``ledger.row_seals.position_column``).


class LedgerVerifyCheckpoint(Base):
    """A full verify that found everything intact: the chain head it verified, where the
    registry's seals stood, and (``LedgerVerifyBalance``) the balances the verified chain
    implies; ``hash`` is the SHA-256 of all of it (``ledger.checkpoint``)."""

    __tablename__ = "ledger_verify_checkpoints"

    id: Mapped[int] = mapped_column(BigId, primary_key=True, autoincrement=True)
    seq: Mapped[int] = mapped_column(BigInteger)
    head_hash: Mapped[str] = mapped_column(String(64))
    max_transaction_id: Mapped[int] = mapped_column(BigInteger)
    seal_position: Mapped[int] = mapped_column(BigInteger)
    #: seal positions at or below ``seal_position`` not yet visible when the pass read them
    #: (written by transactions still open then, or rolled back), comma-separated
    seal_gaps: Mapped[str] = mapped_column(Text)
    ran_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    duration_ms: Mapped[int] = mapped_column(BigInteger)
    transactions: Mapped[int] = mapped_column(BigInteger)
    accounts: Mapped[int] = mapped_column(BigInteger)
    hash: Mapped[str] = mapped_column(String(64))


class LedgerVerifyBalance(Base):
    """One account slot's balance as the entries of a checkpoint's chain sum it."""

    __tablename__ = "ledger_verify_balances"

    checkpoint_id: Mapped[int] = mapped_column(
        ForeignKey("ledger_verify_checkpoints.id", ondelete="CASCADE"), primary_key=True
    )
    account_id: Mapped[int] = mapped_column(BigId, primary_key=True)
    slot: Mapped[int] = mapped_column(SmallInteger, primary_key=True)
    debits_posted: Mapped[int] = mapped_column(BigInteger)
    credits_posted: Mapped[int] = mapped_column(BigInteger)
    debits_pending: Mapped[int] = mapped_column(BigInteger)
    credits_pending: Mapped[int] = mapped_column(BigInteger)
