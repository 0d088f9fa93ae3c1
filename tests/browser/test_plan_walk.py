"""Issue #26 in a real browser: a plan from receipt to withdrawal through the pages' forms only.

The board's setup (parties, tokens, a bank site and a funded account) goes through the API; then
each role signs in through the sign-in page, in a browser context of its own, and only the
browser is used: the LGU records the plan and mails its notice, the holder reserves credits for
it, the LGU records the decision and its notice and withdraws the credits once the appeal window
has closed, and the board finds the withdrawal in the journal with the chain verified.

The server runs in another process, whose clock a test cannot move: the plan's dates lie in the
past instead, far enough that every window the statute opens has closed by today.  The impact is
below the small-impact threshold (no comment period), and the application was received less than
60 days ago, so until it is decided the plan is not deemed approved (Minn. Stat. 15.99).

A screenshot of each step is kept as ``tests/artifacts/walk-<db>-<nn>-<step>.png``.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import pytest

from tests.browser.conftest import ARTIFACTS, _require_chromium
from tests.dbs import BACKENDS, create_database, drop_database, migrate
from tests.system import harness

FUNDED = 40_000
IMPACT = 6_000  # below the 10,000 sq ft threshold: no comment period (Subd. 8)
REQUIRED = 2 * IMPACT  # at a 2:1 replacement ratio
#: days before today: received, notice of application, decision, notice of decision (whose
#: 15-day appeal window, even moved past a long holiday weekend, closed well before today)
RECEIVED, NOTICED, DECIDED, DECISION_NOTICED = 40, 38, 30, 28
TEP = (
    ("Ann Board", "520 Lafayette Rd N, St. Paul, MN"),
    ("Sam Swcd", "311 Brighton Ave S, Marshall, MN"),
    ("Lee Lgu", "10 2nd St NW, Marshall, MN"),
    ("Commissioner of natural resources", "500 Lafayette Rd, St. Paul, MN"),
)
#: what a page must never show a person: a traceback, or a refusal's bare code
NEVER_SHOWN = ("Traceback", "insufficient_credits", "validation_failed", "Internal Server Error")


@dataclass
class Walk:
    """A live server, the bank seeded in it, and where this run's screenshots go."""

    backend: str
    base: str
    bank: harness.Bank
    account: str
    api: harness.Client
    step: int = 0

    def shot(self, page: Any, name: str) -> None:
        """The next step's full-page screenshot."""
        self.step += 1
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"walk-{self.backend}-{self.step:02d}-{name}.png"
        page.screenshot(path=str(path), full_page=True)


@pytest.fixture(scope="module", params=BACKENDS)
def walk(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Walk]:
    _require_chromium()
    backend = str(request.param)
    folder = tmp_path_factory.mktemp(f"walk-{backend}")
    url = create_database(backend, folder)
    migrate(url)
    server = harness.Server(url, workers=2, log_path=folder / "server.log")
    try:
        server.start()
        with harness.Client(server.port) as api:
            # the board's setup: an LGU, a holder, their tokens, a site, one funded account
            bank = harness.seed(api, url, [FUNDED])
            base = f"http://{harness.HOST}:{server.port}"
            yield Walk(backend, base, bank, bank.accounts[0], api)
    finally:
        server.stop()
        drop_database(url)


@pytest.fixture
def person(browser: Any) -> Iterator[Any]:
    """``person(token, path)``: a new browser context signed in with ``token``, on ``path``."""
    contexts: list[Any] = []

    def open_as(walk: Walk, token: str, path: str) -> Any:
        context = browser.new_context(viewport={"width": 1280, "height": 900})
        context.set_default_timeout(15_000)
        contexts.append(context)
        page = context.new_page()
        page.goto(f"{walk.base}/sign-in?next={quote(path)}")
        page.get_by_label("API token").fill(token)
        with page.expect_navigation():
            page.get_by_role("button", name="Sign in").click()
        assert urlsplit(page.url).path == urlsplit(path).path, page.url
        return page

    yield open_as
    for context in contexts:
        context.close()


