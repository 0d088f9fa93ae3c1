"""The Flask class the app is built on: Flask, less two costs every request paid for nothing.

* ``ensure_sync``: Flask asks it of every view and every request hook, about fifteen times a
  request, and it answers by inspecting the function each time (``inspect.iscoroutinefunction``
  unwraps partials and methods).  The answer for a function never changes, so it is kept.
* The cookie session (``flask.session``): nothing here uses it (the pages' sign-in keeps its own
  cookie, ``api.web.signin``), yet Flask opened it on every request, building a signing
  serializer to look for a cookie that is never set.  The session is always the null one, which
  refuses writes: a use of it would fail loudly rather than store anything.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

from flask import Flask, Request
from flask.sessions import SessionInterface, SessionMixin
from flask.wrappers import Response


class Application(Flask):
    """Flask, with ``ensure_sync`` answered once per function and no cookie session."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.session_interface = _NoSession()
        # function -> whether it is a coroutine function; keyed by the underlying function, so a
        # bound method made afresh each request (a MethodView's) adds nothing
        self._coroutine: dict[Any, bool] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        key = getattr(func, "__func__", func)
        is_coroutine = self._coroutine.get(key)
        if is_coroutine is None:
            is_coroutine = self._coroutine[key] = inspect.iscoroutinefunction(func)
        return self.async_to_sync(func) if is_coroutine else func


class _NoSession(SessionInterface):
    """Every request's ``flask.session`` is the null session (read-only, empty)."""

    def open_session(self, app: Flask, request: Request) -> SessionMixin | None:
        return self.make_null_session(app)

    def save_session(self, app: Flask, session: SessionMixin, response: Response) -> None:
        return None
