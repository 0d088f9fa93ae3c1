"""docs/http.md "Lists, cursors and CSV": ``GET /accounts/{id}/lots`` and
``GET /accounts/{id}/reservations`` are paged by cursor like every long list (``limit``,
``cursor``, ``next_cursor``), in their own orders (lots oldest first, those made at once in the
order of their labels; reservations oldest first, then by id), each account's own rows only, seen
by the board and the account's holder.  On SQLite and PostgreSQL."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest

from tests.api.kit import Kit, at, ok, problem, unique, walk
from tests.api.web_kit import parse, signed_in

EARLY, LATE = "2026-05-25 12:00:00", "2026-05-26 12:00:00"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def flat(pages: list[list[str]]) -> list[str]:
    return [item for page in pages for item in page]


def cursor_of(name: str, key: Any) -> str:
    raw = json.dumps([name, key], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def page(kit: Kit, path: str, token: str | None = None, **query: Any) -> dict[str, Any]:
    return dict(ok(kit.api.get(path, token=token, query_string=query), 200))


# --- lots --------------------------------------------------------------------------------------


def funded(kit: Kit) -> dict[str, Any]:
    """A holder's account, and a bank site of its whose register holds room for any number of
    the tests' deposits of a wetland and its upland buffer."""
    holder = kit.holder("Bank")
    areas = [{"category": c, "area_sqft": 10**9} for c in ("replacement_wetland", "upland_buffer")]
    site = {"name": unique("Site"), "holder_id": holder["id"], "service_area": 5}
    site |= {"county": "Lyon", "credit_areas": areas}
    site_id = ok(kit.api.post("/bank-sites", site))["id"]
    account = kit.account(holder["id"])
    return {"id": account, "holder": holder, "site_id": site_id, "lgu": kit.lgu()}


def deposit(kit: Kit, funded: dict[str, Any], moment: str, buffer_sqft: int = 0) -> None:
    """A deposit into ``funded``'s account at ``moment``: a lot of unrestricted credits, and
    one of restricted credits made at once with it when ``buffer_sqft`` is given."""
    with at(moment):
        kit.wetland_deposit(
            funded["id"], funded["site_id"], funded["lgu"]["id"], 4_000, buffer_sqft=buffer_sqft
        )


@pytest.fixture
def lotted(kit: Kit) -> dict[str, Any]:
    """An account with five lots: A and B deposited at once, C and D at once at that same
    moment, E a moment before them (made last, listed first); and another account of the same
    holder with a lot of its own."""
    with at(LATE):
        account = funded(kit)
    deposit(kit, account, LATE, buffer_sqft=3_000)  # A, B
    deposit(kit, account, LATE, buffer_sqft=3_000)  # C, D
    deposit(kit, account, EARLY)  # E
    with at(LATE):
        spare = kit.account(account["holder"]["id"])
        kit.wetland_deposit(spare, account["site_id"], account["lgu"]["id"], 1_000)
    return {**account, "spare": spare}


def test_an_accounts_lots_come_in_pages_each_once_oldest_first_then_by_label(kit, lotted):
    path, token = f"/accounts/{lotted['id']}/lots", lotted["holder"]["token"]
    every = page(kit, path, token=token, limit=500)["items"]
    label = {lot["id"]: lot["label"] for lot in every}
    assert [lot["label"] for lot in every] == ["E", "A", "B", "C", "D"]
    pages = walk(kit, path, token=token, limit=2)
    assert [[label[lot] for lot in p] for p in pages] == [["E", "A"], ["B", "C"], ["D"]]
    # the default page holds them all, in the same order; the board pages the same way
    assert walk(kit, path, token=token) == [list(label)]
    assert flat(walk(kit, path, limit=3)) == list(label)
    # each with what it holds and where it came from
    (e,) = [lot for lot in every if lot["label"] == "E"]
    assert e["posted_sqft"] == 4_000 and e["deposit_id"] and e["parent_lot_id"] is None


