"""The printable documents (issue #26): a withdrawal's certificate for the LGU's file, an
account's statement for a period, and the links that lead to them and to the board's forms.

The world is built through the API; the pages are read with a signed-in browser (Flask's test
client keeping cookies) and compared with the API's answers and the ledger's hash chain.
"""

from __future__ import annotations

import base64
import hashlib
import re
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from bank import documents
from bank.deposit_tables import Deposit
from ledger import sealer
from ledger.schema import LedgerChainLink
from tests.api.conftest import Api
from tests.api.kit import Kit, decision_body, mailing, ok, on, recipients_for
from tests.api.test_appeals import grant, petition, rule
from tests.api.test_plan_notices import (
    RIGHT_MARGIN,
    noticed_and_decided,
    pdf_words,
    require_poppler,
)
from tests.api.web_kit import Element, number, parse, signed_in

DAY = "2026-06-08"


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


@pytest.fixture
def world(kit: Kit) -> dict[str, Any]:
    """A plan of 9,000 sq ft at 2:1 that withdrew 9,000 sq ft of unrestricted credits (the first
    1:1) and 9,000 sq ft of restricted credits (above 1:1) from one bank account."""
    return withdrawn(kit)


def withdrawn(kit: Kit, **plan_fields: Any) -> dict[str, Any]:
    """``world``'s plan and withdrawal, the plan with ``plan_fields`` (``applicant``...)."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000, restricted=9_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2", **plan_fields)
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000)
        withdrawal = ok(
            kit.api.post(
                f"/plans/{plan['id']}/withdrawals",
                {"reservation_ids": [u["id"], r["id"]]},
                token=lgu["token"],
            )
        )
    return {"lgu": lgu, "bank": bank, "plan": plan, "withdrawal": withdrawal}


def html(response: Any, status: int = 200) -> Element:
    assert response.status_code == status, response.get_data(as_text=True)[:2000]
    assert response.mimetype == "text/html"
    return parse(response.get_data(as_text=True))


def certificate_path(world: dict[str, Any]) -> str:
    plan_id, withdrawal_id = world["plan"]["id"], world["withdrawal"]["id"]
    return f"/plans/{plan_id}/withdrawals/{withdrawal_id}/certificate"


def field(document: Element, name: str) -> str:
    return document.one(data_field=name).text


def pdf_text(body: bytes) -> str:
    """The text a PDF shows, its wrapped lines joined by spaces again (``api.pdf.render``)."""
    shown = re.findall(rb"\(((?:[^\\)]|\\.)*)\) Tj", body)
    return " ".join(re.sub(r"\\(.)", r"\1", part.decode("latin-1")) for part in shown)


# --- the certificate of a withdrawal ------------------------------------------------------------


def test_the_certificate_shows_the_credits_by_class_and_lot_and_the_chain_link(
    app: Flask, kit: Kit, world
) -> None:
    db = app.extensions["wetbank.db"]
    sealer.seal_all(db)
    withdrawal, bank = world["withdrawal"], world["bank"]
    with db.transaction() as session:
        link = session.execute(
            select(LedgerChainLink).where(
                LedgerChainLink.transaction_id == int(withdrawal["transaction_id"])
            )
        ).scalar_one()
    number_of = kit.account_body(bank["id"])["number"]
    label_of = {lot["id"]: lot["label"] for lot in kit.lots(bank["id"])}
    client = signed_in(app.test_client(), world["lgu"]["token"])
    document = html(client.get(f"/plans/{world['plan']['id']}"))
    links = document.all("a", class_="certificate-link")
    assert [a.attrs["data-withdrawal-id"] for a in links] == [withdrawal["id"]]

    cert = html(client.get(links[0].attrs["href"]))

    assert field(cert, "project") == world["plan"]["project"]
    assert field(cert, "applicant") == world["plan"]["applicant"]
    assert field(cert, "decision").startswith(f"Approved {DAY} by resolution ")
    shown = {
        table.attrs["data-credit-class"]: [
            (
                row.attrs["data-lot"],
                row.attrs["data-portion"],
                number(row.one("td", data_field="amount_sqft").text),
            )
            for row in table.one("tbody").all("tr")
        ]
        for table in cert.all("table", class_="certified-class")
    }
    expected: dict[str, list[tuple[str, str, int]]] = {}
    for a in withdrawal["allocations"]:
        lot = f"{number_of} lot {label_of[a['lot_id']]}"
        expected.setdefault(a["credit_class"], []).append((lot, a["portion"], a["amount_sqft"]))
    assert shown == expected
    assert shown == {
        bank["unrestricted_class"]: [(f"{number_of} lot A", "first_1_to_1", 9_000)],
        bank["restricted_class"]: [(f"{number_of} lot B", "above_1_to_1", 9_000)],
    }
    assert number(field(cert, "first_1_to_1_sqft")) == 9_000
    assert number(field(cert, "above_1_to_1_sqft")) == 9_000
    assert field(cert, "transaction_id") == withdrawal["transaction_id"]
    assert field(cert, "transaction_on").startswith(DAY)
    assert field(cert, "chain_seq").startswith(f"{link.seq},")
    assert field(cert, "chain_hash") == link.hash
    assert field(cert, "chain_prev_hash") == link.prev_hash


def test_the_certificate_is_offered_as_pdf(app: Flask, world) -> None:
    sealer.seal_all(app.extensions["wetbank.db"])
    client = signed_in(app.test_client(), world["lgu"]["token"])
    page = html(client.get(certificate_path(world)))

    response = client.get(page.one("a", id="certificate-pdf").attrs["href"])

    assert response.status_code == 200 and response.mimetype == "application/pdf"
    body = response.get_data()
    assert body.startswith(b"%PDF-1.4") and body.rstrip().endswith(b"%%EOF")
    assert world["plan"]["project"].encode() in body
    assert f"Transaction {world['withdrawal']['transaction_id']}".encode() in body
    assert b"Hash-chain link" in body and b"sealing pending" not in body


def test_the_certificate_pdf_breaks_a_word_wider_than_the_line_and_shows_accents_it_lacks_plainly(
    app: Flask, kit: Kit, tmp_path
) -> None:
    # a project named by one 124-character reference is broken where the line is full, never
    # run off the page; the applicant's "ặ", "ị" and "ư" are not in the PDF's fonts: the PDF
    # prints "Dang Thi Huong" and says so, the page shows the name as written
    require_poppler()
    project = "WCA/" + "0123456789" * 12
    world = withdrawn(kit, applicant="Đặng Thị Hương", project=project)
    client = signed_in(app.test_client(), world["lgu"]["token"])

    page = client.get(certificate_path(world)).get_data(as_text=True)
    response = client.get(f"{certificate_path(world)}?format=pdf")

    assert (response.status_code, response.mimetype) == (200, "application/pdf")
    words = pdf_words(response.data, tmp_path)
    assert project in "".join(word for word, _ in words)
    assert [word for word, right in words if right > RIGHT_MARGIN + 0.01] == []
    text = " ".join(word for word, _ in words)
    assert "Applicant: Dang Thi Huong" in text and "?" not in text
    assert "shown without some accents" in text
    assert "Đặng Thị Hương" in page


def test_a_link_the_sealer_has_not_written_yet_is_pending(
    app: Flask, world, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(documents, "chain_link", lambda _session, _tx: None)
    client = signed_in(app.test_client(), world["lgu"]["token"])

    cert = html(client.get(certificate_path(world)))

    assert field(cert, "chain_seq").startswith("Sealing pending")
    assert not cert.has(data_field="chain_hash")


def test_the_certificate_is_refused_to_another_lgu_and_to_holders(
    app: Flask, kit: Kit, world, board_token: str
) -> None:
    path = certificate_path(world)
    for token in (kit.lgu()["token"], world["bank"]["holder"]["token"]):
        client = signed_in(app.test_client(), token)
        for url in (path, f"{path}?format=pdf"):
            refused = client.get(url)
            assert refused.status_code == 404, url
            assert world["plan"]["project"] not in refused.get_data(as_text=True)
    board = signed_in(app.test_client(), board_token)
    assert board.get(path).status_code == 200
    with on(DAY):
        other = kit.approved_plan(world["lgu"], DAY, area_sqft=1_000, ratio="1")
    elsewhere = f"/plans/{other['id']}/withdrawals/{world['withdrawal']['id']}/certificate"
    assert board.get(elsewhere).status_code == 404


def appealed_withdrawal(kit: Kit, lgu: dict[str, str], outcome: str) -> dict[str, Any]:
    """A plan the LGU decides (``outcome``) on 2026-11-20, an approval by resolution R-1, and
    whose notice of decision it mails that day; a petition received 12-02 and granted 12-03
    with its fee recorded.  An approval has its credits withdrawn on 11-20 already; a denial
    waits for the board (``approved_on_appeal``)."""
    with on("2026-11-13"):
        bank = kit.funded_account(day="2026-11-13", service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on="2026-11-13", area_sqft=9_000)
        kit.mail_summary(lgu, plan, "2026-11-13")
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    extra = {"resolution": {"number": "R-1", "adopted_on": "2026-11-20"}}
    body = decision_body(outcome, "2026-11-20", **(extra if outcome == "approved" else {}))
    path = f"/plans/{plan['id']}"
    withdrawal = None
    with on("2026-11-20"):
        ok(kit.api.post(f"{path}/decision", body, token=lgu["token"]))
        ok(kit.api.post(f"{path}/decision-notice", mailing("2026-11-20", plan=plan)))
        if outcome == "approved":
            taken = {"reservation_ids": [reservation["id"]]}
            withdrawal = ok(kit.api.post(f"{path}/withdrawals", taken, token=lgu["token"]))
    appeal = ok(petition(kit, plan, postmarked="2026-12-01", received="2026-12-02"))
    ok(grant(kit, appeal, "2026-12-03"))
    return {"plan": plan, "appeal": appeal, "withdrawal": withdrawal, "reservation": reservation}


@pytest.mark.parametrize(
    ("ruling", "words"),
    [
        (
            "plan_reversed",
            "Approved 2026-11-20 by resolution R-1; "
            "reversed by the board on appeal 2026-12-06, so denied; the plan is final",
        ),
        (
            "plan_upheld",
            "Approved 2026-11-20 by resolution R-1; "
            "upheld by the board on appeal 2026-12-06; the plan is final",
        ),
    ],
)
def test_the_certificate_states_the_lgus_decision_and_the_boards_ruling_on_appeal(
    app: Flask, kit: Kit, ruling: str, words: str
) -> None:
    """The LGU approved on 2026-11-20 by resolution R-1; the board ruled on appeal on 12-06:
    the certificate (page and PDF) says both, each with its own day, never the outcome after
    the appeal with the LGU's day and resolution.  Read on 12-08, the appeal window closed."""
    lgu = kit.lgu()
    world = appealed_withdrawal(kit, lgu, "approved")
    ok(rule(kit, world["appeal"], "2026-12-06", ruling))
    with on("2026-12-08"):
        client = signed_in(app.test_client(), lgu["token"])
        cert = html(client.get(certificate_path(world)))
        body = client.get(cert.one("a", id="certificate-pdf").attrs["href"]).get_data()
    assert field(cert, "decision") == words
    assert f"Decision: {words} " in pdf_text(body)


