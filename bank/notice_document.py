"""A notice as the document that is mailed: what Subd. 6 and 7 require it to say.

The notice of application identifies the applicant and the location and scope of the project,
the impact, and the public comment period (Subd. 6, 8); the notice of decision adds the decision
and how and by when to appeal it (Subd. 7, 9).  The same document is printed as HTML and as PDF
(``api.views.notices``), so both say the same thing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from datetime import date

from sqlalchemy.orm import Session

from bank import notices, parties, party_edits, plan_decisions, plans
from bank.access import Actor
from bank.errors import NotFound
from bank.notice_tables import PlanNotice
from bank.plan_tables import Plan
from bank.rules import replacement_rules
from bank.rules.ruleset import Ruleset, ruleset_by_id
from bank.rules.timeline import Deadlines
from bank.wording import dollars
from ledger.db import Database

BOARD = "Board of Water and Soil Resources"
ROLE_LABELS = {
    "tep_member": "Technical evaluation panel",
    "watershed_district": "Watershed district managers",
    "dnr_commissioner": "Commissioner of natural resources",
    "applicant": "Applicant",
    "public_requester": "Member of the public who asked for a copy",
}
WETLAND_TYPES = {
    "1": "seasonally flooded basin",
    "2": "wet meadow",
    "3": "shallow marsh",
    "4": "deep marsh",
    "5": "shallow open water",
    "6": "shrub swamp",
    "7": "wooded swamp",
    "8": "bog",
}


@dataclass(frozen=True)
class Section:
    heading: str
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class NoticeDocument:
    title: str
    statute: str
    lgu_name: str
    mailed_on: str
    sections: tuple[Section, ...]
    recipients: tuple[dict[str, str], ...] = field(default=())


def long_date(day: date | None) -> str:
    """``2026-06-18`` → ``June 18, 2026``."""
    return f"{day:%B} {day.day}, {day.year}" if day else "not set"


@dataclass(frozen=True)
class RecipientShown:
    """Someone a notice was mailed to, as its document lists them: with why the statute names
    them, in words (``ROLE_LABELS``)."""

    name: str
    address: str
    role: str
    role_label: str


@dataclass(frozen=True)
class ListedNotice:
    """A notice the plan mailed, as ``GET /plans/{id}/notices`` lists it (``document_of``
    prints it)."""

    id: str
    #: ``application`` (Subd. 6) or ``decision`` (Subd. 7)
    notice: str
    #: ``full`` or ``summary``, as mailed
    kind: str
    #: the application it was mailed for: an earlier one a revision counting as new
    #: (Subd. 6 (c)) superseded, or the plan's current one
    application_number: int
    mailed_on: date
    #: whether it is the plan's ``notice`` or ``decision_notice`` (its current application's)
    current: bool
    #: whether its document was kept as mailed; false for a notice recorded before the service
    #: kept them: printed, it shows what was recorded of it (this listing's facts) and says
    #: that what it said was not kept
    document_kept: bool
    #: whom it was mailed to, in the order the LGU listed them
    recipients: tuple[RecipientShown, ...]


def document(db: Database, actor: Actor, plan_id: str, notice: str) -> NoticeDocument:
    """The notice of ``notice`` (``application`` or ``decision``) last mailed for the plan, as
    a document; ``not_found`` for a plan the caller may not see or a notice never recorded."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        row = notices.latest_notice(session, plan.id, notice)
        if row is None:
            raise NotFound(f"no notice of {notice} was recorded for plan {plan_id}")
        return _printed(session, plan, row)