def test_lots_past_z_are_paged_in_the_order_of_their_labels(kit):
    """Lots made at one moment keep their labels' order across pages: Z, then AA, AB."""
    with at(LATE):
        account = funded(kit)
    for _ in range(14):
        deposit(kit, account, LATE, buffer_sqft=750)
    path = f"/accounts/{account['id']}/lots"
    labels = {lot["id"]: lot["label"] for lot in page(kit, path, limit=500)["items"]}
    expected = [chr(n) for n in range(ord("A"), ord("Z") + 1)] + ["AA", "AB"]
    assert list(labels.values()) == expected
    assert [labels[lot] for lot in flat(walk(kit, path, limit=5))] == expected


def refused_to_others(kit: Kit, path: str, lgu: dict[str, Any]) -> str:
    """``path``'s first page and the page after it refused to another holder (404) and to an
    LGU (403); the cursor of that page."""
    cursor = page(kit, path, limit=1)["next_cursor"]
    stranger = kit.holder()
    for query in ({"limit": 1}, {"cursor": cursor}):
        refused = kit.api.get(path, token=stranger["token"], query_string=query)
        problem(refused, 404, "not_found")
        problem(kit.api.get(path, token=lgu["token"], query_string=query), 403, "forbidden")
    return str(cursor)


def test_only_the_accounts_holder_and_the_board_page_its_lots(kit, lotted, lgu):
    cursor = refused_to_others(kit, f"/accounts/{lotted['id']}/lots", lgu)
    problem(
        kit.api.get("/accounts/acct_0123abcd/lots", query_string={"cursor": cursor}),
        404,
        "not_found",
    )


def test_a_lot_cursor_marks_a_place_only_in_its_own_accounts_list(kit, lotted):
    token = lotted["holder"]["token"]
    mine, spare = f"/accounts/{lotted['id']}/lots", f"/accounts/{lotted['spare']}/lots"
    cursor = page(kit, mine, token=token, limit=1)["next_cursor"]
    assert cursor
    # the same holder's other account: a place in no list of its own
    for who in (token, None):
        response = kit.api.get(spare, token=who, query_string={"cursor": cursor})
        problem(response, 400, "bad_request")
    # and its own cursor pages on in its own list
    assert len(page(kit, mine, token=token, cursor=cursor)["items"]) == 4


def test_a_bad_lot_cursor_or_limit_is_refused(kit, lotted):
    path = f"/accounts/{lotted['id']}/lots"
    accounts_cursor = page(kit, "/accounts", limit=1)["next_cursor"]
    reservation_cursor = cursor_of("/accounts/{account_id}/reservations", "res_0123abcd")
    for cursor in (
        "nonsense",
        accounts_cursor,
        reservation_cursor,
        cursor_of("/accounts/{account_id}/lots", "res_0123abcd"),
        cursor_of("/accounts/{account_id}/lots", 1),
    ):
        response = kit.api.get(path, query_string={"cursor": cursor})
        assert "cursor" in problem(response, 400, "bad_request")["detail"], cursor
    for limit in ("0", "501", "-1", "many"):
        response = kit.api.get(path, query_string={"limit": limit})
        assert "limit" in problem(response, 422, "validation_error")["errors"]


# --- reservations ------------------------------------------------------------------------------

RESERVED_AT = ["2026-06-02 12:00:00", "2026-06-01 12:00:00", "2026-06-02 12:00:00"]
RESERVED_AT += ["2026-06-03 12:00:00", "2026-06-01 12:00:00"]


@pytest.fixture
def reserved(kit: Kit) -> dict[str, Any]:
    """An account with five reservations for a plan, made at moments out of their order (two
    pairs at one moment), the second voided; and another account of the same holder with one."""
    with at("2026-05-26 12:00:00"):
        funded = kit.funded(50_000)
        spare = kit.account(funded["holder"]["id"])
        kit.wetland_deposit(spare, funded["site_id"], funded["lgu"]["id"], 5_000)
        plan = kit.board_plan(kit.lgu()["id"], received_on="2026-05-26")
    made = []
    for n, moment in enumerate(RESERVED_AT):
        with at(moment):
            made.append(kit.reserve(funded["id"], plan["id"], funded["unrestricted"], 100 + n))
    with at("2026-06-03 12:00:00"):
        ok(kit.api.post(f"/reservations/{made[1]['id']}/void"), 200)
        theirs = kit.reserve(spare, plan["id"], funded["unrestricted"], 100)
    return {**funded, "spare": spare, "made": made, "theirs": theirs}


