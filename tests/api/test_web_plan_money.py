"""The money a plan's page shows, on both databases: what each appeal's fee and security came to
(what was received and is held, the petition's own figures labelled as petitioned), and what
the plan's in-lieu payments came to against what is due."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.kit import Kit, ok, on
from tests.api.test_money import (
    FEE,
    appealed,
    decided,
    monetary_plan,
    pay,
    reversed_on_appeal,
)
from tests.api.web_kit import Element, parse, signed_in


@pytest.fixture
def kit(api: Any, app: Flask) -> Kit:
    return Kit(api, app)


def plan_page(app: Flask, token: str, plan_id: str, day: str) -> Element:
    with on(day):
        client = signed_in(app.test_client(), token)
        return parse(client.get(f"/plans/{plan_id}").get_data(as_text=True))


def test_an_appeal_shows_the_fee_received_and_the_security_held_not_what_was_petitioned(
    app, kit
) -> None:
    """The petition (postmarked 09-10, received 09-11) says it pays $200 and posts $100; the
    $100 is posted 09-11 and refunded 09-12, and no fee is recorded by the window's end (09-21).
    On 10-20 the appeals table says no fee was received and nothing is held, as the API does,
    and gives the petition's figures only as petitioned; once a fee is recorded it shows the
    day it was received and its postmark."""
    lgu = kit.lgu()
    plan, appeal = appealed(kit, lgu, security=10_000)
    security = ok(pay(kit.api, "appeal_security", 10_000, "2026-09-11", appeal_id=appeal["id"]))
    with on("2026-09-12"):
        ok(kit.api.post(f"/payments/{security['id']}/refund"), 201)
    with on("2026-10-20"):
        (shown,) = kit.get_plan(plan["id"])["appeals"]
    assert (shown["filing_fee_received_on"], shown["security_held_cents"]) == (None, 0)

    document = plan_page(app, lgu["token"], plan["id"], "2026-10-20")
    table = document.one("table", id="appeals")
    headings = [th.text for th in table.one("thead").all("th")]
    assert "Fee received" in headings and "Security held" in headings
    assert "Fee" not in headings and "Security" not in headings
    row = table.one("tr", data_appeal_id=appeal["id"])
    assert row.one("td", data_field="fee-received").text == "None recorded $200.00 as petitioned"
    assert row.one("td", data_field="security-held").text == "$0.00 $100.00 as petitioned"

    _, paid = appealed(kit, lgu)
    ok(pay(kit.api, "appeal_filing_fee", FEE, "2026-09-11", appeal_id=paid["id"]))
    document = plan_page(app, lgu["token"], paid["plan_id"], "2026-09-12")
    row = document.one("table", id="appeals").one("tr", data_appeal_id=paid["id"])
    assert row.one("td", data_field="fee-received").text == (
        "2026-09-11 (postmarked 2026-09-10) $200.00 as petitioned"
    )
    assert row.one("td", data_field="security-held").text == "$0.00"


@pytest.mark.parametrize(
    ("payments", "received"),
    [
        ((60_000,), "$600.00, $400.00 still due"),
        ((60_000, 40_000), "$1,000.00, paid in full"),
        ((60_000, 900_000), "$9,600.00, $8,600.00 more than due"),
    ],
    ids=["short", "in-full", "over"],
)
def test_the_plan_page_shows_the_in_lieu_payments_received_against_what_is_due(
    app, kit, payments, received
) -> None:
    """$1,000 due; what was received and not refunded (a $400 payment refunded counts for
    nothing) against it: what is still due, or how much more than due came in."""
    lgu = kit.lgu()
    plan = monetary_plan(kit, lgu, due_cents=100_000)
    decided(kit, lgu, plan, "approved")
    refunded = ok(
        pay(kit.api, "in_lieu", 40_000, "2026-09-02", plan_id=plan["id"], token=lgu["token"])
    )
    with on("2026-09-02"):
        ok(kit.api.post(f"/payments/{refunded['id']}/refund", token=lgu["token"]), 201)
    for amount in payments:
        ok(pay(kit.api, "in_lieu", amount, "2026-09-02", plan_id=plan["id"], token=lgu["token"]))
    document = plan_page(app, lgu["token"], plan["id"], "2026-09-03")
    assert document.one("dd", id="in-lieu-due").text == "$1,000.00"
    assert document.one("dd", id="in-lieu-received").text == received


def test_in_lieu_money_received_for_an_approval_reversed_on_appeal_is_shown_refundable(
    app, kit
) -> None:
    """$700 received 09-02 for the approval the board reversed on 09-20: nothing is left for it
    to replace, and the page says it is refundable, and why."""
    lgu = kit.lgu()
    plan = monetary_plan(kit, lgu, due_cents=100_000)
    ok(pay(kit.api, "in_lieu", 70_000, "2026-09-02", plan_id=plan["id"], token=lgu["token"]))
    reversed_on_appeal(kit, lgu, plan)
    document = plan_page(app, lgu["token"], plan["id"], "2026-09-21")
    assert document.one("dd", id="in-lieu-received").text == (
        "$700.00, refundable: the approval was reversed on appeal, so it permits no impact for "
        "them to replace (each is refunded from its page)"
    )


@pytest.mark.parametrize(
    ("method", "shown"),
    [("bank_credits", True), ("monetary_payment", False), ("project_specific", False)],
)
def test_credits_required_are_shown_only_for_a_plan_replaced_with_bank_credits(
    app, kit, method, shown
) -> None:
    """9,000 sq ft at 2:1: 18,000 sq ft of credits replace the impact of a bank-credits plan; no
    credit replaces any of a monetary payment's or a project-specific replacement's."""
    lgu = kit.lgu()
    with on("2026-09-01"):
        if method == "monetary_payment":
            plan = monetary_plan(kit, lgu)
        else:
            plan = kit.plan(lgu, received_on="2026-09-01", area_sqft=9_000, method=method)
    document = plan_page(app, lgu["token"], plan["id"], "2026-09-01")
    facts = document.all("dl", class_="facts")[0]  # the plan's own, above its decision record
    assert ("Credits required" in facts.text) is shown
    if shown:
        assert document.one("dd", id="required-credits").text.startswith("18,000 sq ft")
    else:
        assert document.all("dd", id="required-credits") == []