def test_a_denial_reversed_on_appeal_is_certified_as_the_lgus_denial_the_board_reversed(
    app: Flask, kit: Kit
) -> None:
    """The LGU denied on 2026-11-20; the board reversed on 12-06 and the credits were withdrawn
    under the approval that made: the certificate says the LGU denied and the board reversed."""
    lgu = kit.lgu()
    world = appealed_withdrawal(kit, lgu, "denied")
    ok(rule(kit, world["appeal"], "2026-12-06", "plan_reversed"))
    plan_id = world["plan"]["id"]
    with on("2026-12-08"):
        taken = {"reservation_ids": [world["reservation"]["id"]]}
        world["withdrawal"] = ok(
            kit.api.post(f"/plans/{plan_id}/withdrawals", taken, token=lgu["token"])
        )
        cert = html(signed_in(app.test_client(), lgu["token"]).get(certificate_path(world)))
    assert field(cert, "decision") == (
        "Denied 2026-11-20; reversed by the board on appeal 2026-12-06, so approved; "
        "the plan is final"
    )


def test_a_deemed_approval_reversed_on_appeal_is_certified_as_deemed_then_reversed(
    app: Flask, kit: Kit
) -> None:
    """Not decided by its deadline, the plan was deemed approved and its credits withdrawn on
    2026-08-10; the board reversed it on 09-30: the certificate says so, not "Denied"."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        bank = kit.funded_account(day="2026-06-08", service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-08-10"):
        taken = {"reservation_ids": [reservation["id"]]}
        path = f"/plans/{plan['id']}/withdrawals"
        withdrawal = ok(kit.api.post(path, taken, token=lgu["token"]))
    owner = {"kind": "owner", "residents": None}
    appeal = ok(petition(kit, plan, postmarked="2026-08-20", received="2026-08-21", **owner))
    ok(grant(kit, appeal, "2026-08-28"))
    ok(rule(kit, appeal, "2026-09-30", "plan_reversed"))
    with on("2026-10-01"):
        client = signed_in(app.test_client(), lgu["token"])
        cert = html(client.get(certificate_path({"plan": plan, "withdrawal": withdrawal})))
        body = client.get(cert.one("a", id="certificate-pdf").attrs["href"]).get_data()
    words = f"{DEEMED}; reversed by the board on appeal 2026-09-30, so denied"
    assert field(cert, "decision") == words
    assert f"Decision: {words} " in pdf_text(body)


#: received 2026-06-08 and not decided within 60 days (Minn. Stat. 15.99 subd. 2: by Friday
#: 2026-08-07), the plan was approved the next day
DEEMED = "Deemed approved 2026-08-08 (Minn. Stat. 15.99: not decided in time)"


def test_a_deemed_approval_is_certified_with_the_day_it_was_deemed(app: Flask, kit: Kit) -> None:
    """Page and PDF date the deemed approval as they date an LGU's own decision, in the same
    words: the day after the last day to decide."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        bank = kit.funded_account(day="2026-06-08", service_area=5, unrestricted=20_000)
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000)
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-08-07"):  # the last day to decide: not approved yet
        taken = {"reservation_ids": [reservation["id"]]}
        path = f"/plans/{plan['id']}/withdrawals"
        assert kit.api.post(path, taken, token=lgu["token"]).status_code == 409
    with on("2026-08-08"):
        withdrawal = ok(kit.api.post(path, taken, token=lgu["token"]))
        client = signed_in(app.test_client(), lgu["token"])
        cert = html(client.get(certificate_path({"plan": plan, "withdrawal": withdrawal})))
        body = client.get(cert.one("a", id="certificate-pdf").attrs["href"]).get_data()
    assert field(cert, "decision") == DEEMED
    assert f"Decision: {DEEMED} " in pdf_text(body)