def in_order(items: list[dict[str, Any]]) -> list[str]:
    """``items``' ids oldest first, then by id, as the reservations list orders them."""
    return [item["id"] for item in sorted(items, key=lambda r: (r["created_at"], r["id"]))]


def test_an_accounts_reservations_come_in_pages_each_once_oldest_first(kit, reserved):
    path, token = f"/accounts/{reserved['id']}/reservations", reserved["holder"]["token"]
    expected = in_order(reserved["made"])
    assert len(set(r["created_at"] for r in reserved["made"])) == 3  # two ties broken by id
    pages = walk(kit, path, token=token, limit=2)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert flat(pages) == expected
    assert walk(kit, path, token=token) == [expected]
    assert flat(walk(kit, path, limit=1)) == expected  # the board's the same
    # each with the plan it is for; the voided one listed as voided
    body = page(kit, path, token=token, limit=500)
    status = {item["id"]: item["status"] for item in body["items"]}
    assert status[reserved["made"][1]["id"]] == "voided"
    assert {item["plan"]["id"] for item in body["items"]} == {reserved["made"][0]["plan_id"]}
    theirs = walk(kit, f"/accounts/{reserved['spare']}/reservations", token=token, limit=1)
    assert theirs == [[reserved["theirs"]["id"]]]


def test_only_the_accounts_holder_and_the_board_page_its_reservations(kit, reserved, lgu):
    refused_to_others(kit, f"/accounts/{reserved['id']}/reservations", lgu)


def test_a_reservation_cursor_marks_a_place_only_in_its_own_accounts_list(kit, reserved):
    token = reserved["holder"]["token"]
    mine = f"/accounts/{reserved['id']}/reservations"
    spare = f"/accounts/{reserved['spare']}/reservations"
    cursor = page(kit, mine, token=token, limit=1)["next_cursor"]
    assert cursor
    response = kit.api.get(spare, token=token, query_string={"cursor": cursor})
    problem(response, 400, "bad_request")
    # the other account's own reservation, named by a cursor, marks no place in this one
    other = cursor_of("/accounts/{account_id}/reservations", reserved["theirs"]["id"])
    response = kit.api.get(mine, token=token, query_string={"cursor": other})
    problem(response, 400, "bad_request")
    rest = page(kit, mine, token=token, cursor=cursor)["items"]
    assert [item["id"] for item in rest] == in_order(reserved["made"])[1:]


def test_a_bad_reservation_cursor_or_limit_is_refused(kit, reserved):
    path = f"/accounts/{reserved['id']}/reservations"
    lot_cursor = page(kit, f"/accounts/{reserved['id']}/lots", limit=1)
    assert lot_cursor["next_cursor"] is None  # one lot: no next page; a lot's cursor instead
    for cursor in (
        "%%%",
        cursor_of("/accounts/{account_id}/lots", "lot_0123abcd"),
        cursor_of("/accounts/{account_id}/reservations", "lot_0123abcd"),
        cursor_of("/payments", "res_0123abcd"),
        cursor_of("/accounts/{account_id}/reservations", ["res_0123abcd"]),
    ):
        response = kit.api.get(path, query_string={"cursor": cursor})
        assert "cursor" in problem(response, 400, "bad_request")["detail"], cursor
    for limit in ("0", "501"):
        response = kit.api.get(path, query_string={"limit": limit})
        assert "limit" in problem(response, 422, "validation_error")["errors"]


# --- the pages ---------------------------------------------------------------------------------


