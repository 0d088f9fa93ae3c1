"""Signing in to the pages: a pasted token, a server-side session behind an HTTP-only cookie,
CSRF protection, sign-out, and the same authorization as the API (issue #9)."""

from __future__ import annotations

from typing import Any

from flask import Flask
from freezegun import freeze_time
from sqlalchemy import func, select

from bank.web_sessions import WebSession
from tests.api.conftest import Api, make_token
from tests.api.web_kit import SESSION_COOKIE, audit_events, csrf_of, parse, sign_in, signed_in


def _session_rows(app: Flask) -> int:
    with app.extensions["wetbank.db"].transaction() as session:
        return int(session.execute(select(func.count()).select_from(WebSession)).scalar_one())


def _set_cookie(response: Any, name: str) -> str:
    headers = [h for h in response.headers.getlist("Set-Cookie") if h.startswith(f"{name}=")]
    assert len(headers) == 1, response.headers.getlist("Set-Cookie")
    return str(headers[0])


def _events(api: Api, kind: str) -> list[dict[str, Any]]:
    return [e for e in audit_events(api) if e["kind"] == kind]


def test_a_holder_signs_in_with_a_token_and_gets_a_secure_http_only_same_site_cookie(
    app: Flask, api: Api, holder: dict[str, str]
) -> None:
    client = app.test_client()
    form = client.get("/sign-in")
    assert form.status_code == 200
    # the form's CSRF secret is also in a Strict, HTTP-only cookie (double submit)
    csrf_cookie = _set_cookie(form, "wetbank_signin_csrf")
    assert (
        "HttpOnly" in csrf_cookie and "SameSite=Strict" in csrf_cookie and "Secure" in csrf_cookie
    )
    document = parse(form.get_data(as_text=True))
    assert document.one("label").attrs["for"] == "token"  # the field is labelled
    assert document.one("input", id="token").attrs["type"] == "password"

    response = client.post(
        "/sign-in",
        data={
            "csrf_token": csrf_of(form.get_data(as_text=True)),
            "token": holder["token"],
            "next": "/",
        },
    )

    assert response.status_code == 303
    assert response.headers["Location"] == "/"
    cookie = _set_cookie(response, SESSION_COOKIE)
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie and "Secure" in cookie
    # the cookie holds a random secret, never the token
    assert holder["token"] not in cookie
    home = client.get("/")
    assert "Signed in as test holder (holder)" in home.get_data(as_text=True)
    assert home.headers["Cache-Control"] == "no-store"
    assert any(e["status"] == 303 for e in _events(api, "signed_in"))


def test_a_sign_in_without_the_forms_csrf_secret_is_refused_and_starts_no_session(
    app: Flask, holder: dict[str, str]
) -> None:
    client = app.test_client()
    form = client.get("/sign-in")
    before = _session_rows(app)

    missing = client.post("/sign-in", data={"token": holder["token"]})
    wrong = client.post("/sign-in", data={"token": holder["token"], "csrf_token": "guess"})

    for response in (missing, wrong):
        assert response.status_code == 400
        assert "did not come from this site" in response.get_data(as_text=True)
        assert SESSION_COOKIE not in str(response.headers.getlist("Set-Cookie"))
    assert _session_rows(app) == before
    # a second browser's secret does not fit this browser's cookie
    other = app.test_client().get("/sign-in")
    forged = client.post(
        "/sign-in",
        data={"token": holder["token"], "csrf_token": csrf_of(other.get_data(as_text=True))},
    )
    assert forged.status_code == 400
    assert csrf_of(form.get_data(as_text=True)) != csrf_of(other.get_data(as_text=True))


def test_a_sign_in_posted_from_another_site_is_refused(app: Flask, holder: dict[str, str]) -> None:
    client = app.test_client()
    form = client.get("/sign-in")
    response = client.post(
        "/sign-in",
        data={"csrf_token": csrf_of(form.get_data(as_text=True)), "token": holder["token"]},
        headers={"Origin": "https://evil.example"},
    )
    assert response.status_code == 400
    assert client.get("/accounts/anything").status_code == 303  # still signed out


