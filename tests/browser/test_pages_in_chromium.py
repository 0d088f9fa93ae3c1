"""Issue #9 in a real browser: sign in as a holder, see the balances the API reports, download the
statement CSV, be refused another holder's account; the public page draws the right bars.

Every figure a test reads off a page is compared with the API's answer at the same moment.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote, urlsplit

from tests.browser.conftest import World

BALANCE_FIELDS = ("posted_sqft", "reserved_sqft", "frozen_sqft", "available_sqft")


def sign_in(page: Any, world: World, token: str, path: str = "/") -> Any:
    """Open the sign-in form, paste the token as a person would, and land on ``path``."""
    page.goto(f"{world.base}/sign-in?next={quote(path)}")
    page.get_by_label("API token").fill(token)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()
    assert urlsplit(page.url).path == path, page.url
    return page


def figure(text: str) -> int:
    return int(text.replace(",", ""))


def test_a_holder_signs_in_and_sees_the_balances_the_api_reports(page: Any, world: World) -> None:
    page.goto(f"{world.base}/accounts/{world.account}")
    assert urlsplit(page.url).path == "/sign-in"  # signed out: asked to sign in first
    world.shot(page, "sign-in")

    page.get_by_label("API token").fill(world.bank.holder_token)
    with page.expect_navigation():
        page.get_by_role("button", name="Sign in").click()

    assert urlsplit(page.url).path == f"/accounts/{world.account}"  # and brought back
    cookie = next(c for c in page.context.cookies() if c["name"] == "wetbank_session")
    assert cookie["httpOnly"] and cookie["secure"] and cookie["sameSite"] == "Lax"
    api = world.api.ok("GET", f"/accounts/{world.account}", status=200)
    expected = {row["credit_class"]["code"]: row for row in api["balances"]}
    rows = page.locator("#balances tbody tr")
    assert rows.count() == len(expected) > 0
    for index in range(rows.count()):
        row = rows.nth(index)
        code = row.get_attribute("data-credit-class")
        for name in BALANCE_FIELDS:
            shown = row.locator(f'td[data-field="{name}"]').inner_text()
            assert figure(shown) == expected[code][name], (code, name)
    # 30,000 deposited, 2,500 sold on, 8,000 withdrawn, 1,200 reserved
    assert figure(page.locator('#balances td[data-field="available_sqft"]').inner_text()) == 18_300
    assert page.get_by_role("heading", name="Balances").is_visible()
    world.shot(page, "account")


def test_the_holder_downloads_the_statement_the_api_gives(
    page: Any, world: World, tmp_path: Path
) -> None:
    sign_in(page, world, world.bank.holder_token, f"/accounts/{world.account}")
    link = page.locator("#statement-csv")
    query = parse_qs(urlsplit(link.get_attribute("href")).query)
    start, end = query["from"][0], query["to"][0]

    with page.expect_download() as downloading:
        link.click()
    download = downloading.value
    saved = tmp_path / download.suggested_filename
    download.save_as(saved)

    assert download.suggested_filename.endswith(f"{start}-{end}.csv")
    status, _headers, api_csv = world.api.call(
        "GET",
        f"/accounts/{world.account}/statement?from={start}&to={end}",
        token=world.bank.holder_token,
        headers={"Accept": "text/csv"},
    )
    assert status == 200
    assert saved.read_bytes() == api_csv
    assert b",transfer," in api_csv and b",withdrawal," in api_csv


def test_a_holder_is_refused_another_holders_account(page: Any, world: World) -> None:
    sign_in(page, world, world.bank.holder_token)

    response = page.goto(f"{world.base}/accounts/{world.other_account}")

    assert response.status == 404
    assert page.get_by_role("heading", name="Not found").is_visible()
    assert "your token may not see it" in page.locator("main").inner_text()
    assert page.locator("#balances").count() == 0
    # nor can the CSV be fetched by its address
    csv = page.goto(f"{world.base}/accounts/{world.other_account}/statement.csv")
    assert csv.status == 404


def test_the_public_page_draws_a_bar_per_service_area_in_proportion(
    page: Any, world: World
) -> None:
    report = world.api.ok("GET", "/reports/credit-availability", status=200)
    totals: dict[str, int] = {}
    for item in report["items"]:
        key = str(item["service_area"])
        totals[key] = totals.get(key, 0) + item["available_sqft"]

    page.goto(world.base + "/")  # nobody signed in

    bars = page.locator("#availability-chart g.bar")
    assert bars.count() == len(totals) > 0
    drawn: dict[str, float] = {}
    for index in range(bars.count()):
        bar = bars.nth(index)
        area = bar.get_attribute("data-service-area")
        rect = bar.locator("rect")
        assert int(rect.get_attribute("data-sqft")) == totals[area]
        drawn[area] = rect.bounding_box()["width"]  # as Chromium laid it out, in CSS pixels
        assert figure(bar.locator("text.value").text_content()) == totals[area]
    widest = max(totals, key=lambda area: totals[area])
    for area, width in drawn.items():
        expected = drawn[widest] * totals[area] / totals[widest]
        assert abs(width - expected) <= 1.0, (area, width, expected)
    # the table per service area says the same as its bar
    for area, total in totals.items():
        cells = page.locator(f'table.availability[data-service-area="{area}"] tfoot td').first
        assert figure(cells.inner_text()) == total
    world.shot(page, "index")


def test_an_lgu_sees_its_plan_and_the_board_the_audit(page: Any, world: World) -> None:
    plan = world.api.ok("GET", f"/plans/{world.plan_id}", status=200)
    sign_in(page, world, world.bank.lgu_token, f"/plans/{world.plan_id}")

    assert page.locator("#impact-may-proceed").get_attribute("data-may-proceed") == "false"
    codes = page.locator("#impact-blockers li").evaluate_all(
        "items => items.map(li => li.dataset.code)"
    )
    assert codes == [b["code"] for b in plan["impact_blockers"]]
    assert page.locator("table.withdrawal").count() == len(plan["withdrawals"]) == 1
    world.shot(page, "plan")
    assert page.goto(world.base + "/audit").status == 403

    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(world.base + "/")
    sign_in(page, world, world.bank.board, "/audit")
    assert urlsplit(page.url).path == "/audit"
    assert page.locator("#verify-result").get_attribute("data-ok") == "true"
    journal = world.api.ok("GET", "/audit/journal?limit=1", status=200)
    newest = page.locator("#journal tbody tr").first.get_attribute("data-seq")
    assert int(newest) >= journal["items"][0]["seq"]
    world.shot(page, "audit")


def test_the_account_page_fits_a_phone_and_prints_as_a_clean_statement(
    browser: Any, world: World
) -> None:
    phone = browser.new_context(viewport={"width": 390, "height": 844}, is_mobile=True)
    try:
        page = phone.new_page()
        sign_in(page, world, world.bank.holder_token, f"/accounts/{world.account}")
        # nothing pushes the page wider than the phone: wide tables scroll in their own box
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 390, width
        world.shot(page, "account-phone")

        page.emulate_media(media="print")
        assert not page.locator("header.site").is_visible()
        assert not page.locator("form.period").is_visible()
        assert not page.locator("#statement-csv").is_visible()
        assert page.locator("table.statement-class").first.is_visible()
        assert page.locator("#balances").is_visible()
        pdf = world.shot(page, "account-print").with_suffix(".pdf")
        page.pdf(path=str(pdf), format="Letter")
        assert pdf.stat().st_size > 1_000
    finally:
        phone.close()


def test_signing_out_ends_the_session_in_the_browser(page: Any, world: World) -> None:
    sign_in(page, world, world.bank.holder_token, f"/accounts/{world.account}")
    page.get_by_role("button", name="Sign out").click()
    page.wait_for_url(world.base + "/")
    assert page.get_by_role("link", name="Sign in").is_visible()
    page.goto(f"{world.base}/accounts/{world.account}")
    assert urlsplit(page.url).path == "/sign-in"