def walk_page(client: Any, path: str, table: str, row_key: str) -> list[list[str]]:
    """The rows of ``table`` (by their ``row_key`` attribute) on each page of ``path``,
    following its "Next page" link until there is none."""
    pages: list[list[str]] = []
    while True:
        response = client.get(path)
        assert response.status_code == 200, response.get_data(as_text=True)
        document = parse(response.get_data(as_text=True))
        rows = document.one("table", id=table).one("tbody").all("tr")
        pages.append([row.attrs[row_key] for row in rows])
        following = document.all("a", id="next-page")
        if not following:
            return pages
        path = following[0].attrs["href"]
        assert len(pages) < 100, "the walk does not end"


def test_the_account_page_shows_its_lots_in_pages_each_once_in_order(app, kit, lotted):
    client = signed_in(app.test_client(), lotted["holder"]["token"])
    path = f"/accounts/{lotted['id']}"
    labels = {lot["id"]: lot["label"] for lot in kit.lots(lotted["id"])}
    period = "from=2026-05-01&to=2026-05-31"
    with at(LATE):
        pages = walk_page(client, f"{path}?limit=2&{period}", "lots", "data-lot-id")
        assert [[labels[lot] for lot in p] for p in pages] == [["E", "A"], ["B", "C"], ["D"]]
        # by default every lot here is on the one page; the statement names each lot by label
        (whole,) = walk_page(client, path, "lots", "data-lot-id")
        assert whole == list(labels)
        last = parse(client.get(f"{path}?limit=2&after={pages[1][-1]}&{period}").text)
        assert "2026-05-01" in last.one("a", id="first-page").attrs["href"]
        statement = last.all("table", **{"class": "statement-class"})
        lot_cells = {
            row.all("td")[1].text for s in statement for row in s.all("tr", **{"class": "entry"})
        }
        assert lot_cells == set(labels.values())
        # a place that is no lot of this account's: no lots there, and the way back to the first
        other = parse(client.get(f"{path}?after=lot_0123abcd").text)
        assert other.has("a", id="first-page") and not other.has("table", id="lots")
        response = client.get(f"{path}?after=not-a-lot")
        assert response.status_code == 400
        assert signed_in(app.test_client(), kit.holder()["token"]).get(path).status_code == 404


def test_the_reservations_page_shows_them_in_pages_each_once_in_order(app, kit, reserved):
    client = signed_in(app.test_client(), reserved["holder"]["token"])
    path = f"/accounts/{reserved['id']}/reservations"
    with at("2026-06-04 12:00:00"):
        pages = walk_page(client, f"{path}?limit=2", "account-reservations", "data-reservation-id")
        assert [len(p) for p in pages] == [2, 2, 1]
        assert flat(pages) == in_order(reserved["made"])
        # the pending ones keep their Void button on every page
        last = parse(client.get(f"{path}?limit=2&after={pages[1][-1]}").text)
        (row,) = last.one("table", id="account-reservations").one("tbody").all("tr")
        assert row.attrs["data-status"] == "pending" and row.one("button").text == "Void"
        assert last.has("a", id="first-page")
        assert client.get(f"{path}?limit=0").status_code == 400
        assert client.get(f"{path}?after=x'--").status_code == 400
        stranger = signed_in(app.test_client(), kit.holder()["token"])
        assert stranger.get(path).status_code == 404


def reservation_rows(document: Any) -> dict[str, str]:
    """The reservations page's rows: each reservation's id, with its status, in order."""
    rows = document.one("table", id="account-reservations").one("tbody").all("tr")
    return {row.attrs["data-reservation-id"]: row.attrs["data-status"] for row in rows}


def button_of(document: Any, reservation_id: str) -> tuple[str, dict[str, str]]:
    """The Void button of the reservation's row: where it posts, and its fields as a browser
    sends them (every hidden field of its form)."""
    form = document.one("tr", data_reservation_id=reservation_id).one("form")
    inputs = form.all("input", type="hidden")
    return form.attrs["action"], {i.attrs["name"]: i.attrs["value"] for i in inputs}


def voided_from_the_second_page(client: Any, path: str, expected: list[str]) -> Any:
    """The third reservation voided with its Void button on the second page of two: the
    button's action and fields, and the answer."""
    second = parse(client.get(f"{path}?limit=2&after={expected[1]}").text)
    assert list(reservation_rows(second)) == expected[2:4]
    action, sent = button_of(second, expected[2])
    return action, sent, client.post(action, data=sent)