def submit(page: Any, button: str) -> None:
    """Click the form's button and wait for the page it leads to."""
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()


def shown(page: Any) -> str:
    text = str(page.locator("main").inner_text())
    content = str(page.content())
    for bare in NEVER_SHOWN:
        assert bare not in content, bare
    return text


def confirmed(page: Any, sentence: str) -> None:
    assert sentence in page.locator("body").inner_text(), page.url


# --- the walk ----------------------------------------------------------------------------------


def record_plan(page: Any, walk: Walk, project: str) -> str:
    page.get_by_role("link", name="Record a plan application").click()
    page.wait_for_url(f"{walk.base}/plans/new")
    page.locator("#f-applicant").fill("Prairie Farms LLC")
    page.locator("#f-project").fill(project)
    page.locator("#f-location").fill("Section 14, Township 112 N, Lyon County")
    page.locator("#f-received_on").fill(harness.days_ago(RECEIVED))
    page.locator("#f-impact-area_sqft").fill(f"{IMPACT:,}")
    page.locator("#f-impact-wetland_type").select_option("2")
    page.locator("#f-impact-service_area").fill("5")
    page.locator("#f-impact-county").fill("Lyon")
    page.locator("#f-replacement_ratio").fill("2")
    page.locator("#f-method").select_option("bank_credits")
    walk.shot(page, "lgu-plan-form")
    submit(page, "Record the plan")
    path = str(urlsplit(page.url).path)
    assert path.startswith("/plans/plan_"), page.url
    return path.rsplit("/", 1)[1]


def mail_notice(page: Any, walk: Walk, link: str, days: int, button: str) -> None:
    """A notice form: the panel and the commissioner named, the applicant's row (if any)
    prefilled by the plan and given an address."""
    page.get_by_role("link", name=link).click()
    page.locator("#f-mailed_on").fill(harness.days_ago(days))
    for i, (name, address) in enumerate(TEP):
        page.locator(f"#f-recipients-{i}-name").fill(name)
        page.locator(f"#f-recipients-{i}-address").fill(address)
    applicant = page.locator(f"#f-recipients-{len(TEP)}-role")
    if applicant.input_value() == "applicant":
        assert page.locator(f"#f-recipients-{len(TEP)}-name").input_value() == "Prairie Farms LLC"
        page.locator(f"#f-recipients-{len(TEP)}-address").fill("1 Main St, Marshall, MN")
    walk.shot(page, "lgu-" + link.lower().replace(" ", "-"))
    submit(page, button)


def status_of(page: Any) -> str:
    return str(page.locator("#plan-status").inner_text()).strip()


