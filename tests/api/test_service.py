"""docs/http.md "Conventions" and "Service and tokens": health, me, tokens, problem details,
idempotency."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import func, select, text

from api import create_app
from api.views.parties import HOLDERS
from api.views.service import TOKENS
from bank import parties
from bank.access import SYSTEM, ApiToken, AuditEvent
from tests.api.conftest import Api, make_token
from tests.api.kit import at, ok, problem
from tests.api.web_kit import audit_events

PROBLEM = "application/problem+json"


def count(app, model) -> int:
    with app.extensions["wetbank.db"].transaction() as session:
        return int(session.execute(select(func.count()).select_from(model)).scalar_one())


def test_health_names_the_database_without_a_token(api, backend):
    response = api.get("/health", token="")
    assert response.status_code == 200
    assert response.json == {"status": "ok", "database": backend}


def test_me_shows_the_role_of_the_token(api):
    response = api.get("/me")
    assert response.status_code == 200
    assert response.json["role"] == "board"


def test_a_missing_token_is_401_problem_details(api):
    response = api.get("/me", token="")
    assert response.status_code == 401
    assert response.mimetype == PROBLEM
    assert response.json["code"] == "unauthorized"
    assert response.json["status"] == 401


def test_an_unknown_token_is_401(api):
    response = api.get("/me", token="wbt_not-a-real-token")
    assert response.status_code == 401
    assert response.json["code"] == "unauthorized"


def test_a_write_with_an_unknown_or_revoked_token_is_401_and_writes_nothing(api, app):
    created = api.post("/tokens", {"role": "board", "name": "soon revoked"}).json
    assert api.delete(f"/tokens/{created['id']}").status_code == 204
    before = count(app, ApiToken)
    for token in ("wbt_not-a-real-token", created["token"]):
        response = api.post(
            "/tokens",
            {"role": "board", "name": "sneaky"},
            token=token,
            headers={"Idempotency-Key": f"k-{token[-6:]}"},
        )
        assert (response.status_code, response.json["code"]) == (401, "unauthorized")
    assert count(app, ApiToken) == before


def test_an_unknown_token_hears_401_before_anything_about_its_request(api):
    """A write checks its token inside its own unit of work; the checks that run before it
    (content type, strict JSON, the Idempotency-Key's length) must not tell an unknown caller
    more than 401."""
    bad = "wbt_not-a-real-token"
    wrong_type = api.post(
        "/tokens",
        data="role=board",
        token=bad,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    broken_json = api.post(
        "/tokens", data='{"role": ', token=bad, headers={"Content-Type": "application/json"}
    )
    long_key = api.post(
        "/tokens", {"role": "board", "name": "x"}, token=bad, headers={"Idempotency-Key": "k" * 300}
    )
    invalid = api.post("/tokens", {"role": "nobody"}, token=bad)
    oversized = api.post(
        "/tokens",
        data='{"name": "' + "x" * (1024 * 1024 + 10) + '"}',
        token=bad,
        headers={"Content-Type": "application/json"},
    )
    for response in (wrong_type, broken_json, long_key, invalid, oversized):
        assert (response.status_code, response.json["code"]) == (401, "unauthorized")
    # with a good token the same requests are refused for what they are
    assert (
        api.post(
            "/tokens",
            data="role=board",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        ).status_code
        == 415
    )
    assert api.post("/tokens", {"role": "nobody"}).status_code == 422
    # a public path needs no token: its body is judged for what it is
    public = api.post(
        "/reports/credit-availability",
        data="x=1",
        token="",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    assert public.status_code in (405, 415)


def test_the_board_creates_an_lgu_token_that_acts_for_that_lgu(api, lgu):
    response = api.post("/tokens", {"role": "lgu", "name": "Wright clerk", "lgu_id": lgu["id"]})
    assert response.status_code == 201, response.json
    body = response.json
    assert body["role"] == "lgu" and body["token"].startswith("wbt_")
    me = api.get("/me", token=body["token"])
    assert me.json["role"] == "lgu" and me.json["lgu_id"] == lgu["id"]


def test_tokens_are_stored_only_as_a_hash(api, app):
    secret = api.post("/tokens", {"role": "board", "name": "auditor"}).json["token"]
    with app.extensions["wetbank.db"].transaction() as session:
        stored = [row.token_hash for row in session.execute(select(ApiToken)).scalars()]
    assert secret not in stored
    assert all(len(h) == 64 for h in stored)


def test_a_token_created_under_an_idempotency_key_keeps_no_secret_for_replays(api, app):
    """The secret is in the first answer only: the result kept for replays holds it as null,
    so no table (nor a backup of one) holds a working token in clear."""
    headers = {"Idempotency-Key": "new-auditor"}
    before = count(app, ApiToken)
    first = api.post("/tokens", {"role": "board", "name": "auditor"}, headers=headers)
    secret = ok(first)["token"]
    with app.extensions["wetbank.db"].transaction() as session:
        kept = [
            str(value)
            for row in session.execute(text("SELECT * FROM idempotency_records")).all()
            for value in row
        ]
    assert not any(secret in value for value in kept)
    replay = api.post("/tokens", {"role": "board", "name": "auditor"}, headers=headers)
    assert replay.status_code == 201 and replay.headers["Idempotent-Replayed"] == "true"
    assert replay.json == dict(first.json, token=None)
    assert count(app, ApiToken) == before + 1  # created once
    assert api.get("/me", token=secret).json["name"] == "auditor"


def test_an_lgu_token_without_lgu_id_is_a_validation_error_and_writes_nothing(api, app):
    before = count(app, ApiToken)
    response = api.post("/tokens", {"role": "lgu", "name": "nobody"})
    assert response.status_code == 422
    assert response.json["code"] == "validation_error"
    assert "lgu_id" in response.json["errors"]
    assert count(app, ApiToken) == before


def test_a_holder_token_for_an_unknown_holder_is_refused(api):
    response = api.post("/tokens", {"role": "holder", "name": "x", "holder_id": "hld_nope"})
    assert response.status_code == 422
    assert "holder_id" in response.json["errors"]


@pytest.mark.parametrize(
    ("role", "parties", "field"),
    [
        ("board", ("lgu",), "lgu_id"),
        ("holder", ("holder", "lgu"), "lgu_id"),
        ("lgu", ("lgu", "holder"), "holder_id"),
    ],
)
def test_a_token_naming_a_party_its_role_does_not_act_for_is_refused(
    api, app, lgu, holder, role, parties, field
):
    """Dropped silently, a board token asked for 'for this LGU' would act for every one."""
    ids = {"lgu": {"lgu_id": lgu["id"]}, "holder": {"holder_id": holder["id"]}}
    body = {"role": role, "name": "x"}
    for party in parties:
        body.update(ids[party])
    before = count(app, ApiToken)
    response = api.post("/tokens", body)
    assert response.status_code == 422
    assert response.json["code"] == "validation_error"
    assert field in response.json["errors"]
    assert count(app, ApiToken) == before


def test_only_the_board_creates_tokens(api, holder):
    response = api.post("/tokens", {"role": "board", "name": "me too"}, token=holder["token"])
    assert response.status_code == 403
    assert response.json["code"] == "forbidden"


def test_a_revoked_token_stops_working_at_once(api):
    created = api.post("/tokens", {"role": "board", "name": "temp"}).json
    assert api.get("/me", token=created["token"]).status_code == 200
    assert api.delete(f"/tokens/{created['id']}").status_code == 204
    assert api.get("/me", token=created["token"]).status_code == 401


def test_revoking_a_revoked_token_again_is_204_and_records_no_second_event(api):
    created = ok(api.post("/tokens", {"role": "board", "name": "revoked twice"}))
    path = f"/tokens/{created['id']}"
    first = api.delete(path, headers={"X-Request-Id": f"first-{created['id']}"})
    again = api.delete(path, headers={"X-Request-Id": f"again-{created['id']}"})
    assert (first.status_code, again.status_code) == (204, 204)
    assert again.get_data() == b""
    assert api.get("/me", token=created["token"]).status_code == 401
    revoked = [
        (event["kind"], event["status"], event["request_id"])
        for event in audit_events(api)
        if event["path"].endswith(f"/api/v1{path}")
    ]
    assert revoked == [("token_revoked", 204, f"first-{created['id']}")]


def test_a_token_revokes_itself_and_is_dead_for_the_next_request(api):
    """A board token that may have leaked is revoked with itself: 204, one ``token_revoked``
    event, and its next request (another revocation of itself, any other) is 401."""
    created = ok(api.post("/tokens", {"role": "board", "name": "revokes itself"}))
    path = f"/tokens/{created['id']}"
    own_request = {"X-Request-Id": f"own-{created['id']}"}
    own = api.delete(path, token=created["token"], headers=own_request)
    assert own.status_code == 204, own.get_data(as_text=True)
    assert api.get("/me", token=created["token"]).status_code == 401
    again = api.delete(path, token=created["token"])
    assert (again.status_code, again.json["code"]) == (401, "unauthorized")
    assert ok(api.get(path), 200)["revoked_at"] is not None
    revoked = [
        (event["kind"], event["status"], event["request_id"])
        for event in audit_events(api)
        if event["path"].endswith(f"/api/v1{path}") and event["kind"] == "token_revoked"
    ]
    assert revoked == [("token_revoked", 204, f"own-{created['id']}")]


def test_revoking_an_unknown_token_is_404(api):
    response = api.delete("/tokens/tok_missing")
    assert response.status_code == 404
    assert response.json["code"] == "not_found"


def test_a_body_that_is_not_json_is_400_bad_request(api, app):
    before = count(app, ApiToken)
    response = api.post(
        "/tokens", data='{"role": "board", ', headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400
    assert response.mimetype == PROBLEM
    assert response.json["code"] == "bad_request"
    assert count(app, ApiToken) == before


def test_a_body_of_another_content_type_is_415(api):
    response = api.post("/tokens", data="role=board", headers={"Content-Type": "text/plain"})
    assert response.status_code == 415
    assert response.json["code"] == "unsupported_media_type"


def test_schema_errors_are_422_with_field_paths(api):
    response = api.post("/tokens", {"role": "emperor", "name": 5})
    assert response.status_code == 422
    assert set(response.json["errors"]) == {"role", "name"}


def test_an_unknown_path_is_a_404_problem(api):
    response = api.get("/no-such-thing")
    assert response.status_code == 404
    assert response.mimetype == PROBLEM
    assert response.json["code"] == "not_found"


def test_a_wrong_method_is_a_405_problem(api):
    response = api.delete("/health")
    assert response.status_code == 405
    assert response.json["code"] == "method_not_allowed"


def test_an_unexpected_error_is_a_500_without_internals(database_url):
    app = create_app({"DATABASE_URL": database_url, "PROPAGATE_EXCEPTIONS": False})

    @app.route("/api/v1/_boom")
    def boom():
        raise RuntimeError("secret internals")

    try:
        token = make_token(app, "board")
        response = app.test_client().get(
            "/api/v1/_boom", headers={"Authorization": f"Bearer {token}"}
        )
    finally:
        app.extensions["wetbank.db"].dispose()
    assert response.status_code == 500
    assert response.json["code"] == "internal_error"
    assert "secret" not in response.get_data(as_text=True)


def test_every_response_carries_the_request_id_the_client_sent(api):
    response = api.get("/health", headers={"X-Request-Id": "abc-123"})
    assert response.headers["X-Request-Id"] == "abc-123"
    assert len(api.get("/health").headers["X-Request-Id"]) >= 16


def test_a_repeated_write_with_the_same_key_is_replayed_not_repeated(api, app):
    before = count(app, ApiToken)
    body = {"role": "board", "name": "replayed"}
    first = api.post("/tokens", body, headers={"Idempotency-Key": "k-same"})
    second = api.post("/tokens", body, headers={"Idempotency-Key": "k-same"})
    assert first.status_code == second.status_code == 201
    assert second.headers["Idempotent-Replayed"] == "true"
    assert second.json == dict(first.json, token=None)  # the secret: the first answer's only
    assert count(app, ApiToken) == before + 1


def test_the_same_key_with_another_body_is_an_idempotency_conflict(api):
    api.post("/tokens", {"role": "board", "name": "one"}, headers={"Idempotency-Key": "k-diff"})
    response = api.post(
        "/tokens", {"role": "board", "name": "two"}, headers={"Idempotency-Key": "k-diff"}
    )
    assert response.status_code == 409
    assert response.json["code"] == "idempotency_conflict"


def test_a_refused_request_keeps_no_key_and_may_be_corrected(api, app):
    key = {"Idempotency-Key": "k-fix"}
    assert api.post("/tokens", {"role": "lgu", "name": "x"}, headers=key).status_code == 422
    fixed = api.post("/tokens", {"role": "board", "name": "x"}, headers=key)
    assert fixed.status_code == 201


def test_keys_are_scoped_to_the_token(api, app):
    other = make_token(app, "board")
    key = {"Idempotency-Key": "k-scoped"}
    a = api.post("/tokens", {"role": "board", "name": "a"}, headers=key)
    b = api.post("/tokens", {"role": "board", "name": "b"}, headers=key, token=other)
    assert a.status_code == b.status_code == 201
    assert a.json["id"] != b.json["id"]


def test_refused_requests_and_token_changes_are_audited(api, app):
    before = count(app, AuditEvent)
    api.get("/me", token="")
    api.post("/tokens", {"role": "board", "name": "audited"})
    assert count(app, AuditEvent) == before + 2


def test_the_openapi_document_is_public_and_describes_the_service(api):
    response = api.get("/openapi.json", token="")
    assert response.status_code == 200
    paths = json.loads(response.get_data(as_text=True))["paths"]
    assert "/api/v1/tokens" in paths and "/api/v1/health" in paths


def test_a_write_does_not_wait_for_another_transaction_holding_its_token_row(api, app, backend):
    """The token's last use is recorded inside the write's transaction; when another request
    holds the token's row (its own write not yet committed), this one goes on without it."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    created = api.post("/tokens", {"role": "board", "name": "busy"}).json
    engine = app.extensions["wetbank.db"].engine
    with engine.connect() as holder:
        holder.execute(
            text("UPDATE api_tokens SET last_used_at = '2000-01-01' WHERE id = :i"),
            {"i": created["id"]},
        )  # the row stays locked until this connection's transaction ends
        done: list[int] = []
        thread = threading.Thread(
            target=lambda: done.append(
                api.post(
                    "/tokens", {"role": "board", "name": "x"}, token=created["token"]
                ).status_code
            )
        )
        thread.start()
        thread.join(10)
        stuck = thread.is_alive()
        holder.rollback()
        thread.join(10)
    assert not stuck, "the write waited for the token's row"
    assert done == [201]


# --- the board's list of tokens ------------------------------------------------------------------

#: what the board sees of a token: never its secret, nor the hash it is stored as
TOKEN_FIELDS = {
    "id",
    "role",
    "name",
    "lgu_id",
    "holder_id",
    "created_at",
    "created_by",
    "last_used_at",
    "revoked_at",
}


@pytest.fixture
def four_tokens(fresh_app: Flask) -> dict[str, Any]:
    """A board token made on the server now; three made through the API in 2020, one second
    apart (a board token, then an LGU's, then a holder's), the first of them revoked."""
    db = fresh_app.extensions["wetbank.db"]
    lgu_id = parties.create_lgu(db, SYSTEM, name="Wright County", kind="county").id
    holder_id = parties.create_holder(db, SYSTEM, name="Prairie LLC", email=None, address=None).id
    api = Api(fresh_app.test_client(), make_token(fresh_app, "board"))
    bodies = [
        {"role": "board", "name": "old board"},
        {"role": "lgu", "name": "Wright clerk", "lgu_id": lgu_id},
        {"role": "holder", "name": "Prairie bookkeeper", "holder_id": holder_id},
    ]
    made = []
    for second, body in enumerate(bodies, 1):
        with at(f"2020-01-01 00:00:0{second}"):
            made.append(ok(api.post("/tokens", body)))
    assert api.delete(f"/tokens/{made[0]['id']}").status_code == 204
    board_id = ok(api.get("/me"), 200)["token_id"]
    with db.transaction() as session:
        hashes = list(session.execute(select(ApiToken.token_hash)).scalars())
    return {
        "api": api,
        "board_id": board_id,
        "old_board": made[0],
        "lgu": made[1],
        "holder": made[2],
        "lgu_id": lgu_id,
        "holder_id": holder_id,
        "secrets": [api.token] + [m["token"] for m in made],
        "hashes": hashes,
    }


def ids_of(response: Any) -> list[str]:
    return [item["id"] for item in ok(response, 200)["items"]]


def test_the_board_lists_tokens_newest_first_in_pages_without_their_secrets(four_tokens):
    api, board_id = four_tokens["api"], four_tokens["board_id"]
    old, lgu, holder = four_tokens["old_board"], four_tokens["lgu"], four_tokens["holder"]

    first = ok(api.get("/tokens?limit=2"), 200)
    assert [item["id"] for item in first["items"]] == [board_id, holder["id"]]
    assert first["next_cursor"]
    second = ok(api.get("/tokens", query_string={"limit": 2, "cursor": first["next_cursor"]}), 200)
    assert [item["id"] for item in second["items"]] == [lgu["id"], old["id"]]
    assert second["next_cursor"] is None
    assert ids_of(api.get("/tokens")) == [board_id, holder["id"], lgu["id"], old["id"]]

    listed = {item["id"]: item for item in first["items"] + second["items"]}
    assert all(set(item) == TOKEN_FIELDS for item in listed.values())
    everything = json.dumps(first) + json.dumps(second)
    for secret in four_tokens["secrets"]:
        assert secret not in everything
    for stored in four_tokens["hashes"]:
        assert stored not in everything

    assert listed[lgu["id"]] == {
        "id": lgu["id"],
        "role": "lgu",
        "name": "Wright clerk",
        "lgu_id": four_tokens["lgu_id"],
        "holder_id": None,
        "created_at": listed[lgu["id"]]["created_at"],
        "created_by": board_id,
        "last_used_at": None,
        "revoked_at": None,
    }
    assert listed[lgu["id"]]["created_at"] == "2020-01-01T00:00:02+00:00"  # UTC, on both databases
    assert listed[holder["id"]]["holder_id"] == four_tokens["holder_id"]
    assert listed[old["id"]]["revoked_at"] is not None
    assert listed[board_id]["created_by"] is None  # made on the server, not through the API
    assert listed[board_id]["last_used_at"] is not None and listed[board_id]["revoked_at"] is None


def test_the_token_list_filters_by_revoked_and_role(four_tokens):
    api, board_id = four_tokens["api"], four_tokens["board_id"]
    old, lgu, holder = four_tokens["old_board"], four_tokens["lgu"], four_tokens["holder"]
    assert ids_of(api.get("/tokens?revoked=true")) == [old["id"]]
    assert ids_of(api.get("/tokens?revoked=false")) == [board_id, holder["id"], lgu["id"]]
    assert ids_of(api.get("/tokens?role=lgu")) == [lgu["id"]]
    assert ids_of(api.get("/tokens?role=board")) == [board_id, old["id"]]
    assert ids_of(api.get("/tokens?role=board&revoked=false")) == [board_id]
    assert ids_of(api.get("/tokens?role=holder&revoked=true")) == []
    # a token revoked while a client pages through the live ones still marks its place
    page = ok(api.get("/tokens?revoked=false&limit=2"), 200)
    assert api.delete(f"/tokens/{holder['id']}").status_code == 204
    rest = api.get("/tokens", query_string={"revoked": "false", "cursor": page["next_cursor"]})
    assert ids_of(rest) == [lgu["id"]]


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("revoked=yes", "revoked"),
        ("revoked=1", "revoked"),
        ("revoked=", "revoked"),
        ("role=emperor", "role"),
        ("role=Board", "role"),
        ("limit=0", "limit"),
        ("limit=501", "limit"),
    ],
)
def test_a_bad_filter_of_the_token_list_is_422_naming_it(api, query, field):
    body = problem(api.get(f"/tokens?{query}"), 422, "validation_error")
    assert set(body["errors"]) == {field}


