"""docs/http.md "Lists, cursors and CSV": only cursors the listing gave are accepted.  The
cursors of ``GET /payments``, ``GET /securities``, ``GET /accounts/{id}/lots`` and
``GET /accounts/{id}/reservations`` name a row: a well-formed cursor naming a row the caller may
not see (another LGU's payment or security), a row of another account (the same holder's other
account too) or no row at all is 400 ``bad_request``, in JSON and in CSV, and leaves the listing
as it was; the caller's own cursor pages on, and the filters still do not move a cursor.  On
SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, on, problem, unique, walk
from tests.api.test_money_listings import hold  # issued on DAY, the same day as here
from tests.api.web_kit import parse, signed_in

DAY = "2026-06-01"
CSV = {"Accept": "text/csv"}
NOT_GIVEN = "The cursor is not one this listing gave."


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def cursor_of(name: str, key: Any) -> str:
    raw = json.dumps([name, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def flat(pages: list[list[str]]) -> list[str]:
    return [item for page in pages for item in page]


def listed(kit: Kit, path: str, token: str | None = None) -> list[dict[str, Any]]:
    return list(ok(kit.api.get(path, token=token, query_string={"limit": 500}), 200)["items"])


def refused(
    kit: Kit, path: str, cursor: str, token: str | None = None, **query: Any
) -> dict[str, Any]:
    """``path`` asked for the page after ``cursor``: 400 ``bad_request``, saying so, and the
    listing (the caller's whole of it) as it was before."""
    before = listed(kit, path, token)
    response = kit.api.get(path, token=token, query_string={"cursor": cursor, **query})
    body = problem(response, 400, "bad_request")
    assert body["detail"] == NOT_GIVEN
    assert listed(kit, path, token) == before
    return body


def refused_in_csv(kit: Kit, path: str, cursor: str, token: str | None = None) -> None:
    response = kit.api.get(path, token=token, headers=CSV, query_string={"cursor": cursor})
    assert problem(response, 400, "bad_request")["detail"] == NOT_GIVEN


# --- payments ----------------------------------------------------------------------------------


def fee(kit: Kit, lgu: dict[str, str], plan: dict[str, Any], cents: int) -> dict[str, Any]:
    """A processing fee of ``cents`` received on ``DAY``, recorded ``cents`` seconds past noon:
    each fee a moment of its own, so that the list orders them as they were made."""
    body = {"kind": "processing_fee", "amount_cents": cents, "payer": "A. Payer"}
    body |= {"received_on": DAY, "plan_id": plan["id"]}
    with at(f"{DAY} 12:{cents // 60:02d}:{cents % 60:02d}"):
        return dict(ok(kit.api.post("/payments", body, token=lgu["token"])))


@pytest.fixture
def paid(kit: Kit) -> dict[str, Any]:
    """Two LGUs, each with a plan and three processing fees; the first LGU's second refunded."""
    mine, other = kit.lgu(), kit.lgu()
    with on(DAY):
        plan, theirs = (kit.plan(lgu, received_on=DAY, area_sqft=9_000) for lgu in (mine, other))
    payments = [fee(kit, mine, plan, 100 + n) for n in range(3)]
    foreign = [fee(kit, other, theirs, 200 + n) for n in range(3)]
    with on(DAY):
        ok(kit.api.post(f"/payments/{payments[1]['id']}/refund", token=mine["token"]))
    return {"mine": mine, "other": other, "payments": payments, "foreign": foreign}


def test_a_cursor_of_another_lgus_payment_is_refused(kit, paid):
    mine, other = paid["mine"]["token"], paid["other"]["token"]
    given = ok(kit.api.get("/payments", token=mine, query_string={"limit": 1}), 200)
    cursor = given["next_cursor"]
    assert cursor
    refused(kit, "/payments", cursor, token=other)
    refused(kit, "/payments", cursor, token=other, status="received")
    refused_in_csv(kit, "/payments", cursor, token=other)
    # the other LGU's own cursor pages on through its own
    theirs = [p["id"] for p in paid["foreign"]]
    assert flat(walk(kit, "/payments", token=other, limit=1)) == theirs
    # and the first LGU's own cursor pages on, the board's the same
    rest = ok(kit.api.get("/payments", token=mine, query_string={"cursor": cursor}), 200)
    assert [p["id"] for p in rest["items"]] == [p["id"] for p in paid["payments"][1:]]
    for_board = ok(kit.api.get("/payments", query_string={"cursor": cursor, "limit": 500}), 200)
    ids = [p["id"] for p in paid["payments"]]
    assert [p["id"] for p in for_board["items"] if p["id"] in ids] == ids[1:]


def test_a_plan_not_seen_is_not_found_before_its_cursor_is_weighed_in_json_and_csv(kit, paid):
    """``?plan_id=`` of a plan the caller may not see is 404 whatever the cursor, in either
    form: the plan is weighed first, as the page weighs it."""
    other = paid["other"]["token"]
    theirs_plan = paid["payments"][0]["plan_id"]
    query = {"plan_id": theirs_plan, "cursor": cursor_of("/payments", paid["payments"][0]["id"])}
    problem(kit.api.get("/payments", token=other, query_string=query), 404, "not_found")
    csv = kit.api.get("/payments", token=other, headers=CSV, query_string=query)
    problem(csv, 404, "not_found")
    query = {"plan_id": "plan_00ff", "cursor": cursor_of("/payments", "pay_00ff")}
    problem(kit.api.get("/payments", query_string=query), 404, "not_found")
    problem(kit.api.get("/payments", headers=CSV, query_string=query), 404, "not_found")


def test_a_cursor_naming_no_payment_is_refused_even_to_the_board(kit, paid):
    made_up = cursor_of("/payments", "pay_0123abcd")
    refused(kit, "/payments", made_up)
    refused(kit, "/payments", made_up, token=paid["mine"]["token"])
    refused_in_csv(kit, "/payments", made_up)


def test_the_filters_do_not_move_a_payment_cursor(kit, paid):
    """A payment refunded while a client pages through ``?status=received`` still marks its
    place there: a cursor of the caller's own, whatever the filters."""
    token, payments = paid["mine"]["token"], paid["payments"]
    after_refunded = cursor_of("/payments", payments[1]["id"])
    query = {"cursor": after_refunded, "status": "received"}
    rest = ok(kit.api.get("/payments", token=token, query_string=query), 200)
    assert [p["id"] for p in rest["items"]] == [payments[2]["id"]]
    # the CSV takes it too, and lists every payment the filters keep, not a page
    response = kit.api.get("/payments", token=token, headers=CSV, query_string=query)
    assert response.status_code == 200 and response.mimetype == "text/csv"
    assert payments[0]["id"] in response.get_data(as_text=True)


# --- securities --------------------------------------------------------------------------------


@pytest.fixture
def held(kit: Kit) -> dict[str, Any]:
    """Two LGUs, each with a project-specific plan and three securities expiring in turn; the
    first LGU's soonest released."""
    mine, other = kit.lgu(), kit.lgu()
    with on(DAY):
        plan, theirs = (
            kit.plan(lgu, received_on=DAY, area_sqft=9_000, method="project_specific")
            for lgu in (mine, other)
        )
    expiries = ["2027-03-01", "2027-06-01", "2027-09-01"]
    securities = [hold(kit, mine, plan, day) for day in expiries]
    foreign = [hold(kit, other, theirs, day) for day in expiries]
    with on(DAY):
        path = f"/securities/{securities[0]['id']}/release"
        ok(kit.api.post(path, {"released_on": DAY, "reason": "replaced"}, token=mine["token"]))
    return {"mine": mine, "other": other, "securities": securities, "foreign": foreign}


def test_a_cursor_of_another_lgus_security_is_refused(kit, held):
    mine, other = held["mine"]["token"], held["other"]["token"]
    with on(DAY):
        given = ok(kit.api.get("/securities", token=mine, query_string={"limit": 1}), 200)
        cursor = given["next_cursor"]
        assert cursor
        refused(kit, "/securities", cursor, token=other)
        refused(kit, "/securities", cursor, token=other, status="held")
        refused_in_csv(kit, "/securities", cursor, token=other)
        theirs = [s["id"] for s in held["foreign"]]
        assert flat(walk(kit, "/securities", token=other, limit=1)) == theirs
        rest = ok(kit.api.get("/securities", token=mine, query_string={"cursor": cursor}), 200)
        assert [s["id"] for s in rest["items"]] == [s["id"] for s in held["securities"][1:]]


def test_a_cursor_naming_no_security_is_refused_even_to_the_board(kit, held):
    made_up = cursor_of("/securities", "sec_0123abcd")
    with on(DAY):
        refused(kit, "/securities", made_up)
        refused(kit, "/securities", made_up, token=held["mine"]["token"])
        refused_in_csv(kit, "/securities", made_up)


def test_the_filters_do_not_move_a_security_cursor(kit, held):
    """A security released while a client pages through ``?status=held`` still marks its place
    there."""
    token, securities = held["mine"]["token"], held["securities"]
    with on(DAY):
        query = {"cursor": cursor_of("/securities", securities[0]["id"]), "status": "held"}
        rest = ok(kit.api.get("/securities", token=token, query_string=query), 200)
        assert [s["id"] for s in rest["items"]] == [s["id"] for s in securities[1:]]


# --- an account's lots and reservations --------------------------------------------------------


@pytest.fixture
def accounts(kit: Kit) -> dict[str, Any]:
    """A holder's two accounts and another holder's, each holding two lots (two deposits) and
    two reservations for one plan."""
    with at("2026-05-26 12:00:00"):
        first = kit.funded(50_000)
        holder, site, banker = first["holder"], first["site_id"], first["lgu"]["id"]
        second = kit.account(holder["id"])
        stranger = kit.funded(50_000)
        kit.wetland_deposit(first["id"], site, banker, 50_000)
        kit.wetland_deposit(second, site, banker, 50_000)
        kit.wetland_deposit(second, site, banker, 50_000)
        kit.wetland_deposit(stranger["id"], stranger["site_id"], banker, 50_000)
        plan = kit.board_plan(kit.lgu()["id"], received_on="2026-05-26")
    ids = {"first": first["id"], "second": second, "stranger": stranger["id"]}
    reserved: dict[str, list[str]] = {}
    for name, account_id in ids.items():
        with at("2026-06-01 12:00:00"):
            made = [kit.reserve(account_id, plan["id"], first["unrestricted"], 100)]
        with at("2026-06-02 12:00:00"):
            made.append(kit.reserve(account_id, plan["id"], first["unrestricted"], 200))
        reserved[name] = [r["id"] for r in made]
    return {"ids": ids, "holder": holder, "stranger": stranger["holder"], "reserved": reserved}


@pytest.mark.parametrize("rows", ["lots", "reservations"])
def test_a_cursor_of_another_accounts_row_is_refused(kit, accounts, rows):
    ids, token = accounts["ids"], accounts["holder"]["token"]
    first, second = (f"/accounts/{ids[name]}/{rows}" for name in ("first", "second"))
    stranger = f"/accounts/{ids['stranger']}/{rows}"
    mine = ok(kit.api.get(first, token=token, query_string={"limit": 1}), 200)
    cursor = mine["next_cursor"]
    assert cursor and len(mine["items"]) == 1
    # the same holder's other account, for the holder and for the board
    refused(kit, second, cursor, token=token)
    refused(kit, second, cursor)
    # another holder's account, for its holder and for the board
    refused(kit, stranger, cursor, token=accounts["stranger"]["token"])
    refused(kit, stranger, cursor)
    # a cursor of the other account's own row, on the first's list
    theirs = ok(kit.api.get(second, token=token, query_string={"limit": 1}), 200)
    refused(kit, first, theirs["next_cursor"], token=token)
    # and one naming no row at all
    prefix = "lot" if rows == "lots" else "res"
    refused(kit, first, cursor_of(f"/accounts/{{account_id}}/{rows}", f"{prefix}_0123abcd"))
    # each account's own cursor pages on in its own list
    every = [item["id"] for item in listed(kit, first, token)]
    assert len(every) == 2
    rest = ok(kit.api.get(first, token=token, query_string={"cursor": cursor}), 200)
    assert [item["id"] for item in rest["items"]] == every[1:]
    assert len(flat(walk(kit, second, token=token, limit=1))) == 2


def test_a_refused_cursor_is_still_refused_to_a_caller_who_may_not_see_the_account(kit, accounts):
    """Who may see the account is settled first: a stranger hears 404 for the account, an LGU
    403, whatever the cursor."""
    ids, token = accounts["ids"], accounts["holder"]["token"]
    path = f"/accounts/{ids['first']}/lots"
    cursor = ok(kit.api.get(path, token=token, query_string={"limit": 1}), 200)["next_cursor"]
    other = f"/accounts/{ids['second']}/lots"
    response = kit.api.get(
        other, token=accounts["stranger"]["token"], query_string={"cursor": cursor}
    )
    problem(response, 404, "not_found")


def test_the_reservations_page_shows_none_after_another_accounts_reservation(app, kit, accounts):
    """The pages are not the API: there a place no page of the account gives shows no rows and
    the way back to the first, as the account page does for its lots."""
    ids, token = accounts["ids"], accounts["holder"]["token"]
    client = signed_in(app.test_client(), token)
    theirs = accounts["reserved"]["second"][0]
    with at("2026-06-04 12:00:00"):
        response = client.get(f"/accounts/{ids['first']}/reservations?after={theirs}")
        assert response.status_code == 200
        document = parse(response.text)
        assert document.has("a", id="first-page")
        assert not document.has("table", id="account-reservations")


# --- plans -------------------------------------------------------------------------------------


@pytest.fixture
def planned(kit: Kit) -> dict[str, Any]:
    """Two LGUs, each with three plans received on ``DAY``, recorded a second apart."""
    mine, other = kit.lgu(), kit.lgu()
    made: dict[str, list[dict[str, Any]]] = {"mine": [], "foreign": []}
    for n in range(3):
        for name, lgu in (("mine", mine), ("foreign", other)):
            with at(f"{DAY} 09:00:{n * 2 + (name == 'foreign'):02d}"):
                made[name].append(kit.plan(lgu, received_on=DAY, area_sqft=9_000))
    return {"mine": mine, "other": other, "plans": made["mine"], "foreign": made["foreign"]}


def test_a_cursor_of_another_lgus_plan_is_refused(kit, planned):
    mine, other = planned["mine"]["token"], planned["other"]["token"]
    with on(DAY):
        given = ok(kit.api.get("/plans", token=mine, query_string={"limit": 1}), 200)
        cursor = given["next_cursor"]
        assert cursor
        refused(kit, "/plans", cursor, token=other)
        refused(kit, "/plans", cursor, token=other, status="received")
        refused_in_csv(kit, "/plans", cursor, token=other)
        # the other LGU's own cursor pages on through its own
        theirs = [p["id"] for p in planned["foreign"]]
        assert flat(walk(kit, "/plans", token=other, limit=1)) == theirs
        # the first LGU's own cursor pages on, and the board's (which sees every plan) the same
        rest = ok(kit.api.get("/plans", token=mine, query_string={"cursor": cursor}), 200)
        assert [p["id"] for p in rest["items"]] == [p["id"] for p in planned["plans"][1:]]
        board = ok(kit.api.get("/plans", query_string={"cursor": cursor, "limit": 500}), 200)
        ids = [p["id"] for p in planned["plans"]]
        assert [p["id"] for p in board["items"] if p["id"] in ids] == ids[1:]


def test_a_cursor_naming_no_plan_is_refused_even_to_the_board(kit, planned):
    made_up = cursor_of("/plans", "plan_0123abcd")
    with on(DAY):
        refused(kit, "/plans", made_up)
        refused(kit, "/plans", made_up, token=planned["mine"]["token"])
        refused_in_csv(kit, "/plans", made_up)


def test_the_filters_do_not_move_a_plan_cursor(kit, planned):
    """A plan whose status changes while a client pages through ``?status=received`` still
    marks its place there, as does one the text filter leaves out."""
    lgu, plans = planned["mine"], planned["plans"]
    with on(DAY):
        query = {"status": "received", "limit": 1}
        first = ok(kit.api.get("/plans", token=lgu["token"], query_string=query), 200)
        assert [p["id"] for p in first["items"]] == [plans[0]["id"]]
        kit.mail_summary(lgu, plans[0], DAY)  # noticed now, out of the filter
        query = {"status": "received", "cursor": first["next_cursor"]}
        rest = ok(kit.api.get("/plans", token=lgu["token"], query_string=query), 200)
        assert [p["id"] for p in rest["items"]] == [p["id"] for p in plans[1:]]
        query = {"q": plans[2]["project"], "cursor": cursor_of("/plans", plans[1]["id"])}
        found = ok(kit.api.get("/plans", token=lgu["token"], query_string=query), 200)
        assert [p["id"] for p in found["items"]] == [plans[2]["id"]]
        # the CSV takes it too, and lists every plan the filters keep, not a page
        response = kit.api.get("/plans", token=lgu["token"], headers=CSV, query_string=query)
        assert response.status_code == 200 and response.mimetype == "text/csv"


def test_the_plans_page_shows_none_after_another_lgus_plan(app, kit, planned):
    """The pages are not the API: there a place no page gives shows no rows and the way back
    to the first."""
    client = signed_in(app.test_client(), planned["other"]["token"])
    with on(DAY):
        response = client.get(f"/plans?after={planned['plans'][0]['id']}")
    assert response.status_code == 200
    document = parse(response.text)
    assert document.has("a", id="first-page")
    assert not document.has("table", id="plans")


# --- accounts ----------------------------------------------------------------------------------


@pytest.fixture
def opened(kit: Kit) -> dict[str, Any]:
    """Two holders, each with two accounts opened a second apart."""
    mine, other = kit.holder(), kit.holder()
    made: dict[str, list[str]] = {"mine": [], "foreign": []}
    for n in range(2):
        for name, holder in (("mine", mine), ("foreign", other)):
            with at(f"{DAY} 09:00:{n * 2 + (name == 'foreign'):02d}"):
                made[name].append(kit.account(holder["id"]))
    return {"mine": mine, "other": other, "accounts": made["mine"], "foreign": made["foreign"]}


def test_a_cursor_of_another_holders_account_is_refused(kit, opened):
    mine, other = opened["mine"], opened["other"]
    given = ok(kit.api.get("/accounts", token=mine["token"], query_string={"limit": 1}), 200)
    cursor = given["next_cursor"]
    assert cursor and [a["id"] for a in given["items"]] == opened["accounts"][:1]
    refused(kit, "/accounts", cursor, token=other["token"])
    # asking for another holder's accounts, which a holder sees none of, refuses it too
    refused(kit, "/accounts", cursor, token=other["token"], holder_id=mine["id"])
    # the board's ?holder_id= is a filter, which does not move a cursor: the other holder's
    # accounts opened after the cursor's
    query = {"cursor": cursor, "holder_id": other["id"]}
    theirs = ok(kit.api.get("/accounts", query_string=query), 200)
    assert [a["id"] for a in theirs["items"]] == opened["foreign"]
    # each holder's own cursor pages on through its own
    assert flat(walk(kit, "/accounts", token=other["token"], limit=1)) == opened["foreign"]
    rest = ok(kit.api.get("/accounts", token=mine["token"], query_string={"cursor": cursor}), 200)
    assert [a["id"] for a in rest["items"]] == opened["accounts"][1:]
    # and the board's, in every account or in the holder's own
    query = {"cursor": cursor, "limit": 500}
    every = ok(kit.api.get("/accounts", query_string=query), 200)
    ids = opened["accounts"] + opened["foreign"]
    after_mine = [opened["foreign"][0], opened["accounts"][1], opened["foreign"][1]]
    assert [a["id"] for a in every["items"] if a["id"] in ids] == after_mine
    query = {"cursor": cursor, "holder_id": mine["id"]}
    own = ok(kit.api.get("/accounts", query_string=query), 200)
    assert [a["id"] for a in own["items"]] == opened["accounts"][1:]


def test_a_cursor_naming_no_account_is_refused_even_to_the_board(kit, opened):
    made_up = cursor_of("/accounts", "acct_0123abcd")
    refused(kit, "/accounts", made_up)
    refused(kit, "/accounts", made_up, token=opened["mine"]["token"])


def test_the_accounts_page_shows_none_after_another_holders_account(app, kit, opened):
    client = signed_in(app.test_client(), opened["mine"]["token"])
    response = client.get(f"/accounts?after={opened['foreign'][0]}")
    assert response.status_code == 200
    document = parse(response.text)
    assert document.has("a", id="first-page")
    assert not document.has("table", id="accounts")


# --- tokens ------------------------------------------------------------------------------------


def test_a_cursor_naming_no_token_is_refused(kit):
    refused(kit, "/tokens", cursor_of("/tokens", "tok_0123abcd"))
    refused(kit, "/tokens", cursor_of("/tokens", "tok_0123abcd"), revoked="false")


def test_the_filters_do_not_move_a_token_cursor(kit):
    """A token revoked while a client pages through ``?revoked=false`` still marks its place
    there, as does one of a role the filter leaves out."""
    made = []
    for n, role in enumerate(("lgu", "board", "lgu")):
        body: dict[str, Any] = {"role": role, "name": unique("Cursor")}
        if role == "lgu":
            body["lgu_id"] = kit.lgu()["id"]
        with at(f"2031-02-03 04:05:{n:02d}"):
            made.append(ok(kit.api.post("/tokens", body))["id"])
    older, board, newer = made
    query = {"role": "lgu", "cursor": cursor_of("/tokens", board), "limit": 500}
    ids = [t["id"] for t in ok(kit.api.get("/tokens", query_string=query), 200)["items"]]
    assert older in ids and newer not in ids
    assert kit.api.delete(f"/tokens/{board}").status_code == 204
    query = {"revoked": "false", "cursor": cursor_of("/tokens", board), "limit": 500}
    ids = [t["id"] for t in ok(kit.api.get("/tokens", query_string=query), 200)["items"]]
    assert older in ids and newer not in ids


def test_the_tokens_page_shows_none_after_a_token_there_is_not(app, board_token):
    client = signed_in(app.test_client(), board_token)
    response = client.get("/tokens?after=tok_0123abcd")
    assert response.status_code == 200
    document = parse(response.text)
    assert document.has("a", id="first-page")
    assert not document.has("table", id="tokens")


# --- holders, LGUs and bank sites (the board's alone) ------------------------------------------


@pytest.mark.parametrize(
    ("path", "prefix"), [("/holders", "hld"), ("/lgus", "lgu"), ("/bank-sites", "site")]
)
def test_a_cursor_naming_no_party_is_refused(kit, path, prefix):
    kit.site(kit.holder()["id"])  # a holder, and a bank site, to list
    kit.lgu()
    made_up = cursor_of(path, f"{prefix}_0123abcd")
    refused(kit, path, made_up)
    refused(kit, path, made_up, q="a")
    # one the listing gave pages on
    given = ok(kit.api.get(path, query_string={"limit": 1}), 200)["next_cursor"]
    assert ok(kit.api.get(path, query_string={"cursor": given}), 200)["items"]


def test_the_filters_do_not_move_a_bank_site_cursor(kit):
    """The sites are listed by id: another holder's site marks its place among a holder's."""
    mine, other = kit.holder()["id"], kit.holder()["id"]
    sites = sorted(kit.site(mine) for _ in range(4))
    theirs = kit.site(other)
    query = {"holder_id": mine, "cursor": cursor_of("/bank-sites", theirs)}
    rest = ok(kit.api.get("/bank-sites", query_string=query), 200)
    assert [s["id"] for s in rest["items"]] == [s for s in sites if s > theirs]


@pytest.mark.parametrize(
    ("path", "listed", "prefix"),
    [
        ("/holders", "holders", "hld"),
        ("/lgus", "lgus", "lgu"),
        ("/bank-sites", "bank-sites", "site"),
    ],
)
def test_the_party_pages_show_none_after_a_place_no_page_gives(
    app, kit, board_token, path, listed, prefix
):
    """As every other list page: an id no row has marks no place, so the page shows no rows and
    the way back to the first, never an error; a place a page gave goes on."""
    kit.site(kit.holder()["id"])
    kit.lgu()
    client = signed_in(app.test_client(), board_token)
    response = client.get(f"{path}?after={prefix}_0123abcd")
    assert response.status_code == 200
    document = parse(response.text)
    assert document.has("a", id="first-page")
    assert not document.has(None, id=listed)
    first = parse(client.get(f"{path}?limit=1").text)
    assert first.has(None, id=listed)
