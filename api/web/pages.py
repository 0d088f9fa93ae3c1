"""The four pages: credit availability (public), an account, a plan, and the board's audit.

Each reads through the same ``bank`` functions as its API twin, with the same authorization:
``parties.visible_account`` and ``plans.visible_plan`` answer "not found" for what the signed-in
token may not see, exactly as the API does.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict
from datetime import date
from typing import Any

from flask import Response, g, render_template, request
from marshmallow import ValidationError

from api.context import database
from api.pagination import csv_response
from api.schemas.common import LAST_DATE, IsoDate
from api.views.audit import STATEMENT_FIELDS, statement_csv_rows
from api.web import chart, plan_view
from api.web.blueprint import web
from api.web.errors import error_page
from api.web.signin import signed_in_actor
from bank import audit, balances, parties, plan_report, plans, policy, reports
from bank.access import Actor
from ledger import clock

#: how many accounts or plans the home page lists for a signed-in person
SHORTCUTS = 50
#: the audit page's journal: the newest transactions
JOURNAL_ROWS = 25

WETLAND_TYPES = {
    "1": "Seasonally flooded basin",
    "2": "Wet meadow",
    "3": "Shallow marsh",
    "4": "Deep marsh",
    "5": "Shallow open water",
    "6": "Shrub swamp",
    "7": "Wooded swamp",
    "8": "Bog",
}


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def page(template: str, status: int = 200, **context: Any) -> Response:
    response = Response(render_template(template, **context), status=status, mimetype="text/html")
    if g.get("web") is not None:
        response.headers["Cache-Control"] = "no-store"  # a holder's figures stay off shared caches
    return response


@web.after_app_request
def _page_headers(response: Response) -> Response:
    """No scripts, nothing from elsewhere, never framed (the pages are read-only HTML)."""
    if not request.path.startswith("/api/"):
        response.headers.setdefault(
            "Content-Security-Policy",
            "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
            "frame-ancestors 'none'; base-uri 'none'",
        )
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        response.headers.setdefault("Referrer-Policy", "same-origin")
    return response


# --- / ------------------------------------------------------------------------------------------


@web.route("/")
def index() -> Response:
    """The public credit availability report, and a signed-in person's way in."""
    who: Actor | None = g.web.actor if g.get("web") else None
    with database().transaction() as session:
        items = reports.credit_availability(session)
        accounts = _accounts_of(session, who)
        own_plans = plans.list_plans(session, who, SHORTCUTS) if who and _sees_plans(who) else []
    areas: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item in items:
        areas[item["service_area"]].append(item)
    totals = [(area, sum(i["available_sqft"] for i in areas[area])) for area in sorted(areas)]
    bars = chart.bar_chart([(str(area), f"Area {area}", total) for area, total in totals])
    return page(
        "index.html",
        as_of=clock.today(),
        areas=sorted(areas.items()),
        totals=dict(totals),
        chart=bars,
        wetland_types=WETLAND_TYPES,
        accounts=accounts,
        plans=own_plans,
        shortcuts=SHORTCUTS,
    )


def _accounts_of(session: Any, who: Actor | None) -> list[parties.BankAccount]:
    if who is None or not policy.lists_accounts(who):
        return []
    return parties.holder_accounts(session, policy.own_holder(who), SHORTCUTS)


def _sees_plans(who: Actor | None) -> bool:
    return who is not None and policy.lists_plans(who)


# --- /accounts/{id} -------------------------------------------------------------------------


@web.route("/accounts/<account_id>")
def account(account_id: str) -> Response:
    """Balances per credit class, lots with provenance, and a statement for a chosen period."""
    who = signed_in_actor()
    start, end, problem = _period()
    with database().transaction() as session:
        bank_account = parties.visible_account(session, who, account_id)
        holder = session.get(parties.Holder, bank_account.holder_id)
        rows = balances.balance_rows(session, bank_account)
        lots = reports.lots_with_provenance(session, bank_account)
        statement = [] if problem else reports.statement(session, bank_account, start, end)
    return page(
        "account.html",
        status=422 if problem else 200,
        account=bank_account,
        holder=holder,
        balances=rows,
        lots=lots,
        statement=statement,
        start=start,
        end=end,
        period_problem=problem,
        wetland_types=WETLAND_TYPES,
    )


@web.route("/accounts/<account_id>/statement.csv")
def statement_csv(account_id: str) -> Response:
    """The statement the account page shows, as the API's CSV."""
    who = signed_in_actor()
    start, end, problem = _period()
    if problem:
        return error_page(422, problem)
    with database().transaction() as session:
        bank_account = parties.visible_account(session, who, account_id)
        classes = reports.statement(session, bank_account, start, end)
    response = csv_response(
        STATEMENT_FIELDS,
        statement_csv_rows(classes),
        f"statement-{bank_account.number}-{start.isoformat()}-{end.isoformat()}.csv",
    )
    response.headers["Cache-Control"] = "no-store"
    return response


#: the statement's ``?from=`` and ``?to=``, read as the API reads every date
_DAY = IsoDate()


def _period() -> tuple[date, date, str | None]:
    """``?from=&to=`` (default: this calendar year to date), and what is wrong with them."""
    today = clock.today()
    default_start = today.replace(month=1, day=1)
    try:
        start = _DAY.deserialize(request.args.get("from") or default_start.isoformat())
        end = _DAY.deserialize(request.args.get("to") or today.isoformat())
    except ValidationError:
        last = LAST_DATE.isoformat()
        return default_start, today, f"Dates must be written YYYY-MM-DD, {last} at the latest."
    if end < start:
        return start, end, "The period ends before it starts."
    return start, end, None


# --- /plans/{id} ------------------------------------------------------------------------------


@web.route("/plans/<plan_id>")
def plan(plan_id: str) -> Response:
    """The plan's timeline, appeals, withdrawals, and whether the impact may proceed."""
    who = signed_in_actor()
    today = clock.today()
    with database().transaction() as session:
        row = plans.visible_plan(session, who, plan_id)
        body = asdict(plan_report.report(session, row, today))
        lgu = session.get(parties.Lgu, row.lgu_id)
    return page(
        "plan.html",
        plan=body,
        lgu=lgu,
        steps=plan_view.timeline(body, today),
        today=today,
        wetland_types=WETLAND_TYPES,
    )


# --- /audit -----------------------------------------------------------------------------------


@web.route("/audit")
def audit_page() -> Response:
    """For the board: the ledger verified now (since the last full pass), the trial balance,
    the latest journal page.  It never waits on a full pass over a long chain: with no
    checkpoint yet it asks for ``wetbank audit verify`` instead."""
    who = signed_in_actor()
    if not who.is_board:
        return error_page(403, "Only board staff may see the audit page.")
    outcome = audit.verify_for_page(database())
    needed = outcome if isinstance(outcome, audit.FullPassNeeded) else None
    today = clock.today()
    with database().transaction() as session:
        assets = audit.trial_balance(session, today)
        journal = audit.latest_journal(session, JOURNAL_ROWS)
    return page(
        "audit.html",
        report=None if needed else outcome,
        full_pass_needed=needed,
        today=today,
        assets=assets,
        balanced=all(a.balanced for a in assets),
        journal=journal,
    )
