"""A bank site's credit register: Subd. 12 (c) caps a restoration, not a request; a deposit goes
only to the site's holder; a mistaken deposit is reversed, never edited (SQLite and PostgreSQL)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import func, select

from bank.deposit_tables import Deposit
from bank.party_tables import SiteCreditArea
from ledger.schema import LedgerTransaction
from tests.api.kit import Kit, ok, on, problem, story1_actions


@pytest.fixture
def kit(api: Any, app: Any) -> Kit:
    return Kit(api, app)


@pytest.fixture
def restoration(kit: Kit) -> dict[str, Any]:
    """A holder, its site registered with a 100,000 sq ft replacement wetland, and an account."""
    holder = kit.holder("Restorer")
    body = {
        "name": "Marsh Restoration",
        "holder_id": holder["id"],
        "service_area": 5,
        "county": "Lyon",
        "credit_areas": [{"category": "replacement_wetland", "area_sqft": 100_000}],
    }
    site = ok(kit.api.post("/bank-sites", body))
    return {
        "holder": holder,
        "lgu": kit.lgu(),
        "site": site,
        "site_id": site["id"],
        "account_id": kit.account(holder["id"]),
    }


def _wetland(credit: int, area: int = 100_000) -> list[dict[str, Any]]:
    return [{"category": "replacement_wetland", "area_sqft": area, "credit_sqft": credit}]


def _deposit(kit: Kit, r: dict[str, Any], actions: list[dict[str, Any]], **kw: Any) -> Any:
    body = kit.deposit_body(r["site_id"], r["lgu"]["id"], actions, **kw)
    return kit.api.post(f"/accounts/{kw.pop('account_id', r['account_id'])}/deposits", body)


def _counts(kit: Kit) -> tuple[int, int]:
    with kit.app.extensions["wetbank.db"].transaction() as session:
        deposits = session.execute(select(func.count()).select_from(Deposit)).scalar_one()
        txs = session.execute(select(func.count()).select_from(LedgerTransaction)).scalar_one()
    return int(deposits), int(txs)


def _register(kit: Kit, site_id: str) -> dict[str, dict[str, Any]]:
    site = ok(kit.api.get(f"/bank-sites/{site_id}"), 200)
    return {row["category"]: row for row in site["credit_areas"]}


def test_a_site_registers_its_areas_and_shows_them(kit, restoration):
    assert restoration["site"]["credit_areas"] == [
        {
            "category": "replacement_wetland",
            "area_sqft": 100_000,
            "cap_sqft": 100_000,
            "credited_sqft": 0,
            "remaining_sqft": 100_000,
        }
    ]


def test_the_same_deposit_posted_twice_is_refused_with_cap_exceeded(kit, restoration):
    ok(_deposit(kit, restoration, _wetland(100_000)))
    before = _counts(kit)
    body = problem(_deposit(kit, restoration, _wetland(100_000)), 422, "cap_exceeded")
    assert (body["cap_sqft"], body["credited_sqft"], body["requested_sqft"]) == (
        100_000,
        100_000,
        100_000,
    )
    assert _counts(kit) == before
    assert _register(kit, restoration["site_id"])["replacement_wetland"]["remaining_sqft"] == 0


def test_phased_releases_are_accepted_to_the_cap_and_refused_one_square_foot_past_it(
    kit, restoration
):
    ok(_deposit(kit, restoration, _wetland(15_000)))  # 15% released at once
    ok(_deposit(kit, restoration, _wetland(60_000)))  # after the first monitoring season
    row = _register(kit, restoration["site_id"])["replacement_wetland"]
    assert (row["credited_sqft"], row["remaining_sqft"]) == (75_000, 25_000)
    before = _counts(kit)
    refused = problem(_deposit(kit, restoration, _wetland(25_001)), 422, "cap_exceeded")
    assert (refused["credited_sqft"], refused["requested_sqft"]) == (75_000, 25_001)
    assert "75,000 sq ft" in refused["detail"] and "100,000 sq ft" in refused["detail"]
    assert _counts(kit) == before
    ok(_deposit(kit, restoration, _wetland(25_000)))
    row = _register(kit, restoration["site_id"])["replacement_wetland"]
    assert (row["credited_sqft"], row["remaining_sqft"]) == (100_000, 0)


def test_an_action_larger_than_its_registered_area_is_not_eligible(kit, restoration):
    body = problem(_deposit(kit, restoration, _wetland(1_000, 100_001)), 422, "not_eligible")
    assert body["field"] == "area_sqft"
    assert body["registered_area_sqft"] == 100_000


def test_a_category_first_credited_registers_the_area_its_deposit_states(kit, restoration):
    buffer = story1_actions()[1]  # 52,000 sq ft of upland buffer, 45,000 asked
    buffer["credit_sqft"] = 20_000
    ok(_deposit(kit, restoration, [*_wetland(40_000), buffer]))
    register = _register(kit, restoration["site_id"])
    # (c)(2): buffer credit up to 75% of the registered wetland area, within its own area
    assert register["upland_buffer"] == {
        "category": "upland_buffer",
        "area_sqft": 52_000,
        "cap_sqft": 52_000,
        "credited_sqft": 20_000,
        "remaining_sqft": 32_000,
    }
    # a buffer released later, with no wetland action in its deposit, counts against the site
    later = dict(buffer, credit_sqft=32_001)
    problem(_deposit(kit, restoration, [later]), 422, "cap_exceeded")
    ok(_deposit(kit, restoration, [dict(buffer, credit_sqft=32_000)]))


def test_the_board_amends_an_area_but_never_below_what_was_credited(kit, restoration):
    """An area under what the category credited would leave that credit past its Subd. 12 (c)
    cap: ``cap_exceeded``, as a deposit past the cap is, naming the same facts."""
    ok(_deposit(kit, restoration, _wetland(80_000)))
    before = _register(kit, restoration["site_id"])
    path = f"/bank-sites/{restoration['site_id']}/credit-areas"
    amend = {"category": "replacement_wetland", "area_sqft": 79_999, "reason": "resurveyed"}
    body = problem(kit.api.post(path, amend), 422, "cap_exceeded")
    assert (body["category"], body["cap_sqft"], body["credited_sqft"]) == (
        "replacement_wetland",
        79_999,
        80_000,
    )
    assert "already credited 80,000 sq ft" in body["detail"]
    assert _register(kit, restoration["site_id"]) == before
    ok(kit.api.post(path, dict(amend, area_sqft=80_000)), 200)  # the boundary: the credit
    site = ok(kit.api.post(path, dict(amend, area_sqft=120_000)), 200)
    row = {r["category"]: r for r in site["credit_areas"]}["replacement_wetland"]
    assert (row["area_sqft"], row["remaining_sqft"]) == (120_000, 40_000)


def test_only_the_board_amends_a_register(kit, restoration):
    path = f"/bank-sites/{restoration['site_id']}/credit-areas"
    amend = {"category": "replacement_wetland", "area_sqft": 1, "reason": "x"}
    problem(kit.api.post(path, amend, token=restoration["holder"]["token"]), 403, "forbidden")


def test_a_deposit_into_another_holders_account_is_not_eligible(kit, restoration):
    other = kit.holder("Someone Else")
    before = _counts(kit)
    body = kit.deposit_body(restoration["site_id"], restoration["lgu"]["id"], _wetland(1_000))
    account = kit.account(other["id"])
    refused = problem(kit.api.post(f"/accounts/{account}/deposits", body), 422, "not_eligible")
    assert refused["field"] == "bank_site_id"
    assert _counts(kit) == before


def test_a_mistaken_deposit_is_reversed_and_the_site_may_credit_again(kit, restoration):
    deposit = ok(_deposit(kit, restoration, _wetland(100_000)))
    assert deposit["reversal"] is None
    reversed_ = ok(
        kit.api.post(
            f"/deposits/{deposit['id']}/reverse",
            {"effective_on": "2026-06-01", "reason": "entered twice by mistake"},
        )
    )
    assert reversed_["reversal"]["effective_on"] == "2026-06-01"
    assert reversed_["reversal"]["reason"] == "entered twice by mistake"
    shown = ok(kit.api.get(f"/deposits/{deposit['id']}"), 200)
    assert shown["reversal"] == reversed_["reversal"]
    assert shown["reversal"]["transaction_id"] != deposit["transaction_id"]
    assert kit.balances(restoration["account_id"])["BSA5-T2-U"]["posted_sqft"] == 0
    assert _register(kit, restoration["site_id"])["replacement_wetland"]["credited_sqft"] == 0
    again = problem(
        kit.api.post(
            f"/deposits/{deposit['id']}/reverse", {"effective_on": "2026-06-01", "reason": "x"}
        ),
        409,
        "conflict",
    )
    assert "already" in again["detail"]
    ok(_deposit(kit, restoration, _wetland(100_000)))  # the corrected deposit


def test_a_deposit_whose_credits_moved_cannot_be_reversed(kit, restoration):
    deposit = ok(_deposit(kit, restoration, _wetland(100_000)))
    buyer = kit.account(kit.holder("Buyer")["id"])
    transfer = {
        "from_account_id": restoration["account_id"],
        "to_account_id": buyer,
        "amount_sqft": 1,
        "credit_class": "BSA5-T2-U",
    }
    ok(kit.api.post("/transfers", transfer))
    before = _counts(kit)
    body = problem(
        kit.api.post(
            f"/deposits/{deposit['id']}/reverse", {"effective_on": "2026-06-01", "reason": "x"}
        ),
        409,
        "conflict",
    )
    assert body["available_sqft"] == 99_999
    assert _counts(kit) == before
    assert ok(kit.api.get(f"/deposits/{deposit['id']}"), 200)["reversal"] is None


def test_a_reversal_dated_before_its_deposit_is_a_validation_error(kit, restoration):
    deposit = ok(_deposit(kit, restoration, _wetland(100)))
    reverse = {"effective_on": "2026-05-19", "reason": "x"}
    problem(kit.api.post(f"/deposits/{deposit['id']}/reverse", reverse), 422, "validation_error")


def test_a_holder_may_not_reverse_its_own_deposit(kit, restoration):
    deposit = ok(_deposit(kit, restoration, _wetland(100)))
    reverse = {"effective_on": "2026-06-01", "reason": "x"}
    token = restoration["holder"]["token"]
    problem(
        kit.api.post(f"/deposits/{deposit['id']}/reverse", reverse, token=token), 403, "forbidden"
    )
    assert ok(kit.api.get(f"/deposits/{deposit['id']}", token=token), 200)["id"] == deposit["id"]


@pytest.mark.parametrize(("typed", "meant"), [(400_000, 40_000), (4_000, 40_000)], ids=str)
def test_a_reversed_first_deposit_takes_the_area_it_stated_with_it(kit, typed, meant):
    """The area a site's first deposit of a category registers stands only while that deposit
    does: after the deposit with a mistyped area is reversed, the corrected one states it."""
    holder = kit.holder("Restorer")
    r = {
        "site_id": kit.site(holder["id"], wetland_sqft=None),
        "lgu": kit.lgu(),
        "account_id": kit.account(holder["id"]),
    }
    mistaken = ok(_deposit(kit, r, _wetland(typed, typed)))
    assert _register(kit, r["site_id"])["replacement_wetland"]["area_sqft"] == typed
    reverse = {"effective_on": "2026-06-01", "reason": "area mistyped"}
    ok(kit.api.post(f"/deposits/{mistaken['id']}/reverse", reverse))
    assert "replacement_wetland" not in _register(kit, r["site_id"])
    ok(_deposit(kit, r, _wetland(meant, meant)))  # the corrected deposit
    row = _register(kit, r["site_id"])["replacement_wetland"]
    assert (row["area_sqft"], row["credited_sqft"], row["remaining_sqft"]) == (meant, meant, 0)
    before = _counts(kit)
    problem(
        _deposit(kit, r, _wetland(typed - meant if typed > meant else 1, meant)),
        422,
        "cap_exceeded",
    )
    assert _counts(kit) == before


def test_a_reversal_is_dated_on_or_after_every_entry_of_its_lots(kit, restoration):
    """Dated before a reservation's void, the reversal would leave a past day's balance with
    credits reserved out of a lot that no longer held them."""
    deposit = ok(_deposit(kit, restoration, _wetland(50_000)))  # effective 2026-05-20
    with on("2026-05-25"):
        plan = kit.approved_plan(restoration["lgu"], "2026-05-25")
        held = kit.reserve(restoration["account_id"], plan["id"], "BSA5-T2-U", 20_000)
    with on("2026-05-30"):
        ok(kit.api.post(f"/reservations/{held['id']}/void", None), 200)
    path = f"/deposits/{deposit['id']}/reverse"
    before = _counts(kit)
    with on("2026-06-01"):
        refused = problem(
            kit.api.post(path, {"effective_on": "2026-05-29", "reason": "x"}),
            422,
            "validation_error",
        )
        assert "2026-05-30" in refused["errors"]["effective_on"][0]
        assert _counts(kit) == before
        ok(kit.api.post(path, {"effective_on": "2026-05-30", "reason": "x"}))
        past = ok(
            kit.api.get(f"/accounts/{restoration['account_id']}/balances?as_of=2026-05-27"), 200
        )
    (row,) = past["balances"]
    assert (row["posted_sqft"], row["reserved_sqft"], row["available_sqft"]) == (
        50_000,
        20_000,
        30_000,
    )


def test_a_deposit_reversal_points_at_the_deposit_it_reverses(kit, restoration):
    deposit = ok(_deposit(kit, restoration, _wetland(1_000)))
    reversed_ = ok(
        kit.api.post(
            f"/deposits/{deposit['id']}/reverse", {"effective_on": "2026-06-01", "reason": "x"}
        )
    )
    journal = ok(kit.api.get("/audit/journal?kind=deposit_reversal"), 200)["items"]
    (row,) = [t for t in journal if t["transaction_id"] == reversed_["reversal"]["transaction_id"]]
    assert row["reverses_id"] == deposit["transaction_id"]


def _buffer(credit: int, established_on: str) -> dict[str, Any]:
    return {
        "category": "upland_buffer",
        "area_sqft": 52_000,
        "credit_sqft": credit,
        "established_on": established_on,
    }


def test_a_buffer_released_later_is_established_when_its_wetland_was_completed(kit, restoration):
    """Subd. 12 (c)(2): "established at the time of wetland replacement", the replacement an
    earlier deposit credited, not the buffer's own deposit's completion date."""
    ok(_deposit(kit, restoration, _wetland(60_000), completed_on="2015-04-01"))
    before = _counts(kit)
    later = _deposit(kit, restoration, [_buffer(20_000, "2026-04-14")], completed_on="2026-04-14")
    refused = problem(later, 422, "not_eligible")
    assert refused["field"] == "established_on" and "2015-04-01" in refused["detail"]
    assert _counts(kit) == before
    ok(_deposit(kit, restoration, [_buffer(20_000, "2015-04-01")], completed_on="2026-04-14"))


def test_a_buffer_is_not_credited_beside_a_wetland_only_registered(kit, restoration):
    """An area registered for the site's wetland, but no wetland credited: nothing restored."""
    before = _counts(kit)
    refused = problem(
        _deposit(kit, restoration, [_buffer(20_000, "2026-04-14")]), 422, "not_eligible"
    )
    assert refused["field"] == "category" and refused["requires"] == "replacement_wetland"
    assert _counts(kit) == before


