"""docs/http.md "Replacement plans and appeals" (withdrawals): docs/domain.md §3, the first 1:1 and
above-1:1 portions, rounding, releases of excess reservations, and when a plan allows a
withdrawal."""

from __future__ import annotations

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import grant, noticed_decision, petition, rule
from tests.api.web_kit import parse, signed_in

DAY = "2026-06-08"


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def withdraw(kit: Kit, plan: dict, reservations: list[dict], token=None):
    ids = [r["id"] for r in reservations]
    return kit.api.post(f"/plans/{plan['id']}/withdrawals", {"reservation_ids": ids}, token=token)


def portions(withdrawal: dict) -> list[tuple[str, int, str]]:
    return sorted(
        (a["credit_class"], a["amount_sqft"], a["portion"]) for a in withdrawal["allocations"]
    )


def reservation_status(kit: Kit, reservation: dict) -> str:
    return str(ok(kit.api.get(f"/reservations/{reservation['id']}"), 200)["status"])


def test_a_2_to_1_withdrawal_half_restricted_meets_9_000_first_and_9_000_above(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=12_000, restricted=9_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000)
        withdrawal = ok(withdraw(kit, plan, [u, r], token=lgu["token"]))
        balances = kit.balances(bank["id"])
        shown = kit.get_plan(plan["id"], token=lgu["token"])
    assert portions(withdrawal) == [
        ("BSA5-T2-R", 9_000, "above_1_to_1"),
        ("BSA5-T2-U", 9_000, "first_1_to_1"),
    ]
    assert withdrawal["withdrawn_sqft"] == 18_000 and withdrawal["transaction_id"]
    assert balances["BSA5-T2-U"]["posted_sqft"] == 3_000
    assert balances["BSA5-T2-R"]["posted_sqft"] == 0
    assert {r["status"] for r in shown["reservations"]} == {"posted"}
    assert [w["id"] for w in shown["withdrawals"]] == [withdrawal["id"]]
    # approved but not yet final: the credits are in, the decision is not
    assert [b["code"] for b in shown["impact_blockers"]] == ["decision_not_final"]


@pytest.mark.parametrize(
    ("unrestricted", "restricted"),
    [(6_000, 12_000), (8_999, 9_001), (0, 18_000)],
)
def test_restricted_credits_offered_for_the_first_1_to_1_of_9_000_are_refused(
    kit, unrestricted, restricted
):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=24_000, restricted=18_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        reserved = []
        if unrestricted:
            reserved.append(
                kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], unrestricted)
            )
        reserved.append(kit.reserve(bank["id"], plan["id"], bank["restricted_class"], restricted))
        before = kit.balances(bank["id"])
        body = problem(
            withdraw(kit, plan, reserved, token=lgu["token"]), 422, "restricted_credit_misuse"
        )
        after = kit.balances(bank["id"])
        shown = kit.get_plan(plan["id"])
    assert "1:1" in body["detail"]
    # nothing was written: the reservations still hold the credits
    assert after == before
    assert {r["status"] for r in shown["reservations"]} == {"pending"}
    assert shown["withdrawals"] == []


def test_story_2_hollis_reserving_6_000_unrestricted_and_12_000_restricted_is_misuse(kit):
    township = kit.lgu(kind="township")
    with on("2026-06-08"):
        hollis = kit.funded_account(
            day="2026-06-08", service_area=5, unrestricted=16_000, restricted=12_000
        )
        plan = kit.plan(township, received_on="2026-06-08", area_sqft=9_000, ratio="2")
        u = kit.reserve(hollis["id"], plan["id"], hollis["unrestricted_class"], 6_000)
        r = kit.reserve(hollis["id"], plan["id"], hollis["restricted_class"], 12_000)
    with on("2026-06-18"):  # the summary, on the last of its ten days (Subd. 6 (b))
        kit.mail_summary(township, plan, "2026-06-18")
    with on("2026-07-01"):
        ok(
            kit.api.post(
                f"/plans/{plan['id']}/decision",
                decision_body("approved", "2026-07-01"),
                token=township["token"],
            )
        )
        problem(
            withdraw(kit, plan, [u, r], token=township["token"]), 422, "restricted_credit_misuse"
        )


