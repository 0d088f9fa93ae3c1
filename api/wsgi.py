"""The WSGI application a server runs: ``gunicorn 'api.wsgi:app'`` (``wetbank serve`` does).

Configured from the environment (README.md "Configuration").  On PostgreSQL it refuses to load
without ``WETBANK_SECRET_KEY``: each worker would otherwise hold a key of its own.
"""

from __future__ import annotations

from api import create_app, readiness
from api.config import shared_secret_problem

app = create_app()

_problem = shared_secret_problem(app.config)
if _problem:
    raise RuntimeError(_problem)

# what a crash left queued is sealed now, not at this process's first write
readiness.check_at_start(app)