def test_a_buffer_is_not_credited_beside_a_wetland_whose_deposit_was_reversed(kit, restoration):
    wetland = ok(_deposit(kit, restoration, _wetland(60_000)))
    reverse = {"effective_on": "2026-06-01", "reason": "entered by mistake"}
    ok(kit.api.post(f"/deposits/{wetland['id']}/reverse", reverse))
    before = _counts(kit)
    refused = problem(
        _deposit(kit, restoration, [_buffer(20_000, "2026-04-14")]), 422, "not_eligible"
    )
    assert refused["requires"] == "replacement_wetland"
    assert _counts(kit) == before


def test_an_amendment_that_would_leave_a_buffer_past_its_cap_is_cap_exceeded(kit, restoration):
    """The wetland's area is what its buffer's cap follows (Subd. 12 (c)(2): 75% of it): an
    amendment leaving the buffer's credit past the cap it would then have is refused as the
    wetland's reversal beside it is (422 ``cap_exceeded`` naming the buffer, its cap and its
    credit), writing nothing; one square foot more is taken."""
    ok(_deposit(kit, restoration, _wetland(20_000)))
    ok(_deposit(kit, restoration, [_buffer(20_000, "2026-04-14")]))
    before = _register(kit, restoration["site_id"])
    path = f"/bank-sites/{restoration['site_id']}/credit-areas"
    amend = {"category": "replacement_wetland", "area_sqft": 26_666, "reason": "resurveyed"}
    refused = problem(kit.api.post(path, amend), 422, "cap_exceeded")
    assert (refused["category"], refused["cap_sqft"], refused["credited_sqft"]) == (
        "upland_buffer",
        19_999,  # 75% of 26,666, rounded down
        20_000,
    )
    assert _register(kit, restoration["site_id"]) == before
    site = ok(kit.api.post(path, dict(amend, area_sqft=26_667)), 200)
    row = {r["category"]: r for r in site["credit_areas"]}["upland_buffer"]
    assert (row["cap_sqft"], row["credited_sqft"], row["remaining_sqft"]) == (20_000, 20_000, 0)