def document_of(
    db: Database, actor: Actor, plan_id: str, notice_id: str
) -> tuple[str, NoticeDocument]:
    """The notice ``notice_id`` mailed for the plan, whichever application it was mailed for:
    its kind (``application`` or ``decision``) and its document; ``not_found`` for a plan the
    caller may not see or a notice it did not mail."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        row = session.get(PlanNotice, notice_id)
        if row is None or row.plan_id != plan.id:
            raise NotFound(f"plan {plan_id} mailed no notice {notice_id}")
        return row.notice, _printed(session, plan, row)


def _printed(session: Session, plan: Plan, row: PlanNotice) -> NoticeDocument:
    if row.document is not None:
        return from_json(row.document)
    (sent,) = [sent for sent in mailed_notices(session, plan) if sent.id == row.id]
    # the LGU named as it was when the notice was recorded, before any later correction
    lgu = parties.get_lgu(session, plan.lgu_id).name
    lgu = party_edits.field_as_of(session, "lgu", plan.lgu_id, "name", lgu, row.recorded_at)
    return not_kept(lgu, sent)


#: what a notice of each kind said that a notice recorded before documents were kept lost
_UNKEPT = {
    "application": "the applicant, the project and its location, the impact, the public "
    "comment period and the decision's deadline",
    "decision": "the applicant, the project and its location, the impact, the decision, and "
    "how and by when to appeal it",
}


def not_kept(lgu: str, sent: notices.MailedNotice) -> NoticeDocument:
    """The document of a notice recorded before the service kept them (``document_kept``
    false): what was recorded of it (its notice and kind, its date, the application it was
    mailed for, whom it was mailed to), saying that what it said was not kept.  Nothing of the
    plan as it is now, which need not be what was mailed."""
    title, statute = _headings(sent.notice, sent.kind)
    said = (
        "This notice was recorded before the service kept the documents of the notices it "
        f"mailed: what it said of {_UNKEPT[sent.notice]} was not kept, and is not printed here "
        "from the plan as it is now.",
        f"Recorded of it: the notice of {sent.notice} ({sent.kind} notice) for application "
        f"{sent.application_number}, mailed on {long_date(sent.mailed_on)}, and the people it "
        "was mailed to, below.",
    )
    return NoticeDocument(
        title=title,
        statute=statute,
        lgu_name=lgu,
        mailed_on=long_date(sent.mailed_on),
        sections=(Section("Not kept", said),),
        recipients=_listed(sent.recipients),
    )


def _headings(notice: str, kind: str) -> tuple[str, str]:
    """A notice's title and the statute it is mailed under."""
    if notice == "application":
        return (
            "Notice of application for a wetland replacement plan",
            f"Minn. Stat. 103G.2242, Subd. 6 ({kind} notice)",
        )
    return (
        "Notice of decision on a wetland replacement plan",
        "Minn. Stat. 103G.2242, Subd. 7 (summary of the decision)",
    )


def _listed(recipients: Sequence[notices.Recipient]) -> tuple[dict[str, str], ...]:
    """The recipients as a document lists them."""
    return tuple(
        {"name": r.name, "address": r.address, "role": r.role, "role_label": ROLE_LABELS[r.role]}
        for r in recipients
    )


def mailed_notices(session: Session, plan: Plan) -> list[notices.MailedNotice]:
    """Every notice mailed for ``plan`` (those of earlier applications too), in the order they
    were recorded, each with the application it was mailed for (``notices.mailed_of``)."""
    return notices.plan_mailed(session, plan)


