"""What board staff audit: the journal of every transaction (``bank.journal``), the trial
balance, verify, and the access events (refused requests, tokens created and revoked)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, case, func, select
from sqlalchemy.orm import Session

from bank import access, journal, policy, reports
from bank.access import Actor
from bank.access_tables import AuditEvent
from bank.journal import JournalFilter as JournalFilter
from bank.journal import every as journal_all
from bank.registry import SEALED_TABLES, TIES
from ledger import checkpoint, clock, sealer, verification
from ledger.db import Database
from ledger.schema import PHASE_POSTED, LedgerChainLink, LedgerEntry

C, E = LedgerChainLink, LedgerEntry


#: below this many links ``verify_now`` runs the full pass even when a checkpoint exists: it
#: takes well under a second, and trusts nothing an earlier pass verified
FULL_PASS_BELOW = 10_000
#: the board's page runs a full pass (there is no checkpoint yet) only up to this many links
PAGE_FULL_PASS_UP_TO = 100_000


def verify(
    connection: Connection,
    progress: verification.Progress | None = None,
    processes: int = 1,
    anchors: Sequence[verification.Anchor] = (),
) -> verification.Report:
    """The ledger's full verify, covering the registry too: the hash chain, every stored
    balance, every sealed registry row against its seal, and the draws on securities and the
    totals they give against the hash chain and each other (``bank.registry``)."""
    return verification.verify(connection, progress, processes, anchors, SEALED_TABLES, TIES)


def verify_full(
    db: Database,
    progress: verification.Progress | None = None,
    processes: int = 1,
    anchors: Sequence[verification.Anchor] = (),
) -> verification.Report:
    """Seal what is waiting, run the full pass and, when it finds everything intact, record
    its checkpoint (``report.checkpoint``: the last full pass that did, otherwise)."""
    sealer.seal_all(db)
    with db.reader() as connection:
        report = verify(connection, progress, processes, anchors)
        if not report.ok:
            report.checkpoint = checkpoint.latest(connection)
    if report.ok and report.implied is not None:
        with db.engine.begin() as connection:
            report.checkpoint = checkpoint.record(connection, report)
    return report


@dataclass(frozen=True)
class FullPassNeeded:
    """No full pass has recorded a checkpoint yet, and the chain is too long to run one while
    a page waits: ``wetbank audit verify`` runs it."""

    links: int


def verify_now(db: Database) -> verification.Report:
    """What ``GET /audit/verify`` runs: after sealing what is waiting, the check since the last
    full pass's checkpoint; the full pass (recording a checkpoint) when there is none yet or
    the chain is short (under ``FULL_PASS_BELOW`` links)."""
    latest, links = _last_checkpoint(db)
    if latest is None or links < FULL_PASS_BELOW:
        return verify_full(db)
    with verification.snapshot_reader(db) as connection:
        return verification.verify_since(connection, latest, sealed_tables=SEALED_TABLES, ties=TIES)


def verify_for_page(db: Database) -> verification.Report | FullPassNeeded:
    """``verify_now`` for the board's page, which never waits on a full pass over more than
    ``PAGE_FULL_PASS_UP_TO`` links."""
    latest, links = _last_checkpoint(db)
    if latest is None and links > PAGE_FULL_PASS_UP_TO:
        return FullPassNeeded(links)
    return verify_now(db)


def _last_checkpoint(db: Database) -> tuple[checkpoint.Checkpoint | None, int]:
    """Seal what is waiting; the latest checkpoint and the chain's length."""
    sealer.seal_all(db)
    with db.reader() as connection:
        links = int(connection.execute(select(func.max(C.seq))).scalar() or 0)
        return checkpoint.latest(connection), links


@dataclass(frozen=True)
class LastFullPass:
    """When the last full pass that found the ledger intact ran, its chain head and size."""

    at: datetime
    seq: int
    transactions: int

    @classmethod
    def of(cls, found: checkpoint.Checkpoint) -> LastFullPass:
        """The full pass that recorded checkpoint ``found``."""
        return cls(found.ran_at, found.seq, found.transactions)


@dataclass(frozen=True)
class VerifyAnswer:
    """``GET /audit/verify``'s answer: the verdict, what was checked, how, and the
    last full pass that found the ledger intact."""

    ok: bool
    mode: str
    transactions_checked: int
    accounts_checked: int
    first_broken: dict[str, Any] | None
    last_full_pass: LastFullPass | None