def test_a_site_credited_over_a_cap_before_its_register_still_has_other_areas_amended(
    kit, restoration
):
    """A site posted twice before the register existed is over its wetland's cap: amending an
    unrelated category, or raising the short one, is not refused for it; lowering it further
    is."""
    ok(_deposit(kit, restoration, _wetland(100_000)))
    with kit.app.extensions["wetbank.db"].transaction() as session:  # as migration 0007 left it
        session.add(
            SiteCreditArea(
                bank_site_id=restoration["site_id"],
                category="replacement_wetland",
                area_sqft=50_000,
                source="amended",
                reason="the register as a site posted twice before it was kept",
                recorded_at=datetime.now(UTC),
                actor="test",
            )
        )
    path = f"/bank-sites/{restoration['site_id']}/credit-areas"
    pond = {"category": "treatment_pond", "area_sqft": 20_000, "reason": "pond surveyed"}
    ok(kit.api.post(path, pond), 200)
    lower = {"category": "replacement_wetland", "area_sqft": 40_000, "reason": "x"}
    problem(kit.api.post(path, lower), 422, "cap_exceeded")
    higher = dict(lower, area_sqft=60_000)
    ok(kit.api.post(path, higher), 200)
    assert _register(kit, restoration["site_id"])["replacement_wetland"]["area_sqft"] == 60_000