# --- the notices as mailed ---------------------------------------------------------------------

#: the pages' Content-Security-Policy: no script, nothing from elsewhere, never framed
PAGE_POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
    "frame-ancestors 'none'; base-uri 'none'"
)


def notice_links(document: Element) -> dict[str, Element]:
    """The plan page's links to its notices' printable pages, by notice (``application``,
    ``decision``)."""
    return {a.attrs["data-notice"]: a for a in document.all("a", class_="notice-link")}


def test_the_plan_page_links_each_notice_as_mailed_to_its_printable_page(
    app: Flask, kit: Kit
) -> None:
    """The LGU opens the notice of application and of decision it mailed from the plan page:
    each prints what the API's document says, with the pages' security headers, and as PDF."""
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    with on("2026-07-28"):
        client = signed_in(app.test_client(), lgu["token"])
        plan_page = html(client.get(f"/plans/{plan['id']}"))
        links = notice_links(plan_page)
        assert set(links) == {"application", "decision"}
        for which, mailed in (("application", "June 22, 2026"), ("decision", "July 27, 2026")):
            response = client.get(links[which].attrs["href"])
            page = html(response)
            assert response.headers["Content-Security-Policy"] == PAGE_POLICY
            assert response.headers["X-Content-Type-Options"] == "nosniff"
            assert response.headers["Cache-Control"] == "no-store"
            api = kit.api.get(f"/plans/{plan['id']}/notices/{which}", token=lgu["token"])
            printed = parse(api.get_data(as_text=True))
            notice = page.one("article", id="notice")
            assert notice.one("h1").text == printed.one("h1").text
            assert notice.one(id="mailed-on").text == mailed == printed.one(id="mailed-on").text
            assert [s.text for s in notice.all("section")] == [
                s.text for s in printed.all("section")
            ]
            assert "Pat Public" in notice.one("ul", id="recipients").text
            pdf = client.get(page.one("a", id="notice-pdf").attrs["href"])
            assert (pdf.status_code, pdf.mimetype) == (200, "application/pdf")
            assert pdf.data.startswith(b"%PDF") and plan["applicant"].encode() in pdf.data
            assert pdf.headers["Cache-Control"] == "no-store"


