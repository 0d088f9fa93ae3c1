"""The read path's own work (docs/http.md "Authentication and roles", docs/scaling.md "Few round
trips per request"): a read checks its token in the same database transaction as it reads, and
what the token check records (the token's last use, the audit of a refusal) is as it was."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import pytest
from sqlalchemy import event, select, text, update

from bank.access import ApiToken, AuditEvent, hash_token
from ledger import clock
from tests.api.conftest import make_token
from tests.api.kit import Kit, unique


@contextmanager
def transactions_begun(app: Any) -> Iterator[list[str]]:
    """The database transactions this thread begins meanwhile (the background sealer's, on
    another thread, are not counted), and the connections it checks out."""
    engine = app.extensions["wetbank.db"].engine
    me = threading.get_ident()
    seen: list[str] = []

    def begun(_connection: Any) -> None:
        if threading.get_ident() == me:
            seen.append("begin")

    def checked_out(*_args: Any) -> None:
        if threading.get_ident() == me:
            seen.append("checkout")

    event.listen(engine, "begin", begun)
    event.listen(engine, "checkout", checked_out)
    try:
        yield seen
    finally:
        event.remove(engine, "begin", begun)
        event.remove(engine, "checkout", checked_out)


def token_id_of(app: Any, secret: str) -> str:
    with app.extensions["wetbank.db"].transaction() as session:
        query = select(ApiToken.id).where(ApiToken.token_hash == hash_token(secret))
        return str(session.execute(query).scalar_one())


def last_used(app: Any, token_id: str) -> datetime | None:
    with app.extensions["wetbank.db"].transaction() as session:
        found = session.get(ApiToken, token_id, populate_existing=True)
        return found.last_used_at if found else None


def unused_for_long(app: Any, token_id: str) -> None:
    """Age the token's last use past ``LAST_USED_RESOLUTION``: the next request records it."""
    with app.extensions["wetbank.db"].transaction() as session:
        session.execute(
            update(ApiToken)
            .where(ApiToken.id == token_id)
            .values(last_used_at=datetime(2000, 1, 1, tzinfo=clock.utcnow().tzinfo))
        )


def events_for(app: Any, path: str) -> list[tuple[str, int]]:
    with app.extensions["wetbank.db"].transaction() as session:
        query = select(AuditEvent.kind, AuditEvent.status).where(AuditEvent.path == path)
        return [(kind, status) for kind, status in session.execute(query)]


def test_a_read_checks_its_token_in_the_transaction_it_reads_in(api, app):
    """``GET /accounts/{id}``: one transaction (one BEGIN, one connection), the token's check,
    its last use recorded and the account read together; before, the token was checked in a
    transaction of its own."""
    kit = Kit(api, app)
    account_id = kit.account(kit.holder()["id"])
    token = make_token(app, "board")
    token_id = token_id_of(app, token)
    unused_for_long(app, token_id)
    with transactions_begun(app) as seen:
        response = api.get(f"/accounts/{account_id}", token=token)
    assert response.status_code == 200 and response.json["id"] == account_id
    assert seen == ["checkout", "begin"]
    used = last_used(app, token_id)
    assert used is not None and used.year > 2000  # the use is recorded, with the read


def test_every_read_of_one_unit_checks_its_token_in_it(api, app, holder):
    """The reads declared with ``blp.read`` share the one unit of work: a list, a holder's own
    account, the tokens' list."""
    kit = Kit(api, app)
    own = kit.account(holder["id"])
    for path, token in (
        ("/accounts?limit=5", None),
        (f"/accounts/{own}", holder["token"]),
        (f"/accounts/{own}/lots", holder["token"]),
        ("/tokens?limit=2", None),
        ("/me", holder["token"]),
    ):
        with transactions_begun(app) as seen:
            response = api.get(path, token=token)
        assert response.status_code == 200, path
        assert seen.count("begin") == 1, (path, seen)


def test_a_read_refused_for_what_it_names_still_records_the_tokens_use(api, app):
    """A 404 rolls its unit back; the token's use is recorded all the same, as before."""
    token = make_token(app, "board")
    token_id = token_id_of(app, token)
    unused_for_long(app, token_id)
    missing = f"/accounts/{unique('acct-none')}"
    response = api.get(missing, token=token)
    assert response.status_code == 404 and response.json["code"] == "not_found"
    used = last_used(app, token_id)
    assert used is not None and used.year > 2000


def test_a_read_refused_for_its_role_records_the_use_and_the_refusal(api, app, holder):
    token_id = token_id_of(app, holder["token"])
    unused_for_long(app, token_id)
    response = api.get("/tokens", token=holder["token"])
    assert response.status_code == 403 and response.json["code"] == "forbidden"
    used = last_used(app, token_id)
    assert used is not None and used.year > 2000
    assert ("forbidden", 403) in events_for(app, "GET /api/v1/tokens")


def test_a_read_with_a_revoked_token_is_401_and_audited(api, app):
    kit = Kit(api, app)
    account_id = kit.account(kit.holder()["id"])
    token = make_token(app, "board")
    token_id = token_id_of(app, token)
    assert api.delete(f"/tokens/{token_id}").status_code == 204
    path = f"/accounts/{account_id}"
    response = api.get(path, token=token)
    assert response.status_code == 401 and response.json["code"] == "unauthorized"
    assert events_for(app, f"GET /api/v1{path}") == [("unauthorized", 401)]


def test_a_bad_query_is_422_and_records_the_tokens_use(api, app):
    token = make_token(app, "board")
    token_id = token_id_of(app, token)
    unused_for_long(app, token_id)
    response = api.get("/tokens?role=nobody", token=token)
    assert response.status_code == 422 and "role" in str(response.json["errors"])
    used = last_used(app, token_id)
    assert used is not None and used.year > 2000


def test_a_read_does_not_wait_for_another_transaction_holding_its_token_row(api, app, backend):
    """The read records the token's use in its own transaction; when another holds the token's
    row (a write not yet committed), the read goes on without recording it."""
    if backend != "postgresql":
        pytest.skip("SQLite has one writer at a time")
    token = make_token(app, "board")
    token_id = token_id_of(app, token)
    engine = app.extensions["wetbank.db"].engine
    with engine.connect() as other:
        other.execute(
            text("UPDATE api_tokens SET last_used_at = '2000-01-01' WHERE id = :i"),
            {"i": token_id},
        )  # the row stays locked until this connection's transaction ends
        done: list[int] = []
        thread = threading.Thread(
            target=lambda: done.append(api.get("/tokens?limit=1", token=token).status_code)
        )
        thread.start()
        thread.join(10)
        stuck = thread.is_alive()
        other.rollback()
        thread.join(10)
    assert not stuck, "the read waited for the token's row"
    assert done == [200]
