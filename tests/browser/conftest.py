"""Browser tests: Debian's headless Chromium, driven by Playwright, against a live server.

One server per database backend (SQLite file and PostgreSQL), seeded through the API with a small
bank; each test that signs in gets a fresh browser context (no cookies), so every sign-in is
its own (the accessibility check keeps one signed-in tab per role and width for its pages).
Screenshots go to ``tests/artifacts/`` (ignored by git).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.dbs import BACKENDS, create_database, drop_database, migrate
from tests.system import harness

ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"
#: Debian's package (``apt-get install chromium``); another build can be named in the environment
CHROMIUM = os.environ.get("WETBANK_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",  # CI runs as root, where Chromium's sandbox refuses to start
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _require_chromium() -> None:
    if Path(CHROMIUM).is_file():
        return
    message = f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: the browser tests must run)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    _require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS
        )
        yield chromium
        chromium.close()


@dataclass
class World:
    """A live server and what was made in it through the API."""

    backend: str
    base: str
    port: int
    bank: harness.Bank
    account: str  # the holder's account the tests look at
    other_account: str  # another holder's account
    plan_id: str
    payment_id: str  # a processing fee paid for the plan, which the board may refund
    api: harness.Client

    def shot(self, page: Any, name: str) -> Path:
        """Save a full-page screenshot of ``page`` as an artifact."""
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{self.backend}-{name}.png"
        page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[World]:
    _require_chromium()
    backend = str(request.param)
    folder = tmp_path_factory.mktemp(f"browser-{backend}")
    url = create_database(backend, folder)
    migrate(url)
    # the pages are served over plain HTTP on loopback, where Chromium keeps Secure cookies
    server = harness.Server(url, workers=2, log_path=folder / "server.log")
    try:
        server.start()
        with harness.Client(server.port) as api:
            yield _build(backend, server.port, url, api)
    finally:
        server.stop()
        drop_database(url)


def _build(backend: str, port: int, url: str, api: harness.Client) -> World:
    """A holder whose account sold credits to an approved plan (its processing fee paid), and a
    second holder's account."""
    bank = harness.seed(api, url, [30_000, 5_000])
    account, second = bank.accounts
    api.ok(
        "POST",
        "/transfers",
        {
            "from_account_id": account,
            "to_account_id": second,
            "credit_class": harness.CREDIT_CLASS,
            "amount_sqft": 2_500,
        },
        token=bank.holder_token,
    )
    plan = harness.approved_plan(api, bank, area_sqft=4_000)
    reserved = api.ok(
        "POST",
        f"/accounts/{account}/reservations",
        {
            "plan_id": plan["id"],
            "credit_class": harness.CREDIT_CLASS,
            "amount_sqft": 8_000,
            "expires_on": harness.days_ago(-365),
        },
    )
    api.ok(
        "POST",
        f"/plans/{plan['id']}/withdrawals",
        {"reservation_ids": [reserved["id"]]},
        token=bank.lgu_token,
    )
    fee = api.ok(
        "POST",
        "/payments",
        {
            "kind": "processing_fee",
            "amount_cents": 12_000,
            "payer": "A. Payer",
            "received_on": harness.days_ago(1),
            "plan_id": plan["id"],
        },
        token=bank.board,
    )
    held_for = harness.approved_plan(api, bank, area_sqft=1_000)
    api.ok(
        "POST",
        f"/accounts/{account}/reservations",
        {
            "plan_id": held_for["id"],
            "credit_class": harness.CREDIT_CLASS,
            "amount_sqft": 1_200,
            "expires_on": harness.days_ago(-365),
        },
    )
    stranger = api.ok("POST", "/holders", {"name": harness.unique("Stranger")})
    other = api.ok(
        "POST", "/accounts", {"holder_id": stranger["id"], "service_area": 7, "county": "Pope"}
    )
    return World(
        backend=backend,
        base=f"http://{harness.HOST}:{port}",
        port=port,
        bank=bank,
        account=account,
        other_account=str(other["id"]),
        plan_id=str(plan["id"]),
        payment_id=str(fee["id"]),
        api=api,
    )


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    """A fresh browser context (no cookies) and a tab in it, desktop-sized."""
    context = browser.new_context(accept_downloads=True, viewport={"width": 1280, "height": 900})
    context.set_default_timeout(15_000)
    tab = context.new_page()
    yield tab
    context.close()