def test_a_plan_walks_from_receipt_to_withdrawal_in_the_browser(walk: Walk, person: Any) -> None:
    project = harness.unique("Marsh Road culvert")

    # the LGU records the plan, from its home
    lgu = person(walk, walk.bank.lgu_token, "/")
    plan_id = record_plan(lgu, walk, project)
    confirmed(lgu, "The plan was recorded.")
    assert project in shown(lgu)
    assert status_of(lgu) == "received"
    walk.shot(lgu, "lgu-plan-recorded")

    # ... and mails the notice of application (Subd. 6)
    mail_notice(lgu, walk, "Mail the notice of application", NOTICED, "Record the notice")
    confirmed(lgu, "The notice of application was recorded.")
    assert status_of(lgu) == "noticed"
    walk.shot(lgu, "lgu-noticed")

    # the holder reserves credits for it from its account page
    holder = person(walk, walk.bank.holder_token, f"/accounts/{walk.account}")
    holder.get_by_role("link", name="Reserve credits for a plan").click()
    holder.locator("#f-plan_id").select_option(plan_id)
    holder.locator("#f-credit_class").select_option(harness.CREDIT_CLASS)
    holder.locator("#f-amount_sqft").fill(str(REQUIRED))
    holder.locator("#f-expires_on").fill(harness.days_ago(-365))
    walk.shot(holder, "holder-reserve-form")
    submit(holder, "Reserve the credits")
    confirmed(holder, "The credits were reserved.")
    held = holder.locator("#account-reservations tbody tr", has_text=project)
    assert held.count() == 1
    assert held.get_attribute("data-status") == "pending"
    assert f"{REQUIRED:,}" in held.inner_text()
    walk.shot(holder, "holder-reserved")

    # the LGU sees the reservation on the plan, and records the decision
    lgu.reload()
    reservation = lgu.locator("#reservations tbody tr")
    assert reservation.count() == 1 and "pending" in reservation.inner_text()
    lgu.get_by_role("link", name="Record the decision").click()
    lgu.locator("#f-outcome").select_option("approved")
    lgu.locator("#f-decided_on").fill(harness.days_ago(DECIDED))
    lgu.locator("#f-resolution-number").fill("2026-41")
    lgu.locator("#f-resolution-adopted_on").fill(harness.days_ago(DECIDED))
    walk.shot(lgu, "lgu-decision-form")
    submit(lgu, "Record the decision")
    confirmed(lgu, "The decision was recorded.")
    assert status_of(lgu) == "approved"
    assert lgu.locator("#decision-resolution").inner_text().startswith("No. 2026-41")
    walk.shot(lgu, "lgu-decided")

    # ... and its notice (Subd. 7), whose 15-day appeal window has long closed
    mail_notice(lgu, walk, "Mail the notice of decision", DECISION_NOTICED, "Record the notice")
    confirmed(lgu, "The notice of decision was recorded.")
    assert status_of(lgu) == "final (approved)"
    walk.shot(lgu, "lgu-decision-noticed")

    # ... then withdraws the reserved credits
    lgu.get_by_role("link", name="Withdraw the reserved credits").click()
    chosen = lgu.locator('input[name="reservation_ids"]')
    assert chosen.count() == 1 and chosen.is_checked()
    walk.shot(lgu, "lgu-withdrawal-form")
    submit(lgu, "Withdraw the credits")
    confirmed(lgu, "The credits were withdrawn.")
    withdrawal = lgu.locator("table.withdrawal")
    assert withdrawal.count() == 1
    assert f"{REQUIRED:,} sq ft" in withdrawal.locator("caption").inner_text()
    assert "posted" in lgu.locator("#reservations tbody tr").inner_text()  # drawn on
    walk.shot(lgu, "lgu-withdrawn")

    # the board finds the withdrawal in the journal, the chain verified
    board = person(walk, walk.bank.board, "/audit")
    assert board.locator("#verify-result").get_attribute("data-ok") == "true"
    assert board.locator("#verify-result").inner_text().startswith("Intact:")
    shown(board)
    row = board.locator("#journal tbody tr", has_text=f"withdrawal for plan {plan_id}")
    assert row.count() == 1
    assert row.locator("td").nth(2).inner_text().startswith("withdrawal")
    walk.shot(board, "board-audit")

    # what the pages said is what the bank holds
    plan = walk.api.ok("GET", f"/plans/{plan_id}", status=200, token=walk.bank.board)
    assert plan["status"] == "final" and len(plan["withdrawals"]) == 1
    assert plan["withdrawals"][0]["withdrawn_sqft"] == REQUIRED
    left = harness.posted(walk.api, walk.account, walk.bank.board)
    assert left == FUNDED - REQUIRED


# --- a form sent twice, a form refused ---------------------------------------------------------


