"""The worker class ``wetbank serve`` runs: gunicorn's gthread worker with a quick shutdown that
always exits.

gunicorn 27's gthread worker answers SIGQUIT and SIGINT (a quick shutdown: Ctrl-C, or the
master passing on its own SIGINT) by shutting its thread pool down inside the signal handler.
The handler runs in the main thread, between two of its bytecodes; when that thread was inside
``ThreadPoolExecutor.submit``, handing a new connection to the pool, it holds the pool's lock, and
the handler waits for that lock for ever: the worker hangs until the master kills it at the end
of its graceful timeout.  This worker leaves the pool alone and exits: ``SystemExit`` unwinds
``submit`` (releasing its lock), and the interpreter's exit stops the pool's threads once their
requests are done, as the pool's shutdown would have.  A graceful stop (SIGTERM) is unchanged.
"""

from __future__ import annotations

from types import FrameType

from gunicorn.workers import base, gthread


class ThreadWorker(gthread.ThreadWorker):  # type: ignore[misc]  # gunicorn has no types
    """gthread, with a quick shutdown that cannot wait on the thread pool's lock."""

    def handle_quit(self, sig: int, frame: FrameType | None) -> None:
        base.Worker.handle_quit(self, sig, frame)
