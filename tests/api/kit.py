"""Set-up for the API tests, made through the API: parties, bank sites, accounts holding
credits, deposits, plans, decisions and reservations; and the checks of a response every test
makes (``ok``, ``problem``).

The database is shared by every test of a session, so each call makes its own uniquely named
holders, LGUs, sites and accounts, and assertions compare what one test can attribute to itself:
per-account balances, lots, entries and the rows that name its accounts.  Every write runs on
the date the caller freezes with ``on(day)``: the service computes "today" from the clock, and
dates of events may not lie in the future.
"""

from __future__ import annotations

import csv
import io
import itertools
import math
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from typing import Any

from flask import Flask
from freezegun import freeze_time
from sqlalchemy import Engine, event, func, or_, select, text

from bank.deposits import Deposit
from bank.reservations import Reservation
from bank.transfers import Transfer
from ledger.clock import utcnow
from tests.api.conftest import Api, make_token

PROBLEM = "application/problem+json"

#: when ``Kit.account`` opens accounts: before the earliest day a test dates a deposit on
OPENED_AT = datetime(2026, 1, 1, 12, tzinfo=UTC)
_opened = itertools.count()


@contextmanager
def at(moment: str) -> Any:
    """Freeze the service's clock at ``moment`` (UTC, e.g. ``"2026-05-20 12:00:00"``)."""
    with freeze_time(moment, tz_offset=0):
        yield


def on(day: str) -> Any:
    """Freeze the clock at noon UTC (morning in Minnesota) of ``day``."""
    return at(f"{day} 12:00:00")


def days_before(day: str, n: int) -> str:
    return (date.fromisoformat(day) - timedelta(days=n)).isoformat()


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:8]}"


def ok(response: Any, status: int = 201) -> Any:
    assert response.status_code == status, response.get_data(as_text=True)
    return response.json


def problem(response: Any, status: int, code: str) -> dict[str, Any]:
    assert response.status_code == status, response.get_data(as_text=True)
    assert response.mimetype == PROBLEM
    body = response.json
    assert body["code"] == code, body
    assert body["status"] == status
    return dict(body)


def story1_actions(buffer_credit: int = 45_000) -> list[dict[str, Any]]:
    """The worked deposit: a 60,000 sq ft wetland, its 52,000 sq ft buffer, a 12,001 sq ft pond."""
    return [
        {"category": "replacement_wetland", "area_sqft": 60_000, "credit_sqft": 60_000},
        {
            "category": "upland_buffer",
            "area_sqft": 52_000,
            "credit_sqft": buffer_credit,
            "established_on": "2026-04-14",
        },
        {
            "category": "treatment_pond",
            "area_sqft": 12_001,
            "credit_sqft": 9_000,
            "associated_project": "CSAH 9 rebuild",
        },
    ]


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
#: the commissioner, the watershed district's managers and the applicant, the last two (and the
#: panel, once its determination names it) to be named as the plan records them
#: (``recipients_for``)
RECIPIENTS = [
    {"name": "Ann Board", "address": "520 Lafayette Rd N, St. Paul, MN", "role": "tep_member"},
    {"name": "Sam Swcd", "address": "311 Brighton Ave S, Buffalo, MN", "role": "tep_member"},
    {"name": "Lee Lgu", "address": "10 2nd St NW, Buffalo, MN", "role": "tep_member"},
    {"name": "Commissioner", "address": "500 Lafayette Rd, St. Paul", "role": "dnr_commissioner"},
    {"name": "Managers", "address": "1 Watershed Way, Buffalo", "role": "watershed_district"},
    {"name": "The applicant", "address": "1 Main St, Buffalo, MN", "role": "applicant"},
]


def recipients_for(plan: dict[str, Any]) -> list[dict[str, str]]:
    """``RECIPIENTS`` named as ``plan`` (as the API shows it) records them: its applicant, its
    watershed district, and the panel members its determination names."""
    names = {"applicant": [plan["applicant"]]}
    if plan.get("watershed_district"):
        names["watershed_district"] = [plan["watershed_district"]]
    determination = (plan.get("tep") or {}).get("determination")
    if determination:
        names["tep_member"] = [member["name"] for member in determination["members"]]
    recipients, taken = [], {role: iter(listed) for role, listed in names.items()}
    for r in RECIPIENTS:
        name = next(taken[r["role"]], r["name"]) if r["role"] in taken else r["name"]
        recipients.append({**r, "name": name})
    return recipients


