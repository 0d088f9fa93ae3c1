"""Sealing the hash chain off the write path, on PostgreSQL.

Each process runs one daemon thread that a commit wakes; it seals whatever is queued in its own
short transaction.  Queued transactions are durable, so a crash only delays their sealing, and
``seal_all`` (used by the verifier and the journal) seals synchronously.
"""

from __future__ import annotations

import logging
import os
import threading
import time

from ledger import chain
from ledger.db import Database

log = logging.getLogger(__name__)

#: the sealing queue is vacuumed each time the chain grows past a multiple of this many links
#: (each sealed transaction leaves a dead queue row)
VACUUM_EVERY = 2_000


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

    def wake(self, _db: Database | None = None) -> None:
        """Ask the sealer to run soon (starting it in this process if needed: gunicorn forks)."""
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
        while not self._stopped:
            self._event.wait(self.idle_seconds)
            # let a burst of commits queue up, then seal them as one batch
            time.sleep(self.batch_seconds)
            self._event.clear()
            if self._stopped:
                return
            try:
                with self.db.engine.begin() as connection:
                    sealed = chain.seal(connection)
            except Exception:  # the queue is durable: log, and try again on the next wake
                log.exception("sealing the hash chain failed; will retry")
                continue
            # whichever process's sealer passes a multiple of VACUUM_EVERY vacuums, so the
            # queue is vacuumed that often however many processes share the sealing
            if sealed.passed_multiple_of(VACUUM_EVERY):
                self._vacuum_queue()

    def _vacuum_queue(self) -> None:
        """Every sealed transaction leaves a dead queue row; between autovacuum's visits (a
        minute apart) thousands pile up, and every writer's insert and every batch's scan of the
        queue's index steps over them (the engine benchmark lost a quarter of its rate in a
        minute).  A tiny table vacuums in milliseconds."""
        try:
            with self.db.engine.connect().execution_options(
                isolation_level="AUTOCOMMIT"
            ) as connection:
                connection.exec_driver_sql("VACUUM ledger_chain_queue")
        except Exception:  # autovacuum still comes; a refused VACUUM only costs speed
            log.warning("vacuuming the sealing queue failed", exc_info=True)


def seal_all(db: Database) -> chain.Sealed:
    """Seal every queued transaction now, waiting for any running sealer."""
    with db.engine.begin() as connection:
        return chain.seal(connection, wait=True)


def attach(db: Database) -> None:
    """On PostgreSQL, seal after commits in the background (SQLite seals inside each write)."""
    if db.dialect == "postgresql":
        background = BackgroundSealer(db)
        db.on_commit(background.wake)
        db.on_dispose(background.stop)
