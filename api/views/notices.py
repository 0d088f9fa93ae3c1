"""docs/http.md "Replacement plans and appeals": the notices of Subd. 6 and 7, to the people the
statute names, the members of the public who ask for a copy, and each notice as a printable
document (HTML, PDF).

The routes join the plans blueprint (``api.views.plans`` imports this module)."""

from __future__ import annotations

import base64
import hashlib
from typing import Any

from flask import Response, render_template, url_for
from flask.views import MethodView
from markupsafe import Markup

from api import formats, listing_csv, pdf
from api.context import actor, database
from api.pagination import csv_response, wants_csv
from api.roles import roles
from api.schemas.notices import (
    CopyMailedIn,
    CopyRequestIn,
    CopyRequestOut,
    NoticeIn,
    NoticeItem,
    NoticeLinks,
    NoticeList,
)
from api.schemas.plans import NoticeOut
from api.views.plans import blp
from bank import notice_document, notices, plan_acts

HTML, PDF = formats.HTML, formats.PDF

#: the printable notice's stylesheet, in the page so that a saved copy prints alike
STYLE = Markup(
    "\n  body { font-family: Helvetica, Arial, sans-serif; max-width: 42rem; margin: 2rem auto;"
    " padding: 0 1rem; line-height: 1.4; color: #000; }"
    "\n  h1 { font-size: 1.4rem; margin-bottom: 0.2rem; }"
    "\n  h2 { font-size: 1.05rem; margin: 1.2rem 0 0.3rem; }"
    "\n  p { margin: 0.2rem 0; }"
    "\n  .statute { font-size: 0.9rem; }"
    "\n  ul { padding-left: 1.2rem; }"
    "\n  @media print { body { margin: 0; padding: 0; max-width: none; } }\n"
)
#: as the pages' policy (``api.web.pages``): no script, nothing from elsewhere, never framed;
#: the one style allowed is ``STYLE``, named by its hash
POLICY = (
    "default-src 'none'; "
    f"style-src 'sha256-{base64.b64encode(hashlib.sha256(STYLE.encode()).digest()).decode()}'; "
    "img-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)


def recipients(data: dict[str, Any]) -> list[notices.Recipient]:
    return [notices.Recipient(r["name"], r["address"], r["role"]) for r in data["recipients"]]


def _mail(plan_id: str, notice: str, data: dict[str, Any]) -> Any:
    """Record the plan's ``notice`` as mailed (``NoticeIn``, loaded: the day, the recipients)."""
    return plan_acts.mail_notice(
        database(), actor(), plan_id, notice, data["mailed_on"], recipients(data)
    )


@blp.route("/plans/<plan_id>/notices")
class PlanNotices(MethodView):
    @blp.write("board", "lgu", body=NoticeIn, status=201, reply=NoticeOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Subd. 6 notice of application, to the panel, the commissioner, the watershed
        district (full notices) and the public who asked; late notices are flagged.

        The watershed district, and the panel once its determination is recorded, are named as
        the plan records them."""
        return _mail(plan_id, "application", data)

    @blp.read("board", "lgu", reply=NoticeList)
    @blp.alt_response(200, description="text/csv of every notice mailed", content_type="text/csv")
    def get(self, plan_id: str) -> Any:
        """Every notice the plan mailed, of each of its applications (one a revision counting
        as new superseded too), in the order they were recorded (JSON or CSV).

        Each with its ``notice`` (``application`` or ``decision``), ``kind`` as mailed,
        ``application_number``, ``mailed_on``, ``current`` (true for the plan's ``notice`` and
        ``decision_notice``), ``document_kept``, its ``recipients`` as its document lists them,
        and ``links`` to it printed as mailed (``GET /plans/{id}/notices/{notice_id}``, HTML or
        PDF, and the site's page).  A notice recorded before the service kept the documents it
        mailed is listed too, with what was recorded of it, ``document_kept`` false: printed, it
        shows that and says what it said was not kept.  The plan's LGU and the board;
        ``not_found`` for another's plan."""
        items = [
            _linked(plan_id, sent) for sent in notice_document.listed(database(), actor(), plan_id)
        ]
        if wants_csv():
            rows = (listing_csv.notice_row(item) for item in items)
            return csv_response(listing_csv.NOTICE_FIELDS, rows, f"notices-{plan_id}.csv")
        return {"items": items}


def _linked(plan_id: str, sent: notice_document.ListedNotice) -> NoticeItem:
    document = url_for("plans.PlanNoticeDocument", plan_id=plan_id, notice_id=sent.id)
    links = NoticeLinks(
        document=document,
        pdf=url_for("plans.PlanNoticeDocument", plan_id=plan_id, notice_id=sent.id, format="pdf"),
        page=url_for("web.plan_notice", plan_id=plan_id, notice_id=sent.id),
    )
    return NoticeItem(**vars(sent), links=links)


@blp.route("/plans/<plan_id>/decision-notice")
class PlanDecisionNotice(MethodView):
    @blp.write("board", "lgu", body=NoticeIn, status=201, reply=NoticeOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """Subd. 7 notice of decision, to the panel, the applicant, the commissioner, the
        watershed district and the public who asked: opens the appeal window.

        The applicant, the watershed district, and the panel once its determination is
        recorded, are named as the plan records them."""
        return _mail(plan_id, "decision", data)


@blp.route("/plans/<plan_id>/copy-requests")
class PlanCopyRequests(MethodView):
    @blp.write("board", "lgu", body=CopyRequestIn, status=201, reply=CopyRequestOut)
    def post(self, data: dict[str, Any], plan_id: str) -> Any:
        """A member of the public asked for a copy: later notices must be mailed to them.

        Not before the plan's first application was received (``validation_error``), and once
        per name and address (``conflict``, naming the first in ``copy_request_id``).  ``owed``
        lists the plan's notices already mailed on or after ``requested_on`` that were not
        mailed to them (Subd. 6 (a), 7), an earlier application's too (``application_number``
        names it): a copy of each is owed (also shown on the plan's ``copy_requests``, with
        ``copies_mailed``: each copy recorded as mailed since, naming its notice's ``notice_id``
        and ``application_number`` as ``owed`` did)."""
        return plan_acts.request_copy(
            database(), actor(), plan_id, data["name"], data["address"], data["requested_on"]
        )


@blp.route("/plans/<plan_id>/copy-requests/<copy_request_id>/copies-mailed")
class PlanCopiesMailed(MethodView):
    @blp.write("board", "lgu", body=CopyMailedIn, status=201, reply=CopyRequestOut)
    def post(self, data: dict[str, Any], plan_id: str, copy_request_id: str) -> Any:
        """A copy of a notice owed to a member of the public who asked was mailed to them.

        ``notice_id`` is one the request's ``owed`` lists; the reply is the request as the plan
        now shows it: that notice no longer under ``owed``, the copy under ``copies_mailed``
        (its ``notice_id``, ``notice``, ``notice_mailed_on`` and ``application_number`` as
        ``owed`` named them, and its own ``mailed_on``).
        ``mailed_on`` is not in the future, nor before ``requested_on`` or the notice's own
        mailing (``validation_error``).  A request the plan does not have is ``not_found``; a
        notice the plan did not mail ``validation_error`` on ``notice_id``; a copy already
        recorded (``copy_mailed_on`` names its day), or of a notice not owed them (mailed
        before they asked, or mailed to them), is ``conflict`` naming ``copy_request_id`` and
        ``notice_id``.  A notice of an earlier application, which a revision counting as new
        superseded, is owed as the current one's are."""
        return plan_acts.mail_copy(
            database(), actor(), plan_id, copy_request_id, data["notice_id"], data["mailed_on"]
        )


def _document(plan_id: str, notice: str) -> Response:
    """The notice of ``notice`` mailed last, as ``_printed``."""
    wanted = formats.wanted()
    doc = notice_document.document(database(), actor(), plan_id, notice)
    return _printed(wanted, doc, f"notice-of-{notice}-{plan_id}")


def _printed(wanted: str, doc: notice_document.NoticeDocument, name: str) -> Response:
    """The notice as mailed, as HTML or (``?format=pdf``, ``Accept: application/pdf``) PDF."""
    if wanted == PDF:
        response = Response(pdf.document(doc), mimetype=PDF)
        response.headers["Content-Disposition"] = f'inline; filename="{name}.pdf"'
    else:
        page = render_template("notice.html", doc=doc, style=STYLE)
        response = Response(page, mimetype=HTML)
        response.headers["Content-Security-Policy"] = POLICY
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["Referrer-Policy"] = "same-origin"
    response.headers["Cache-Control"] = "no-store"
    return response


@blp.route("/plans/<plan_id>/notices/application")
class PlanApplicationNotice(MethodView):
    @roles("board", "lgu")
    @blp.response(200, content_type=HTML, description="The notice as a printable page")
    @blp.alt_response(200, content_type=PDF, description="The notice as PDF")
    def get(self, plan_id: str) -> Any:
        """The Subd. 6 notice as mailed: applicant, location and scope, the impact, the
        comment period, and who it was mailed to."""
        return _document(plan_id, "application")


@blp.route("/plans/<plan_id>/notices/decision")
class PlanDecisionNoticeDocument(MethodView):
    @roles("board", "lgu")
    @blp.response(200, content_type=HTML, description="The notice as a printable page")
    @blp.alt_response(200, content_type=PDF, description="The notice as PDF")
    def get(self, plan_id: str) -> Any:
        """The Subd. 7 notice as mailed: the decision and how and by when to appeal it
        ($200, 15 days after the postmark, to the board), and who it was mailed to."""
        return _document(plan_id, "decision")


@blp.route("/plans/<plan_id>/notices/<notice_id>")
class PlanNoticeDocument(MethodView):
    @roles("board", "lgu")
    @blp.response(200, content_type=HTML, description="The notice as a printable page")
    @blp.alt_response(200, content_type=PDF, description="The notice as PDF")
    def get(self, plan_id: str, notice_id: str) -> Any:
        """Any notice mailed for the plan, by its id (the plan's ``notice.id``,
        ``decision_notice.id``, an ``owed`` copy's ``notice_id``, one ``GET
        /plans/{id}/notices`` lists): one of an earlier
        application a revision counting as new superseded too.  As the latest of its kind
        prints it; ``not_found`` for a notice the plan did not mail.  A notice recorded before
        the service kept the documents it mailed (``document_kept`` false) prints what was
        recorded of it (its kind, date, application and recipients) and says the rest was not
        kept, never the plan as it is now."""
        wanted = formats.wanted()
        notice, doc = notice_document.document_of(database(), actor(), plan_id, notice_id)
        return _printed(wanted, doc, f"notice-of-{notice}-{plan_id}-{notice_id}")
