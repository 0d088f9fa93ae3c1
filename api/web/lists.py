"""The pages' lists: accounts, plans, holders, LGUs, bank sites, securities and payments.

Each list is filtered by its query parameters (``q`` text, ``status``, ``holder``,
``expiring``) and paged by keyset: ``after`` names the last row shown, and a "Next" link carries
it, as the API's cursors do.  Who sees which rows is the ``bank`` use case's (``bank.policy``);
a list a role may not see at all is 403.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from flask import Response, request, url_for

from api.context import database, ruleset
from api.web.blueprint import web
from api.web.errors import error_page
from api.web.pages import page
from api.web.signin import signed_in_actor
from bank import page_lists, party_lists
from bank.access import Actor
from bank.errors import UnknownCursor
from bank.homes import DUE_SOON_DAYS, EXPIRING_DAYS, THIS_WEEK_DAYS
from bank.money_tables import PAYMENT_STATUSES
from bank.securities import STATUSES as SECURITY_STATUSES
from ledger import clock
from ledger.db import Database

PAGE_ROWS, MOST_ROWS = 50, 200
PLAN_STATUSES = (
    "received",
    "noticed",
    "approved",
    "denied",
    "deemed_approved",
    "appealed",
    "final",
)
_ID = re.compile(r"^[a-z]{2,8}_[0-9a-f]{1,64}$")


class BadQuery(Exception):
    """A list's query parameter that cannot be used (answered 400 with what was wrong)."""


@web.errorhandler(BadQuery)
def _bad_query(error: BadQuery) -> Response:
    return error_page(400, str(error))


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def page_args() -> dict[str, Any]:
    """``q``, ``after`` and ``limit``, checked."""
    q = (request.args.get("q") or "").strip()[:200] or None
    return {"q": q, **place(request.args)}


def place(values: Mapping[str, str]) -> dict[str, Any]:
    """The page ``values`` name (a query's, or a form's sent from the page): ``after`` (the
    last row of the page before, ``None`` for the first) and ``limit``, checked (``BadQuery``)."""
    after = values.get("after") or None
    if after is not None and not _ID.match(after):
        raise BadQuery("The list cannot go on from there: follow its “Next” link instead.")
    try:
        limit = int(values.get("limit") or PAGE_ROWS)
    except ValueError:
        raise BadQuery("The number of rows per page must be a whole number.") from None
    if not 1 <= limit <= MOST_ROWS:
        raise BadQuery(f"A page shows between 1 and {MOST_ROWS} rows.")
    return {"after": after, "limit": limit}


def place_kept(after: str | None, limit: int) -> dict[str, Any]:
    """A page's ``after`` and ``limit`` as its links and forms carry them: each only when it is
    not the first page's (no ``after``, ``PAGE_ROWS``)."""
    kept: dict[str, Any] = {"after": after} if after else {}
    return kept | ({"limit": limit} if limit != PAGE_ROWS else {})


def _choice(name: str, allowed: tuple[str, ...]) -> str | None:
    value = request.args.get(name) or None
    if value is not None and value not in allowed:
        raise BadQuery(f"Choose the {name} from the list ({', '.join(allowed)}).")
    return value


def paged(
    rows: list[Any], limit: int, endpoint: str, later: bool | None = None, /, **kept: Any
) -> dict[str, Any]:
    """The rows to show (each with an ``id``: an attribute, or a dict's key), the "Next" link
    (``None`` on the last page) and the "First page" link (``None`` on the first page: whether
    the rows are a later one is ``later``, by default whether the query names an ``after``)."""
    shown = rows[:limit]
    more = len(rows) > limit
    filters = {k: v for k, v in kept.items() if v not in (None, "")}
    if limit != PAGE_ROWS:
        filters["limit"] = limit
    last = shown[-1] if more else None
    last_id = last["id"] if isinstance(last, dict) else getattr(last, "id", None)
    following = url_for(endpoint, after=last_id, **filters) if more else None
    if later is None:
        later = bool(request.args.get("after"))
    first = url_for(endpoint, **filters) if later else None
    return {"rows": shown, "next_page": following, "first_page": first, "filters": filters}


@web.route("/accounts")
def accounts() -> Response:
    """Accounts with their totals: the board's (all, or one holder's), a holder's own."""
    who = signed_in_actor()
    args = page_args()
    holder = request.args.get("holder") or None
    if holder is not None and not _ID.match(holder):
        raise BadQuery("Choose the holder from the holders list.")
    rows = page_lists.accounts(database(), who, holder_id=holder, **args)
    listed = paged(rows, args["limit"], "web.accounts", q=args["q"], holder=holder)
    return page("accounts.html", q=args["q"], holder=holder, **listed)