def verify_ledger(db: Database, actor: Actor) -> VerifyAnswer:
    """``verify_now`` (board), as ``GET /audit/verify`` answers it."""
    policy.require_board(actor, "verify the ledger")
    report = verify_now(db)
    broken, last = report.first_broken, report.checkpoint
    return VerifyAnswer(
        ok=report.ok,
        mode=report.mode,
        transactions_checked=report.transactions_checked,
        accounts_checked=report.accounts_checked,
        first_broken=broken.as_dict() if broken else None,
        last_full_pass=LastFullPass.of(last) if last else None,
    )


def journal_page(
    db: Database, actor: Actor, filters: JournalFilter, limit: int, after_seq: int | None
) -> list[dict[str, Any]]:
    """Up to ``limit + 1`` transactions of the journal (board), in chain order after
    ``after_seq``, once what is waiting has been sealed; read on a read-only connection, which
    on SQLite waits for no write under way."""
    policy.require_board(actor, "read the journal")
    _check_period(filters)
    sealer.seal_committed(db)
    with db.reader() as connection, Session(bind=connection) as session:
        return journal.page(session, filters, limit, after_seq)


def journal_export(db: Database, actor: Actor, filters: JournalFilter) -> Iterator[dict[str, Any]]:
    """The whole journal (board), sealed now and streamed as it is read: a read-only
    connection of its own, opened when the first row is asked for, held until the last."""
    policy.require_board(actor, "export the journal")
    _check_period(filters)
    sealer.seal_committed(db)
    return _streamed(db, filters)


def _check_period(filters: JournalFilter) -> None:
    """A period that ends before it starts is refused, as a statement's is (an auditor who
    swapped the dates would otherwise read "no transactions")."""
    if filters.start is not None and filters.end is not None:
        reports.check_period(filters.start, filters.end)


def _streamed(db: Database, filters: JournalFilter) -> Iterator[dict[str, Any]]:
    with db.reader() as connection, Session(bind=connection) as session:
        yield from journal_all(session, filters)


def latest_journal(session: Session, limit: int) -> list[dict[str, Any]]:
    """The ``limit`` most recently sealed transactions, newest first (the audit page's view)."""
    return journal.latest(session, limit)


@dataclass(frozen=True)
class AssetTotals:
    """One asset of the trial balance: total posted debits and credits."""

    asset: str
    unit: str
    debits: int
    credits: int
    balanced: bool


@dataclass(frozen=True)
class TrialBalance:
    """Per asset, debits and credits as of a date, and whether every asset balances."""

    as_of: date
    balanced: bool
    assets: list[AssetTotals]


def trial_balance_as_of(db: Database, actor: Actor, as_of: date | None) -> TrialBalance:
    """The trial balance (board) as of ``as_of``, by default today."""
    policy.require_board(actor, "read the trial balance")
    day = as_of or clock.today()
    with db.transaction() as session:
        assets = trial_balance(session, day)
    return TrialBalance(day, all(a.balanced for a in assets), assets)


def events(db: Database, actor: Actor, after: int | None, limit: int) -> list[AuditEvent]:
    """Up to ``limit + 1`` access events (board), oldest first, after the id ``after``: once
    the writers of events in flight have committed (``access.settle_events``), so that no event
    commits later below an id read here, behind the caller's cursor."""
    policy.require_board(actor, "read the access events")
    query = select(AuditEvent).order_by(AuditEvent.id).limit(limit + 1)
    if after is not None:
        query = query.where(AuditEvent.id > after)
    with db.transaction() as session:
        access.settle_events(session)
        return list(session.execute(query).scalars())


def trial_balance(session: Session, as_of: date) -> list[AssetTotals]:
    """Per asset (each credit class, and USD): total posted debits and credits to ``as_of``."""
    debit = func.sum(case((E.amount < 0, -E.amount), else_=0))
    credit = func.sum(case((E.amount > 0, E.amount), else_=0))
    rows = session.execute(
        select(E.asset, debit, credit)
        .where(E.phase == PHASE_POSTED, E.effective_on <= as_of)
        .group_by(E.asset)
        .order_by(E.asset)
    ).all()
    return [
        AssetTotals(
            asset=asset.removeprefix("sqft:"),
            unit="cents" if asset == "USD" else "sqft",
            debits=int(d or 0),
            credits=int(c or 0),
            balanced=int(d or 0) == int(c or 0),
        )
        for asset, d, c in rows
    ]