def test_an_unknown_token_is_refused_with_401_and_audited(app: Flask, api: Api) -> None:
    client = app.test_client()
    response = sign_in(client, "wbt_not-a-real-token")
    assert response.status_code == 401
    assert "unknown or has been revoked" in response.get_data(as_text=True)
    assert SESSION_COOKIE not in str(response.headers.getlist("Set-Cookie"))
    assert any(e["path"] == "POST /sign-in" for e in _events(api, "unauthorized"))

    empty = sign_in(client, "   ")
    assert empty.status_code == 422


def test_a_signed_out_visitor_is_sent_to_sign_in_and_back(
    app: Flask, holder: dict[str, str]
) -> None:
    client = app.test_client()
    response = client.get("/accounts/acct_x?from=2026-01-01")
    assert response.status_code == 303
    assert response.headers["Location"] == "/sign-in?next=/accounts/acct_x?from%3D2026-01-01"

    back = sign_in(client, holder["token"], "/accounts/acct_x?from=2026-01-01")
    assert back.headers["Location"] == "/accounts/acct_x?from=2026-01-01"


def test_sign_in_never_redirects_off_the_site(app: Flask, holder: dict[str, str]) -> None:
    for target in ("//evil.example/", "https://evil.example/", "/\\evil.example", "evil"):
        response = sign_in(app.test_client(), holder["token"], target)
        assert response.status_code == 303
        assert response.headers["Location"] == "/", target


def test_sign_out_needs_the_sessions_csrf_secret_and_kills_the_cookie_server_side(
    app: Flask, api: Api, holder: dict[str, str]
) -> None:
    client = signed_in(app.test_client(), holder["token"])
    cookie = client.get_cookie(SESSION_COOKIE)
    assert cookie is not None
    home = client.get("/").get_data(as_text=True)

    refused = client.post("/sign-out", data={})
    assert refused.status_code == 400
    assert "Signed in as" in client.get("/").get_data(as_text=True)

    response = client.post("/sign-out", data={"csrf_token": csrf_of(home)})
    assert response.status_code == 303
    assert "Signed in as" not in client.get("/").get_data(as_text=True)
    assert _events(api, "signed_out")

    # a copy of the old cookie (say, kept by an attacker) no longer works
    replay = app.test_client()
    replay.set_cookie(SESSION_COOKIE, cookie.value)
    assert replay.get("/audit").status_code == 303


def test_revoking_the_token_ends_its_page_sessions(app: Flask, api: Api) -> None:
    token = make_token(app, "board")
    client = signed_in(app.test_client(), token)
    assert client.get("/audit").status_code == 200

    token_id = api.get("/me", token=token).json["token_id"]
    assert api.delete(f"/tokens/{token_id}").status_code == 204

    assert client.get("/audit").status_code == 303


def test_a_session_lasts_eight_hours(app: Flask, holder: dict[str, str]) -> None:
    with freeze_time("2026-06-01 12:00:00", tz_offset=0) as clock:
        client = signed_in(app.test_client(), holder["token"])
        clock.tick(8 * 3600 - 1)
        assert "Signed in as" in client.get("/").get_data(as_text=True)
        clock.tick(2)
        assert "Signed in as" not in client.get("/").get_data(as_text=True)
        assert client.get("/accounts/acct_x").status_code == 303


def test_a_page_cookie_never_authorizes_the_api_nor_a_bearer_token_a_page(
    app: Flask, holder: dict[str, str]
) -> None:
    client = signed_in(app.test_client(), holder["token"])
    assert client.get("/api/v1/me").status_code == 401

    bearer = app.test_client().get(
        "/accounts/acct_x", headers={"Authorization": f"Bearer {holder['token']}"}
    )
    assert bearer.status_code == 303  # the pages know only their own sessions


def test_a_new_sign_in_deletes_the_browsers_stale_session(
    app: Flask, api: Api, holder: dict[str, str]
) -> None:
    token = make_token(app, "holder", holder_id=holder["id"])
    client = signed_in(app.test_client(), token)
    token_id = api.get("/me", token=token).json["token_id"]
    assert api.delete(f"/tokens/{token_id}").status_code == 204
    before = _session_rows(app)  # the revoked token's session row is still there, unusable

    signed_in(client, make_token(app, "board"))

    assert _session_rows(app) == before  # one added, the stale one gone
    assert client.get("/audit").status_code == 200


