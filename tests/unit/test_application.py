"""The Flask class the app is built on (``api/application.py``): views and hooks called as
Flask calls them, without asking each time whether they are coroutines; no cookie session."""

from __future__ import annotations

import inspect

import flask
import pytest
from flask.sessions import NullSession

from api.application import Application


def test_a_plain_view_and_hook_are_called_as_they_are_and_asked_about_once(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = Application(__name__)
    calls: list[str] = []

    @app.before_request
    def hook() -> None:
        calls.append("hook")

    @app.get("/")
    def view() -> str:
        calls.append("view")
        return "ok"

    asked: list[object] = []
    original = inspect.iscoroutinefunction

    def counting(func: object) -> bool:
        asked.append(func)
        return original(func)

    monkeypatch.setattr(inspect, "iscoroutinefunction", counting)
    client = app.test_client()
    for _ in range(3):
        assert client.get("/").text == "ok"
    assert calls == ["hook", "view"] * 3
    assert app.ensure_sync(view) is view
    # each function asked about once, however many requests called it
    assert len(asked) == len({id(f) for f in asked}) == 2


def test_a_coroutine_is_still_handed_to_flasks_async_support() -> None:
    app = Application(__name__)

    async def view() -> str:
        return "ok"

    with pytest.raises(RuntimeError, match="async"):
        # Flask's own answer without its "async" extra; with it, a wrapper that runs the view
        app.ensure_sync(view)


def test_a_bound_method_made_afresh_each_request_is_asked_about_by_its_function() -> None:
    app = Application(__name__)

    class View:
        def get(self) -> str:
            return "ok"

    for _ in range(5):
        method = View().get
        assert app.ensure_sync(method) is method
    assert list(app._coroutine) == [View.get]


def test_the_cookie_session_is_the_null_one_and_sets_no_cookie() -> None:
    app = Application(__name__)
    app.secret_key = "x" * 32  # with a key, Flask's own would open a signed cookie session

    @app.get("/")
    def view() -> str:
        assert isinstance(flask.session, NullSession)
        with pytest.raises(RuntimeError):
            flask.session["who"] = "someone"  # refused loudly, never stored
        return "ok"

    response = app.test_client().get("/", headers={"Cookie": "session=forged"})
    assert response.text == "ok"
    assert "Set-Cookie" not in response.headers
