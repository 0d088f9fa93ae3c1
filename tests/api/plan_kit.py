"""Factories for the replacement-plan, withdrawal and appeal API tests.

Every call makes its own uniquely named parties (the database is shared within a session), and
every write runs on the date the caller freezes with ``on(day)``: the service computes "today"
from the clock, and dates of events may not lie in the future.
"""

from __future__ import annotations

import math
import uuid
from contextlib import contextmanager
from datetime import date, timedelta
from typing import Any

from flask import Flask
from freezegun import freeze_time

from tests.api.conftest import Api, make_token


@contextmanager
def on(day: str) -> Any:
    """Freeze the service's clock at noon UTC (morning in Minnesota) of ``day``."""
    with freeze_time(f"{day} 12:00:00", tz_offset=0):
        yield


def days_before(day: str, n: int) -> str:
    return (date.fromisoformat(day) - timedelta(days=n)).isoformat()


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:8]}"


def ok(response: Any, status: int = 201) -> Any:
    assert response.status_code == status, response.json
    return response.json


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.json
    assert response.json["code"] == code, response.json
    return response.json


def decision_body(outcome: str, day: str, **extra: Any) -> dict[str, Any]:
    """A decision with the record the statute asks of it: an approval by a resolution of the
    governing body (Subd. 1 (b)) adopted that day, a denial with its reasons in writing (Minn.
    Stat. 15.99 subd. 2)."""
    body: dict[str, Any] = {"outcome": outcome, "decided_on": day}
    if outcome == "approved":
        body["resolution"] = {"number": unique("Res."), "adopted_on": day}
    else:
        body["reasons"] = "the replacement would not replace the wetland's public value"
    return {**body, **extra}


#: everyone Subd. 6 and 7 name, for a plan no member of the public asked a copy of: the panel,
#: the commissioner, the watershed district's managers and the applicant
RECIPIENTS = [
    {"name": "Ann Board", "address": "520 Lafayette Rd N, St. Paul, MN", "role": "tep_member"},
    {"name": "Sam Swcd", "address": "311 Brighton Ave S, Buffalo, MN", "role": "tep_member"},
    {"name": "Lee Lgu", "address": "10 2nd St NW, Buffalo, MN", "role": "tep_member"},
    {"name": "Commissioner", "address": "500 Lafayette Rd, St. Paul", "role": "dnr_commissioner"},
    {"name": "Managers", "address": "1 Watershed Way, Buffalo", "role": "watershed_district"},
    {"name": "The applicant", "address": "1 Main St, Buffalo, MN", "role": "applicant"},
]


def mailing(mailed_on: str, *more: dict[str, str]) -> dict[str, Any]:
    """A notice (of application or of decision) mailed to ``RECIPIENTS`` and ``more``."""
    return {"mailed_on": mailed_on, "recipients": [*RECIPIENTS, *more]}