def test_a_form_sent_twice_writes_once(walk: Walk, person: Any) -> None:
    plan = harness.approved_plan(walk.api, walk.bank, area_sqft=1_000)
    before = harness.available(walk.api, walk.account, walk.bank.board)
    holder = person(walk, walk.bank.holder_token, f"/accounts/{walk.account}/reservations/new")
    holder.locator("#f-plan_id").select_option(plan["id"])
    holder.locator("#f-credit_class").select_option(harness.CREDIT_CLASS)
    holder.locator("#f-amount_sqft").fill("700")
    holder.locator("#f-expires_on").fill(harness.days_ago(-30))

    # the form as it stands, its hidden key with it, sent twice more by the same browser (its
    # session cookie, its Origin) as a resubmission sends it, then by the button itself
    fields = dict(
        holder.evaluate("() => [...new FormData(document.querySelector('#record-form'))]")
    )
    assert fields["idempotency_key"]
    action = holder.locator("#record-form").get_attribute("action")
    answers = [
        holder.request.post(
            walk.base + action, form=fields, headers={"Origin": walk.base}, max_redirects=0
        )
        for _ in range(2)
    ]
    assert [a.status for a in answers] == [303, 303]
    assert answers[0].headers["location"] == answers[1].headers["location"]
    submit(holder, "Reserve the credits")
    confirmed(holder, "The credits were reserved.")

    rows = holder.locator("#account-reservations tbody tr", has_text=plan["project"])
    assert rows.count() == 1
    walk.shot(holder, "sent-twice")
    held = walk.api.ok("GET", f"/plans/{plan['id']}", status=200, token=walk.bank.board)
    assert len(held["reservations"]) == 1
    assert harness.available(walk.api, walk.account, walk.bank.board) == before - 700


def test_a_refused_reservation_shows_the_sentence(walk: Walk, person: Any) -> None:
    plan = harness.approved_plan(walk.api, walk.bank, area_sqft=1_000)
    available = harness.available(walk.api, walk.account, walk.bank.board)
    holder = person(walk, walk.bank.holder_token, f"/accounts/{walk.account}/reservations/new")
    holder.locator("#f-plan_id").select_option(plan["id"])
    holder.locator("#f-credit_class").select_option(harness.CREDIT_CLASS)
    holder.locator("#f-amount_sqft").fill(str(available + 1))
    holder.locator("#f-expires_on").fill(harness.days_ago(-30))
    submit(holder, "Reserve the credits")

    problem = holder.locator("#form-problem")
    assert problem.inner_text().strip() == f"Only {available:,} sq ft available."
    assert holder.locator("#f-amount_sqft").input_value() == str(available + 1)  # kept
    shown(holder)
    walk.shot(holder, "refused-reservation")
    assert harness.available(walk.api, walk.account, walk.bank.board) == available


def test_a_refused_decision_shows_the_sentence_beside_its_field(walk: Walk, person: Any) -> None:
    body = harness.plan_body(walk.bank.lgu_id, 1_000, harness.days_ago(10))
    plan = walk.api.ok("POST", "/plans", body, token=walk.bank.board)
    walk.api.ok(
        "POST",
        f"/plans/{plan['id']}/notices",
        harness.mailing(harness.days_ago(9)),
        token=walk.bank.board,
    )
    lgu = person(walk, walk.bank.lgu_token, f"/plans/{plan['id']}/decision")
    lgu.locator("#f-outcome").select_option("approved")
    lgu.locator("#f-decided_on").fill(harness.days_ago(5))
    lgu.locator("#f-resolution-number").fill("2026-7")
    lgu.locator("#f-resolution-adopted_on").fill(harness.days_ago(3))  # after the decision
    submit(lgu, "Record the decision")

    beside = lgu.locator("#f-resolution-adopted_on-error")
    assert beside.inner_text() == f"After decided_on {harness.days_ago(5)}."
    field = lgu.locator("#f-resolution-adopted_on")
    assert field.get_attribute("aria-invalid") == "true"
    assert "f-resolution-adopted_on-error" in field.get_attribute("aria-describedby")
    assert "adopted on or before decided_on" in lgu.locator("#form-problem").inner_text()
    shown(lgu)
    walk.shot(lgu, "refused-decision")
    again = walk.api.ok("GET", f"/plans/{plan['id']}", status=200, token=walk.bank.board)
    assert again["decision"] is None