def test_a_notice_not_mailed_has_no_link_and_no_page(app: Flask, kit: Kit) -> None:
    lgu = kit.lgu()
    with on(DAY):
        plan = kit.plan(lgu, received_on=DAY, area_sqft=9_000)
        client = signed_in(app.test_client(), lgu["token"])
        assert notice_links(html(client.get(f"/plans/{plan['id']}"))) == {}
        missing = client.get(f"/plans/{plan['id']}/notices/application")
        assert missing.status_code == 404
        mailed = mailing(DAY, plan=plan)
        ok(kit.api.post(f"/plans/{plan['id']}/notices", mailed, token=lgu["token"]))
        links = notice_links(html(client.get(f"/plans/{plan['id']}")))
        assert set(links) == {"application"}
        assert DAY in links["application"].text
        assert client.get(f"/plans/{plan['id']}/notices/decision").status_code == 404


def test_a_notice_page_is_refused_to_another_lgu_and_to_holders(
    app: Flask, kit: Kit, board_token: str
) -> None:
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    path = f"/plans/{plan['id']}/notices/decision"
    with on("2026-07-28"):
        for token in (kit.lgu()["token"], kit.holder()["token"]):
            client = signed_in(app.test_client(), token)
            for url in (path, f"{path}?format=pdf"):
                refused = client.get(url)
                assert refused.status_code == 404, url
                assert plan["applicant"] not in refused.get_data(as_text=True)
        board = signed_in(app.test_client(), board_token)
        assert html(board.get(path)).one("article", id="notice").has("ul", id="recipients")
        assert set(notice_links(html(board.get(f"/plans/{plan['id']}")))) == {
            "application",
            "decision",
        }


