"""Issue #26 §5 in a real browser: every page passes axe-core with no serious or critical
violation, and fits a 390 px wide phone without the page scrolling sideways (a wide table scrolls
inside its own box, at any width).

axe-core comes from npm (``tests/browser/package.json``, installed by ``make test``) and is run
by the test, never fetched by the page: the pages' Content-Security-Policy allows no script, and
the docs page only its own, so the test evaluates axe's source through the DevTools protocol
(``page.evaluate``), which the policy does not govern, rather than adding a ``<script>`` the
policy would (rightly) refuse.  Screenshots at 390 px (from the first database's run: the markup is
the same on both) go to ``tests/artifacts/``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.browser.conftest import World
from tests.dbs import BACKENDS
from tests.system import harness

AXE = Path(__file__).resolve().parent / "node_modules" / "axe-core" / "axe.min.js"
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
#: the impacts that fail a page; "minor" and "moderate" ones are reported by axe but allowed
FAILING = ("serious", "critical")


@dataclass(frozen=True)
class Page:
    """A page to check: its name (for the screenshot), who looks at it and where it is."""

    name: str
    role: str | None  # board, lgu or holder (signed in through the form), api-board (bearer)
    path: str
    #: ``None``: a form of an act the plan's state may not allow: 200 with the form, or its
    #: refusal (409, 422) shown in place of it (``bank.plan_acts.act_form``)
    status: int | None = 200
    ready: str = "main"  # a selector present once the page has drawn itself


#: the pages each role sees, named for their screenshots
NAMED = [
    Page("index", None, "/"),
    Page("credit-availability", None, "/credit-availability"),
    Page("sign-in", None, "/sign-in?next=/audit"),
    Page("problem-types", None, "/problems"),
    Page("problem-type", None, "/problems/not_found"),
    Page("not-found", None, "/no-such-page", status=404),
    Page("docs", None, "/api/v1/docs", ready=".opblock"),
    Page("index-holder", "holder", "/"),
    Page("account", "holder", "/accounts/{account_id}"),
    Page("index-lgu", "lgu", "/"),
    Page("plan", "lgu", "/plans/{plan_id}"),
    Page("forbidden", "lgu", "/audit", status=403),
    Page("index-board", "board", "/"),
    Page("account-board", "board", "/accounts/{account_id}"),
    Page("plan-board", "board", "/plans/{plan_id}"),
    Page("audit", "board", "/audit"),
    Page("lgu-compliance", "board", "/reports/lgu-compliance"),
    # the notices as mailed: printable pages of the API, read with a bearer token
    Page("notice-application", "api-board", "/api/v1/plans/{plan_id}/notices/application"),
    Page("notice-decision", "api-board", "/api/v1/plans/{plan_id}/notices/decision"),
]
#: the parts of a page's address that ``addresses`` fills in
ARGUMENTS = (
    "account_id",
    "plan_id",
    "holder_id",
    "lgu_id",
    "site_id",
    "withdrawal_id",
    "payment_id",
    "notice_id",
    "act",
)
#: the pages' blueprint's GET routes that are not pages: files and downloads
NOT_PAGES = ("web.static",)


def _every_page() -> list[Page]:
    """``NAMED``, then every other page of the pages' blueprint, as board staff (who may open
    each one), so that a page added to the site is checked without being listed here."""
    from api import create_app  # connects lazily: this reads the routes only

    app = create_app({"DATABASE_URL": "sqlite://"})
    seen = {p.path for p in NAMED if p.role in (None, "board")}
    pages = list(NAMED)
    for rule in sorted(app.url_map.iter_rules(), key=lambda rule: rule.rule):
        if not rule.endpoint.startswith("web.") or rule.endpoint in NOT_PAGES:
            continue
        if "GET" not in (rule.methods or ()) or rule.rule.endswith(".csv"):
            continue
        unknown = set(rule.arguments) - set(ARGUMENTS)
        if unknown:
            raise LookupError(f"{rule.rule}: nothing stands for {sorted(unknown)} in ARGUMENTS")
        path = re.sub(r"<(?:[^:>]+:)?(\w+)>", r"{\1}", rule.rule)
        if path not in seen:
            seen.add(path)
            act_form = re.fullmatch(r"/plans/\{plan_id\}/[a-z-]+", path) is not None
            pages.append(
                Page(
                    "board-" + re.sub(r"[^a-z]+", "-", path.replace("_id", "")).strip("-"),
                    "board",
                    path,
                    status=None if act_form else 200,
                )
            )
    return pages


PAGES = _every_page()


def _axe_source() -> str:
    if AXE.is_file():
        return AXE.read_text(encoding="utf-8")
    message = f"axe-core is not installed at {AXE} (npm ci --prefix tests/browser)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: the accessibility tests must run)", pytrace=False)
    pytest.skip(message)


@pytest.fixture(scope="module")
def axe_source() -> str:
    return _axe_source()


@pytest.fixture(scope="module")
def sessions(browser: Any, world: World) -> dict[str, Any]:
    """Each role's signed-in cookies, signed in once through the form as a person would; and
    the plan's notice of decision mailed, so that its page exists."""
    plan = world.api.ok("GET", f"/plans/{world.plan_id}", status=200, token=world.bank.board)
    world.api.ok(
        "POST",
        f"/plans/{world.plan_id}/decision-notice",
        harness.mailing(harness.days_ago(0), plan),
        token=world.bank.board,
    )
    tokens = {
        "board": world.bank.board,
        "lgu": world.bank.lgu_token,
        "holder": world.bank.holder_token,
    }
    states: dict[str, Any] = {}
    for role, token in tokens.items():
        context = browser.new_context()
        try:
            tab = context.new_page()
            tab.goto(f"{world.base}/sign-in?next={quote('/')}")
            tab.get_by_label("API token").fill(token)
            with tab.expect_navigation():
                tab.get_by_role("button", name="Sign in").click()
            assert urlsplit(tab.url).path == "/", (role, tab.url, tab.locator("main").inner_text())
            states[role] = context.storage_state()
        finally:
            context.close()
    return states