def test_a_form_posted_after_the_session_expired_comes_back_to_a_page_after_sign_in(
    app: Flask, api: Api
) -> None:
    token = make_token(app, "board")
    with freeze_time("2026-06-01 12:00:00", tz_offset=0) as clock:
        client = signed_in(app.test_client(), token)
        tokens_page = client.get("/tokens").get_data(as_text=True)
        clock.tick(8 * 3600 + 1)  # the session runs out while the form is open
        form = {"csrf_token": csrf_of(tokens_page), "idempotency_key": "k" * 24}
        from_tokens = {"Referer": "http://localhost/tokens"}
        revoked = client.post("/tokens/revoke", data=form, headers=from_tokens)
    assert revoked.status_code == 303
    assert revoked.headers["Location"] == "/sign-in?next=/tokens"  # not the POST-only address

    back = sign_in(client, token, "/tokens")
    assert back.headers["Location"] == "/tokens"
    page = client.get(back.headers["Location"])
    assert page.status_code == 200
    assert parse(page.get_data(as_text=True)).one("h1").text


def test_a_post_sends_sign_in_back_to_its_forms_own_page_or_home(app: Flask) -> None:
    client = app.test_client()  # signed out, as after the session expired
    cases = [
        # the address has a GET of its own: the form's page
        ("/deposits/new", {}, "/deposits/new"),
        # post-only: the page the form was on, when it is on this site
        ("/deposits/preview", {"Referer": "http://localhost/deposits/new?account_id=a"}, None),
        (
            "/plans/plan_x/appeals/apl_y/petition",
            {"Referer": "http://localhost/plans/plan_x/appeals"},
            "/plans/plan_x/appeals",
        ),
        # else the home page
        ("/deposits/preview", {}, "/"),
        ("/tokens/revoke", {"Referer": "https://evil.example/tokens"}, "/"),
        ("/tokens/revoke", {"Referer": "http://localhost/tokens/revoke"}, "/"),
    ]
    for path, headers, expected in cases:
        response = client.post(path, data={}, headers=headers)
        assert response.status_code == 303, path
        location = response.headers["Location"]
        if expected is None:
            assert location == "/sign-in?next=/deposits/new?account_id%3Da", location
        else:
            assert location == f"/sign-in?next={expected}", (path, headers, location)
    assert client.get("/deposits/new").headers["Location"] == "/sign-in?next=/deposits/new"


def test_the_sign_in_page_says_a_token_was_revoked_only_to_the_session_it_ended(
    app: Flask, api: Api
) -> None:
    """The reason comes in a cookie of the site's own, said once: an address from elsewhere
    (``?ended=``) cannot make the page say a token was revoked."""
    for address in ("/sign-in?ended=token-revoked", "/sign-in?ended=own-token-revoked"):
        assert not parse(app.test_client().get(address).get_data(as_text=True)).has(
            id="sign-in-notice"
        )
    token = make_token(app, "board")
    client = signed_in(app.test_client(), token)
    me = api.get("/me", token=token).get_json()["token_id"]
    assert api.delete(f"/tokens/{me}").status_code == 204
    ended = client.get("/tokens")
    assert ended.status_code == 303 and ended.headers["Location"].startswith("/sign-in")
    page = parse(client.get(ended.headers["Location"]).get_data(as_text=True))
    assert "has been revoked" in page.one(id="sign-in-notice").text
    again = parse(client.get("/sign-in").get_data(as_text=True))
    assert not again.has(id="sign-in-notice")  # said once


def test_a_session_that_ran_out_is_not_said_to_have_ended_by_revocation(
    app: Flask, api: Api
) -> None:
    """A session past its lifetime ran out: its token revoked afterwards, the sign-in page
    asks to sign in again and says nothing of the token to whoever holds the old cookie."""
    token = make_token(app, "board")
    with freeze_time("2026-07-01 08:00:00"):
        client = signed_in(app.test_client(), token)
    me = api.get("/me", token=token).get_json()["token_id"]
    assert api.delete(f"/tokens/{me}").status_code == 204
    with freeze_time("2026-07-01 16:00:01"):  # past the 8 hours, revoked meanwhile
        ended = client.get("/tokens")
        assert ended.status_code == 303
        page = parse(client.get(ended.headers["Location"]).get_data(as_text=True))
    assert not page.has(id="sign-in-notice")