def test_after_a_revision_the_notices_of_the_earlier_application_are_still_linked(
    app: Flask, kit: Kit
) -> None:
    """A revision counting as new (Subd. 6 (c)) starts application 2 with no notice of its own
    yet: the notices mailed for application 1 are still the plan's, and say so."""
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    revision = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-08-12"}
    with on("2026-08-12"):
        path = f"/plans/{plan['id']}/revisions"
        assert ok(kit.api.post(path, revision, token=lgu["token"]))["application_number"] == 2
        client = signed_in(app.test_client(), lgu["token"])
        links = notice_links(html(client.get(f"/plans/{plan['id']}")))
    assert set(links) == {"application", "decision"}
    for link in links.values():
        assert "application 1" in link.text


def test_the_apis_notice_page_carries_a_policy_that_allows_only_its_own_style(kit: Kit) -> None:
    """The API's printable notice (a page a browser opens) allows no script, nothing from
    elsewhere, no framing: only its own inline stylesheet, named by its hash."""
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    with on("2026-07-28"):
        response = kit.api.get(
            f"/plans/{plan['id']}/notices/application", headers={"Accept": "text/html"}
        )
    assert response.status_code == 200 and response.mimetype == "text/html"
    policy = response.headers["Content-Security-Policy"]
    # the style element's text as the browser hashes it, whitespace and all
    (style,) = re.findall(r"<style>(.*?)</style>", response.get_data(as_text=True), re.S)
    digest = base64.b64encode(hashlib.sha256(style.encode()).digest()).decode()
    directives = dict(d.strip().split(" ", 1) for d in policy.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["style-src"] == f"'sha256-{digest}'"
    assert directives["frame-ancestors"] == "'none'"
    assert directives["base-uri"] == "'none'"
    assert "script-src" not in directives
    assert response.headers["X-Content-Type-Options"] == "nosniff"
    assert response.headers["Referrer-Policy"] == "same-origin"


# --- the statement of an account ----------------------------------------------------------------


def statement_parts(document: Element) -> dict[str, dict[str, Any]]:
    parts = {}
    for table in document.all("table", class_="statement-part"):
        entries = table.all("tr", class_="entry")
        parts[table.attrs["data-credit-class"]] = {
            "opening": number(table.one(data_field="opening_sqft").text),
            "amounts": [number(e.one(data_field="amount_sqft").text) for e in entries],
            "after": [number(e.one(data_field="balance_after_sqft").text) for e in entries],
            "closing": number(table.one(data_field="closing_sqft").text),
        }
    return parts


def test_the_statement_opening_and_its_entries_make_the_closing(
    app: Flask, kit: Kit, world
) -> None:
    account_id = world["bank"]["id"]
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])
    account = html(client.get(f"/accounts/{account_id}?from=2026-06-01&to=2026-06-30"))
    link = account.one("a", id="statement-print").attrs["href"]

    june = statement_parts(html(client.get(link)))
    after = statement_parts(
        html(client.get(f"/accounts/{account_id}/statement?start=2026-06-09&end=2026-12-31"))
    )

    api = ok(kit.api.get(f"/accounts/{account_id}/statement?from=2026-06-01&to=2026-06-30"), 200)
    assert set(june) == {c["credit_class"]["code"] for c in api["classes"]}
    for part in api["classes"]:
        shown = june[part["credit_class"]["code"]]
        assert shown["opening"] == part["opening_sqft"] == 0
        assert shown["amounts"] == [e["amount_sqft"] for e in part["entries"]]
        assert shown["closing"] == part["closing_sqft"]
        running = shown["opening"]
        for amount, balance in zip(shown["amounts"], shown["after"], strict=True):
            running += amount
            assert balance == running
        assert shown["opening"] + sum(shown["amounts"]) == shown["closing"]
        # the next period opens where this one closed
        assert after[part["credit_class"]["code"]]["opening"] == shown["closing"]
        assert after[part["credit_class"]["code"]]["amounts"] == []
    assert june[world["bank"]["unrestricted_class"]]["closing"] == 11_000
    assert june[world["bank"]["restricted_class"]]["closing"] == 0