@pytest.fixture(scope="module")
def addresses(world: World, sessions: dict[str, Any]) -> dict[str, str]:
    """What stands for each of ``ARGUMENTS``: the ``World``'s parties, account and plan (and
    the plan's withdrawal, payment and notice of decision, which ``sessions`` mailed), and an
    account's first act."""
    plan = world.api.ok("GET", f"/plans/{world.plan_id}", status=200, token=world.bank.board)
    return {
        "account_id": world.account,
        "plan_id": world.plan_id,
        "holder_id": world.bank.holder_id,
        "lgu_id": world.bank.lgu_id,
        "site_id": world.bank.site_id,
        "withdrawal_id": str(plan["withdrawals"][0]["id"]),
        "payment_id": world.payment_id,
        "notice_id": str(plan["decision_notice"]["id"]),
        "act": "freeze",
    }


@pytest.fixture(scope="module")
def tabs(browser: Any, world: World, sessions: dict[str, Any]) -> Iterator[dict[Any, Any]]:
    """One tab per role and width, kept for the module (so for one database's ``world``, signed
    in with its ``sessions``): a page is a plain GET, so the next one is opened in the same tab
    (a browser context and a tab cost more than most page loads)."""
    opened: dict[Any, Any] = {}
    yield opened
    for context, _tab in opened.values():
        context.close()


@pytest.fixture
def visit(
    browser: Any,
    world: World,
    sessions: dict[str, Any],
    addresses: dict[str, str],
    tabs: dict[Any, Any],
) -> Any:
    """Open a ``Page`` as its role at a viewport size; give back the tab."""

    def new_tab(role: str | None, viewport: dict[str, int]) -> Any:
        options: dict[str, Any] = {"viewport": viewport}
        if viewport == PHONE:
            options.update(is_mobile=True, has_touch=True, device_scale_factor=2)
        if role in sessions:
            options["storage_state"] = sessions[role]
        elif role == "api-board":
            options["extra_http_headers"] = {"Authorization": f"Bearer {world.bank.board}"}
        context = browser.new_context(**options)
        context.set_default_timeout(15_000)
        return context, context.new_page()

    def open_page(spec: Page, viewport: dict[str, int]) -> Any:
        key = (spec.role, viewport["width"])
        if key not in tabs:
            tabs[key] = new_tab(spec.role, viewport)
        context, tab = tabs[key]
        path = spec.path.format(**addresses)
        try:
            response = tab.goto(world.base + path)
            tab.wait_for_selector(spec.ready)
        except Exception:
            # a tab that failed to load a page is not trusted with the next one
            del tabs[key]
            context.close()
            raise
        assert response is not None, path
        if spec.status is None and response.status in (409, 422):
            # the act is not open on the world's plan: the page says why, with no form
            assert tab.locator("#form-problem").count() == 1, path
            assert tab.locator("form#record-form").count() == 0, path
        else:
            assert response.status == (spec.status or 200), (path, response)
        return tab

    return open_page