def listed(db: Database, actor: Actor, plan_id: str) -> list[ListedNotice]:
    """``mailed_notices`` of the plan, each with its recipients as its document lists them;
    ``not_found`` for a plan the caller may not see (as ``GET /plans/{id}``)."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id)
        return [
            ListedNotice(
                sent.id,
                sent.notice,
                sent.kind,
                sent.application_number,
                sent.mailed_on,
                sent.current,
                sent.document_kept,
                tuple(_shown(r) for r in sent.recipients),
            )
            for sent in mailed_notices(session, plan)
        ]


def _shown(recipient: notices.Recipient) -> RecipientShown:
    return RecipientShown(
        recipient.name, recipient.address, recipient.role, ROLE_LABELS[recipient.role]
    )


def as_mailed(
    session: Session,
    plan: Plan,
    notice: str,
    kind: str,
    mailed_on: date,
    recipients: Sequence[notices.Recipient],
) -> str:
    """The document of the notice of ``notice`` (its ``kind``) mailed on ``mailed_on`` to
    ``recipients``, as JSON, in the transaction that records its mailing, which stores it with
    the notice (``notices.Printer``): what is printed later is what was mailed, whatever the
    plan becomes."""
    document = build(session, plan, notice, kind, mailed_on, recipients)
    return json.dumps(asdict(document), sort_keys=True)


def from_json(text: str) -> NoticeDocument:
    """A document as ``as_mailed`` stored it."""
    stored = json.loads(text)
    return NoticeDocument(
        title=stored["title"],
        statute=stored["statute"],
        lgu_name=stored["lgu_name"],
        mailed_on=stored["mailed_on"],
        sections=tuple(
            Section(section["heading"], tuple(section["paragraphs"]))
            for section in stored["sections"]
        ),
        recipients=tuple(dict(recipient) for recipient in stored["recipients"]),
    )


def build(
    session: Session,
    plan: Plan,
    notice: str,
    kind: str,
    mailed_on: date,
    recipients: Sequence[notices.Recipient],
) -> NoticeDocument:
    """The document of a notice, from the plan as it stands now (as mailed, when called in the
    transaction that records the mailing: ``as_mailed``)."""
    lgu = parties.get_lgu(session, plan.lgu_id).name
    ruleset = ruleset_by_id(plan.ruleset)
    deadlines = plans.state(session, plan).deadlines
    sections = [_applicant(plan), _project(plan), _impact(ruleset, plan)]
    title, statute = _headings(notice, kind)
    if notice == "application":
        sections += [_comment_period(ruleset, plan, deadlines, lgu), _decision_due(deadlines, lgu)]
    else:
        decision = plan_decisions.decision_of(session, plan)
        sections += [_decision(decision, deadlines), _appeal(ruleset, plan, deadlines, lgu)]
    return NoticeDocument(
        title=title,
        statute=statute,
        lgu_name=lgu,
        mailed_on=long_date(mailed_on),
        sections=tuple(sections),
        recipients=_listed(recipients),
    )


def _applicant(plan: Plan) -> Section:
    return Section("Applicant", (plan.applicant,))


def _project(plan: Plan) -> Section:
    lines = [
        f"Project: {plan.project}",
        f"Location: {plan.location or 'not recorded'}",
        f"County: {plan.impact_county}; bank service area {plan.impact_service_area}",
    ]
    if plan.watershed_district:
        lines.append(f"Watershed district: {plan.watershed_district}")
    return Section("Location and scope of the project", tuple(lines))


def _impact(ruleset: Ruleset, plan: Plan) -> Section:
    area = plan.impact_area_sqft
    kind = plan.impact_wetland_type
    method = plan.method.replace("_", " ")
    required, _ = plans.required_credits(plan)
    return Section(
        "The impact",
        (
            f"{area:,} square feet ({area / ruleset.sqft_per_acre:,.2f} acres) of wetland of "
            f"type {kind} ({WETLAND_TYPES.get(kind, 'unknown')}) to be drained or filled.",
            f"Replacement: {method} at a ratio of {plan.replacement_ratio}:1, "
            f"{required:,} square feet of replacement required.",
        ),
    )


def _comment_period(ruleset: Ruleset, plan: Plan, deadlines: Deadlines, lgu: str) -> Section:
    if not replacement_rules.has_comment_period(ruleset, plan.impact_area_sqft):
        text = (
            f"The impact is under {ruleset.small_impact_threshold_sqft:,} square feet: Subd. 8 "
            "sets no public comment period before the decision."
        )
    else:
        text = (
            f"Anyone may comment on the application to {lgu} for "
            f"{ruleset.comment_period_days} days: until "
            f"{long_date(deadlines.comment_period_ends)} (Subd. 8)."
        )
    return Section("Public comment", (text,))


def _decision_due(deadlines: Deadlines, lgu: str) -> Section:
    return Section(
        "Decision",
        (
            f"{lgu} must approve or deny the application by {long_date(deadlines.decision_due)} "
            "(Minn. Stat. 15.99); a notice of its decision will be mailed to everyone this "
            "notice was mailed to.",
        ),
    )


def _decision(decision: plan_decisions.PlanDecision | None, deadlines: Deadlines) -> Section:
    if decision is None:
        return Section(
            "Decision",
            (
                "Deemed approved: no decision was made by "
                f"{long_date(deadlines.decision_due)}, the deadline of Minn. Stat. 15.99.",
            ),
        )
    # the resolution is the approval or denial (Subd. 1 (b)): its day is the decision's
    resolution = decision.resolution
    made = resolution.adopted_on if resolution else decision.decided_on
    lines = [f"{(decision.outcome or '').capitalize()} on {long_date(made)}."]
    if resolution:
        lines.append(f"Resolution {resolution.number}, adopted {long_date(resolution.adopted_on)}.")
        if decision.decided_on != made:
            lines.append(f"Recorded as decided on {long_date(decision.decided_on)}.")
    if decision.reasons:
        lines.append(f"Reasons: {decision.reasons}")
    if decision.tep_recommendation:
        lines.append(f"Technical evaluation panel: {decision.tep_recommendation}")
    return Section("Decision", tuple(lines))


def _appeal(ruleset: Ruleset, plan: Plan, deadlines: Deadlines, lgu: str) -> Section:
    lines = [
        f"This decision may be appealed to the {BOARD} by mailing a petition and a filing fee "
        f"of {dollars(ruleset.appeal_filing_fee_cents)} to the board within "
        f"{ruleset.appeal_window_days} days after the postmarked date of this notice: by "
        f"{long_date(deadlines.appeal_window_ends)} (Subd. 9).",
        "The wetland owner, anyone this notice was mailed to, or "
        f"{ruleset.min_resident_petitioners} residents of the county in which a majority of "
        "the wetland is located may appeal.",
        f"If no appeal is sought within {ruleset.appeal_window_days} days, the decision "
        "becomes final.",
    ]
    required = plan.appeal_security_required_cents
    if required:
        lines.append(
            f"{lgu} requires the petitioner to post a letter of credit, cashier's check or cash "
            f"of {dollars(required)}."
        )
    return Section("How and by when to appeal", tuple(lines))