def test_the_statement_names_the_plan_and_keeps_its_csv(app: Flask, world) -> None:
    account_id = world["bank"]["id"]
    client = signed_in(app.test_client(), world["bank"]["holder"]["token"])

    document = html(client.get(f"/accounts/{account_id}/statement?start=2026-06-01&end=2026-06-30"))
    csv = client.get(document.one("a", id="statement-csv").attrs["href"])

    descriptions = [row.all("td")[0].text for row in document.all("tr", class_="entry")]
    assert f"Withdrawal for plan {world['plan']['project']}" in descriptions
    assert csv.status_code == 200 and csv.mimetype == "text/csv"
    assert "2026-06-01-2026-06-30" in csv.headers["Content-Disposition"]


#: the ids the statement's rows must not print: the rows say what people know instead
RECORD_IDS = ("plan_", "dep_", "trf_", "wd_", "res_", "acct_", "site_", "lot_", "transfer:")


def statement_rows(document: Element) -> dict[str, Element]:
    """Each entry row of the account page's or the statement's tables, by its description."""
    rows = [
        row
        for row in document.all("tr")
        if "data-record-id" in row.attrs or "entry" in row.attrs.get("class", "")
    ]
    return {row.one("td", data_field="description").text: row for row in rows}


def test_the_statement_says_what_each_entry_was_and_links_what_the_reader_may_see(
    app: Flask, kit: Kit, world, board_token: str
) -> None:
    """Each row says what moved the credits (the deposit's site and banking plan, the other
    account of a transfer and its memo, the plan credits were withdrawn for), links the record
    the reader may open, and keeps the record's id in the row, not in the text."""
    bank, plan = world["bank"], world["plan"]
    own = kit.account(bank["holder"]["id"], 5, "Wright")
    stranger = kit.account(kit.holder("Stranger")["id"], 5, "Wright")
    numbers = {a: kit.account_body(a)["number"] for a in (bank["id"], own, stranger)}
    with on("2026-06-09"):
        moves = [
            ok(kit.api.post("/transfers", transfer(bank, own, 100, "to our other account"))),
            ok(kit.api.post("/transfers", transfer(bank, stranger, 200, None))),
        ]
    site = ok(kit.api.get(f"/bank-sites/{bank['site_id']}"), 200)["name"]
    with app.extensions["wetbank.db"].transaction() as session:
        reference = session.get(Deposit, bank["deposit"]["id"]).banking_plan_reference
    june = ("from=2026-06-01&to=2026-06-30", "start=2026-06-01&end=2026-06-30")
    holder = signed_in(app.test_client(), bank["holder"]["token"])
    board = signed_in(app.test_client(), board_token)
    for path in (
        f"/accounts/{bank['id']}?{june[0]}",
        f"/accounts/{bank['id']}/statement?{june[1]}",
    ):
        for client, sees_plans in ((holder, False), (board, True)):
            document = html(client.get(path))
            rows = statement_rows(document)
            deposit = f"Deposit from {site} under banking plan {reference}"
            to_own = f"Transfer to account {numbers[own]}: to our other account"
            to_stranger = f"Transfer to account {numbers[stranger]}"
            withdrawal = f"Withdrawal for plan {plan['project']}"
            assert {deposit, to_own, to_stranger, withdrawal} <= set(rows), (path, list(rows))
            assert rows[deposit].attrs["data-record-id"] == bank["deposit"]["id"]
            assert rows[to_own].attrs["data-record-id"] == moves[0]["id"]
            assert rows[to_stranger].attrs["data-record-id"] == moves[1]["id"]
            assert rows[withdrawal].attrs["data-record-id"] == world["withdrawal"]["id"]
            # the other account is linked when the reader may open it (its holder's own, or
            # the board), and the plan for whoever may see it (the board, not the holder)
            assert link(rows[to_own]) == f"/accounts/{own}"
            assert link(rows[to_stranger]) == (f"/accounts/{stranger}" if sees_plans else None)
            assert link(rows[withdrawal]) == (f"/plans/{plan['id']}" if sees_plans else None)
            assert link(rows[deposit]) is None
            shown = document.one("main").text
            assert not [i for i in RECORD_IDS if i in shown], (path, shown)


def test_a_reversed_deposit_reads_as_the_deposit_reversed_with_its_reason(
    app: Flask, kit: Kit
) -> None:
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=5_000)
        body = {"effective_on": DAY, "reason": "entered on the wrong account"}
        ok(kit.api.post(f"/deposits/{bank['deposit']['id']}/reverse", body))
        client = signed_in(app.test_client(), bank["holder"]["token"])
        document = html(client.get(f"/accounts/{bank['id']}/statement?start={DAY}&end={DAY}"))
    rows = statement_rows(document)
    (reversed_,) = [
        text for text in rows if text.endswith("reversed: entered on the wrong account")
    ]
    assert reversed_.startswith("Deposit from ")
    assert rows[reversed_].attrs["data-record-id"] == bank["deposit"]["id"]