def _run_axe(tab: Any, source: str) -> list[dict[str, Any]]:
    """axe's violations on the tab, evaluated outside the page's Content-Security-Policy."""
    if not tab.evaluate("typeof window.axe === 'object'"):
        tab.evaluate(f"() => {{ {source}\n}}")
    found: list[dict[str, Any]] = tab.evaluate(
        "async () => (await window.axe.run(document, {resultTypes: ['violations']})).violations"
    )
    return found


def _described(violations: list[dict[str, Any]]) -> str:
    lines = []
    for violation in violations:
        lines.append(f"{violation['id']} ({violation['impact']}): {violation['help']}")
        for node in violation["nodes"][:8]:
            lines.append(f"    {node['target']}: {node.get('failureSummary', '')!r}")
    return "\n".join(lines)


def _overflowing_tables(tab: Any, boxes_may_scroll: bool) -> list[str]:
    """Tables wider than the box they sit in, unless that box scrolls sideways and may."""
    result: list[str] = tab.evaluate(
        """(boxesMayScroll) => {
          const wide = [];
          for (const table of document.querySelectorAll('main table')) {
            let box = table.parentElement;
            let scrolls = false;
            for (let up = box; up && up !== document.body; up = up.parentElement) {
              const overflow = getComputedStyle(up).overflowX;
              if (overflow === 'auto' || overflow === 'scroll') { scrolls = true; break; }
            }
            const width = table.getBoundingClientRect().width;
            if ((!scrolls || !boxesMayScroll) && width > box.clientWidth + 1) {
              wide.push((table.id || table.className || 'table') +
                ` is ${Math.round(width)} px` +
                ` in a ${box.clientWidth} px box`);
            }
          }
          return wide;
        }""",
        boxes_may_scroll,
    )
    return result


def _page_width(tab: Any) -> tuple[int, int]:
    width, inner = tab.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    return int(width), int(inner)


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_the_page_fits_a_desktop_without_any_box_scrolling_sideways(spec: Page, visit: Any) -> None:
    """axe runs at the phone's width only (below): the stylesheet's narrow-screen rules change
    sizes, never what is shown, and the one serious rule that depends on the width
    (``scrollable-region-focusable``) can only fire where a box scrolls, which no box does here."""
    tab = visit(spec, DESKTOP)
    # at a desktop's width nothing needs to scroll sideways at all, not even inside a box
    width, inner = _page_width(tab)
    assert width <= inner, f"{spec.path} is {width} px wide at {inner} px"
    assert not _overflowing_tables(tab, boxes_may_scroll=False)


@pytest.mark.parametrize("spec", PAGES, ids=[p.name for p in PAGES])
def test_the_page_fits_a_phone_without_scrolling_sideways(
    spec: Page, visit: Any, world: World, axe_source: str
) -> None:
    tab = visit(spec, PHONE)
    if world.backend == BACKENDS[0]:  # the pages' markup is the same on either database
        world.shot(tab, f"phone-{spec.name}")
    # a phone lays out a page wider than its screen at a smaller scale (and widens the window to
    # match), so the window must still be the phone's width, and the page no wider
    width, inner = _page_width(tab)
    assert inner == PHONE["width"], f"{spec.path} widened a {PHONE['width']} px phone to {inner}"
    assert width <= inner, f"{spec.path} is {width} px wide at {inner} px"
    assert not _overflowing_tables(tab, boxes_may_scroll=True)
    violations = [v for v in _run_axe(tab, axe_source) if v["impact"] in FAILING]
    assert not violations, f"{spec.path} at 390 px:\n{_described(violations)}"
