"""The worker and logger classes ``wetbank serve`` runs: gunicorn's gthread worker with a quick
shutdown that always exits, and gunicorn's logger without its access log.

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

from gunicorn import glogging
from gunicorn.workers import base, gthread


class ThreadWorker(gthread.ThreadWorker):  # type: ignore[misc]  # gunicorn has no types
    """gthread, with a quick shutdown that cannot wait on the thread pool's lock."""

    def handle_quit(self, sig: int, frame: FrameType | None) -> None:
        base.Worker.handle_quit(self, sig, frame)


class Logger(glogging.Logger):  # type: ignore[misc]  # gunicorn has no types
    """gunicorn's logger, with no access log of its own: the app writes one (``api.logs``) that
    knows the request id and the actor.  Silencing gunicorn's access logger was not enough: with
    a logging configuration set, gunicorn still built each request's log fields, then dropped
    them."""

    @property
    def access_log_enabled(self) -> bool:
        return False
