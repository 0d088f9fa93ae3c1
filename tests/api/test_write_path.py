"""The write path's own work (docs/http.md "Writes"): the body parsed once, the token checked and
the key claimed in one statement, a replay byte for byte the response that was stored."""

from __future__ import annotations

from typing import Any

import flask_smorest
import pytest
import webargs.core
from sqlalchemy import func, select

from api.views.service import TokenIn
from bank.access import IdempotencyRecord
from tests.api.conftest import make_token


def keys_kept(app: Any) -> int:
    with app.extensions["wetbank.db"].transaction() as session:
        query = select(func.count()).select_from(IdempotencyRecord)
        return int(session.execute(query).scalar_one())


def test_a_replay_is_the_stored_response_byte_for_byte(api):
    key = {"Idempotency-Key": "k-bytes"}
    first = api.post("/holders", {"name": "Bytes", "address": "1 Main St"}, headers=key)
    # the same content in another layout is the same request
    again = api.post(
        "/holders",
        data='{ "address" : "1 Main St",\n  "name": "Bytes" }',
        content_type="application/json",
        headers=key,
    )
    assert (first.status_code, again.status_code) == (201, 201)
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_data() == first.get_data()
    assert again.mimetype == first.mimetype


def test_the_body_is_parsed_once_by_the_strict_check(api, monkeypatch):
    def parse_again(*_args: Any, **_kwargs: Any) -> Any:
        raise AssertionError("the body was parsed a second time")

    monkeypatch.setattr(webargs.core, "parse_json", parse_again)
    created = api.post(
        "/tokens", {"role": "board", "name": "parsed once"}, headers={"Idempotency-Key": "k-1"}
    )
    assert created.status_code == 201
    assert created.json["name"] == "parsed once"


def test_a_body_schema_is_made_once_for_the_process(api):
    parser = flask_smorest.Blueprint.ARGUMENTS_PARSER
    api.post("/tokens", {"role": "board", "name": "one"})
    schema = parser._schemas[TokenIn]
    api.post("/tokens", {"role": "board", "name": "two"})
    assert parser._schemas[TokenIn] is schema


def test_a_role_refused_with_a_key_keeps_no_key(api, app, holder):
    before = keys_kept(app)
    response = api.post(
        "/tokens",
        {"role": "board", "name": "not mine"},
        token=holder["token"],
        headers={"Idempotency-Key": "k-role"},
    )
    assert (response.status_code, response.json["code"]) == (403, "forbidden")
    assert keys_kept(app) == before


@pytest.mark.parametrize("revoked", [False, True])
def test_an_unknown_or_revoked_token_with_a_key_claims_nothing(api, app, revoked):
    token = "wbt_not-a-real-token"
    if revoked:
        token = make_token(app, "board")
        assert api.delete(f"/tokens/{_token_id(app, token)}").status_code == 204
    before = keys_kept(app)
    response = api.post(
        "/tokens", {"role": "board", "name": "x"}, token=token, headers={"Idempotency-Key": "k"}
    )
    assert (response.status_code, response.json["code"]) == (401, "unauthorized")
    assert keys_kept(app) == before


def _token_id(app: Any, secret: str) -> str:
    from bank import access

    with app.extensions["wetbank.db"].transaction() as session:
        found = access.authenticate(session, secret)
    assert found is not None
    return found.token_id