def test_a_reversed_first_deposit_leaves_its_area_while_other_credits_stand_under_it(kit):
    """Deposit A states 40,000 sq ft first, B credits under it; reversing A leaves the area (B's
    credits stand), so a later deposit cannot state a larger one and make it the cap."""
    holder = kit.holder("Restorer")
    r = {
        "site_id": kit.site(holder["id"], wetland_sqft=None),
        "lgu": kit.lgu(),
        "account_id": kit.account(holder["id"]),
    }
    first = ok(_deposit(kit, r, _wetland(10_000, 40_000)))
    ok(_deposit(kit, r, _wetland(10_000, 40_000)))
    reverse = {"effective_on": "2026-06-01", "reason": "entered twice by mistake"}
    ok(kit.api.post(f"/deposits/{first['id']}/reverse", reverse))
    row = _register(kit, r["site_id"])["replacement_wetland"]
    assert (row["area_sqft"], row["credited_sqft"], row["remaining_sqft"]) == (
        40_000,
        10_000,
        30_000,
    )
    before = _counts(kit)
    refused = problem(_deposit(kit, r, _wetland(300_000, 400_000)), 422, "not_eligible")
    assert refused["registered_area_sqft"] == 40_000
    assert _counts(kit) == before


# --- a reversal leaves no buffer credit standing beside no wetland ------------------------------

