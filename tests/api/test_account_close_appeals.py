"""An account that gave credits to a plan's withdrawal, and the appeal that may return them
(Subd. 9), on both databases.

The account holds 18,000 sq ft, all withdrawn on 2026-06-09 for a 9,000 sq ft plan at 2:1
approved 06-08, its notice of decision mailed 06-09: the appeal window ends Wednesday 06-24 and
the plan is final from 06-25.  A reversal on appeal would put the credits back in their lots, so
the account is not closed before then; closed after, a petition postmarked 06-24 that reaches the
board later reopens it when its reversal returns the credits.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.api.kit import Kit, decision_body, mailing, ok, on, problem
from tests.api.test_appeals import FEE, grant, pay, petition, rule
from tests.api.test_plans_revisions import act, read


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def withdrawn_in_full(kit: Kit) -> tuple[dict[str, Any], dict[str, Any]]:
    """The account (its 18,000 sq ft withdrawn) and the plan they were withdrawn for."""
    lgu = kit.lgu()
    with on("2026-06-01"):
        bank = kit.funded_account(day="2026-06-01", service_area=5, unrestricted=18_000)
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_000, ratio="2")
        held = kit.reserve(bank["id"], plan["id"], bank["unrestricted_class"], 18_000)
    ok(act(kit, plan, lgu, "notices", mailing("2026-06-08", plan=plan), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision", decision_body("approved", "2026-06-08"), "2026-06-08"))
    ok(act(kit, plan, lgu, "decision-notice", mailing("2026-06-09", plan=plan), "2026-06-09"))
    ok(act(kit, plan, lgu, "withdrawals", {"reservation_ids": [held["id"]]}, "2026-06-09"))
    return bank, plan


def close(kit: Kit, account: dict[str, Any], day: str) -> Any:
    with on(day):
        return kit.api.post(f"/accounts/{account['id']}/close")


@pytest.mark.parametrize(("day", "status"), [("2026-06-24", 409), ("2026-06-25", 200)])
def test_an_account_is_not_closed_while_an_appeal_may_return_what_it_gave(
    kit: Kit, day: str, status: int
) -> None:
    """On the window's last day the plan is not final: closing is ``conflict`` naming the plan,
    and the account stays open; the day after, it closes."""
    bank, plan = withdrawn_in_full(kit)
    if status == 409:
        refused = problem(close(kit, bank, day), 409, "conflict")
        assert refused["plan_ids"] == [plan["id"]]
        with on(day):
            assert kit.account_body(bank["id"])["status"] == "open"
    else:
        assert ok(close(kit, bank, day), 200)["status"] == "closed"


def test_a_reversal_on_a_late_petition_reopens_the_closed_account_it_returns_credits_to(
    kit: Kit,
) -> None:
    """Closed 06-25; a petition postmarked 06-24 arrives 06-26 (timely: Subd. 9 counts to its
    mailing), is granted and reverses the approval 07-01: the 18,000 sq ft go back to the
    account, which is open again and can send them."""
    bank, plan = withdrawn_in_full(kit)
    ok(close(kit, bank, "2026-06-25"), 200)
    appeal = ok(petition(kit, plan, postmarked="2026-06-24", received="2026-06-26"))
    ok(pay(kit, appeal, "appeal_filing_fee", FEE, "2026-06-26"))  # in the petition's envelope
    assert read(kit, plan, "2026-06-26")["status"] == "appealed"
    ok(grant(kit, appeal, "2026-06-29"))
    ok(rule(kit, appeal, "2026-07-01"))
    with on("2026-07-01"):
        shown = kit.account_body(bank["id"])
        assert shown["status"] == "open"
        assert kit.available(bank["id"], bank["unrestricted_class"]) == 18_000
        other = kit.account(kit.holder("Other")["id"], 5, "Wright")
        body = {
            "from_account_id": bank["id"],
            "to_account_id": other,
            "credit_class": bank["unrestricted_class"],
            "amount_sqft": 18_000,
        }
        ok(kit.api.post("/transfers", body), 201)
