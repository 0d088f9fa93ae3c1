"""The board's LGU compliance page (Subd. 1 (c)): the API's report for a chosen period."""

from __future__ import annotations

from flask import Response

from api.context import database
from api.pagination import csv_response
from api.schemas.notices import ComplianceRow
from api.web.blueprint import web
from api.web.errors import error_page
from api.web.pages import page, period
from api.web.signin import signed_in_actor
from bank import compliance
from ledger import clock

FORBIDDEN = "Only board staff may see the LGU compliance report."


@web.route("/reports/lgu-compliance")
def lgu_compliance() -> Response:
    """Per LGU: plans received in the period, decided in time, deemed approved, notices late or
    missing, reversed on appeal."""
    who = signed_in_actor()
    if not who.is_board:
        return error_page(403, FORBIDDEN)
    start, end, problem = period()
    if problem:
        found = compliance.ComplianceReport(start, end, clock.today(), [])
    else:
        found = compliance.report(database(), who, start, end)
    status = 422 if problem else 200
    return page("lgu_compliance.html", status=status, report=found, period_problem=problem)


@web.route("/reports/lgu-compliance.csv")
def lgu_compliance_csv() -> Response:
    """The report the page shows, as the API's CSV."""
    who = signed_in_actor()
    if not who.is_board:
        return error_page(403, FORBIDDEN)
    start, end, problem = period()
    if problem:
        return error_page(422, problem)
    found = compliance.report(database(), who, start, end)
    name = f"lgu-compliance-{start.isoformat()}-{end.isoformat()}.csv"
    response = csv_response(list(ComplianceRow().fields), iter(found.items), name)
    response.headers["Cache-Control"] = "no-store"
    return response


def load() -> None:
    """The routes are declared above, on import; this makes the import explicit."""