@pytest.mark.parametrize(("reserved", "status"), [(13_501, 422), (13_502, 201)])
def test_9_001_sq_ft_at_1_5_to_1_needs_13_502_sq_ft_rounded_up(kit, reserved, status):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=14_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_001, ratio="1.5")
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], reserved)
        response = withdraw(kit, plan, [reservation], token=lgu["token"])
    assert plan["required_credit_sqft"] == 13_502  # 9,001 × 1.5 = 13,501.5 → 13,502
    assert plan["required_unrestricted_sqft"] == 9_001
    if status == 422:
        body = problem(response, 422, "insufficient_credits")
        assert "13502" in body["detail"].replace(",", "")
    else:
        assert portions(ok(response)) == [
            ("BSA5-T2-U", 4_501, "above_1_to_1"),
            ("BSA5-T2-U", 9_001, "first_1_to_1"),
        ]


def test_too_little_reserved_is_insufficient_credits(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000, restricted=8_999)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 8_999)
        problem(withdraw(kit, plan, [u, r], token=lgu["token"]), 422, "insufficient_credits")
        assert reservation_status(kit, u) == reservation_status(kit, r) == "pending"


def test_credits_reserved_beyond_the_18_000_required_are_released_to_their_lot(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=14_000, restricted=9_000)
        lots = kit.lots_by_id(bank["id"])
        u_lot = next(i for i, lot in lots.items() if lot["credit_class"] == "BSA5-T2-U")
        r_lot = next(i for i, lot in lots.items() if lot["credit_class"] == "BSA5-T2-R")
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        u = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 12_000)
        r = kit.reserve(bank["id"], plan["id"], bank["restricted_class"], 9_000)
        assert kit.available_by_lot(bank["id"]) == {u_lot: 2_000, r_lot: 0}
        withdrawal = ok(withdraw(kit, plan, [u, r], token=lgu["token"]))
        available = kit.available_by_lot(bank["id"])
        lots_after = kit.lots_by_id(bank["id"])
        statuses = (reservation_status(kit, u), reservation_status(kit, r))
    assert withdrawal["withdrawn_sqft"] == 18_000
    assert portions(withdrawal) == [
        ("BSA5-T2-R", 9_000, "above_1_to_1"),
        ("BSA5-T2-U", 9_000, "first_1_to_1"),
    ]
    # 12,000 unrestricted were reserved, 9,000 used: the lot gets 3,000 back
    assert available == {u_lot: 5_000, r_lot: 0}
    assert lots_after[u_lot]["posted_sqft"] == 5_000
    assert statuses == ("posted", "posted")


def test_a_reservation_the_withdrawal_does_not_need_is_released_whole(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="1")
        needed = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 9_000)
        spare = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 4_000)
        withdrawal = ok(withdraw(kit, plan, [needed, spare], token=lgu["token"]))
        balance = kit.balances(bank["id"])["BSA5-T2-U"]
        statuses = (reservation_status(kit, needed), reservation_status(kit, spare))
    assert withdrawal["withdrawn_sqft"] == 9_000
    assert balance["posted_sqft"] == balance["available_sqft"] == 11_000
    assert balance["reserved_sqft"] == 0
    assert statuses[0] == "posted" and statuses[1] != "pending"


def received(kit: Kit, lgu: dict) -> dict:
    return kit.plan(lgu, received_on=DAY, area_sqft=9_000)


def noticed(kit: Kit, lgu: dict) -> dict:
    plan = received(kit, lgu)
    ok(kit.api.post(f"/plans/{plan['id']}/notices", mailing(DAY, plan=plan), token=lgu["token"]))
    return plan


def denied(kit: Kit, lgu: dict) -> dict:
    plan = noticed(kit, lgu)
    body = decision_body("denied", DAY)
    ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    return plan


@pytest.mark.parametrize("make", [received, noticed, denied], ids=lambda f: f.__name__)
def test_a_withdrawal_before_an_approval_is_a_conflict(kit, make):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = make(kit, lgu)
        # a denied plan takes no reservation; reserve for the others
        if make is denied:
            body = {
                "plan_id": plan["id"],
                "credit_class": bank["unrestricted_class"],
                "amount_sqft": 18_000,
                "expires_on": "2027-12-31",
            }
            problem(kit.api.post(f"/accounts/{bank['id']}/reservations", body), 409, "conflict")
            reservation = {"id": "res_none"}
        else:
            reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        body = problem(withdraw(kit, plan, [reservation], token=lgu["token"]), 409, "conflict")
        assert body["status"] == 409  # the problem's own status, not the plan's
        if make is not denied:
            assert reservation_status(kit, reservation) == "pending"


