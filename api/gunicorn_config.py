"""gunicorn's settings for ``wetbank serve`` (``--config python:api.gunicorn_config``).

* Logs: every logger, gunicorn's own included, as JSON lines on standard error
  (``api.logs``); the access log is the app's (``wetbank.access``), which knows the request id
  and the actor, so gunicorn's is off (``api.gunicorn_worker.Logger``).
* Forwarded headers: gunicorn believes none itself; ``WETBANK_TRUST_PROXY`` decides, in the app
  (Werkzeug's ProxyFix), so that one setting covers the scheme, host and client address.
* Metrics: each worker counts into ``PROMETHEUS_MULTIPROC_DIR``; a worker that exits is marked
  dead there, and a directory ``wetbank serve`` made for this run is removed when gunicorn exits.
* Garbage collection: a worker's objects from its start (the app, its routes, schemas and
  mapped classes: most of what it holds) are frozen once it has loaded the app, so the
  collector's full passes, every few hundred requests, no longer walk them all again.
"""

from __future__ import annotations

import gc
import os
import shutil
from pathlib import Path
from typing import Any

from api import logs

#: a file ``wetbank serve`` leaves in a metrics directory it created (and so may remove)
TEMPORARY_MARKER = ".wetbank-temporary"

forwarded_allow_ips = ""
logger_class = "api.gunicorn_worker.Logger"
# gunicorn 27's control socket is one path per user ($HOME/.gunicorn/gunicorn.ctl): two servers
# of one user would share it; nothing here uses it
control_socket_disable = True
logconfig_dict: dict[str, Any] = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"json": {"()": "api.logs.JsonFormatter"}},
    "handlers": {
        "json": {
            "class": "logging.StreamHandler",
            "formatter": "json",
            "stream": "ext://sys.stderr",
        }
    },
    "root": {"level": logs.level(), "handlers": ["json"]},
    "loggers": {
        "gunicorn.error": {"level": "INFO", "handlers": [], "propagate": True},
        # the app writes the access log (api.logs); gunicorn's would repeat each line
        "gunicorn.access": {"level": "CRITICAL", "handlers": [], "propagate": False},
    },
}


def post_worker_init(_worker: Any) -> None:
    gc.freeze()


def child_exit(_server: Any, worker: Any) -> None:
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder:
        from prometheus_client import multiprocess

        multiprocess.mark_process_dead(worker.pid, folder)  # type: ignore[no-untyped-call]


def on_exit(_server: Any) -> None:
    folder = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if folder and (Path(folder) / TEMPORARY_MARKER).exists():
        shutil.rmtree(folder, ignore_errors=True)