#: (the wetland's action, a buffer's action beside it at its Subd. 12 (c) cap of the wetland)
BESIDE = {
    "upland_buffer": (
        {"category": "replacement_wetland", "area_sqft": 10_000, "credit_sqft": 10_000},
        {
            "category": "upland_buffer",
            "area_sqft": 8_000,
            "credit_sqft": 7_500,  # (c)(2): 75% of the wetland's area
            "established_on": "2026-10-01",
        },
    ),
    "easement_buffer": (
        {
            "category": "easement_restoration",
            "area_sqft": 10_000,
            "credit_sqft": 7_500,
            "easement_terminated_on": "2026-09-01",
        },
        {"category": "easement_buffer", "area_sqft": 4_000, "credit_sqft": 2_500},  # (c)(3) 25%
    ),
}


def _site_state(kit: Kit, r: dict[str, Any], *deposits: dict[str, Any]) -> Any:
    """What a refused reversal must leave as it was: the site's register, the account's
    balances, each deposit's reversal (none), and the rows of deposits and transactions."""
    return (
        _register(kit, r["site_id"]),
        kit.balances(r["account_id"]),
        [ok(kit.api.get(f"/deposits/{d['id']}"), 200)["reversal"] for d in deposits],
        _counts(kit),
    )


@pytest.mark.parametrize("buffer", sorted(BESIDE))
def test_a_wetlands_deposit_is_not_reversed_while_its_buffers_credit_stands(kit, buffer):
    """Reviewer 1: a site with no register; the wetland's deposit registers its area, a later
    deposit credits only its buffer, to the cap.  Reversing the wetland's deposit would take the
    area, and so the buffer's cap, with it and leave the buffer's credit standing beside no
    wetland: refused, writing nothing.  The buffer's deposit reversed first, it goes through."""
    wetland, beside = BESIDE[buffer]
    holder = kit.holder("Restorer")
    r = {
        "site_id": kit.site(holder["id"], wetland_sqft=None),
        "lgu": kit.lgu(),
        "account_id": kit.account(holder["id"]),
    }
    dates = {"completed_on": "2026-10-01", "approved_on": "2026-09-15"}
    with on("2026-11-03"):
        first = ok(_deposit(kit, r, [wetland], effective_on="2026-10-01", **dates))
        second = ok(_deposit(kit, r, [beside], effective_on="2026-10-02", **dates))
        before = _site_state(kit, r, first, second)
        reverse = {"effective_on": "2026-11-03", "reason": "mistyped"}
        refused = problem(
            kit.api.post(f"/deposits/{first['id']}/reverse", reverse), 422, "cap_exceeded"
        )
        assert (refused["category"], refused["credited_sqft"], refused["cap_sqft"]) == (
            buffer,
            beside["credit_sqft"],
            0,
        )
        assert _site_state(kit, r, first, second) == before
        ok(kit.api.post(f"/deposits/{second['id']}/reverse", reverse))
        ok(kit.api.post(f"/deposits/{first['id']}/reverse", reverse))
        assert _register(kit, r["site_id"]) == {}
        assert all(row["posted_sqft"] == 0 for row in kit.balances(r["account_id"]).values())