def test_a_cursor_the_token_list_did_not_give_is_400(api):
    holders_cursor = HOLDERS.cursor("hld_0123456789abcdef")
    for cursor in (holders_cursor, TOKENS.cursor("hld_0123456789abcdef"), "not-a-cursor"):
        response = api.get("/tokens", query_string={"cursor": cursor})
        problem(response, 400, "bad_request")


def test_the_board_reads_one_token_and_sees_its_revocation(api):
    created = ok(api.post("/tokens", {"role": "board", "name": "looked at"}))
    shown = ok(api.get(f"/tokens/{created['id']}"), 200)
    assert set(shown) == TOKEN_FIELDS
    assert (shown["name"], shown["role"], shown["revoked_at"]) == ("looked at", "board", None)
    assert created["token"] not in json.dumps(shown)
    assert api.delete(f"/tokens/{created['id']}").status_code == 204
    assert ok(api.get(f"/tokens/{created['id']}"), 200)["revoked_at"] is not None
    problem(api.get("/tokens/tok_0123456789abcdef"), 404, "not_found")


def test_only_the_board_lists_and_reads_tokens(api, lgu, holder):
    board_id = ok(api.get("/me"), 200)["token_id"]
    for token in (lgu["token"], holder["token"]):
        problem(api.get("/tokens", token=token), 403, "forbidden")
        problem(api.get(f"/tokens/{board_id}", token=token), 403, "forbidden")
    problem(api.get("/tokens", token=""), 401, "unauthorized")
    problem(api.get(f"/tokens/{board_id}", token=""), 401, "unauthorized")
