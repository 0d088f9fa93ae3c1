"""API test fixtures: an app on each backend, tokens for each role, and a JSON client helper."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api import create_app
from bank import access, parties
from bank.access import SYSTEM
from bank.rules.ruleset import SEED


@pytest.fixture(scope="session")
def app(database_url: str) -> Iterator[Flask]:
    """One app per backend for the whole run, on the shared database (tests make their own
    uniquely named data): building an app registers every route and its OpenAPI description,
    which cost more than most tests.  A test that changes an app makes its own."""
    application = create_app({"DATABASE_URL": database_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


class Api:
    """A thin JSON client: ``api.post(path, body, token=...)`` returns the test response."""

    def __init__(self, client: FlaskClient, token: str | None) -> None:
        self.client = client
        self.token = token

    def _headers(self, token: str | None, headers: dict[str, str] | None) -> dict[str, str]:
        out = dict(headers or {})
        chosen = self.token if token is None else token
        if chosen:
            out["Authorization"] = f"Bearer {chosen}"
        return out

    def get(self, path: str, token: str | None = None, **kw: Any) -> Any:
        headers = self._headers(token, kw.pop("headers", None))
        return self.client.get(f"/api/v1{path}", headers=headers, **kw)

    def post(self, path: str, body: Any = None, token: str | None = None, **kw: Any) -> Any:
        headers = self._headers(token, kw.pop("headers", None))
        if body is None and "data" not in kw:
            return self.client.post(f"/api/v1{path}", headers=headers, **kw)
        if "data" in kw:
            return self.client.post(f"/api/v1{path}", headers=headers, **kw)
        return self.client.post(f"/api/v1{path}", json=body, headers=headers, **kw)

    def patch(self, path: str, body: Any, token: str | None = None, **kw: Any) -> Any:
        headers = self._headers(token, kw.pop("headers", None))
        return self.client.patch(f"/api/v1{path}", json=body, headers=headers, **kw)

    def delete(self, path: str, token: str | None = None, **kw: Any) -> Any:
        headers = self._headers(token, kw.pop("headers", None))
        return self.client.delete(f"/api/v1{path}", headers=headers, **kw)


def make_token(app: Flask, role: str, **kw: Any) -> str:
    with app.extensions["wetbank.db"].transaction() as session:
        _row, secret = access.create_token(session, role=role, name=f"test {role}", **kw)
    return secret


@pytest.fixture
def board_token(app: Flask) -> str:
    return make_token(app, "board")


@pytest.fixture
def api(app: Flask, board_token: str) -> Api:
    """A client acting as board staff unless a call passes another ``token``."""
    return Api(app.test_client(), board_token)


@pytest.fixture
def holder(app: Flask) -> dict[str, str]:
    """A holder with its own token."""
    db = app.extensions["wetbank.db"]
    holder_id = parties.create_holder(
        db, SYSTEM, name="Prairie Creek LLC", email=None, address=None
    ).id
    return {"id": holder_id, "token": make_token(app, "holder", holder_id=holder_id)}


@pytest.fixture
def lgu(app: Flask) -> dict[str, str]:
    """An LGU with its own token."""
    db = app.extensions["wetbank.db"]
    lgu_id = parties.create_lgu(db, SYSTEM, name="Wright County", kind="county").id
    return {"id": lgu_id, "token": make_token(app, "lgu", lgu_id=lgu_id)}


__all__ = ["Api", "SEED", "make_token"]


@pytest.fixture
def fresh_app(fresh_db_url: str) -> Iterator[Flask]:
    """An app on a database of its own, made for the test (``fresh_db_url``): for tests that
    write behind the API (triggers off, seals rewritten) or migrate it."""
    application = create_app({"DATABASE_URL": fresh_db_url, "PROPAGATE_EXCEPTIONS": False})
    yield application
    application.extensions["wetbank.db"].dispose()


@pytest.fixture
def fresh(fresh_app: Flask) -> Any:
    """A board's kit (``tests.api.kit.Kit``) on ``fresh_app``."""
    from tests.api.kit import Kit  # the kit imports this module

    return Kit(Api(fresh_app.test_client(), make_token(fresh_app, "board")), fresh_app)
