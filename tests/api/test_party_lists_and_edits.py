"""Issue 26 item 3: the board lists holders, LGUs and bank sites (pages and filters) and
corrects their names and addresses, each correction with its reason, recorded append-only."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import text

from bank import party_edits
from tests.api.kit import Kit, ok, problem, unique


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def patch(api: Any, path: str, body: Any, token: str | None = None) -> Any:
    return api.patch(path, body, token)


def listed(api: Any, path: str, token: str | None = None, **query: Any) -> list[dict[str, Any]]:
    """Every item of a listing, page by page (``limit=1`` unless given)."""
    query.setdefault("limit", 1)
    items: list[dict[str, Any]] = []
    cursor = None
    while True:
        page = ok(api.get(path, token=token, query_string={**query, "cursor": cursor}), 200)
        items += page["items"]
        cursor = page["next_cursor"]
        if cursor is None:
            return items


def edits(app: Any, kind: str, party_id: str) -> list[dict[str, Any]]:
    with app.extensions["wetbank.db"].transaction() as session:
        return [party_edits.as_record(row) for row in party_edits.edits_of(session, kind, party_id)]


# --- lists ------------------------------------------------------------------------------------


def test_the_board_pages_through_holders_whose_name_contains_the_text(api, kit):
    tag = unique("Marsh").split()[1]
    names = [f"Big Marsh {tag} LLC", f"big MARSH {tag} farms", f"Upland {tag} Co"]
    ids = {ok(api.post("/holders", {"name": name}))["id"] for name in names}
    kit.holder("Other")
    everything = listed(api, "/holders", q=tag)
    assert {h["id"] for h in everything} == ids and len(everything) == 3
    assert [h["id"] for h in everything] == sorted(h["id"] for h in everything)
    marsh = listed(api, "/holders", q=f"marsh {tag}".upper())
    assert {h["name"] for h in marsh} == set(names[:2])
    assert set(marsh[0]) == {"id", "name", "email", "address", "created_at"}


def test_the_name_filter_takes_percent_and_underscore_as_text(api):
    tag = unique("x").split()[1]
    literal = ok(api.post("/holders", {"name": f"100% {tag}"}))["id"]
    ok(api.post("/holders", {"name": f"100 {tag}"}))
    assert [h["id"] for h in listed(api, "/holders", q=f"100% {tag}")] == [literal]
    assert listed(api, "/holders", q=f"1_0 {tag}") == []


def test_the_board_lists_lgus_by_name(api, kit):
    tag = unique("x").split()[1]
    wanted = ok(api.post("/lgus", {"name": f"Lyon County {tag}", "kind": "county"}))
    ok(api.post("/lgus", {"name": f"Marshall {tag}", "kind": "city"}))
    found = listed(api, "/lgus", q=f"lyon county {tag}")
    assert [lgu["id"] for lgu in found] == [wanted["id"]]
    assert found[0]["kind"] == "county" and found[0]["name"] == f"Lyon County {tag}"


def test_the_board_lists_bank_sites_by_holder_service_area_and_name(api, kit):
    one, two = kit.holder(), kit.holder()
    in_5 = kit.site(one["id"], 5)
    in_7 = kit.site(one["id"], 7)
    other = kit.site(two["id"], 5)
    assert {s["id"] for s in listed(api, "/bank-sites", holder_id=one["id"])} == {in_5, in_7}
    in_area = listed(api, "/bank-sites", holder_id=one["id"], service_area=5, limit=50)
    assert [s["id"] for s in in_area] == [in_5]
    assert in_area[0]["credit_areas"] and in_area[0]["holder_id"] == one["id"]
    name = ok(api.get(f"/bank-sites/{other}"), 200)["name"]
    assert [s["id"] for s in listed(api, "/bank-sites", q=name.lower())] == [other]


def test_only_the_board_lists_parties(api, kit, holder, lgu):
    for path in ("/holders", "/lgus", "/bank-sites"):
        problem(api.get(path, token=holder["token"]), 403, "forbidden")
        problem(api.get(path, token=lgu["token"]), 403, "forbidden")
        problem(api.get(path, token=""), 401, "unauthorized")


def test_a_cursor_of_another_listing_or_a_bad_filter_is_refused(api, kit):
    kit.holder(), kit.holder()
    cursor = ok(api.get("/holders", query_string={"limit": 1}), 200)["next_cursor"]
    assert cursor
    problem(api.get("/lgus", query_string={"cursor": cursor}), 400, "bad_request")
    problem(api.get("/holders", query_string={"cursor": "nonsense"}), 400, "bad_request")
    bad_area = api.get("/bank-sites", query_string={"service_area": "99999999999"})
    assert "service_area" in problem(bad_area, 422, "validation_error")["errors"]
    problem(api.get("/holders", query_string={"limit": 0}), 422, "validation_error")


# --- corrections ------------------------------------------------------------------------------


def test_the_board_corrects_a_holder_and_the_edit_is_recorded(api, app, kit):
    holder = ok(api.post("/holders", {"name": "Prarie Creek LLC", "email": "a@x.example"}))
    body = ok(
        patch(
            api,
            f"/holders/{holder['id']}",
            {"name": "Prairie Creek LLC", "address": "1 Main St, Marshall", "reason": "typo"},
        ),
        200,
    )
    assert body["name"] == "Prairie Creek LLC" and body["address"] == "1 Main St, Marshall"
    assert body["email"] == "a@x.example"
    assert ok(api.get(f"/holders/{holder['id']}"), 200)["name"] == "Prairie Creek LLC"
    [edit] = edits(app, "holder", holder["id"])
    assert edit["changes"] == {
        "name": {"from": "Prarie Creek LLC", "to": "Prairie Creek LLC"},
        "address": {"from": None, "to": "1 Main St, Marshall"},
    }
    assert edit["reason"] == "typo" and edit["actor"].startswith("test board")
    assert edit["recorded_at"]


def test_an_edit_without_a_reason_is_a_validation_error_and_changes_nothing(api, app, kit):
    holder = kit.holder()
    path = f"/holders/{holder['id']}"
    before = ok(api.get(path), 200)
    refused = problem(patch(api, path, {"name": "New name"}), 422, "validation_error")
    assert "reason" in refused["errors"]
    problem(patch(api, path, {"name": "New", "reason": ""}), 422, "validation_error")
    problem(patch(api, path, {"reason": "nothing named"}), 422, "validation_error")
    problem(patch(api, path, {"name": "", "reason": "empty"}), 422, "validation_error")
    problem(patch(api, path, {"email": "nope", "reason": "bad"}), 422, "validation_error")
    assert ok(api.get(path), 200) == before
    assert edits(app, "holder", holder["id"]) == []


def test_only_names_and_addresses_can_be_edited(api, kit):
    holder = kit.holder()
    site = kit.site(holder["id"])
    other = kit.holder()
    for body in (
        {"holder_id": other["id"], "reason": "move it"},
        {"service_area": 7, "reason": "move it"},
        {"frozen": True, "reason": "x"},
    ):
        problem(patch(api, f"/bank-sites/{site}", body), 422, "validation_error")
    lgu = kit.lgu()
    problem(
        patch(api, f"/lgus/{lgu['id']}", {"kind": "city", "reason": "x"}), 422, "validation_error"
    )
    after = ok(api.get(f"/bank-sites/{site}"), 200)
    assert (after["holder_id"], after["service_area"]) == (holder["id"], 5)


def test_the_board_corrects_an_lgu_and_a_site_and_the_registry_still_verifies(api, app, kit):
    lgu = kit.lgu()
    body = ok(patch(api, f"/lgus/{lgu['id']}", {"name": "Lyon County", "reason": "full name"}), 200)
    assert body["name"] == "Lyon County" and body["kind"] == "county"
    holder = kit.holder()
    site = kit.site(holder["id"])
    change = {"name": "Cottonwood Bank", "county": "Redwood", "major_watershed": None}
    fixed = ok(patch(api, f"/bank-sites/{site}", {**change, "reason": "resurvey"}), 200)
    assert (fixed["name"], fixed["county"], fixed["major_watershed"]) == (
        "Cottonwood Bank",
        "Redwood",
        None,
    )
    assert fixed["credit_areas"] and fixed["holder_id"] == holder["id"]
    [lgu_edit] = edits(app, "lgu", lgu["id"])
    assert lgu_edit["changes"]["name"]["to"] == "Lyon County"
    [site_edit] = edits(app, "bank_site", site)
    assert set(site_edit["changes"]) == {"name", "county"}  # the watershed was None already
    assert ok(api.get("/audit/verify"), 200)["ok"] is True


def test_an_edit_that_changes_nothing_records_nothing(api, app, kit):
    holder = ok(api.post("/holders", {"name": "Same"}))
    ok(patch(api, f"/holders/{holder['id']}", {"name": "Same", "reason": "check"}), 200)
    assert edits(app, "holder", holder["id"]) == []


def test_only_the_board_edits_and_an_unknown_party_is_404(api, kit, holder, lgu):
    body = {"name": "Mine now", "reason": "because"}
    problem(patch(api, f"/holders/{holder['id']}", body, token=holder["token"]), 403, "forbidden")
    problem(patch(api, f"/lgus/{lgu['id']}", body, token=lgu["token"]), 403, "forbidden")
    site = kit.site(holder["id"])
    problem(patch(api, f"/bank-sites/{site}", body, token=holder["token"]), 403, "forbidden")
    problem(patch(api, f"/holders/{holder['id']}", {}, token=holder["token"]), 403, "forbidden")
    problem(patch(api, "/holders/hld_nope", body), 404, "not_found")
    problem(patch(api, "/lgus/lgu_nope", body), 404, "not_found")
    problem(patch(api, "/bank-sites/site_nope", body), 404, "not_found")


def test_the_record_of_edits_is_append_only(api, app, kit):
    holder = kit.holder()
    ok(patch(api, f"/holders/{holder['id']}", {"name": "Renamed", "reason": "r"}), 200)
    db = app.extensions["wetbank.db"]
    for statement in (
        "UPDATE party_edits SET reason = 'rewritten' WHERE party_id = :id",
        "DELETE FROM party_edits WHERE party_id = :id",
    ):
        with pytest.raises(Exception, match="append-only"):
            with db.engine.begin() as connection:
                connection.execute(text(statement), {"id": holder["id"]})
    [edit] = edits(app, "holder", holder["id"])
    assert edit["reason"] == "r"