def test_a_deemed_approval_allows_the_withdrawal_the_day_after_decision_due(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = received(kit, lgu)  # decision due Friday 2026-08-07
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-08-07"):
        problem(withdraw(kit, plan, [reservation], token=lgu["token"]), 409, "conflict")
    with on("2026-08-08"):
        withdrawal = ok(withdraw(kit, plan, [reservation], token=lgu["token"]))
        shown = kit.get_plan(plan["id"])
    assert withdrawal["withdrawn_sqft"] == 18_000
    assert shown["status"] == "deemed_approved"


def test_a_withdrawal_after_the_approval_became_final_is_allowed(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        ok(kit.api.post(f"/plans/{plan['id']}/decision-notice", mailing(DAY, plan=plan)))
        reservation = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    with on("2026-06-24"):  # window ended Tuesday 2026-06-23
        assert kit.get_plan(plan["id"])["status"] == "final"
        ok(withdraw(kit, plan, [reservation], token=lgu["token"]))
        shown = kit.get_plan(plan["id"])
    assert shown["impact_may_proceed"] is True


def test_a_second_withdrawal_for_the_same_plan_is_a_conflict(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=40_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        first = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        # reserved before the first withdrawal met the requirement (a reservation after it is
        # refused: test_a_reservation_for_a_plan_whose_requirement_withdrawals_met_is_conflict)
        second = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
        ok(withdraw(kit, plan, [first], token=lgu["token"]))
        refused = problem(withdraw(kit, plan, [second], token=lgu["token"]), 409, "conflict")
        assert refused["required_sqft"] == 18_000
        problem(withdraw(kit, plan, [first]), 409, "conflict")
        assert reservation_status(kit, second) == "pending"
        assert len(kit.get_plan(plan["id"])["withdrawals"]) == 1


def test_a_reservation_made_for_another_plan_cannot_be_withdrawn(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=40_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        other = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")
        theirs = kit.reserve(bank["id"], other["id"], bank["unrestricted_class"], 18_000)
        body = problem(withdraw(kit, plan, [theirs], token=lgu["token"]), 422, "validation_error")
    assert "reservation_ids" in body["errors"]


@pytest.mark.parametrize(("ratio", "status"), [("0.99", 422), ("1", 201)])
def test_a_replacement_ratio_below_1_to_1_is_ratio_too_low(kit, ratio, status):
    lgu = kit.lgu()
    with on(DAY):
        body = kit.plan_body(received_on=DAY, area_sqft=9_000, ratio=ratio)
        response = kit.api.post("/plans", body, token=lgu["token"])
    if status == 422:
        problem(response, 422, "ratio_too_low")
    else:
        plan = ok(response)
        assert plan["required_credit_sqft"] == plan["required_unrestricted_sqft"] == 9_000


def test_credits_from_another_service_area_are_not_eligible_unless_the_plan_allows_it(kit):
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=6, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=9_000, ratio="2")  # BSA 5
        body = {
            "plan_id": plan["id"],
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 18_000,
            "expires_on": "2027-12-31",
        }
        problem(kit.api.post(f"/accounts/{bank['id']}/reservations", body), 422, "not_eligible")
        elsewhere = kit.approved_plan(
            lgu, DAY, area_sqft=9_000, ratio="2", replacement_outside_service_area=True
        )
        reservation = kit.reserve(bank["id"], elsewhere["id"], bank["unrestricted_class"], 18_000)
        ok(withdraw(kit, elsewhere, [reservation], token=lgu["token"]))


# --- what a withdrawal took from each reservation -------------------------------------------------


def test_a_reservation_posted_in_part_shows_the_square_feet_withdrawn_from_it(app, kit):
    """18,000 sq ft required, 10,000 + 12,000 + 500 reserved: the withdrawal takes 18,000 from
    the first two (one of them in part) and releases the 500 whole; each reservation says, from
    the ledger, what was taken from it, as the withdrawal's allocations do, on the API and the
    pages; a reversal on appeal leaves that as it was and says the credits went back."""
    lgu = kit.lgu()
    with on("2026-08-20"):
        bank = kit.funded_account(day="2026-08-20", service_area=5, unrestricted=30_000)
    code = bank["unrestricted_class"]
    plan = noticed_decision(kit, lgu)  # 9,000 sq ft at 2:1, approved, noticed 2026-09-04
    with on("2026-09-04"):
        made = [kit.reserve(bank["id"], plan["id"], code, n) for n in (10_000, 12_000, 500)]
        before = reservations_shown(kit, bank, plan, made, lgu)
        withdrawal = ok(withdraw(kit, plan, made, token=lgu["token"]))
        after = reservations_shown(kit, bank, plan, made, lgu)
        pages = reservation_pages(app, bank, plan, made, lgu)
    taken = {r["id"]: 0 for r in made}
    for allocation in withdrawal["allocations"]:
        taken[allocation["reservation_id"]] += allocation["amount_sqft"]
    assert sum(taken.values()) == withdrawal["withdrawn_sqft"] == 18_000
    assert taken[made[2]["id"]] == 0  # released whole
    ids = [r["id"] for r in made]
    assert made[0]["withdrawn_sqft"] == 0  # the reservation as made
    assert before == {where: {rid: ("pending", 0) for rid in ids} for where in before}
    expected = {
        rid: ("voided", 0) if rid == made[2]["id"] else ("posted", taken[rid]) for rid in ids
    }
    assert after == {where: expected for where in after}
    # one of the two posted is posted in part: less withdrawn than reserved
    assert sorted(n for rid, n in taken.items() if n) in ([8_000, 10_000], [6_000, 12_000])
    page_numbers = {
        rid: f"{n:,}" if expected[rid][0] == "posted" else "—" for rid, n in taken.items()
    }
    assert pages == {"plan": page_numbers, "account": page_numbers}

    appeal = ok(petition(kit, plan))
    ok(grant(kit, appeal, "2026-10-06"))
    ok(rule(kit, appeal, "2026-10-20", "plan_reversed"))
    with on("2026-10-20"):
        returned = ok(kit.api.get(f"/reservations/{made[0]['id']}"), 200)
        reversed_after = reservations_shown(kit, bank, plan, made, lgu)
        back = kit.balances(bank["id"])[code]
    assert reversed_after == after
    assert returned["reversed_on_appeal"] is True
    assert back["available_sqft"] == 30_000


def reservations_shown(
    kit: Kit, bank: dict, plan: dict, made: list[dict], lgu: dict
) -> dict[str, dict[str, tuple[str, int]]]:
    """Each reservation's status and ``withdrawn_sqft`` as its own reply, its plan's and its
    account's list show them."""
    ids = {r["id"] for r in made}

    def shown(items: list[dict]) -> dict[str, tuple[str, int]]:
        return {r["id"]: (r["status"], r["withdrawn_sqft"]) for r in items if r["id"] in ids}

    own = [ok(kit.api.get(f"/reservations/{rid}", token=lgu["token"]), 200) for rid in ids]
    of_plan = kit.get_plan(plan["id"], token=lgu["token"])["reservations"]
    of_account = ok(kit.api.get(f"/accounts/{bank['id']}/reservations"), 200)["items"]
    return {"own": shown(own), "plan": shown(of_plan), "account": shown(of_account)}


def reservation_pages(
    app, bank: dict, plan: dict, made: list[dict], lgu: dict
) -> dict[str, dict[str, str]]:
    """The "Withdrawn" cell of each reservation on the plan's page (its LGU's) and on the
    account's reservations page (its holder's)."""
    ids = {r["id"] for r in made}
    out = {}
    for where, token, path, table in (
        ("plan", lgu["token"], f"/plans/{plan['id']}", "reservations"),
        (
            "account",
            bank["holder"]["token"],
            f"/accounts/{bank['id']}/reservations",
            "account-reservations",
        ),
    ):
        response = signed_in(app.test_client(), token).get(path)
        assert response.status_code == 200, response.get_data(as_text=True)
        rows = parse(response.get_data(as_text=True)).one("table", id=table).one("tbody").all("tr")
        out[where] = {
            row.attrs["data-reservation-id"]: row.one("td", data_field="withdrawn_sqft").text
            for row in rows
            if row.attrs.get("data-reservation-id") in ids
        }
    return out


# --- what a plan still takes in bank credits ---------------------------------------------------


def reserve_for(kit: Kit, bank: dict, plan: dict, amount: int, token=None):
    body = kit.reservation_body(plan["id"], bank["unrestricted_class"], amount)
    return kit.api.post(f"/accounts/{bank['id']}/reservations", body, token=token)


@pytest.mark.parametrize(("day", "status"), [(DAY, "approved"), ("2026-06-24", "final")])
def test_a_reservation_for_a_plan_whose_requirement_withdrawals_met_is_conflict(kit, day, status):
    """Nothing is left to withdraw for the plan, approved or final: credits reserved for it would
    be held for nothing, until a revision raises its requirement (Subd. 6 (c))."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="2")
        notice = mailing(DAY, plan=plan)
        ok(kit.api.post(f"/plans/{plan['id']}/decision-notice", notice, token=lgu["token"]))
        used = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 2_000)
        ok(withdraw(kit, plan, [used], token=lgu["token"]))
    with on(day):
        assert kit.get_plan(plan["id"])["status"] == status
        before = kit.snapshot(bank["id"])
        refused = problem(
            reserve_for(kit, bank, plan, 1_000, bank["holder"]["token"]), 409, "conflict"
        )
        assert "requirement" in refused["detail"] and "met" in refused["detail"]
        assert kit.snapshot(bank["id"]) == before
        assert [r["id"] for r in kit.get_plan(plan["id"])["reservations"]] == [used["id"]]
    # a revision of under 10% raises the requirement by 100 sq ft: the plan takes credits again
    body = {"area_sqft": 1_050, "displacement_ft": 0, "received_on": day}
    with on(day):
        ok(kit.api.post(f"/plans/{plan['id']}/revisions", body, token=lgu["token"]))
        assert ok(reserve_for(kit, bank, plan, 100))["status"] == "pending"


def method_plan(kit: Kit, lgu: dict, method: str) -> dict:
    """A plan of 1,000 sq ft at 1:1 replaced by ``method``, approved and its notice mailed on
    ``DAY`` (final on 2026-06-24)."""
    extra = {"in_lieu_amount_due_cents": 100_000} if method == "monetary_payment" else {}
    plan = kit.approved_plan(lgu, DAY, area_sqft=1_000, ratio="1", method=method, **extra)
    notice = mailing(DAY, plan=plan)
    ok(kit.api.post(f"/plans/{plan['id']}/decision-notice", notice, token=lgu["token"]))
    return plan


@pytest.mark.parametrize("method", ["project_specific", "monetary_payment"])
def test_a_withdrawal_for_a_plan_not_replaced_with_bank_credits_is_not_eligible(kit, method):
    """Bank credits withdrawn for such a plan would be gone for good and replace nothing: its
    blockers count its security, completion or in-lieu payments, never credits (§5).  Refused
    before the reservations it names are looked at."""
    lgu = kit.lgu()
    with on(DAY):
        plan = method_plan(kit, lgu, method)
        named = [{"id": "res_0000000000000000"}]
        refused = problem(withdraw(kit, plan, named, token=lgu["token"]), 422, "not_eligible")
        assert refused["method"] == method
        assert kit.get_plan(plan["id"])["withdrawals"] == []
    with on("2026-06-24"):  # final: still refused
        problem(withdraw(kit, plan, named, token=lgu["token"]), 422, "not_eligible")


@pytest.mark.parametrize("method", ["project_specific", "monetary_payment"])
def test_a_reservation_for_a_plan_not_replaced_with_bank_credits_is_not_eligible(kit, method):
    """A plan's method is set when it is recorded and nothing changes it, so no withdrawal would
    take credits reserved for such a plan: the API refuses the reservation whatever the plan's
    status, and the reserve form does not offer the plan (``reservable_plans``)."""
    lgu = kit.lgu()
    with on(DAY):
        bank = kit.funded_account(day=DAY, service_area=5, unrestricted=20_000)
        plan = method_plan(kit, lgu, method)
    for day in (DAY, "2026-06-23", "2026-06-24"):  # approved; the appeal window's last day; final
        with on(day):
            before = kit.snapshot(bank["id"])
            refused = problem(
                reserve_for(kit, bank, plan, 500, bank["holder"]["token"]), 422, "not_eligible"
            )
            assert refused["method"] == method
            assert kit.snapshot(bank["id"]) == before
    with on("2026-06-24"):
        assert kit.get_plan(plan["id"])["status"] == "final"