def test_a_void_comes_back_to_the_page_it_was_sent_from(app, kit, reserved):
    client = signed_in(app.test_client(), reserved["holder"]["token"])
    path = f"/accounts/{reserved['id']}/reservations"
    expected = in_order(reserved["made"])
    with at("2026-06-04 12:00:00"):
        _action, _sent, voided = voided_from_the_second_page(client, path, expected)
        assert voided.status_code == 303
        shown = client.get(voided.headers["Location"])
        assert shown.status_code == 200
        back = parse(shown.text)
        # the same page of two, the reservation voided, and the way on and back
        assert back.has("p", id="form-notice")
        assert reservation_rows(back) == {expected[2]: "voided", expected[3]: "pending"}
        following = back.one("a", id="next-page").attrs["href"]
        assert f"after={expected[3]}" in following and "limit=2" in following
        assert back.has("a", id="first-page")
        # the other's button comes back here too
        fields = button_of(back, expected[3])[1]
        assert (fields["after"], fields["limit"]) == (expected[1], "2")


def test_a_refused_void_shows_the_page_it_was_sent_from(app, kit, reserved):
    client = signed_in(app.test_client(), reserved["holder"]["token"])
    path = f"/accounts/{reserved['id']}/reservations"
    expected = in_order(reserved["made"])
    with at("2026-06-04 12:00:00"):
        action, sent, voided = voided_from_the_second_page(client, path, expected)
        assert voided.status_code == 303
        # the same void sent again as a new one: refused, on the page it was sent from
        refused = client.post(action, data={**sent, "idempotency_key": "k" * 30})
        assert refused.status_code == 409
        page = parse(refused.text)
        assert "not pending" in page.one("div", id="form-problem").text
        assert reservation_rows(page) == {expected[2]: "voided", expected[3]: "pending"}
        assert not page.one("tr", data_reservation_id=expected[2]).has("form")
        following = page.one("a", id="next-page").attrs["href"]
        assert f"after={expected[3]}" in following and "limit=2" in following
        assert page.has("a", id="first-page")
        assert button_of(page, expected[3])[1]["after"] == expected[1]


def test_a_void_sent_from_a_place_no_page_of_the_account_gives_comes_back_to_the_first(
    app, kit, reserved
):
    """A Void button's page that does not fit (not a place a page gives, or a reservation of
    another account's) is the first page: the void is done, or refused, all the same."""
    client = signed_in(app.test_client(), reserved["holder"]["token"])
    path = f"/accounts/{reserved['id']}/reservations"
    expected = in_order(reserved["made"])
    misfits = [
        {"after": "x'--"},
        {"after": reserved["theirs"]["id"], "limit": "2"},
        {"after": "res_0123abcd"},
        {"after": expected[1], "limit": "0"},
        {"after": expected[1], "limit": "many"},
    ]
    with at("2026-06-04 12:00:00"):
        first = parse(client.get(path).text)
        # voided: back to the first page
        for misfit, pending in zip(misfits, expected[2:4], strict=False):
            action, sent = button_of(first, pending)
            voided = client.post(action, data={**sent, **misfit})
            assert voided.status_code == 303, misfit
            assert voided.headers["Location"].endswith(path), misfit
        shown = reservation_rows(parse(client.get(voided.headers["Location"]).text))
        voids = {reserved["made"][1]["id"], expected[2], expected[3]}
        assert shown == {r: "voided" if r in voids else "pending" for r in expected}
        # refused: the first page, with the refusal
        for n, misfit in enumerate(misfits):
            fresh = {**sent, "idempotency_key": f"{n}" * 30, **misfit}
            refused = client.post(action, data=fresh)
            assert refused.status_code == 409, misfit
            page = parse(refused.text)
            assert "not pending" in page.one("div", id="form-problem").text
            assert list(reservation_rows(page)) == expected, misfit
            assert not page.has("a", id="first-page"), misfit
