"""The printable documents (issue #26): a withdrawal's certificate for the LGU's file, the
notices of application and of decision as mailed, and an account's statement for a period.

Each is a page the browser's Print turns into a clean document (the stylesheet's print rules
drop the menu and the forms); the certificate and the notices are also offered as PDF
(``?format=pdf``, ``api.pdf``).  The data comes from one ``bank`` use case each
(``bank.documents``, ``bank.notice_document``: the API's notices print the same text).
"""

from __future__ import annotations

from flask import Response, request

from api import pdf
from api.context import database
from api.web.blueprint import web
from api.web.filters import day, label, moment, sqft
from api.web.pages import page, period
from api.web.signin import signed_in_actor
from bank import documents, notice_document
from ledger import clock

PDF = "application/pdf"


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


# --- /plans/{id}/withdrawals/{id}/certificate ---------------------------------------------------


@web.route("/plans/<plan_id>/withdrawals/<withdrawal_id>/certificate")
def withdrawal_certificate(plan_id: str, withdrawal_id: str) -> Response:
    """The certificate of a withdrawal (the plan's LGU and the board), as HTML or PDF."""
    who = signed_in_actor()
    found = documents.withdrawal_certificate(database(), who, plan_id, withdrawal_id)
    if request.args.get("format") == "pdf":
        response = Response(pdf.render(certificate_lines(found)), mimetype=PDF)
        name = f"withdrawal-certificate-{found.withdrawal_id}.pdf"
        response.headers["Content-Disposition"] = f'inline; filename="{name}"'
        response.headers["Cache-Control"] = "no-store"
        return response
    return page(
        "withdrawal_certificate.html",
        cert=found,
        decision=decision_words(found.decision),
        today=clock.today(),
    )


def certificate_lines(cert: documents.WithdrawalCertificate) -> list[pdf.Line]:
    """The certificate as the PDF's lines of text, in the order the page shows them."""
    regular, bold = pdf.REGULAR, pdf.BOLD
    decided = cert.decision
    lines: list[pdf.Line] = [
        (bold, 16, "Certificate of withdrawal of wetland bank credits"),
        (regular, 10, "Wetland Conservation Act, Minn. Stat. 103G.2242"),
        (regular, 11, ""),
        (bold, 12, "Replacement plan"),
        (regular, 11, f"Plan: {cert.plan_id} (application {cert.application_number})"),
        (regular, 11, f"Project: {cert.project}"),
        (regular, 11, f"Applicant: {cert.applicant}"),
        (regular, 11, f"Local government unit: {cert.lgu_name}"),
        (regular, 11, f"Decision: {decision_words(decided)}"),
        (regular, 11, ""),
        (bold, 12, "Credits withdrawn"),
        (regular, 11, f"{sqft(cert.withdrawn_sqft)} sq ft on {moment(cert.withdrawn_at)}"),
        (regular, 11, f"First 1:1: {sqft(cert.first_1_to_1_sqft)} sq ft"),
        (regular, 11, f"Above 1:1: {sqft(cert.above_1_to_1_sqft)} sq ft"),
    ]
    for klass in cert.classes:
        kind = "restricted" if klass.restricted else "unrestricted"
        lines.append((bold, 11, f"{klass.code} ({kind}): {sqft(klass.amount_sqft)} sq ft"))
        lines += [
            (
                regular,
                11,
                f"Account {c.account_number} lot {c.lot_label}: {sqft(c.amount_sqft)} sq ft, "
                f"{c.portion_label}",
            )
            for c in klass.credits
        ]
    return lines + _ledger_lines(cert)


def _ledger_lines(cert: documents.WithdrawalCertificate) -> list[pdf.Line]:
    regular, bold = pdf.REGULAR, pdf.BOLD
    lines: list[pdf.Line] = [
        (regular, 11, ""),
        (bold, 12, "Ledger record"),
        (regular, 11, f"Transaction {cert.transaction_id}, dated {day(cert.transaction_on)}"),
    ]
    if cert.reversal_transaction_id:
        lines.append((regular, 11, f"Reversed on appeal by {cert.reversal_transaction_id}"))
    if cert.link is None:
        return lines + [(regular, 11, "Hash-chain link: sealing pending")]
    return lines + [
        (regular, 11, f"Hash-chain link {cert.link.seq}, sealed {moment(cert.link.chained_at)}"),
        (regular, 9, f"Hash: {cert.link.hash}"),
        (regular, 9, f"Previous hash: {cert.link.prev_hash}"),
    ]