def mailing(
    mailed_on: str, *more: dict[str, str], plan: dict[str, Any] | None = None
) -> dict[str, Any]:
    """A notice (of application or of decision) mailed to ``RECIPIENTS`` (named as ``plan``
    records them, ``recipients_for``) and ``more``."""
    listed = RECIPIENTS if plan is None else recipients_for(plan)
    return {"mailed_on": mailed_on, "recipients": [*listed, *more]}


class Kit:
    """Set-up through the API, as the board unless a token is given."""

    def __init__(self, api: Api, app: Flask) -> None:
        self.api = api
        self.app = app

    # --- parties -------------------------------------------------------------------------------

    def holder(self, name: str = "Holder") -> dict[str, str]:
        body = ok(self.api.post("/holders", {"name": unique(name)}))
        return {"id": body["id"], "token": make_token(self.app, "holder", holder_id=body["id"])}

    def lgu(self, kind: str = "county", **settings: bool) -> dict[str, str]:
        body = ok(self.api.post("/lgus", {"name": unique("LGU"), "kind": kind, **settings}))
        return {"id": body["id"], "token": make_token(self.app, "lgu", lgu_id=body["id"])}

    def site(
        self,
        holder_id: str,
        service_area: int = 5,
        county: str = "Lyon",
        *,
        wetland_sqft: int | None = 10**9,
    ) -> str:
        """A bank site whose register holds a replacement wetland of ``wetland_sqft`` (large
        enough by default for any number of the tests' deposits), or nothing (``None``: its
        first deposit registers what it states)."""
        body: dict[str, Any] = {
            "name": unique("Site"),
            "holder_id": holder_id,
            "service_area": service_area,
            "county": county,
        }
        if wetland_sqft is not None:
            body["credit_areas"] = [{"category": "replacement_wetland", "area_sqft": wetland_sqft}]
        return str(ok(self.api.post("/bank-sites", body))["id"])

    def account(self, holder_id: str, service_area: int = 5, county: str = "Lyon") -> str:
        """An account opened before any day the tests date a deposit on (nothing in an account
        is effective before its opening), whatever day the clock is on: at ``OPENED_AT``, each
        one a microsecond after the one before, so they list in the order they were made (at
        the clock's moment if that is earlier)."""
        body = {"holder_id": holder_id, "service_area": service_area, "county": county}
        moment = min(utcnow(), OPENED_AT + timedelta(microseconds=next(_opened)))
        with freeze_time(moment, tz_offset=0):
            return str(ok(self.api.post("/accounts", body))["id"])

    # --- deposits ------------------------------------------------------------------------------

    def deposit_body(
        self,
        site_id: str,
        lgu_id: str,
        actions: list[dict[str, Any]],
        *,
        effective_on: str = "2026-05-20",
        completed_on: str = "2026-04-14",
        approved_on: str = "2026-05-01",
        wetland_type: str = "2",
        **extra: Any,
    ) -> dict[str, Any]:
        return {
            "bank_site_id": site_id,
            "effective_on": effective_on,
            "banking_plan": {
                "reference": unique("BP"),
                "approved_on": approved_on,
                "lgu_id": lgu_id,
            },
            "wetland_type": wetland_type,
            "completed_on": completed_on,
            "designated_for_replacement": True,
            "paid_by_performer": True,
            "paid_back_with_interest": False,
            "actions": actions,
            **extra,
        }

    def wetland_deposit(
        self,
        account_id: str,
        site_id: str,
        lgu_id: str,
        sqft: int,
        *,
        effective_on: str = "2026-05-20",
        buffer_sqft: int = 0,
        **extra: Any,
    ) -> dict[str, Any]:
        """A deposit of ``sqft`` unrestricted (and ``buffer_sqft`` restricted) credits."""
        actions: list[dict[str, Any]] = [
            {"category": "replacement_wetland", "area_sqft": sqft, "credit_sqft": sqft}
        ]
        if buffer_sqft:
            actions.append(
                {
                    "category": "upland_buffer",
                    "area_sqft": buffer_sqft,
                    "credit_sqft": buffer_sqft,
                    "established_on": "2026-04-14",
                }
            )
        body = self.deposit_body(site_id, lgu_id, actions, effective_on=effective_on, **extra)
        return dict(ok(self.api.post(f"/accounts/{account_id}/deposits", body)))

    def funded(
        self, sqft: int = 50_000, *, service_area: int = 5, buffer_sqft: int = 0
    ) -> dict[str, Any]:
        """A new holder with a site and an account in Lyon County holding ``sqft`` unrestricted
        (and ``buffer_sqft`` restricted) credits, deposited on 2026-05-20."""
        holder = self.holder("Bank")
        banker = self.lgu()
        site_id = self.site(holder["id"], service_area)
        account_id = self.account(holder["id"], service_area)
        deposit = self.wetland_deposit(
            account_id, site_id, banker["id"], sqft, buffer_sqft=buffer_sqft
        )
        return {
            "id": account_id,
            "holder": holder,
            "lgu": banker,
            "site_id": site_id,
            "deposit": deposit,
            "unrestricted": f"BSA{service_area}-T2-U",
            "restricted": f"BSA{service_area}-T2-R",
        }

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
        """A new holder's account in Wright County holding ``unrestricted`` and ``restricted``
        sq ft, deposited on ``day`` (a replacement wetland and, for the restricted credits, an
        upland buffer).

        A buffer's credit is capped at 75% of the wetland in the same deposit, so the wetland is
        made large enough (the unrestricted balance is then at least ``ceil(restricted / 0.75)``).
        """
        holder = self.holder("Bank")
        banker = self.lgu()
        site_id = self.site(holder["id"], service_area, "Wright", wetland_sqft=None)
        account_id = self.account(holder["id"], service_area, "Wright")
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
        body = self.deposit_body(
            site_id,
            banker["id"],
            actions,
            effective_on=day,
            completed_on=completed_on,
            approved_on=days_before(day, 20),
            wetland_type=wetland_type,
            federally_approved=federally_approved,
        )
        return {
            "id": account_id,
            "holder": holder,
            "site_id": site_id,
            "deposit": ok(self.api.post(f"/accounts/{account_id}/deposits", body)),
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

    def board_plan(
        self,
        lgu_id: str,
        *,
        service_area: int = 5,
        received_on: str = "2026-06-08",
        **extra: Any,
    ) -> dict[str, Any]:
        """A plan the board files for ``lgu_id``: 9,000 sq ft of type 2 wetland in Lyon County,
        to be replaced 2:1 with bank credits."""
        body = {
            "lgu_id": lgu_id,
            "applicant": "x",
            "project": "y",
            "location": "z",
            "received_on": received_on,
            "impact": {
                "area_sqft": 9000,
                "wetland_type": "2",
                "service_area": service_area,
                "county": "Lyon",
                "on_agricultural_land": False,
            },
            "replacement_ratio": "2",
            "method": "bank_credits",
            **extra,
        }
        return dict(ok(self.api.post("/plans", body)))

    def get_plan(self, plan_id: str, token: str | None = None) -> dict[str, Any]:
        return dict(ok(self.api.get(f"/plans/{plan_id}", token=token), 200))

    def approved_plan(
        self, lgu: dict[str, str], day: str, *, area_sqft: int = 9_000, **kw: Any
    ) -> dict[str, Any]:
        """A small plan (no comment period) received, its summary notice mailed (Subd. 6 (b)),
        and approved on ``day``."""
        plan = self.plan(lgu, received_on=day, area_sqft=area_sqft, **kw)
        self.mail_summary(lgu, plan, day)
        return dict(
            ok(
                self.api.post(
                    f"/plans/{plan['id']}/decision",
                    decision_body("approved", day),
                    token=lgu["token"],
                )
            )
        )

    def mail_summary(self, lgu: dict[str, str], plan: dict[str, Any], day: str) -> None:
        """The notice of application of ``plan`` (a summary below 10,000 sq ft, Subd. 6 (b))
        mailed on ``day`` to everyone Subd. 6 names, recorded with ``lgu``'s token: the
        decision on a plan waits for it."""
        ok(
            self.api.post(
                f"/plans/{plan['id']}/notices", mailing(day, plan=plan), token=lgu["token"]
            )
        )

    # --- reservations --------------------------------------------------------------------------

    def reservation_body(
        self, plan_id: str, credit_class: str, amount_sqft: int, expires_on: str = "2099-12-31"
    ) -> dict[str, Any]:
        return {
            "plan_id": plan_id,
            "credit_class": credit_class,
            "amount_sqft": amount_sqft,
            "expires_on": expires_on,
        }

    def reserve(
        self,
        account_id: str,
        plan_id: str,
        credit_class: str,
        amount_sqft: int,
        expires_on: str = "2027-12-31",
    ) -> dict[str, Any]:
        body = self.reservation_body(plan_id, credit_class, amount_sqft, expires_on)
        return dict(ok(self.api.post(f"/accounts/{account_id}/reservations", body)))

    # --- reading -------------------------------------------------------------------------------

    def account_body(self, account_id: str) -> dict[str, Any]:
        return dict(ok(self.api.get(f"/accounts/{account_id}"), 200))

    def balances(self, account_id: str) -> dict[str, dict[str, Any]]:
        """The account's balance rows by credit class code."""
        rows = self.account_body(account_id)["balances"]
        return {row["credit_class"]["code"]: row for row in rows}

    def available(self, account_id: str, code: str) -> int:
        """The account's available sq ft of credit class ``code``."""
        return int(self.balances(account_id)[code]["available_sqft"])

    def lots(self, account_id: str) -> list[dict[str, Any]]:
        """The account's lots, oldest first, every page."""
        return every_item(self.api, f"/accounts/{account_id}/lots")

    def lots_by_id(self, account_id: str) -> dict[str, dict[str, Any]]:
        return {lot["id"]: lot for lot in self.lots(account_id)}

    def available_by_lot(self, account_id: str) -> dict[str, int]:
        """Available sq ft by lot id."""
        return {lot["id"]: lot["available_sqft"] for lot in self.lots(account_id)}

    def entries(self, account_id: str, limit: int = 500) -> list[dict[str, Any]]:
        """Every ledger line of the account, newest first, following the cursor."""
        return every_item(self.api, f"/accounts/{account_id}/entries", limit=limit)

    def entries_csv(self, account_id: str) -> list[dict[str, str]]:
        response = self.api.get(f"/accounts/{account_id}/entries", headers={"Accept": "text/csv"})
        assert response.status_code == 200, response.get_data(as_text=True)
        assert response.mimetype == "text/csv"
        return list(csv.DictReader(io.StringIO(response.get_data(as_text=True))))

    def rows_naming(self, account_id: str) -> dict[str, int]:
        """How many deposits, transfers and reservations name the account."""
        with self.app.extensions["wetbank.db"].transaction() as session:

            def count(query: Any) -> int:
                return int(session.execute(query).scalar_one())

            return {
                "deposits": count(
                    select(func.count())
                    .select_from(Deposit)
                    .where(Deposit.account_id == account_id)
                ),
                "transfers": count(
                    select(func.count())
                    .select_from(Transfer)
                    .where(
                        or_(
                            Transfer.from_account_id == account_id,
                            Transfer.to_account_id == account_id,
                        )
                    )
                ),
                "reservations": count(
                    select(func.count())
                    .select_from(Reservation)
                    .where(Reservation.account_id == account_id)
                ),
            }

    def snapshot(self, *account_ids: str) -> dict[str, Any]:
        """Everything a refused request must leave as it was, for each account."""
        return {
            account_id: {
                "account": self.account_body(account_id),
                "lots": self.lots(account_id),
                "entries": self.entries(account_id),
                "rows": self.rows_naming(account_id),
            }
            for account_id in account_ids
        }


def every_item(api: Api, path: str, token: str | None = None, limit: int = 500) -> list[Any]:
    """Every item of the listing ``path``, page by page, following ``next_cursor``."""
    out: list[Any] = []
    query: dict[str, Any] = {"limit": limit}
    while True:
        body = ok(api.get(path, token=token, query_string=query), 200)
        out.extend(body["items"])
        if body["next_cursor"] is None:
            return out
        query["cursor"] = body["next_cursor"]


def engine_of(kit: Kit) -> Engine:
    """The engine of the kit's app, to read or write its database behind the API."""
    return kit.app.extensions["wetbank.db"].engine  # type: ignore[no-any-return]


def sql_rows(kit: Kit, sql: str, **params: Any) -> list[tuple[Any, ...]]:
    """The rows ``sql`` reads from the kit's database."""
    with engine_of(kit).connect() as connection:
        return [tuple(row) for row in connection.execute(text(sql), params)]


def verified(kit: Kit) -> dict[str, Any]:
    """``GET /audit/verify``'s answer (200)."""
    return dict(ok(kit.api.get("/audit/verify"), 200))


def walk(kit: Kit, path: str, token: str | None = None, **query: Any) -> list[list[str]]:
    """The ids of every page of the listing ``path`` with ``query``, page by page, following
    ``next_cursor`` until it is null; each page answers ``items`` and ``next_cursor`` alone."""
    pages: list[list[str]] = []
    cursor = None
    while True:
        params = {**query, **({"cursor": cursor} if cursor else {})}
        body = ok(kit.api.get(path, token=token, query_string=params), 200)
        assert set(body) == {"items", "next_cursor"}, body
        pages.append([item["id"] for item in body["items"]])
        cursor = body["next_cursor"]
        if cursor is None:
            return pages
        assert len(pages) < 1_000, "the walk does not end"


@contextmanager
def statements_sent(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    """Every statement ``engine`` sends meanwhile, in order, with its parameters."""
    sent: list[tuple[str, Any]] = []

    def keep(_conn: Any, _cursor: Any, statement: str, parameters: Any, *_: Any) -> None:
        sent.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", keep)
    try:
        yield sent
    finally:
        event.remove(engine, "before_cursor_execute", keep)
