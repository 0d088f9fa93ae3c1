"""A page confirms only what a form sent from this browser's session did, on both databases: the
confirmation comes from the answer to the form, said once on the page it leads to, never from
the address (``?done=``), so no link from elsewhere can make a page say a token was revoked or a
fee reversed.
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from api.web.flash import FLASH_COOKIE
from tests.api.conftest import make_token
from tests.api.kit import Kit, ok, on, unique
from tests.api.test_web_board_forms import drawn, form_of, html, redirected, token_row
from tests.api.test_web_payments import facts, page_of, processing_fee
from tests.api.web_kit import signed_in


@pytest.fixture
def kit(api: Any, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def board(app: Flask, board_token: str) -> FlaskClient:
    return signed_in(app.test_client(), board_token)


def test_a_link_cannot_make_the_tokens_page_say_a_token_was_revoked(kit, board) -> None:
    live = ok(kit.api.post("/tokens", {"role": "board", "name": unique("live")}), 201)
    for address in (
        f"/tokens?done=token-revoked&token_id={live['id']}",
        f"/tokens?done=token-created&token_id={live['id']}",
    ):
        page = html(board.get(address))
        assert not page.has(id="form-notice"), address
        assert live["id"] not in page.one("main").text.split("Tokens")[0]  # named nowhere above
    assert token_row(board, live["id"]).attrs["data-status"] == "active"
    assert ok(kit.api.get("/me", token=live["token"]), 200)["token_id"] == live["id"]


def test_a_link_cannot_make_a_payments_page_say_it_was_reversed(kit, board) -> None:
    _plan, _lgu, fee = processing_fee(kit)
    page = page_of(fee["id"])
    with on("2026-06-05"):
        refund = html(board.get(page)).one("form", id="refund-form")
        redirected(board.post(refund.attrs["action"], data=drawn(refund)), page)
        for done in ("payment-reversed", "payment-refunded"):
            shown = html(board.get(f"{page}?done={done}"))
            assert not shown.has(id="form-notice"), done
            assert facts(shown)["status"] == "Refunded 2026-06-05"


def test_a_revocation_is_confirmed_once_on_its_page_in_its_session_alone(app, kit, board) -> None:
    """The form's answer leads to the tokens page, whose address says nothing of the act; that
    page says it once.  Another session sent the same cookie, a reload, or another page first,
    says nothing."""
    other = signed_in(app.test_client(), make_token(app, "board"))
    for _ in range(2):
        made = ok(kit.api.post("/tokens", {"role": "board", "name": unique("gone")}), 201)
        action, hidden = form_of(board, "/tokens", "revoke-form")
        answer = board.post(action, data={**hidden, "token_id": made["id"]})
        location = redirected(answer, "/tokens")
        assert "done" not in location and location == f"/tokens?token_id={made['id']}"
        cookie = board.get_cookie(FLASH_COOKIE)
        assert cookie is not None
        if _ == 0:
            other.set_cookie(FLASH_COOKIE, cookie.value)  # not this session's
            assert not html(other.get(location)).has(id="form-notice")
            page = html(board.get(location))
            notice = page.one(id="form-notice").text
            assert notice == "The token is revoked: it stopped working at once."
            assert page.one("code", data_field="token_id").text == made["id"]
            assert not html(board.get(location)).has(id="form-notice")  # said once
        else:
            assert not html(board.get("/")).has(id="form-notice")  # another page first
            assert not html(board.get(location)).has(id="form-notice")  # read there, dropped
        assert kit.api.get("/me", token=made["token"]).status_code == 401