#: how a certificate words the board's ruling on an appeal of the decision (Subd. 9)
RULINGS = {"plan_upheld": "upheld", "plan_reversed": "reversed"}


def decision_words(decided: documents.CertifiedDecision) -> str:
    """``Approved 2026-06-08 by resolution 12; the plan is final`` (``(recorded as decided
    2026-06-10)`` after the resolution where the decision was recorded as made later): the
    LGU's decision with its own date and resolution, or the day a deemed approval took effect
    (``Deemed approved 2026-08-08 (Minn. Stat. 15.99: not decided in time)``), then each ruling
    of the board on appeal of it (``; reversed by the board on appeal 2026-12-06, so
    denied``).  The certificate's page and its PDF print these same words."""
    words = label(decided.outcome) if decided.outcome else "Not decided"
    adopted = decided.resolution_adopted_on if decided.resolution_number else None
    if adopted:  # the resolution is the decision (Subd. 1 (b)): its day is the decision's
        words += f" {day(adopted)} by resolution {decided.resolution_number}"
        if decided.decided_on and decided.decided_on != adopted:
            words += f" (recorded as decided {day(decided.decided_on)})"
    elif decided.decided_on:
        words += f" {day(decided.decided_on)}"
    elif decided.deemed_approved_on:
        words += f" {day(decided.deemed_approved_on)} (Minn. Stat. 15.99: not decided in time)"
    for ruling in decided.rulings:
        ruled = RULINGS.get(ruling.outcome, label(ruling.outcome).lower())
        words += f"; {ruled} by the board on appeal {day(ruling.decided_on)}"
    if decided.outcome_now and decided.outcome_now != decided.outcome:  # what a reversal made
        words += f", so {label(decided.outcome_now).lower()}"
    if decided.status != decided.outcome_now:
        words += f"; the plan is {label(decided.status).lower()}"
    return words


# --- /plans/{id}/notices/{application, decision, notice id} -----------------------------------


@web.route("/plans/<plan_id>/notices/application")
def plan_application_notice(plan_id: str) -> Response:
    """The Subd. 6 notice of application last mailed (the plan's LGU and the board)."""
    return _notice(plan_id, "application")


@web.route("/plans/<plan_id>/notices/decision")
def plan_decision_notice(plan_id: str) -> Response:
    """The Subd. 7 notice of decision last mailed (the plan's LGU and the board)."""
    return _notice(plan_id, "decision")


@web.route("/plans/<plan_id>/notices/<notice_id>")
def plan_notice(plan_id: str, notice_id: str) -> Response:
    """Any notice mailed for the plan, by its id (one of an earlier application too), as
    ``GET /api/v1/plans/{id}/notices/{notice_id}`` prints it (the plan's LGU and the board)."""
    who = signed_in_actor()
    notice, doc = notice_document.document_of(database(), who, plan_id, notice_id)
    return _printed(doc, notice, plan_id, f"notice-of-{notice}-{plan_id}-{notice_id}")


def _notice(plan_id: str, notice: str) -> Response:
    """The notice as ``GET /api/v1/plans/{id}/notices/{notice}`` prints it, as HTML or PDF;
    ``not_found`` for a plan the reader may not see or a notice not mailed."""
    who = signed_in_actor()
    doc = notice_document.document(database(), who, plan_id, notice)
    return _printed(doc, notice, plan_id, f"notice-of-{notice}-{plan_id}")


def _printed(doc: notice_document.NoticeDocument, notice: str, plan_id: str, name: str) -> Response:
    if request.args.get("format") == "pdf":
        response = Response(pdf.document(doc), mimetype=PDF)
        response.headers["Content-Disposition"] = f'inline; filename="{name}.pdf"'
        response.headers["Cache-Control"] = "no-store"
        return response
    return page("notice_page.html", doc=doc, notice=notice, plan_id=plan_id)


# --- /accounts/{id}/statement -----------------------------------------------------------------


@web.route("/accounts/<account_id>/statement")
def account_statement(account_id: str) -> Response:
    """The account's statement for ``?start=&end=`` (the account's holder and the board),
    printable; by default this calendar year to date."""
    who = signed_in_actor()
    # ``?start=&end=``, or ``?from=&to=`` as the account page names them
    start, end, problem = period(("start", "from"), ("end", "to"))
    found = documents.account_statement(
        database(), who, account_id, start, end, entries=problem is None
    )
    return page(
        "account_statement.html",
        status=422 if problem else 200,
        statement=found,
        start=start,
        end=end,
        period_problem=problem,
        today=clock.today(),
    )
