"""Notices mailed to the people the statute names (Subd. 6 and 7; docs/domain.md §4).

A notice of application goes to the three members of the technical evaluation panel, the
commissioner of natural resources, the managers of the watershed district if one exists (with
the complete application: not with the Subd. 6 (b) summary), and every member of the public who
asked for a copy by the day it is mailed.  A notice of decision (Subd. 7) goes to the panel, the
applicant, the commissioner, the watershed district if one exists, and the members of the
public who asked.  Each notice is stored as mailed: its kind, its date and its recipients.  A
member of the public the LGU registers after a notice was mailed, who had asked on or before that
day, is owed a copy of it, whichever of the plan's applications the notice was mailed for (a
revision counting as new does not discharge the debt); the LGU records the copy when it mails it
(``record_copy_mailed``).
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import plan_panel, plans
from bank.errors import Conflict, NotFound, ValidationFailed
from bank.ids import new_id
from bank.notice_tables import CopyMailed, CopyRequest, NoticeRecipient, PlanNotice
from bank.plan_facts import add_fact
from bank.plan_tables import Plan, PlanRevision
from bank.rules import replacement_rules
from bank.rules.ruleset import ruleset_by_id
from ledger import clock
from ledger.slices import grouped

ROLES = ("tep_member", "watershed_district", "dnr_commissioner", "applicant", "public_requester")
NOTICES = ("application", "decision")
#: Subd. 2: a board professional, an SWCD professional, and one the LGU appoints
PANEL_SIZE = 3
#: Subd. 7: "a summary of the approval or denial"
DECISION_NOTICE_KIND = "summary"


@dataclass(frozen=True)
class Recipient:
    """Someone a notice was mailed to, and why the statute names them."""

    name: str
    address: str
    role: str


# --- members of the public who ask ------------------------------------------------------------


def register_copy_request(
    session: Session, plan: Plan, name: str, address: str, requested_on: date
) -> CopyRequest:
    """A member of the public asked for a copy: every later notice is mailed to them too, and a
    notice already mailed on or after ``requested_on`` without them is owed them (``CopyAsked``'s
    ``owed``: the request was registered after that notice was recorded).

    Not before the plan's first application was received (there was nothing to ask a copy
    of), and once per person: a second request of the same name and address (compared as a
    notice's recipients are) is ``conflict``, naming the first."""
    if requested_on > clock.today():
        raise ValidationFailed("this date is in the future", {"requested_on": ["in the future"]})
    if requested_on < plan.first_received_on:
        received = plan.first_received_on.isoformat()
        raise ValidationFailed(
            f"a copy is asked of an application received on {received}",
            {"requested_on": [f"before the plan's first application was received {received}"]},
        )
    for asked in copy_requests_of(session, plan.id):
        if (_same(asked.name), _same(asked.address)) == (_same(name), _same(address)):
            raise Conflict(
                f"{asked.name}, {asked.address} asked for a copy on "
                f"{asked.requested_on.isoformat()} ({asked.id}): every later notice is "
                "mailed to them already",
                copy_request_id=asked.id,
            )
    return add_fact(
        session,
        CopyRequest,
        "creq",
        plan.id,
        name=name.strip(),
        address=address.strip(),
        requested_on=requested_on,
    )


#: the subdivision that mails each notice to "individual members of the public who request a copy"
_SUBDIVISION = {"application": "Subd. 6 (a)", "decision": "Subd. 7"}


@dataclass(frozen=True)
class OwedCopy:
    """A notice of the plan mailed on or after the day a member of the public asked for a copy
    that was not mailed to them: a copy of it is owed (``owed_copies``) until the LGU records
    that it mailed one (``record_copy_mailed``)."""

    #: the notice (``POST /plans/{id}/copy-requests/{id}/copies-mailed`` names it)
    notice_id: str
    #: ``application`` or ``decision``
    notice: str
    mailed_on: date
    detail: str
    #: the application it was mailed for: an earlier one a revision counting as new superseded
    #: (Subd. 6 (c)) owes its copies still
    application_number: int


@dataclass(frozen=True)
class MailedCopy:
    """A copy of a notice the LGU mailed to a member of the public after the notice itself."""

    notice_id: str
    #: ``application`` or ``decision``
    notice: str
    #: the day the notice itself was mailed
    notice_mailed_on: date
    #: the day the copy was mailed
    mailed_on: date
    #: the application the notice was mailed for, as its ``OwedCopy`` named it (the notice's
    #: ``MailedNotice.application_number``)
    application_number: int


@dataclass(frozen=True)
class MailedNotice:
    """A notice the plan mailed, with the people it was mailed to."""

    id: str
    #: ``application`` (Subd. 6) or ``decision`` (Subd. 7)
    notice: str
    #: ``full`` or ``summary``, as mailed
    kind: str
    mailed_on: date
    #: whom it was mailed to, in the order the LGU listed them
    recipients: Sequence[Recipient]
    #: the application it was mailed for (``plans.application_at``)
    application_number: int
    #: whether it is a notice of the plan's current application as the plan shows it (its
    #: ``notice`` or ``decision_notice``), not one of an earlier application a revision
    #: counting as new superseded
    current: bool
    #: whether its document was kept as mailed (``bank.notice_document``): false for a notice
    #: recorded before the service kept them, of which only this record is known
    document_kept: bool


@dataclass(frozen=True)
class CopyAsked:
    """A member of the public who asked for a copy, as the plan shows them, with the copies of
    notices already mailed they are owed and the copies mailed to them since."""

    id: str
    plan_id: str
    name: str
    address: str
    requested_on: date
    recorded_at: datetime
    #: the plan's notices mailed on or after ``requested_on`` that were not mailed to them, and
    #: no copy of which was recorded as mailed to them since
    owed: tuple[OwedCopy, ...] = ()
    #: the copies of notices recorded as mailed to them after the notice, oldest first
    copies_mailed: tuple[MailedCopy, ...] = ()


def owed_copies(
    name: str,
    address: str,
    requested_on: date,
    mailed: Sequence[MailedNotice],
    copied: Collection[str] = (),
) -> tuple[OwedCopy, ...]:
    """The notices of ``mailed`` a member of the public who asked on ``requested_on`` was owed
    (mailed on or after that day, as ``missing_recipients`` counts) and that do not list them
    as a ``public_requester`` (name and address compared as there): a request the LGU
    registered after recording such a notice, which the notice's check could not see.  A
    notice whose id is in ``copied`` (a copy of it mailed to them since) is owed no more.  A
    notice of an earlier application (not ``current``) is owed as much: the statute required it
    mailed to them when it was, and a later application does not undo that mailing."""
    owed = []
    for sent in mailed:
        if sent.id not in copied and _owed(name, address, requested_on, sent):
            of = "" if sent.current else _of_earlier(sent.application_number)
            owed.append(
                OwedCopy(
                    sent.id,
                    sent.notice,
                    sent.mailed_on,
                    f"asked for a copy on {requested_on.isoformat()}: the notice of "
                    f"{sent.notice} mailed on {sent.mailed_on.isoformat()}{of} was not mailed "
                    f"to them ({_SUBDIVISION[sent.notice]}); a copy is owed",
                    sent.application_number,
                )
            )
    return tuple(owed)


def _of_earlier(number: int) -> str:
    return f" for application {number}, which a revision counting as new superseded,"


def _owed(name: str, address: str, requested_on: date, sent: MailedNotice) -> bool:
    """Whether ``sent`` owed a copy to the one who asked on ``requested_on``: it was mailed on
    or after that day, and not to them."""
    if sent.mailed_on < requested_on:
        return False
    requesters = (r for r in sent.recipients if r.role == "public_requester")
    reached = {(_same(r.name), _same(r.address)) for r in requesters}
    return (_same(name), _same(address)) not in reached


def current_ids(plan: Plan, latest: Mapping[str, PlanNotice | None]) -> set[str]:
    """The ids of the notices of the plan's current application, given the notice of each kind
    mailed last (``latest``, by ``application`` and ``decision``): those the plan shows under
    ``notice`` and ``decision_notice`` (the row mailed last is the one the plan records, if it
    bears the plan's date: a notice recorded before the service stored them has no row)."""
    current = set()
    for notice, mailed_on in (
        ("application", plan.notice_mailed_on),
        ("decision", plan.decision_notice_mailed_on),
    ):
        row = None if mailed_on is None else latest.get(notice)
        if row is not None and row.mailed_on == mailed_on:
            current.add(row.id)
    return current


def mailed_of(session: Session, listed: Sequence[Plan]) -> defaultdict[str, list[MailedNotice]]:
    """Every notice each of ``listed`` mailed (those of earlier applications too), by plan id,
    in the order they were recorded: with its recipients, the application it was mailed for
    and whether it is one of the plan's current application; read for all of them at once (the
    plan's notices once: ``latest_of`` and ``copies_mailed_of`` read them from this)."""
    ids = [plan.id for plan in listed]
    rows = grouped(session, PlanNotice.plan_id, ids, PlanNotice.recorded_at, PlanNotice.id)
    recipients = recipients_by_notice(session, [row.id for found in rows.values() for row in found])
    revisions = grouped(
        session,
        PlanRevision.plan_id,
        ids,
        PlanRevision.recorded_at,
        where=[PlanRevision.counts_as_new_application.is_(True)],
    )
    mailed: defaultdict[str, list[MailedNotice]] = defaultdict(list)
    for plan in listed:
        found = rows[plan.id]
        latest = {row.notice: row for row in found}  # oldest first: the last of each kind stays
        current = current_ids(plan, latest)
        # as ``plans.application_at``: one more than the revisions counting as new by then
        superseded = [revision.recorded_at for revision in revisions[plan.id]]
        mailed[plan.id] = [
            MailedNotice(
                row.id,
                row.notice,
                row.kind,
                row.mailed_on,
                recipients[row.id],
                1 + bisect_right(superseded, row.recorded_at),
                row.id in current,
                row.document is not None,
            )
            for row in found
        ]
    return mailed


def plan_mailed(session: Session, plan: Plan) -> list[MailedNotice]:
    """``mailed_of`` the plan alone."""
    return mailed_of(session, [plan])[plan.id]


def latest_of(mailed: Sequence[MailedNotice], notice: str) -> MailedNotice | None:
    """The notice of kind ``notice`` of ``mailed`` (``mailed_of`` a plan) the plan shows as its
    ``notice`` or ``decision_notice``: the one mailed last, if it bears the plan's date
    (``current``); None before one is mailed, or for a notice recorded before the service
    stored them."""
    return next((sent for sent in mailed if sent.current and sent.notice == notice), None)


def copies_mailed_of(
    session: Session, mailed: Mapping[str, Sequence[MailedNotice]]
) -> defaultdict[str, list[MailedCopy]]:
    """The copies mailed to the members of the public who asked of the plans of ``mailed``
    (``mailed_of`` them: a copy's notice is one of them), by copy request id, oldest first."""
    rows = grouped(
        session, CopyMailed.plan_id, list(mailed), CopyMailed.mailed_on, CopyMailed.recorded_at
    )
    by_id = {sent.id: sent for found in mailed.values() for sent in found}
    by_request: defaultdict[str, list[MailedCopy]] = defaultdict(list)
    for found in rows.values():
        for row in found:
            sent = by_id[row.notice_id]
            by_request[row.copy_request_id].append(
                MailedCopy(
                    sent.id, sent.notice, sent.mailed_on, row.mailed_on, sent.application_number
                )
            )
    return by_request


def copies_owed(
    mailed: Sequence[MailedNotice],
    requests: Sequence[CopyRequest],
    copies: Mapping[str, Sequence[MailedCopy]],
) -> list[CopyAsked]:
    """Each of the plan's copy ``requests`` as the plan shows it: owed the copies of the notices
    it ``mailed`` (``mailed_of``: an earlier application's too) that did not reach them, less
    those mailed since (``copies``, by request id)."""
    return [copy_asked(row, mailed, copies.get(row.id, ())) for row in requests]


def copy_requests_of(session: Session, plan_id: str) -> list[CopyAsked]:
    """The plan's copy requests, in the order they were made."""
    rows = session.execute(
        select(CopyRequest)
        .where(CopyRequest.plan_id == plan_id)
        .order_by(CopyRequest.requested_on, CopyRequest.recorded_at, CopyRequest.id)
    ).scalars()
    return [copy_asked(row) for row in rows]


def copy_asked(
    row: CopyRequest, mailed: Sequence[MailedNotice] = (), copies: Sequence[MailedCopy] = ()
) -> CopyAsked:
    """``row`` as the plan shows it, owed the copies of ``mailed`` that did not reach them and
    that none of ``copies`` (those mailed to them since) is a copy of."""
    copied = {copy.notice_id for copy in copies}
    return CopyAsked(
        row.id,
        row.plan_id,
        row.name,
        row.address,
        row.requested_on,
        row.recorded_at,
        owed_copies(row.name, row.address, row.requested_on, mailed, copied),
        tuple(copies),
    )


def owed_counts(session: Session, listed: Sequence[Plan]) -> dict[str, int]:
    """How many copies each of ``listed`` owes the members of the public who asked and has not
    mailed (``copies_owed``), by plan id, read for all of them at once."""
    ids = [plan.id for plan in listed]
    mailed = mailed_of(session, listed)
    requests = grouped(session, CopyRequest.plan_id, ids)
    copies = copies_mailed_of(session, mailed)
    counts = {}
    for plan in listed:
        shown = copies_owed(mailed[plan.id], requests[plan.id], copies)
        counts[plan.id] = sum(len(asked.owed) for asked in shown)
    return counts


def record_copy_mailed(
    session: Session, plan: Plan, copy_request_id: str, notice_id: str, mailed_on: date
) -> CopyAsked:
    """The LGU mailed a copy of the notice ``notice_id`` to the member of the public who asked
    (``copy_request_id``) on ``mailed_on``: it is owed them no more.  Returned as the plan now
    shows the request.

    ``not_found`` for a request the plan does not have; ``validation_error`` on ``notice_id``
    for a notice the plan did not mail; ``conflict`` for a copy already recorded as mailed to
    them, or a notice not owed them (``owed_copies``: mailed before they asked, or mailed to
    them; a notice of an earlier application is owed as the current one's are);
    ``validation_error`` on ``mailed_on`` for a day in the future, before they asked or before
    the notice was mailed."""
    asked = session.get(CopyRequest, copy_request_id)
    if asked is None or asked.plan_id != plan.id:
        raise NotFound(f"plan {plan.id} has no copy request {copy_request_id}")
    notice = session.get(PlanNotice, notice_id)
    if notice is None or notice.plan_id != plan.id:
        raise ValidationFailed(
            f"plan {plan.id} mailed no notice {notice_id}",
            {"notice_id": [f"not a notice of plan {plan.id}"]},
        )
    of = f"the notice of {notice.notice} mailed on {notice.mailed_on.isoformat()}"
    who = f"{asked.name}, {asked.address}"
    mailed = plan_mailed(session, plan)
    copies = copies_mailed_of(session, {plan.id: mailed})[asked.id]
    for copy in copies:
        if copy.notice_id == notice.id:
            raise Conflict(
                f"a copy of {of} was recorded as mailed to {who} on "
                f"{copy.mailed_on.isoformat()}: it is owed them no more",
                copy_request_id=asked.id,
                notice_id=notice.id,
                copy_mailed_on=copy.mailed_on.isoformat(),
            )
    owed = {c.notice_id for c in owed_copies(asked.name, asked.address, asked.requested_on, mailed)}
    if notice.id not in owed:
        raise Conflict(
            f"no copy of {of} is owed to {who}, who asked on "
            f"{asked.requested_on.isoformat()}: {_why_not_owed(asked, notice)}",
            copy_request_id=asked.id,
            notice_id=notice.id,
        )
    _check_copy_date(mailed_on, asked, notice)
    add_fact(
        session,
        CopyMailed,
        "cpy",
        plan.id,
        copy_request_id=asked.id,
        notice_id=notice.id,
        mailed_on=mailed_on,
    )
    return copy_asked(asked, mailed, copies_mailed_of(session, {plan.id: mailed})[asked.id])


def _why_not_owed(asked: CopyRequest, notice: PlanNotice) -> str:
    if notice.mailed_on < asked.requested_on:
        return "it was mailed before they asked"
    return "it was mailed to them"


def _check_copy_date(mailed_on: date, asked: CopyRequest, notice: PlanNotice) -> None:
    """A copy is mailed no later than today, once it was asked for, of a notice already mailed."""
    if mailed_on > clock.today():
        raise ValidationFailed("this date is in the future", {"mailed_on": ["in the future"]})
    for since, what in (
        (asked.requested_on, "they asked for a copy"),
        (notice.mailed_on, f"the notice of {notice.notice} was mailed"),
    ):
        if mailed_on < since:
            raise ValidationFailed(
                f"a copy is mailed no earlier than {what}, on {since.isoformat()}",
                {"mailed_on": [f"before {what} on {since.isoformat()}"]},
            )


# --- who must receive a notice ----------------------------------------------------------------


def _same(text: str) -> str:
    return " ".join(text.split()).casefold()


_WORD = re.compile(r"\w+")
#: how a notice may address the district's managers before the district's name
_MANAGERS_OF = re.compile(r"^(the )?(board of )?managers( of)?( the)? ")


def _words(text: str) -> str:
    """``text``'s words, lower case, one space between them: punctuation and spacing aside."""
    return " ".join(_WORD.findall(text.casefold()))


def _names_district(name: str, district: str) -> bool:
    """Whether a recipient named ``name`` is the district's managers: Subd. 6 and 7 mail "the
    managers of the watershed district", so the district's name, word for word, may follow
    "(The) (Board of) Managers (of) (the)" ("Board of Managers, Yellow Medicine River Watershed
    District"); nothing else may stand around it (another district whose name ends in it, a
    body named after it).  A district's own leading "The" may go with it ("Board of Managers,
    The Rice Creek Watershed District" names "The Rice Creek Watershed District")."""
    said, named = _words(name), _words(district)
    if said == named:  # "Managers Creek Watershed District" is its own name
        return True
    return _without_the(_MANAGERS_OF.sub("", said, count=1)) == _without_the(named)


def _without_the(words: str) -> str:
    return words.removeprefix("the ")


def missing_recipients(
    session: Session,
    plan: Plan,
    notice: str,
    kind: str,
    mailed_on: date,
    recipients: list[Recipient],
) -> list[str]:
    """What the statute requires and ``recipients`` lacks, each naming its role.  Where the plan
    records who a party is (the applicant, the watershed district, the panel's members once
    its determination names them, the members of the public who asked), a recipient of that
    role must bear that name (compared without regard to case and spacing; the district's
    may follow the words for its managers, ``_names_district``)."""
    by_role = {role: [r for r in recipients if r.role == role] for role in ROLES}
    named = {role: {_same(r.name) for r in listed} for role, listed in by_role.items()}
    missing = _missing_panel(session, plan, named["tep_member"])
    if notice == "decision" and _same(plan.applicant) not in named["applicant"]:
        missing.append(f"applicant: {plan.applicant} (Subd. 7 mails the decision to the applicant)")
    if not by_role["dnr_commissioner"]:
        missing.append("dnr_commissioner: the commissioner of natural resources")
    district = plan.watershed_district
    if district and (notice == "decision" or kind == "full"):
        if not any(_names_district(r.name, district) for r in by_role["watershed_district"]):
            missing.append(f"watershed_district: the managers of {district}")
    sent_to = {(_same(r.name), _same(r.address)) for r in by_role["public_requester"]}
    for asked in copy_requests_of(session, plan.id):
        if asked.requested_on <= mailed_on and (_same(asked.name), _same(asked.address)) not in (
            sent_to
        ):
            missing.append(
                f"public_requester: {asked.name}, {asked.address} "
                f"(asked on {asked.requested_on.isoformat()})"
            )
    return missing


def _missing_panel(session: Session, plan: Plan, named: set[str]) -> list[str]:
    """Subd. 2's three members: those the panel's determination names, once it is recorded for
    the plan's current application; three distinct names before."""
    determination = plan_panel.determination_of(plan_panel.panel_of(session, plan))
    if determination is None:
        if len(named) >= PANEL_SIZE:
            return []
        return [
            f"tep_member: the {PANEL_SIZE} members of the technical evaluation panel "
            f"({len(named)} named)"
        ]
    return [
        f"tep_member: {member.name} ({member.represents}), of the technical evaluation panel "
        "as its determination names it"
        for member in determination.members
        if _same(member.name) not in named
    ]


def _check_recipients(
    session: Session,
    plan: Plan,
    notice: str,
    kind: str,
    mailed_on: date,
    recipients: list[Recipient],
) -> None:
    missing = missing_recipients(session, plan, notice, kind, mailed_on, recipients)
    if missing:
        roles = dict.fromkeys(line.split(":", 1)[0] for line in missing)
        subdivision = "Subd. 6" if notice == "application" else "Subd. 7"
        raise ValidationFailed(
            f"{subdivision}: the notice must also be mailed to: {', '.join(roles)}",
            {"recipients": missing},
        )


# --- recording notices ------------------------------------------------------------------------


@dataclass(frozen=True)
class NoticeView:
    """A notice as the plan shows it: when it was mailed and was due, and as mailed (its kind
    and recipients; both None for a notice recorded before the service stored them)."""

    mailed_on: date
    due: date | None
    late: bool
    #: ``full`` or ``summary`` as mailed; None (and no recipients) on a notice recorded before
    #: the service stored them
    kind: str | None
    recipients: tuple[Recipient, ...] | None
    #: the notice as stored (``GET /plans/{id}/notices/{notice_id}`` prints it); None on a notice
    #: recorded before the service stored notices
    id: str | None


#: the document of a notice as mailed (``bank.notice_document.as_mailed``, JSON), from its
#: ``notice``, ``kind``, ``mailed_on`` and the recipients it is mailed to: stored with the row
Printer = Callable[[str, str, date, Sequence[Recipient]], str]


def record_application_notice(
    session: Session, plan: Plan, mailed_on: date, recipients: list[Recipient], printed: Printer
) -> tuple[NoticeView, PlanNotice]:
    """Subd. 6: the notice of application, its kind as mailed, to whom and as ``printed``
    (late ones flagged); with the row that records it."""
    result = plans.record_notice(session, plan, mailed_on)
    kind = replacement_rules.notice_kind(ruleset_by_id(plan.ruleset), plan.impact_area_sqft)
    _check_recipients(session, plan, "application", kind, mailed_on, recipients)
    return _store(session, plan, "application", kind, result, recipients, printed)


def record_decision_notice(
    session: Session, plan: Plan, mailed_on: date, recipients: list[Recipient], printed: Printer
) -> tuple[NoticeView, PlanNotice]:
    """Subd. 7: the notice of decision, to whom and as ``printed``; it opens the appeal
    window.  With the row that records it."""
    result = plans.record_decision_notice(session, plan, mailed_on)
    kind = DECISION_NOTICE_KIND
    _check_recipients(session, plan, "decision", kind, mailed_on, recipients)
    return _store(session, plan, "decision", kind, result, recipients, printed)


def _store(
    session: Session,
    plan: Plan,
    notice: str,
    kind: str,
    shown: Mapping[str, Any],
    recipients: list[Recipient],
    printed: Printer,
) -> tuple[NoticeView, PlanNotice]:
    """Store the notice ``shown`` (its ``mailed_on``, ``due``, ``late``) as mailed, its
    document with it: a notice's row, like its recipients', is sealed as it is written
    (``bank.registry``), and never changes afterwards."""
    listed = [Recipient(r.name.strip(), r.address.strip(), r.role) for r in recipients]
    mailed_on = shown["mailed_on"]
    document = printed(notice, kind, mailed_on, listed)
    row = add_fact(
        session,
        PlanNotice,
        "ntc",
        plan.id,
        notice=notice,
        kind=kind,
        mailed_on=mailed_on,
        document=document,
    )
    for position, r in enumerate(listed):
        session.add(
            NoticeRecipient(
                id=new_id("rcpt"),
                notice_id=row.id,
                position=position,
                name=r.name,
                address=r.address,
                role=r.role,
            )
        )
    session.flush()
    return _view(session, shown, row), row


def _view(session: Session, shown: Mapping[str, Any], row: PlanNotice) -> NoticeView:
    recipients = tuple(recipients_of(session, row.id))
    return NoticeView(shown["mailed_on"], shown["due"], shown["late"], row.kind, recipients, row.id)


def mailed_view(shown: Mapping[str, Any], sent: MailedNotice | None) -> NoticeView:
    """A plan's notice as ``plan_report`` shows it (``mailed_on``, ``due``, ``late``), with the
    kind and recipients of ``sent``, the notice as mailed (``latest_of``: both None for a
    notice recorded before the service stored them, of which ``sent`` is None)."""
    if sent is None:
        return NoticeView(shown["mailed_on"], shown["due"], shown["late"], None, None, None)
    recipients = tuple(sent.recipients)
    return NoticeView(
        shown["mailed_on"], shown["due"], shown["late"], sent.kind, recipients, sent.id
    )


# --- reading ----------------------------------------------------------------------------------


def latest_notice(session: Session, plan_id: str, notice: str) -> PlanNotice | None:
    """The notice of this kind mailed last (a revision that counts as new gets its own)."""
    return session.execute(
        select(PlanNotice)
        .where(PlanNotice.plan_id == plan_id, PlanNotice.notice == notice)
        .order_by(PlanNotice.recorded_at.desc(), PlanNotice.id.desc())
        .limit(1)
    ).scalar_one_or_none()


def recipients_of(session: Session, notice_id: str) -> list[Recipient]:
    """Whom a notice was mailed to, in the order the LGU listed them."""
    return recipients_by_notice(session, [notice_id])[notice_id]


def recipients_by_notice(
    session: Session, notice_ids: Sequence[str]
) -> defaultdict[str, list[Recipient]]:
    """``recipients_of`` each of ``notice_ids``, by notice id, read at once."""
    rows = grouped(session, NoticeRecipient.notice_id, notice_ids, NoticeRecipient.position)
    found: defaultdict[str, list[Recipient]] = defaultdict(list)
    for notice_id, listed in rows.items():
        found[notice_id] = [Recipient(r.name, r.address, r.role) for r in listed]
    return found
