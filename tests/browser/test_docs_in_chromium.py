"""Issue 25 §6 in a real browser: ``/api/v1/docs`` shows every operation of the document, a
person can authorize and try one, and the page never asks anything of another host.

Every request Chromium makes is recorded: each must go to the service itself.  A Content-Security-
Policy violation or a script error would show on the console, and none may.  A problem's ``type``
followed from the browser lands on the page that explains it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urljoin

import pytest

from tests.browser.conftest import ARTIFACTS, _require_chromium
from tests.dbs import create_database, drop_database, migrate
from tests.system import harness


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """A live server on a SQLite file (the page reads no data of its own); its base URL and a
    board token."""
    _require_chromium()
    folder = tmp_path_factory.mktemp("docs-page")
    url = create_database("sqlite", folder)
    migrate(url)
    server = harness.Server(url, workers=1, log_path=folder / "server.log")
    try:
        server.start()
        yield f"http://{harness.HOST}:{server.port}", harness.board_token(url)
    finally:
        server.stop()
        drop_database(url)


class Watched:
    """A tab's requests, console errors and script errors."""

    def __init__(self, page: Any) -> None:
        self.requests: list[str] = []
        self.errors: list[str] = []
        page.on("request", lambda request: self.requests.append(request.url))
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.errors.append(f"page error: {error}"))

    def _console(self, message: Any) -> None:
        if message.location.get("url", "").endswith("/favicon.ico"):
            return  # Chromium asks for the site's icon, which the site does not have
        if message.type in ("error", "warning"):
            self.errors.append(f"console {message.type}: {message.text}")


def test_the_docs_page_loads_from_the_service_alone_and_tries_an_operation(
    page: Any, served: tuple[str, str]
) -> None:
    base, board = served
    watched = Watched(page)
    page.goto(f"{base}/api/v1/docs")
    transfers = page.locator("#operations-movements-post_transfers")
    transfers.wait_for()
    document = page.request.get(f"{base}/api/v1/openapi.json").json()
    ids = [
        operation["operationId"]
        for item in document["paths"].values()
        for method, operation in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    ]
    assert len(ids) > 50
    page.wait_for_function("n => document.querySelectorAll('.opblock').length >= n", arg=len(ids))
    assert page.locator(".opblock").count() == len(ids)

    # a write: its Idempotency-Key and the problems it can give are there to read
    transfers.locator(".opblock-summary").click()
    transfers.get_by_text("Idempotency-Key", exact=True).first.wait_for()  # shown once opened
    transfers.locator(".response[data-code='409']").wait_for()
    ARTIFACTS.mkdir(exist_ok=True)
    page.screenshot(path=str(Path(ARTIFACTS) / "docs-transfers.png"))

    # authorize with a token, and try GET /me from the page
    page.get_by_role("button", name="Authorize").first.click()
    dialog = page.locator(".modal-ux")
    dialog.get_by_label("auth-bearer-value").fill(board)
    dialog.get_by_role("button", name="Apply credentials").click()
    dialog.get_by_role("button", name="Close").click()
    me = page.locator("#operations-service-get_me")
    me.locator(".opblock-summary").click()
    me.get_by_role("button", name="Try it out").click()
    me.get_by_role("button", name="Execute").click()
    live = me.locator(".live-responses-table tbody .response-col_status").first
    live.wait_for()
    assert live.inner_text().strip() == "200"
    assert '"role": "board"' in me.locator(".live-responses-table .microlight").first.inner_text()
    page.screenshot(path=str(Path(ARTIFACTS) / "docs-try-it-out.png"))

    assert watched.requests, "no request was recorded: the check would prove nothing"
    elsewhere = [url for url in watched.requests if not url.startswith(base + "/")]
    assert not elsewhere, elsewhere
    assert not watched.errors, watched.errors


def test_a_problem_type_followed_in_the_browser_explains_its_code(
    page: Any, served: tuple[str, str]
) -> None:
    base, _board = served
    watched = Watched(page)
    refused = page.request.get(f"{base}/api/v1/me")  # no token
    problem = refused.json()
    assert refused.status == 401 and problem["type"] == "/problems/unauthorized"
    page.goto(urljoin(refused.url, problem["type"]))  # a relative reference, as RFC 9457 says
    assert page.get_by_role("heading", level=1).inner_text().startswith("unauthorized")
    assert page.locator("dd[data-status='401']").is_visible()
    with page.expect_navigation():
        page.get_by_role("link", name="Every problem type").click()
    page.get_by_role("link", name="insufficient_credits").wait_for()
    assert all(url.startswith(base + "/") for url in watched.requests), watched.requests
    assert not watched.errors, watched.errors
