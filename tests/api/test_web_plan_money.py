"""The money a plan's page shows, on both databases: what each appeal's fee and security came to
(what was received and is held, the petition's own figures labelled as petitioned), and what
the plan's in-lieu payments came to against what is due."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask

from tests.api.kit import Kit, ok, on
from tests.api.test_money import FEE, appealed, pay
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