def transfer(bank: dict[str, Any], to: str, amount: int, memo: str | None) -> dict[str, Any]:
    body = {
        "from_account_id": bank["id"],
        "to_account_id": to,
        "credit_class": bank["unrestricted_class"],
        "amount_sqft": amount,
    }
    return body | ({"memo": memo} if memo else {})


def link(row: Element) -> str | None:
    links = row.one("td", data_field="description").all("a")
    return links[0].attrs["href"] if links else None


def test_the_statement_is_the_holders_and_the_boards(
    app: Flask, kit: Kit, world, board_token: str
) -> None:
    path = f"/accounts/{world['bank']['id']}/statement"
    for token in (kit.holder("Stranger")["token"], world["lgu"]["token"]):
        refused = signed_in(app.test_client(), token).get(path)
        assert refused.status_code == 404
        assert "11,000" not in refused.get_data(as_text=True)
    board = signed_in(app.test_client(), board_token)
    assert html(board.get(path)).one("h1").text.startswith("Statement of account ")
    backwards = board.get(f"{path}?start=2026-06-30&end=2026-06-01")
    assert "ends before it starts" in html(backwards, 422).one("p", role="alert").text


# --- the links to the board's forms -------------------------------------------------------------


def hrefs(document: Element) -> set[str]:
    """Where the links lead, and the forms that only ask for a page (``method="get"``)."""
    links = {a.attrs.get("href", "") for a in document.all("a")}
    return links | {f.attrs["action"] for f in document.all("form", method="get")}


def test_the_board_is_led_to_its_forms(app: Flask, world, board_token: str) -> None:
    account_id, plan_id = world["bank"]["id"], world["plan"]["id"]
    board = signed_in(app.test_client(), board_token)

    account = hrefs(html(board.get(f"/accounts/{account_id}")))
    plan = hrefs(html(board.get(f"/plans/{plan_id}")))
    home = hrefs(html(board.get("/")))

    assert {
        f"/deposits/new?account_id={account_id}",
        f"/accounts/{account_id}/freeze",
        f"/accounts/{account_id}/close",
    } <= account
    assert f"/accounts/{account_id}/unfreeze" not in account  # it is open
    assert f"/plans/{plan_id}/appeals" in plan
    assert {"/tokens", "/deposits/new", "/accounts/new", "/holders/new"} <= home
    for target in (
        f"/deposits/new?account_id={account_id}",
        f"/accounts/{account_id}/freeze",
        f"/plans/{plan_id}/appeals",
        "/tokens",
        "/accounts/new",
    ):
        assert board.get(target).status_code == 200, target


def test_the_lists_lead_the_board_to_edit_and_add(app: Flask, world, board_token: str) -> None:
    board = signed_in(app.test_client(), board_token)
    for path, new, item, edit in (
        ("/holders", "/holders/new", "data-holder-id", "/holders/{}/edit"),
        ("/lgus", "/lgus/new", "data-lgu-id", "/lgus/{}/edit"),
        ("/bank-sites", "/bank-sites/new", "data-site-id", "/bank-sites/{}/edit"),
    ):
        document = html(board.get(path))
        rows = [e for e in document.all() if item in e.attrs]
        assert rows, path
        assert new in hrefs(document)
        for row in rows:
            assert edit.format(row.attrs[item]) in hrefs(row), path
    assert board.get("/holders/new").status_code == 200


def test_others_are_not_shown_the_boards_forms(app: Flask, world) -> None:
    account_id, plan_id = world["bank"]["id"], world["plan"]["id"]
    holder = signed_in(app.test_client(), world["bank"]["holder"]["token"])
    lgu = signed_in(app.test_client(), world["lgu"]["token"])

    account = html(holder.get(f"/accounts/{account_id}"))
    plan = html(lgu.get(f"/plans/{plan_id}"))
    lgu_home = hrefs(html(lgu.get("/")))

    assert not account.has("nav", id="account-board-forms")
    assert not any("/freeze" in h or "/close" in h or "/deposits/new" in h for h in hrefs(account))
    assert any(h.startswith(f"/accounts/{account_id}/statement?start=") for h in hrefs(account))
    assert f"/plans/{plan_id}/appeals" not in hrefs(plan)
    assert not {"/tokens", "/deposits/new", "/accounts/new"} & lgu_home


