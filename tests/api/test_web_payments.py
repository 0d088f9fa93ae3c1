"""A payment's page and the board's forms on it, on both databases: reached from every list of
payments; a refund, and the reversal of a filing fee recorded in error with its reason, each
offered only when its use case would accept it and refused in the API's words when posted
anyway, with nothing written; the payment's new state shown after the act; no form for anyone
but the board, and a non-board post refused (403).

A test fills a form as a browser would (``tests/api/test_web_board_forms.py``'s helpers).
"""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from tests.api.kit import Kit, ok, on
from tests.api.test_money import FEE, SECURITY_CAP, appealed, approved, decide_petition, pay
from tests.api.test_web_board_forms import (
    drawn,
    error_beside,
    html,
    problem_above,
    redirected,
)
from tests.api.web_kit import Element, parse, signed_in

WRONG = "booked on the wrong appeal: the check names the other petition"


@pytest.fixture
def kit(api: Any, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def board(app: Flask, board_token: str) -> FlaskClient:
    return signed_in(app.test_client(), board_token)


def page_of(payment_id: str) -> str:
    return f"/payments/{payment_id}"


def facts(document: Element) -> dict[str, str]:
    """The payment page's facts, by their ``data-field``."""
    listed = document.one("dl", id="payment")
    return {dd.attrs["data-field"]: dd.text for dd in listed.all("dd") if "data-field" in dd.attrs}


def api_payment(kit: Kit, payment_id: str) -> dict[str, Any]:
    return dict(ok(kit.api.get(f"/payments/{payment_id}"), 200))


def processing_fee(kit: Kit) -> tuple[dict[str, Any], dict[str, str], dict[str, Any]]:
    """An LGU's plan approved 2026-06-01 and its $120 processing fee received that day."""
    lgu = kit.lgu()
    plan = approved(kit, lgu, "2026-06-01")
    fee = pay(kit.api, "processing_fee", 12_000, "2026-06-01", plan_id=plan["id"])
    return plan, lgu, ok(fee)


def links_to(document: Element, payment_id: str) -> bool:
    return document.has("a", href=page_of(payment_id))


def test_each_list_of_payments_links_to_the_payments_page(kit, board) -> None:
    """``/payments``, the plan's page and the appeals page each lead to the payment's page,
    where its facts are shown."""
    plan, appeal = appealed(kit, kit.lgu())
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    with on("2026-09-12"):
        assert links_to(html(board.get(f"/plans/{plan['id']}")), fee["id"])
        assert links_to(html(board.get(f"/plans/{plan['id']}/appeals")), fee["id"])
        listed = html(board.get("/payments?status=received&limit=200"))
        while not links_to(listed, fee["id"]):  # the shared database holds every test's
            listed = html(board.get(listed.one("a", rel="next").attrs["href"]))
        shown = facts(html(board.get(page_of(fee["id"]))))
    assert shown["kind"] == "Appeal filing fee"
    assert shown["amount"] == "$200.00"
    assert shown["received_on"] == "2026-09-11"
    # a fee with no postmark of its own came in the petition's envelope
    assert shown["postmarked_on"] == appeal["postmarked_on"]
    assert shown["status"] == "Received"
    assert "reversal_reason" not in shown


def test_the_board_refunds_a_processing_fee_on_its_page_and_sees_it_refunded(kit, board) -> None:
    """A processing fee is refunded, not reversed: only the refund is offered.  Done, the page
    shows it refunded that day and offers nothing more; a second form drawn before the refund
    is refused in the API's words (409) and writes nothing."""
    _plan, _lgu, fee = processing_fee(kit)
    page = page_of(fee["id"])
    with on("2026-06-05"):
        document = html(board.get(page))
        assert not document.has("form", id="reverse-form")
        first = document.one("form", id="refund-form")
        second = html(board.get(page)).one("form", id="refund-form")
        done = redirected(board.post(first.attrs["action"], data=drawn(first)), page)
        assert "done=payment-refunded" in done
        shown = html(board.get(done))
        assert shown.one(id="form-notice").text == "The payment is refunded."
        assert facts(shown)["status"] == "Refunded 2026-06-05"
        assert not shown.has("form", id="refund-form")
        assert shown.one(id="no-acts").text.startswith("The payment was refunded on 2026-06-05")
        compensation = api_payment(kit, fee["id"])["compensation_transaction_id"]
        # the same form sent again answers its redirect again; another is refused
        again = board.post(first.attrs["action"], data=drawn(first))
        assert redirected(again, page) == done
        refused = html(board.post(second.attrs["action"], data=drawn(second)), 409)
        assert problem_above(refused) == "The payment was already refunded."
        assert refused.has("form", id="refund-form")
    after = api_payment(kit, fee["id"])
    assert (after["status"], after["compensation_transaction_id"]) == ("refunded", compensation)


def test_the_board_reverses_a_filing_fee_with_its_reason_and_sees_it_reversed(kit, board) -> None:
    """A received filing fee is never refunded (Subd. 9): only the reversal is offered, and
    its reason is required.  Done, the page shows it reversed that day with the reason, and the
    appeals page shows the appeal without its fee."""
    plan, appeal = appealed(kit, kit.lgu())
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    page = page_of(fee["id"])
    with on("2026-09-12"):
        document = html(board.get(page))
        assert not document.has("form", id="refund-form")
        form = document.one("form", id="reverse-form")
        label = document.one("label", for_="f-reason")
        assert label.text.startswith("Why it was recorded in error")
        for blank in ("", "   "):
            refused = html(
                board.post(form.attrs["action"], data={**drawn(form), "reason": blank}), 422
            )
            assert refused.one("textarea", name="reason").attrs.get("aria-invalid") == "true"
            assert error_beside(refused, "reason")
        assert api_payment(kit, fee["id"])["status"] == "received"
        done = redirected(
            board.post(form.attrs["action"], data={**drawn(form), "reason": WRONG}), page
        )
        shown = html(board.get(done))
        appeals = html(board.get(f"/plans/{plan['id']}/appeals"))
    assert "done=payment-reversed" in done
    assert facts(shown)["status"] == "Reversed 2026-09-12"
    assert facts(shown)["reversal_reason"] == WRONG
    assert not shown.has("form", id="reverse-form") and not shown.has("form", id="refund-form")
    reversed_ = api_payment(kit, fee["id"])
    assert (reversed_["status"], reversed_["reversal_reason"]) == ("reversed", WRONG)
    listed = appeals.one("dd", data_field="payments").text
    postmarked = appeal["postmarked_on"]
    assert listed == f"Filing fee $200.00 received 2026-09-11 (postmarked {postmarked}) (reversed)"


def test_a_fee_a_grant_relied_on_is_offered_no_act_and_refused_in_the_apis_words(
    kit, board
) -> None:
    """Once its petition was granted, the fee is neither reversed nor refunded: the page offers
    neither form, and each posted anyway (the reversal drawn before the grant) is refused with
    the API's sentence, nothing written."""
    _plan, appeal = appealed(kit, kit.lgu())
    fee = ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=appeal["id"]))
    page = page_of(fee["id"])
    with on("2026-09-12"):
        early = html(board.get(page)).one("form", id="reverse-form")
    decide_petition(kit, appeal, "2026-09-14", granted=True)
    with on("2026-09-15"):
        document = html(board.get(page))
        assert not document.has("form", id="reverse-form")
        assert not document.has("form", id="refund-form")
        assert document.one(id="no-acts").text.startswith("Neither a refund nor a reversal")
        refused = html(
            board.post(early.attrs["action"], data={**drawn(early), "reason": WRONG}), 409
        )
        api_says = ok(kit.api.post(f"{page}/reverse", {"reason": WRONG}), 409)["detail"]
        assert problem_above(refused) == api_says[0].upper() + api_says[1:] + "."
        assert refused.one("textarea", name="reason").text == WRONG  # kept as typed
        hidden = {**drawn(early), "idempotency_key": "r" * 24}
        not_refunded = html(board.post(f"{page}/refund", data=hidden), 422)
        assert problem_above(not_refunded) == (
            "Subd. 9: the $200.00 filing fee is retained by the board and is not refunded."
        )
        assert facts(html(board.get(page)))["status"] == "Received"
    assert api_payment(kit, fee["id"])["status"] == "received"