@web.route("/plans")
def plans() -> Response:
    """Plans (board: all; an LGU: its own), those with a deadline soon first."""
    who = signed_in_actor()
    args = page_args()
    status = _choice("status", PLAN_STATUSES)
    today = clock.today()
    found = page_lists.plan_list(database(), who, status=status, today=today, **args)
    listed = paged(found.items, args["limit"], "web.plans", q=args["q"], status=status)
    return page(
        "plans.html",
        q=args["q"],
        chosen=status,
        statuses=PLAN_STATUSES,
        due_soon=found.due_soon,
        more_due=found.more_due,
        due_soon_days=page_lists.DUE_SOON_DAYS,
        today=today,
        **listed,
    )


#: how far ahead the list of plans due looks: the dashboard's week, an LGU home's 14 days
DUE_WITHIN = (THIS_WEEK_DAYS, DUE_SOON_DAYS)


@web.route("/plans/due")
def plans_due() -> Response:
    """Every plan (board: all; an LGU: its own) with a deadline in the next ``within`` days
    (overdue notices too), of ``status`` when given, soonest first: in full what the homes and
    ``/plans`` list the first of."""
    who = signed_in_actor()
    args = page_args()
    given = request.args.get("within") or str(DUE_SOON_DAYS)
    if given not in {str(days) for days in DUE_WITHIN}:
        raise BadQuery(f"Choose how far ahead to look: {' or '.join(map(str, DUE_WITHIN))} days.")
    within = int(given)
    status = _choice("status", PLAN_STATUSES)
    today = clock.today()
    rows = page_lists.due_plans(database(), who, within=within, today=today, status=status, **args)
    listed = paged(rows, args["limit"], "web.plans_due", q=args["q"], within=within, status=status)
    return page(
        "plans_due.html",
        q=args["q"],
        within=within,
        choices=DUE_WITHIN,
        chosen=status,
        statuses=PLAN_STATUSES,
        today=today,
        **listed,
    )


#: a list the board searches by name alone (``q``): what it finds with the query's arguments
Search = Callable[[Database, Actor, str | None, str | None, int], list[Any]]


def _searched(path: str, endpoint: str, search: Search) -> None:
    """The page at ``path`` listing what ``search`` finds, shown by ``<endpoint>.html``."""

    def view() -> Response:
        who = signed_in_actor()
        args = page_args()
        try:
            rows = search(database(), who, args["q"], args["after"], args["limit"])
        except UnknownCursor:  # a place no page gives: none there, and the first
            rows = []
        listed = paged(rows, args["limit"], f"web.{endpoint}", q=args["q"])
        return page(f"{endpoint}.html", q=args["q"], **listed)

    web.add_url_rule(path, endpoint, view)


def _sites(db: Database, who: Actor, q: str | None, after: str | None, limit: int) -> list[Any]:
    """Bank sites with their credit registers."""
    return party_lists.sites(db, who, q, after, limit, ruleset=ruleset())


_searched("/holders", "holders", party_lists.holders)
_searched("/lgus", "lgus", party_lists.lgus)
_searched("/bank-sites", "bank_sites", _sites)


@web.route("/securities")
def securities() -> Response:
    """Securities (board: all; an LGU: its plans'), soonest expiry first; ``expiring``: those
    held that expire within 60 days."""
    who = signed_in_actor()
    args = page_args()
    expiring = request.args.get("expiring") == "1"
    status = None if expiring else _choice("status", SECURITY_STATUSES)
    today = clock.today()
    rows = page_lists.securities(
        database(),
        who,
        expiring_days=EXPIRING_DAYS if expiring else None,
        status=status,
        after=args["after"],
        limit=args["limit"],
        today=today,
    )
    kept = {"expiring": "1" if expiring else None, "status": status}
    listed = paged(rows, args["limit"], "web.securities", **kept)
    return page(
        "securities.html",
        expiring=expiring,
        expiring_days=EXPIRING_DAYS,
        chosen=status,
        statuses=SECURITY_STATUSES,
        **listed,
    )


@web.route("/payments")
def payments() -> Response:
    """Payments (board: all; an LGU: its plans'), oldest first."""
    who = signed_in_actor()
    args = page_args()
    status = _choice("status", PAYMENT_STATUSES)
    rows = page_lists.payments(
        database(), who, status=status, after=args["after"], limit=args["limit"]
    )
    listed = paged(rows, args["limit"], "web.payments", status=status)
    return page("payments.html", chosen=status, statuses=PAYMENT_STATUSES, **listed)