# --- every notice mailed, by its id --------------------------------------------------------------

PAT = {"name": "Pat Public", "address": "5 Lake St, Buffalo, MN", "role": "public_requester"}


def renoticed(kit: Kit, lgu: dict[str, str]) -> dict[str, Any]:
    """The plan noticed and decided (application 1: its notice of 06-22, its notice of decision
    of 07-27), revised as new on 08-12 (application 2, 40,000 sq ft) and noticed again on
    08-13; with the ids of the three notices."""
    plan = noticed_and_decided(kit, lgu)
    with on("2026-07-28"):
        first = kit.get_plan(plan["id"])
    revision = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-08-12"}
    with on("2026-08-12"):
        ok(kit.api.post(f"/plans/{plan['id']}/revisions", revision, token=lgu["token"]))
    body = {"mailed_on": "2026-08-13", "recipients": [*recipients_for(plan), PAT]}
    with on("2026-08-13"):
        again = ok(kit.api.post(f"/plans/{plan['id']}/notices", body, token=lgu["token"]))
    return {
        **plan,
        "first_notice": first["notice"]["id"],
        "first_decision_notice": first["decision_notice"]["id"],
        "second_notice": again["id"],
    }


def test_every_notice_mailed_prints_by_its_id_and_the_latest_of_each_kind_still_prints(
    kit: Kit,
) -> None:
    """The notice of application a revision's own notice replaced prints as it was mailed, by
    its id, as HTML and PDF; ``/notices/application`` prints the one mailed last."""
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    with on("2026-08-14"):

        def text(path: str, **kw: Any) -> str:
            response = kit.api.get(f"/plans/{plan['id']}/notices/{path}", **kw)
            assert response.status_code == 200, path
            return response.get_data(as_text=True)

        first = text(plan["first_notice"], token=lgu["token"])
        latest = text("application")
        assert text(plan["second_notice"]) == latest
        assert "June 22, 2026" in first and "25,000 square feet" in first
        assert "August 13, 2026" in latest and "40,000 square feet" in latest
        assert "Approved on July 24, 2026" in text(plan["first_decision_notice"])
        assert text("decision") == text(plan["first_decision_notice"])
        as_pdf = kit.api.get(f"/plans/{plan['id']}/notices/{plan['first_notice']}?format=pdf")
        assert (as_pdf.status_code, as_pdf.mimetype) == (200, "application/pdf")
        # a notice of another plan, none, or a plan another LGU holds: not found
        other = noticed_and_decided(kit, kit.lgu())
        for path in (
            f"/plans/{other['id']}/notices/{plan['first_notice']}",
            f"/plans/{plan['id']}/notices/ntc_nosuchnotice",
        ):
            assert kit.api.get(path).status_code == 404, path
        stranger = kit.lgu()["token"]
        path = f"/plans/{plan['id']}/notices/{plan['first_notice']}"
        assert kit.api.get(path, token=stranger).status_code == 404


def test_the_plan_page_links_every_notice_mailed_to_its_printable_page(
    app: Flask, kit: Kit
) -> None:
    lgu = kit.lgu()
    plan = renoticed(kit, lgu)
    ids = (plan["first_notice"], plan["first_decision_notice"], plan["second_notice"])
    with on("2026-08-14"):
        client = signed_in(app.test_client(), lgu["token"])
        page = html(client.get(f"/plans/{plan['id']}"))
        links = {a.attrs["data-notice-id"]: a for a in page.all("a", class_="notice-link")}
        assert list(links) == list(ids)
        assert "of application 1" in links[plan["first_notice"]].text
        assert "of application 1" not in links[plan["second_notice"]].text
        for notice_id, mailed in zip(
            ids, ("June 22, 2026", "July 27, 2026", "August 13, 2026"), strict=True
        ):
            response = client.get(links[notice_id].attrs["href"])
            assert response.headers["Content-Security-Policy"] == PAGE_POLICY
            printed = html(response).one("article", id="notice")
            assert printed.one(id="mailed-on").text == mailed
            pdf = client.get(html(response).one("a", id="notice-pdf").attrs["href"])
            assert (pdf.status_code, pdf.mimetype) == (200, "application/pdf")
        # the timeline links the current application's notice; the earlier applications'
        # table its own two
        (timeline,) = page.all("a", class_="timeline-notice")
        assert timeline.attrs["data-notice-id"] == plan["second_notice"]
        earlier = page.one("tr", data_application="1").all("a", class_="application-notice")
        assert [a.attrs["data-notice-id"] for a in earlier] == list(ids[:2])
        assert client.get(f"/plans/{plan['id']}/notices/application").status_code == 200