@pytest.mark.parametrize("granted", [None, False])
def test_appeal_security_is_offered_a_refund_until_its_petition_is_denied(
    kit, board, granted
) -> None:
    """Security is refunded while its petition is undecided and kept once it is denied
    (Subd. 9): the refund is offered exactly then; never a reversal."""
    _plan, appeal = appealed(kit, kit.lgu(), security=SECURITY_CAP)
    paid = pay(kit.api, "appeal_security", SECURITY_CAP, "2026-09-11", appeal_id=appeal["id"])
    security = ok(paid)
    if granted is not None:
        decide_petition(kit, appeal, "2026-09-14", granted=granted)
    with on("2026-09-15"):
        document = html(board.get(page_of(security["id"])))
    assert document.has("form", id="refund-form") is (granted is None)
    assert not document.has("form", id="reverse-form")


def test_only_the_board_sees_or_uses_the_forms(app, kit, board) -> None:
    """The plan's LGU sees its payment's page without a form, and its posts are 403 (the pages'
    refunds and reversals are the board's); a holder does not see the page at all."""
    _plan, lgu, fee = processing_fee(kit)
    page = page_of(fee["id"])
    holder = signed_in(app.test_client(), kit.holder()["token"])
    with on("2026-06-05"):
        form = html(board.get(page)).one("form", id="refund-form")
        client = signed_in(app.test_client(), lgu["token"])
        shown = html(client.get(page))
        assert facts(shown)["status"] == "Received"
        assert not shown.has("form", id="refund-form") and not shown.has(id="payment-acts")
        csrf = shown.one("input", name="csrf_token").attrs["value"]
        for act in ("refund", "reverse"):
            body = {"csrf_token": csrf, "idempotency_key": act * 8, "reason": WRONG}
            assert client.post(f"{page}/{act}", data=body).status_code == 403
        assert holder.get(page).status_code == 404
        assert parse(board.get(page).get_data(as_text=True)).has("form", id="refund-form")
    assert api_payment(kit, fee["id"])["status"] == "received"
    assert form.attrs["action"] == f"{page}/refund"


def test_an_unknown_payment_is_not_found_on_the_page_and_by_its_forms(app, board) -> None:
    with on("2026-06-05"):
        html(board.get(page_of("pay_nope")), 404)
        csrf = html(board.get("/")).one("input", name="csrf_token").attrs["value"]
        for act in ("refund", "reverse"):
            body = {"csrf_token": csrf, "idempotency_key": act * 8, "reason": WRONG}
            html(board.post(f"{page_of('pay_nope')}/{act}", data=body), 404)
        signed_out = app.test_client().get(page_of("pay_nope"))
    assert signed_out.status_code == 303 and "/sign-in" in signed_out.headers["Location"]
