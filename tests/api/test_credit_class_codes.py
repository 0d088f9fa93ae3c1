"""A transfer or a reservation naming a credit class in a shape no class has is 422
``validation_error`` on ``credit_class``, not ``insufficient_credits``; a well-formed class the
account does not hold is credits it lacks.  Nothing is written either way."""

from __future__ import annotations

import pytest
from flask import Flask

from tests.api.conftest import Api
from tests.api.kit import Kit, ok, on, problem

NOT_CODES = ["NOPE", "bsa5-t2-u", " BSA5-T2-U", "BSA5-T2-U\n", "BSA5-T9-U", "BSA5-T2-X", ""]


@pytest.fixture
def kit(api: Api, app: Flask) -> Kit:
    return Kit(api, app)


def test_a_transfer_or_reservation_naming_no_class_shape_is_a_validation_error(kit: Kit) -> None:
    account = kit.funded_account(day="2026-03-02", service_area=5, unrestricted=10_000)
    other = kit.account(account["holder"]["id"])
    lgu = kit.lgu()
    code = account["unrestricted_class"]
    with on("2026-03-10"):
        plan = kit.plan(lgu, received_on="2026-03-10", area_sqft=9_000)
        before = kit.snapshot(account["id"], other)
        for wrong in NOT_CODES:
            transfer = {
                "from_account_id": account["id"],
                "to_account_id": other,
                "credit_class": wrong,
                "amount_sqft": 1,
            }
            refused = problem(kit.api.post("/transfers", transfer), 422, "validation_error")
            assert refused["errors"] == {
                "credit_class": ["Not a credit class code, such as BSA5-T2-U."]
            }, wrong
            reservation = kit.reservation_body(plan["id"], wrong, 1)
            path = f"/accounts/{account['id']}/reservations"
            refused = problem(kit.api.post(path, reservation), 422, "validation_error")
            assert set(refused["errors"]) == {"credit_class"}, wrong
        # a class of the right shape that the account does not hold: credits it lacks
        lacking = {**transfer, "credit_class": "BSA5-T8-U"}
        problem(kit.api.post("/transfers", lacking), 422, "insufficient_credits")
        assert kit.snapshot(account["id"], other) == before
        moved = ok(kit.api.post("/transfers", {**transfer, "credit_class": code}))
    assert moved["credit_class"]["code"] == code
