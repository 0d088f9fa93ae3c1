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
                    chain.seal(connection)
            except Exception:  # the queue is durable: log, and try again on the next wake
                log.exception("sealing the hash chain failed; will retry")


def seal_all(db: Database) -> int:
    """Seal every queued transaction now, waiting for any running sealer."""
    with db.engine.begin() as connection:
        return chain.seal(connection, wait=True)


def attach(db: Database) -> None:
    """On PostgreSQL, seal after commits in the background (SQLite seals inside each write)."""
    if db.dialect == "postgresql":
        background = BackgroundSealer(db)
        db.on_commit(background.wake)
        db.on_dispose(background.stop)