class Kit:
    """Set-up through the API, as the board unless a token is given."""

    def __init__(self, api: Api, app: Flask) -> None:
        self.api = api
        self.app = app

    # --- parties -------------------------------------------------------------------------------

    def lgu(self, kind: str = "county", **settings: bool) -> dict[str, str]:
        body = ok(self.api.post("/lgus", {"name": unique("LGU"), "kind": kind, **settings}))
        return {"id": body["id"], "token": make_token(self.app, "lgu", lgu_id=body["id"])}

    def holder(self, name: str = "Holder") -> dict[str, str]:
        body = ok(self.api.post("/holders", {"name": unique(name)}))
        return {"id": body["id"], "token": make_token(self.app, "holder", holder_id=body["id"])}

    def account(self, holder_id: str, service_area: int, county: str = "Wright") -> str:
        body = {"holder_id": holder_id, "service_area": service_area, "county": county}
        return str(ok(self.api.post("/accounts", body))["id"])

    def funded_account(
        self,
        *,
        day: str,
        service_area: int,
        wetland_type: str = "2",
        unrestricted: int,
        restricted: int = 0,
        federally_approved: bool = False,
    ) -> dict[str, Any]:
        """A new holder's account holding ``unrestricted`` and ``restricted`` sq ft, deposited on
        ``day`` (a replacement wetland and, for the restricted credits, an upland buffer).

        A buffer's credit is capped at 75% of the wetland in the same deposit, so the wetland is
        made large enough (the unrestricted balance is then at least ``ceil(restricted / 0.75)``).
        """
        holder = self.holder("Bank")
        banker = self.lgu()
        site = ok(
            self.api.post(
                "/bank-sites",
                {
                    "name": unique("Site"),
                    "holder_id": holder["id"],
                    "service_area": service_area,
                    "county": "Wright",
                },
            )
        )
        account_id = self.account(holder["id"], service_area)
        wetland = max(unrestricted, math.ceil(restricted * 4 / 3))
        completed_on = days_before(day, 10)
        actions: list[dict[str, Any]] = [
            {"category": "replacement_wetland", "area_sqft": wetland, "credit_sqft": wetland}
        ]
        if restricted:
            actions.append(
                {
                    "category": "upland_buffer",
                    "area_sqft": restricted,
                    "credit_sqft": restricted,
                    "established_on": completed_on,
                }
            )
        deposit = ok(
            self.api.post(
                f"/accounts/{account_id}/deposits",
                {
                    "bank_site_id": site["id"],
                    "effective_on": day,
                    "banking_plan": {
                        "reference": unique("BP"),
                        "approved_on": days_before(day, 20),
                        "lgu_id": banker["id"],
                    },
                    "wetland_type": wetland_type,
                    "completed_on": completed_on,
                    "federally_approved": federally_approved,
                    "designated_for_replacement": True,
                    "paid_by_performer": True,
                    "actions": actions,
                },
            )
        )
        return {
            "id": account_id,
            "holder": holder,
            "site_id": site["id"],
            "deposit": deposit,
            "unrestricted_class": f"BSA{service_area}-T{wetland_type}-U",
            "restricted_class": f"BSA{service_area}-T{wetland_type}-R",
        }

    # --- plans ---------------------------------------------------------------------------------

    def plan_body(
        self,
        *,
        received_on: str,
        area_sqft: int,
        service_area: int = 5,
        wetland_type: str = "2",
        ratio: str = "2",
        method: str = "bank_credits",
        **extra: Any,
    ) -> dict[str, Any]:
        if method == "project_specific":
            # Subd. 3: the security the LGU requires (test_money's securities are of this amount)
            extra.setdefault("security_required_cents", 2_500_000)
        return {
            "applicant": unique("Applicant"),
            "project": unique("Project"),
            "location": "Section 14, Township 120 N, Range 25 W, Wright County",
            "received_on": received_on,
            "impact": {
                "area_sqft": area_sqft,
                "wetland_type": wetland_type,
                "service_area": service_area,
                "county": "Wright",
                "on_agricultural_land": False,
            },
            "replacement_ratio": ratio,
            "method": method,
            **extra,
        }

    def plan(self, lgu: dict[str, str], **kw: Any) -> dict[str, Any]:
        """A plan filed by ``lgu`` with its own token."""
        return dict(ok(self.api.post("/plans", self.plan_body(**kw), token=lgu["token"])))

    def get_plan(self, plan_id: str, token: str | None = None) -> dict[str, Any]:
        return dict(ok(self.api.get(f"/plans/{plan_id}", token=token), 200))

    def reserve(
        self,
        account_id: str,
        plan_id: str,
        credit_class: str,
        amount_sqft: int,
        expires_on: str = "2027-12-31",
    ) -> dict[str, Any]:
        body = {
            "plan_id": plan_id,
            "credit_class": credit_class,
            "amount_sqft": amount_sqft,
            "expires_on": expires_on,
        }
        return dict(ok(self.api.post(f"/accounts/{account_id}/reservations", body)))

    def lots(self, account_id: str) -> dict[str, dict[str, Any]]:
        """The account's lots by id."""
        items = ok(self.api.get(f"/accounts/{account_id}/lots"), 200)["items"]
        return {lot["id"]: lot for lot in items}

    def available(self, account_id: str) -> dict[str, int]:
        """Available sq ft by lot id."""
        return {lot_id: lot["available_sqft"] for lot_id, lot in self.lots(account_id).items()}

    def balances(self, account_id: str) -> dict[str, dict[str, int]]:
        """The account's balance rows by credit class code."""
        body = ok(self.api.get(f"/accounts/{account_id}"), 200)
        return {row["credit_class"]["code"]: row for row in body["balances"]}

    def approved_plan(
        self, lgu: dict[str, str], day: str, *, area_sqft: int = 9_000, **kw: Any
    ) -> dict[str, Any]:
        """A small plan (no comment period) received and approved on ``day``."""
        plan = self.plan(lgu, received_on=day, area_sqft=area_sqft, **kw)
        return dict(
            ok(
                self.api.post(
                    f"/plans/{plan['id']}/decision",
                    decision_body("approved", day),
                    token=lgu["token"],
                )
            )
        )
