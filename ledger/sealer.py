"""Sealing the hash chain off the write path, on PostgreSQL.

Each process runs one daemon thread that a commit wakes; it seals whatever is queued in its own
short transaction, and keeps sealing at its pace while it finds work.  Queued transactions are
durable, so a crash only delays their sealing: a server process wakes its sealer as it starts and
whenever its readiness check finds work queued, so what a crash left is sealed without a write.
``seal_all`` (used by the verifier and the journal) seals synchronously.

Several processes' sealers pace themselves (``next_pace``): one that finds another sealed since
its own last run, or holding the lock, waits twice as long before its next run, up to
``idle_seconds``; one that finds nobody did goes back to ``batch_seconds``.  At a fixed pace
every writing process would seal twenty times a second, each run a sliver of the queue, holding
its process's GIL while that process's writer may hold row locks; paced, many busy processes seal
about as often as one.  No lock outlives a transaction, so a connection pooler in transaction
mode changes nothing.

A database that takes no writes (a hot standby, or ``default_transaction_read_only`` on) refuses
every run, for as long as it stays so.  The sealer says so once, then tries again at an interval
that doubles up to ``READ_ONLY_RETRY_MAX_SECONDS`` whatever wakes it meanwhile (each read-only
request's commit would), and says once that the database takes writes again.  Any other failure
is logged each time and retried on the next wake: it is a fault to see.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from ledger import chain, store
from ledger.db import Database, refuses_writes

log = logging.getLogger(__name__)

#: the sealing queue is vacuumed each time the chain grows past a multiple of this many links
#: (each sealed transaction leaves a dead queue row)
VACUUM_EVERY = 2_000

#: the first and the longest wait before trying again on a database that takes no writes: long
#: enough not to spend a transaction a second on it, short enough that what is queued is sealed
#: well within readiness's bound (``WETBANK_READY_MAX_SEAL_AGE_SECONDS``, 60) once it takes them
READ_ONLY_RETRY_FIRST_SECONDS = 1.0
READ_ONLY_RETRY_MAX_SECONDS = 30.0


class BackgroundSealer:
    """Wakes on commit and seals queued transactions in batches."""

    def __init__(
        self, db: Database, idle_seconds: float = 1.0, batch_seconds: float = 0.05
    ) -> None:
        self.db = db
        self.idle_seconds = idle_seconds
        self.batch_seconds = batch_seconds
        self._event = threading.Event()
        self._pid: int | None = None
        self._lock = threading.Lock()
        self._stopped = False
        self._thread: threading.Thread | None = None
        self.runs = 0  # sealing transactions this process ran (tests read it)
        self.read_only_retry_first_seconds = READ_ONLY_RETRY_FIRST_SECONDS
        self.read_only_retry_max_seconds = READ_ONLY_RETRY_MAX_SECONDS
        #: the wait before the next try while the database takes no writes; None while it does
        self._read_only_retry_seconds: float | None = None

    def wake(self, _db: Database | None = None) -> None:
        """Ask the sealer to run soon (starting it in this process if needed: gunicorn forks).
        One thread per process; one sealer at a time across processes (``chain.seal``'s lock)."""
        if self._stopped:
            return
        if self._pid != os.getpid():
            with self._lock:
                if self._pid != os.getpid():
                    self._event = threading.Event()
                    thread = threading.Thread(target=self._loop, name="ledger-sealer", daemon=True)
                    thread.start()
                    self._thread = thread
                    self._pid = os.getpid()
        self._event.set()

    def stop(self) -> None:
        """Stop the thread (it finishes the batch it is sealing first)."""
        self._stopped = True
        self._event.set()
        if self._thread is not None and self._pid == os.getpid():
            self._thread.join(timeout=10)

    def _loop(self) -> None:
        pace = self.batch_seconds
        busy = False  # the last run found work: run again without waiting for a commit here
        last_seq: int | None = None  # the chain's last link after this sealer's last run
        while not self._stopped:
            if self._read_only_retry_seconds is not None:
                self._pause(self._read_only_retry_seconds)
            elif not busy:
                self._event.wait(self.idle_seconds)
            # let a burst of commits queue up, then seal them as one batch
            time.sleep(pace)
            self._event.clear()
            if self._stopped:
                return
            sealed = self._seal()
            if sealed is None:
                busy = False
                continue
            pace = next_pace(pace, sealed, last_seq, self.batch_seconds, self.idle_seconds)
            busy = sealed.transactions > 0 or sealed.contended
            if sealed.transactions:
                last_seq = sealed.last_seq
            elif not sealed.contended:
                last_seq = sealed.head_seq  # others' links are counted once
            # whichever process's sealer passes a multiple of VACUUM_EVERY vacuums, so the
            # queue is vacuumed that often however many processes share the sealing
            if sealed.passed_multiple_of(VACUUM_EVERY):
                self._vacuum_queue()

    def _seal(self) -> chain.Sealed | None:
        """One sealing transaction; None if it failed (the queue is durable: tried again)."""
        try:
            with self.db.engine.begin() as connection:
                sealed = chain.seal(connection)
        except Exception as error:
            if refuses_writes(error):
                self._refused(error)
            else:  # not read-only, or no longer: a fault to see each time, as it always was
                self._read_only_retry_seconds = None
                log.exception("sealing the hash chain failed; will retry")
            return None
        self.runs += 1
        if self._read_only_retry_seconds is not None:
            self._read_only_retry_seconds = None
            log.info("the database takes writes again: sealing the hash chain resumes")
        return sealed

    def _refused(self, error: BaseException) -> None:
        """The database takes no writes: say so the first time, and wait longer each time."""
        waited = self._read_only_retry_seconds
        if waited is None:
            self._read_only_retry_seconds = self.read_only_retry_first_seconds
            detail = (str(getattr(error, "orig", None) or error).strip().splitlines() or ["?"])[0]
            log.warning(
                "the database is read-only (a hot standby, or default_transaction_read_only on): "
                "sealing the hash chain waits, trying again every %g s at most (%s)",
                self.read_only_retry_max_seconds,
                detail,
            )
        else:
            self._read_only_retry_seconds = min(waited * 2, self.read_only_retry_max_seconds)

    def _pause(self, seconds: float) -> None:
        """Wait ``seconds``, returning early only to stop: a wake is no sign that the database
        takes writes again (a read-only request commits too)."""
        deadline = time.monotonic() + seconds
        while not self._stopped and (left := deadline - time.monotonic()) > 0:
            self._event.wait(left)
            self._event.clear()

    def _vacuum_queue(self) -> None:
        """Every sealed transaction leaves a dead queue row; between autovacuum's visits (a
        minute apart) thousands pile up, and every writer's insert and every batch's scan of the
        queue's index steps over them, slowing every writer.  A tiny table vacuums in
        milliseconds.  It keeps its emptied pages (``TRUNCATE false``), which later inserts
        reuse: truncating them needs the table alone, and with writers always inserting VACUUM
        would wait up to 5 s for that, this thread not sealing meanwhile, then hold every
        writer back while it truncates."""
        try:
            with self.db.engine.connect().execution_options(
                isolation_level="AUTOCOMMIT"
            ) as connection:
                connection.exec_driver_sql("VACUUM (TRUNCATE false) ledger_chain_queue")
        except Exception:  # autovacuum still comes; a refused VACUUM only costs speed
            log.warning("vacuuming the sealing queue failed", exc_info=True)


def next_pace(
    pace: float, sealed: chain.Sealed, last_seq: int | None, fastest: float, slowest: float
) -> float:
    """How long a sealer waits before its next run, after a run that did ``sealed``.

    Another sealer at work (it held the lock, or chained links since this one's last run, which
    ended at ``last_seq``): wait twice as long, up to ``slowest``.  Nobody else: ``fastest``.
    An empty queue with nobody else's links since says nothing either way: the pace stays.

    An empty queue with another's links since counts too: two sealers that run in step, one
    always just after the other, find an empty queue half the time, and were it ignored both
    would keep the fastest pace.
    """
    if sealed.contended:
        return min(pace * 2, slowest)
    head_before = sealed.first_seq - 1 if sealed.transactions else sealed.head_seq
    if last_seq is not None and head_before > last_seq:
        return min(pace * 2, slowest)
    return fastest if sealed.transactions else pace


def seal_all(db: Database) -> chain.Sealed:
    """Seal every queued transaction now, waiting for any running sealer."""
    with db.engine.begin() as connection:
        return chain.seal(connection, wait=True)


def seal_committed(db: Database) -> None:
    """Give every committed transaction its place in the chain before a read that lists by it.

    Where a background sealer chains (PostgreSQL) this is ``seal_all``; where each write seals
    its own link before it commits (SQLite) nothing committed waits, and no write lock is taken.
    """
    if store.of(db.engine).seals_in_background:
        seal_all(db)


def attach(db: Database) -> BackgroundSealer | None:
    """Seal after commits in the background, where the store does not seal inside each write
    (PostgreSQL; SQLite's writers take turns and each seals its own link)."""
    if not store.of(db.engine).seals_in_background:
        return None
    background = BackgroundSealer(db)
    db.on_commit(background.wake)
    db.on_dispose(background.stop)
    return background
