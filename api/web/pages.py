"""The pages: credit availability (public), each role's home, an account, a plan, and the
board's audit.  (The lists are ``api.web.lists``.)

Each page calls one ``bank`` use case, with the same authorization as its API twin:
``parties.visible_account`` and ``plans.visible_plan`` answer "not found" for what the signed-in
token may not see, exactly as the API does.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, replace
from datetime import date
from typing import Any

from flask import Response, g, render_template, request
from marshmallow import ValidationError

from api.context import database
from api.pagination import csv_response
from api.schemas.common import FIRST_DATE, LAST_DATE, IsoDate
from api.views.audit import STATEMENT_FIELDS, statement_csv_rows
from api.web import chart, plan_view
from api.web.blueprint import web
from api.web.errors import error_page
from api.web.signin import signed_in_actor
from bank import accounts, audit, homes, record_pages, reports
from ledger import clock

#: the template of each role's home
HOMES = {
    homes.HolderHome: "home_holder.html",
    homes.LguHome: "home_lgu.html",
    homes.Dashboard: "home_board.html",
}
#: the audit page's journal: the newest transactions
JOURNAL_ROWS = 25


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def page(template: str, status: int = 200, **context: Any) -> Response:
    response = Response(render_template(template, **context), status=status, mimetype="text/html")
    if g.get("web") is not None:
        response.headers["Cache-Control"] = "no-store"  # a holder's figures stay off shared caches
    return response


@web.after_app_request
def _page_headers(response: Response) -> Response:
    """No scripts, nothing from elsewhere, never framed: the pages are HTML whose forms work
    without JavaScript."""
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
    """Signed in: the person's home (``bank.homes``).  Signed out: the public credit
    availability report, with the way in."""
    if g.get("web") is None:
        return credit_availability()
    today = clock.today()
    found = homes.home(database(), g.web.actor, today)
    return page(
        HOMES[type(found)],
        home=found,
        today=today,
        shortcuts=homes.SHORTCUTS,
        due_soon_days=homes.DUE_SOON_DAYS,
        this_week_days=homes.THIS_WEEK_DAYS,
        expiring_days=homes.EXPIRING_DAYS,
    )


@web.route("/credit-availability")
def credit_availability() -> Response:
    """The public credit availability report: per service area, wetland type and restriction."""
    report = reports.availability(database())
    areas: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for item in report.items:
        areas[item["service_area"]].append(item)
    totals = [(area, sum(i["available_sqft"] for i in areas[area])) for area in sorted(areas)]
    bars = chart.bar_chart([(str(area), f"Area {area}", total) for area, total in totals])
    return page(
        "index.html",
        as_of=report.as_of,
        areas=sorted(areas.items()),
        totals=dict(totals),
        chart=bars,
    )


# --- /accounts/{id} -------------------------------------------------------------------------


@web.route("/accounts/<account_id>")
def account(account_id: str) -> Response:
    """Balances per credit class, lots with provenance (in pages: ``after`` the last lot shown,
    as the lists page), and a statement for a chosen period."""
    from api.web.lists import page_args, paged  # the lists render with ``page``, from here

    who = signed_in_actor()
    start, end, problem = period()
    args = page_args()
    found = record_pages.account_page(
        database(),
        who,
        account_id,
        None if problem else (start, end),
        lots_limit=args["limit"],
        lots_after=args["after"],
    )
    # the period asked for is kept from one page of lots to the next
    kept = {name: request.args.get(name) for name in ("from", "to")}
    lots = paged(found.lots, args["limit"], "web.account", account_id=account_id, **kept)
    return page(
        "account.html",
        status=422 if problem else 200,
        account=found.account,
        holder_name=found.holder_name,
        balances=found.balances,
        lots=lots["rows"],
        next_page=lots["next_page"],
        first_page=lots["first_page"],
        lot_labels=found.lot_labels,
        statement=found.statement,
        entry_records=found.entry_records,
        start=start,
        end=end,
        period_problem=problem,
        history=accounts.status_changes(database(), who, found.account.id),
    )


@web.route("/accounts/<account_id>/statement.csv")
def statement_csv(account_id: str) -> Response:
    """The statement the account page shows, as the API's CSV."""
    who = signed_in_actor()
    start, end, problem = period()
    if problem:
        return error_page(422, problem)
    number, classes = record_pages.numbered_statement(database(), who, account_id, start, end)
    response = csv_response(
        STATEMENT_FIELDS,
        statement_csv_rows(classes),
        f"statement-{number}-{start.isoformat()}-{end.isoformat()}.csv",
    )
    response.headers["Cache-Control"] = "no-store"
    return response


#: a period's first and last days, read as the API reads every date
_DAY = IsoDate()


def period(
    start_names: tuple[str, ...] = ("from",), end_names: tuple[str, ...] = ("to",)
) -> tuple[date, date, str | None]:
    """The period the query names (``?from=&to=``, or the first of ``start_names`` and of
    ``end_names`` given), by default this calendar year to date, and what is wrong with it."""
    today = clock.today()
    default_start = today.replace(month=1, day=1)
    try:
        start = _DAY.deserialize(_given(start_names) or default_start.isoformat())
        end = _DAY.deserialize(_given(end_names) or today.isoformat())
    except ValidationError:
        first, last = FIRST_DATE.isoformat(), LAST_DATE.isoformat()
        return default_start, today, f"Dates must be written YYYY-MM-DD, from {first} to {last}."
    if end < start:
        return start, end, "The period ends before it starts."
    return start, end, None


def _given(names: tuple[str, ...]) -> str | None:
    return next((request.args[name] for name in names if request.args.get(name)), None)


# --- /plans/{id} ------------------------------------------------------------------------------


@web.route("/plans/<plan_id>")
def plan(plan_id: str) -> Response:
    """The plan's timeline, appeals, withdrawals, payments, securities, and whether the impact
    may proceed."""
    who = signed_in_actor()
    today = clock.today()
    found = record_pages.plan_page(database(), who, plan_id, today)
    # the reservations as they are (typed views over the session's rows), not deep-copied
    body = {
        **asdict(replace(found.report, reservations=[])),
        "reservations": found.report.reservations,
    }
    return page(
        "plan.html",
        plan=body,
        lgu_name=found.lgu_name,
        payments=found.payments,
        in_lieu=found.in_lieu,
        securities=found.securities,
        account_numbers=found.account_numbers,
        lot_labels=found.lot_labels,
        open_acts=found.open_acts,
        notices=found.notices,
        steps=plan_view.timeline(body, today),
        today=today,
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
    found = record_pages.audit_page(database(), who, today, JOURNAL_ROWS)
    return page(
        "audit.html",
        report=None if needed else outcome,
        full_pass_needed=needed,
        today=today,
        assets=found.assets,
        balanced=found.balanced,
        journal=found.journal,
        account_names=found.account_names,
    )