def test_a_wetlands_deposit_is_not_reversed_while_its_buffer_stands_beside_a_registered_area(
    kit, restoration
):
    """The wetland's area registered with the site stays when its only deposit is reversed, but
    a buffer earns credit only beside a wetland credited by a deposit that stands (§2): refused
    as well.  With another deposit of the wetland standing, the reversal goes through."""
    first = ok(_deposit(kit, restoration, _wetland(60_000)))
    ok(_deposit(kit, restoration, [_buffer(20_000, "2026-04-14")]))
    before = _site_state(kit, restoration, first)
    reverse = {"effective_on": "2026-06-01", "reason": "entered by mistake"}
    refused = problem(
        kit.api.post(f"/deposits/{first['id']}/reverse", reverse), 422, "cap_exceeded"
    )
    assert (refused["category"], refused["credited_sqft"], refused["cap_sqft"]) == (
        "upland_buffer",
        20_000,
        0,
    )
    assert _site_state(kit, restoration, first) == before
    ok(_deposit(kit, restoration, _wetland(30_000)))  # the wetland credited again, standing
    ok(kit.api.post(f"/deposits/{first['id']}/reverse", reverse))
    register = _register(kit, restoration["site_id"])
    assert register["replacement_wetland"]["credited_sqft"] == 30_000
    assert register["upland_buffer"]["credited_sqft"] == 20_000
    assert register["upland_buffer"]["cap_sqft"] == 52_000  # its own area: under 75% of 100,000
