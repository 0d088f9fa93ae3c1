"""A payment's page and the forms on it, on both databases: reached from every list of
payments; a refund, and the reversal of a filing fee recorded in error with its reason, each
offered only when its use case would accept it from the reader (the board; the plan's LGU the
refund of its in-lieu payments and processing fees, as the API) and refused in the API's words
when posted anyway, with nothing written and no form to send again; the payment's new state
shown after the act; another LGU and a holder see nothing (404), a holder's post is 403.

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
        shown = html(board.get(done))
        assert shown.one(id="form-notice").text == "The payment is refunded."
        assert facts(shown)["status"] == "Refunded 2026-06-05"
        assert not shown.has("form", id="refund-form")
        assert shown.one(id="no-acts").text.startswith("The payment was refunded on 2026-06-05")
        compensation = api_payment(kit, fee["id"])["compensation_transaction_id"]
        # the same form sent again answers its redirect again; another is refused
        again = board.post(first.attrs["action"], data=drawn(first))
        assert redirected(again, page) == done
        # refused for the payment's state: the refusal alone, as the page now offers no refund
        refused = html(board.post(second.attrs["action"], data=drawn(second)), 409)
        assert problem_above(refused) == "The payment was already refunded."
        assert not refused.has("form", id="refund-form")
        assert not refused.has("form", action=second.attrs["action"])
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
    assert shown.one(id="form-notice").text.startswith("The filing fee is reversed")
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
        no_acts = document.one(id="no-acts").text
        refused = html(
            board.post(early.attrs["action"], data={**drawn(early), "reason": WRONG}), 409
        )
        api_says = ok(kit.api.post(f"{page}/reverse", {"reason": WRONG}), 409)["detail"]
        assert problem_above(refused) == api_says[0].upper() + api_says[1:] + "."
        # the page says why no act is open, in the same words
        assert (
            no_acts
            == f"Neither a refund nor a reversal can be recorded on this payment now: {api_says}."
        )
        # the act is not open: no form to send again, whatever is typed in it
        assert not refused.has("form", id="reverse-form") and not refused.has("textarea")
        hidden = {**drawn(early), "idempotency_key": "r" * 24}
        not_refunded = html(board.post(f"{page}/refund", data=hidden), 422)
        assert problem_above(not_refunded) == (
            "Subd. 9: the $200.00 filing fee is retained by the board and is not refunded."
        )
        assert not not_refunded.has("form", id="refund-form")
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


def in_lieu(kit: Kit, lgu: dict[str, str]) -> dict[str, Any]:
    """A $2,000 in-lieu payment the LGU booked on 2026-06-02 for its monetary-payment plan on
    agricultural land, approved 2026-06-01."""
    plan = approved(
        kit, lgu, "2026-06-01", method="monetary_payment", agricultural=True, due_cents=500_000
    )
    return dict(ok(pay(kit.api, "in_lieu", 200_000, "2026-06-02", plan_id=plan["id"])))


@pytest.mark.parametrize("kind", ["processing_fee", "in_lieu"])
def test_the_plans_lgu_refunds_its_payment_on_its_page(app, kit, board, kind) -> None:
    """The API lets the plan's LGU refund its plans' processing fees and in-lieu payments: the
    page offers it the refund (never the board's reversal), with the same secret, key and
    redirect as the board's form; done, the payment is refunded; a second form drawn before is
    refused (409) with the refusal alone; the LGU's reversal is 403."""
    if kind == "processing_fee":
        _plan, lgu, paid = processing_fee(kit)
    else:
        lgu = kit.lgu()
        paid = in_lieu(kit, lgu)
    page = page_of(paid["id"])
    client = signed_in(app.test_client(), lgu["token"])
    with on("2026-06-05"):
        document = html(client.get(page))
        assert document.one("h2", id="payment-acts-heading").text == "Refund this payment"
        assert not document.has("form", id="reverse-form")
        first = document.one("form", id="refund-form")
        second = html(client.get(page)).one("form", id="refund-form")
        assert first.attrs["action"] == f"{page}/refund"
        # without the session's secret the form is refused and nothing is written
        forged = {**drawn(first), "csrf_token": "forged"}
        assert client.post(first.attrs["action"], data=forged).status_code == 400
        assert api_payment(kit, paid["id"])["status"] == "received"
        done = redirected(client.post(first.attrs["action"], data=drawn(first)), page)
        shown = html(client.get(done))
        assert shown.one(id="form-notice").text == "The payment is refunded."
        assert facts(shown)["status"] == "Refunded 2026-06-05"
        assert not shown.has("form", id="refund-form") and not shown.has(id="payment-acts")
        compensation = api_payment(kit, paid["id"])["compensation_transaction_id"]
        assert redirected(client.post(first.attrs["action"], data=drawn(first)), page) == done
        refused = html(client.post(second.attrs["action"], data=drawn(second)), 409)
        assert problem_above(refused) == "The payment was already refunded."
        assert not refused.has("form", action=second.attrs["action"])
        body = {**drawn(second), "idempotency_key": "v" * 24, "reason": WRONG}
        assert client.post(f"{page}/reverse", data=body).status_code == 403
    after = api_payment(kit, paid["id"])
    assert (after["status"], after["compensation_transaction_id"]) == ("refunded", compensation)


@pytest.mark.parametrize("kind", ["appeal_filing_fee", "appeal_security"])
def test_the_plans_lgu_is_offered_no_act_on_its_appeals_payments(app, kit, board, kind) -> None:
    """An appeal's fee and security are the board's to refund (Subd. 9): the LGU sees the
    payment, no form, and its refund posted anyway is refused as the API refuses it (403),
    with the refusal alone and nothing written."""
    lgu = kit.lgu()
    _plan, appeal = appealed(kit, lgu, security=SECURITY_CAP)
    amount = FEE if kind == "appeal_filing_fee" else SECURITY_CAP
    paid = ok(pay(kit.api, kind, amount, "2026-09-11", appeal_id=appeal["id"]))
    page = page_of(paid["id"])
    client = signed_in(app.test_client(), lgu["token"])
    with on("2026-09-12"):
        shown = html(client.get(page))
        assert facts(shown)["status"] == "Received"
        assert not shown.has("form", id="refund-form") and not shown.has(id="payment-acts")
        csrf = shown.one("input", name="csrf_token").attrs["value"]
        body = {"csrf_token": csrf, "idempotency_key": "r" * 24}
        refused = html(client.post(f"{page}/refund", data=body), 403)
        api_says = ok(kit.api.post(f"{page}/refund", {}, token=lgu["token"]), 403)["detail"]
        assert problem_above(refused) == api_says[0].upper() + api_says[1:] + "."
        assert not refused.has("form", id="refund-form")
    assert api_payment(kit, paid["id"])["status"] == "received"


def test_another_lgu_and_a_holder_see_nothing_and_use_nothing(app, kit, board) -> None:
    """Another LGU and a holder get 404 for the page; another LGU's refund is 404, as the API
    answers it, and a holder's post is 403, as every LGU form answers a holder; the board's
    reversal stays the board's (403 for the plan's LGU)."""
    _plan, lgu, fee = processing_fee(kit)
    page = page_of(fee["id"])
    holder = signed_in(app.test_client(), kit.holder()["token"])
    other = signed_in(app.test_client(), kit.lgu()["token"])
    own = signed_in(app.test_client(), lgu["token"])
    with on("2026-06-05"):
        form = html(board.get(page)).one("form", id="refund-form")
        assert holder.get(page).status_code == 404
        assert other.get(page).status_code == 404
        for client, act, status in (
            (other, "refund", 404),
            (other, "reverse", 403),
            (holder, "refund", 403),
            (holder, "reverse", 403),
            (own, "reverse", 403),
        ):
            csrf = html(client.get("/")).one("input", name="csrf_token").attrs["value"]
            body = {"csrf_token": csrf, "idempotency_key": act * 8, "reason": WRONG}
            answer = client.post(f"{page}/{act}", data=body)
            assert answer.status_code == status, (act, answer.get_data(as_text=True)[:500])
            assert fee["id"] not in answer.get_data(as_text=True)
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
