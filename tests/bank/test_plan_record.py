"""The use cases of a plan's record (``bank.plan_acts``) on both databases: the decision with
its resolution and the panel's determination, an extension, a revision, the notices mailed to
the people the statute names, a copy request, and their refusals.  A refused act writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from datetime import date, timedelta
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import func, select

from bank import notice_document, notices, parties, plan_acts, plan_panel, plan_report, plans
from bank.access import SYSTEM, Actor
from bank.errors import BankError, Conflict, NotFound, ValidationFailed
from bank.notice_tables import CopyRequest, PlanNotice
from bank.plan_decisions import DecisionRequest, Resolution
from bank.plan_extensions import ExtensionRequest
from bank.plan_panel import Determination, PanelMember
from bank.plan_record_tables import PlanExtension, PlanPanel
from bank.plan_tables import Plan, PlanRevision
from bank.rules.ruleset import ruleset_for
from ledger.db import Database

DAY = date(2026, 6, 17)
NEXT = DAY + timedelta(days=1)
PANEL = (
    notices.Recipient("Ann Board", "520 Lafayette Rd N, St. Paul", "tep_member"),
    notices.Recipient("Sam Swcd", "311 Brighton Ave S, Buffalo", "tep_member"),
    notices.Recipient("Lee Lgu", "10 2nd St NW, Buffalo", "tep_member"),
    notices.Recipient("Commissioner", "500 Lafayette Rd, St. Paul", "dnr_commissioner"),
)
APPLICANT = notices.Recipient("Road Co", "1 Main St, Buffalo", "applicant")
MEMBERS = (
    PanelMember("Ann Board", "board"),
    PanelMember("Sam Swcd", "swcd"),
    PanelMember("Lee Lgu", "lgu"),
)
APPROVAL = DecisionRequest("approved", DAY, resolution=Resolution("R-2026-7", DAY))


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{NEXT.isoformat()} 12:00:00"):
        yield


def lgu_of(db: Database) -> Actor:
    lgu = parties.create_lgu(db, SYSTEM, name=f"County {uuid.uuid4().hex[:8]}", kind="county")
    return Actor(token_id=f"tok_{lgu.id}", role="lgu", name="clerk", lgu_id=lgu.id)


def plan_of(db: Database, lgu: Actor, area_sqft: int = 9_000) -> str:
    """A plan of ``area_sqft`` received on ``DAY``; 9,000 sq ft has no comment period."""
    request = plans.PlanRequest(
        lgu_id=lgu.lgu_id,
        applicant="Road Co",
        project="County road 12",
        received_on=DAY,
        area_sqft=area_sqft,
        wetland_type="2",
        service_area=5,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
        location="Sec. 12, T110N, R41W",
    )
    with db.transaction() as session:
        return plans.create_plan(session, ruleset_for(DAY), request).id


def noticed_plan_of(db: Database, lgu: Actor) -> str:
    """``plan_of``'s 9,000 sq ft, its summary mailed on ``DAY`` (Subd. 6 (b)): it may be
    decided."""
    plan_id = plan_of(db, lgu)
    plan_acts.mail_notice(db, lgu, plan_id, "application", DAY, list(PANEL))
    return plan_id


def count(db: Database, table: Any, plan_id: str) -> int:
    with db.transaction() as session:
        return int(session.scalar(select(func.count()).where(table.plan_id == plan_id)) or 0)


def plan_row(db: Database, plan_id: str) -> Plan:
    with db.transaction() as session:
        plan = session.get(Plan, plan_id)
        if plan is None:
            raise AssertionError(plan_id)
        return plan


def refused(error: type[BankError], act: Callable[[], object]) -> BankError:
    with pytest.raises(error) as caught:
        act()
    return caught.value


# --- the decision, with its resolution and the panel ------------------------------------------


def test_a_decision_includes_its_resolution_and_the_panels_determination(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = noticed_plan_of(db, lgu)
    referred = plan_acts.refer_to_panel(db, lgu, plan_id, DAY, ["size", "location"])
    assert referred.questions == ("location", "size") and referred.determination is None
    refused(Conflict, lambda: plan_acts.decide(db, lgu, plan_id, APPROVAL))
    determination = Determination(DAY, MEMBERS, "a type 2 wet meadow", "approve")
    panel = plan_acts.record_determination(db, lgu, plan_id, determination)
    assert panel.determination == determination and panel.application_number == 1

    report = plan_acts.decide(db, lgu, plan_id, APPROVAL)

    assert report.outcome == "approved" and report.decision is not None
    assert report.decision.resolution == Resolution("R-2026-7", DAY)
    assert report.decision.tep_determination == determination
    assert report.tep == panel
    assert plan_row(db, plan_id).decision_resolution_number == "R-2026-7"


def test_an_approval_without_its_resolution_is_refused_and_writes_nothing(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = noticed_plan_of(db, lgu)
    error = refused(
        ValidationFailed,
        lambda: plan_acts.decide(db, lgu, plan_id, DecisionRequest("approved", DAY)),
    )
    assert error.code == "validation_error" and "Subd. 1 (b)" in str(error)
    assert plan_row(db, plan_id).decided_on is None


def test_a_determination_without_a_referral_is_a_conflict(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = plan_of(db, lgu)
    determination = Determination(DAY, MEMBERS, "wet meadow")
    refused(Conflict, lambda: plan_acts.record_determination(db, lgu, plan_id, determination))
    assert count(db, PlanPanel, plan_id) == 0


# --- extensions and revisions -----------------------------------------------------------------


def test_an_extension_moves_the_decision_deadline(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = plan_of(db, lgu)
    with db.transaction() as session:
        due = plans.state(session, plans.visible_plan(session, lgu, plan_id)).deadlines
    extension = plan_acts.extend(db, lgu, plan_id, ExtensionRequest(DAY, 30, "wet spring"))
    assert (extension.days, extension.reason, extension.applicant_agreed) == (
        30,
        "wet spring",
        False,
    )
    assert extension.decision_due > due.decision_due
    longer = ExtensionRequest(DAY, 61, "more")
    error = refused(ValidationFailed, lambda: plan_acts.extend(db, lgu, plan_id, longer))
    assert "days" in error.fields["errors"]
    assert count(db, PlanExtension, plan_id) == 1


def test_a_revision_ten_percent_larger_is_a_new_application(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = plan_of(db, lgu)
    small = plan_acts.revise(db, lgu, plan_id, 9_500, 0, DAY)
    assert not small.counts_as_new_application and small.application_number == 1
    revision = plan_acts.revise(db, lgu, plan_id, 10_000, 0, NEXT)
    assert revision.counts_as_new_application and revision.previous_area_sqft == 9_000
    assert (revision.application_number, revision.plan_received_on) == (2, NEXT)
    with db.transaction() as session:
        report = plan_report.report(session, plans.visible_plan(session, lgu, plan_id))
    earlier = report.applications
    assert [(a.number, a.area_sqft, a.decision) for a in earlier] == [(1, 9_500, None)]


def test_a_denied_plan_is_not_revised(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = noticed_plan_of(db, lgu)
    plan_acts.decide(db, lgu, plan_id, DecisionRequest("denied", DAY, reasons="no site"))
    refused(Conflict, lambda: plan_acts.revise(db, lgu, plan_id, 9_100, 0, NEXT))
    assert count(db, PlanRevision, plan_id) == 0


# --- notices and copy requests ----------------------------------------------------------------


def test_a_notice_is_mailed_to_the_named_recipients_and_who_asked(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = plan_of(db, lgu)
    asked = plan_acts.request_copy(db, lgu, plan_id, " Pat Public ", "9 Elm St", DAY)
    assert (asked.name, asked.address, asked.plan_id) == ("Pat Public", "9 Elm St", plan_id)
    error = refused(
        ValidationFailed,
        lambda: plan_acts.mail_notice(db, lgu, plan_id, "application", DAY, list(PANEL)),
    )
    assert "public_requester" in str(error)
    assert plan_row(db, plan_id).notice_mailed_on is None and count(db, PlanNotice, plan_id) == 0

    public = notices.Recipient("Pat Public", "9 Elm St", "public_requester")
    notice = plan_acts.mail_notice(db, lgu, plan_id, "application", DAY, [*PANEL, public])

    assert (notice.mailed_on, notice.late, notice.kind) == (DAY, False, "summary")
    assert notice.recipients == (*PANEL, public)
    document = notice_document.document(db, lgu, plan_id, "application")
    assert document.title.startswith("Notice of application")
    assert [r["name"] for r in document.recipients][-1] == "Pat Public"


def test_a_decision_notice_needs_the_decision_and_comes_after_it(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = noticed_plan_of(db, lgu)
    mailed = [*PANEL, APPLICANT]
    refused(Conflict, lambda: plan_acts.mail_notice(db, lgu, plan_id, "decision", DAY, mailed))
    refused(NotFound, lambda: notice_document.document(db, lgu, plan_id, "decision"))
    decision = DecisionRequest("approved", NEXT, resolution=Resolution("R-9", NEXT))
    plan_acts.decide(db, lgu, plan_id, decision)
    early = refused(
        ValidationFailed, lambda: plan_acts.mail_notice(db, lgu, plan_id, "decision", DAY, mailed)
    )
    assert early.code == "validation_error"
    missing = refused(
        ValidationFailed,
        lambda: plan_acts.mail_notice(db, lgu, plan_id, "decision", NEXT, list(PANEL)),
    )
    assert "applicant" in str(missing)
    assert plan_row(db, plan_id).decision_notice_mailed_on is None

    notice = plan_acts.mail_notice(db, lgu, plan_id, "decision", NEXT, mailed)

    assert (notice.kind, notice.recipients) == ("summary", tuple(mailed))
    document = notice_document.document(db, lgu, plan_id, "decision")
    assert "Resolution R-9" in " ".join(document.sections[3].paragraphs)


def test_a_copy_request_dated_tomorrow_is_refused(db: Database) -> None:
    lgu = lgu_of(db)
    plan_id = plan_of(db, lgu)
    tomorrow = NEXT + timedelta(days=1)
    refused(
        ValidationFailed, lambda: plan_acts.request_copy(db, lgu, plan_id, "Pat", "9 Elm", tomorrow)
    )
    assert count(db, CopyRequest, plan_id) == 0


# --- who may act ------------------------------------------------------------------------------

ACTS: dict[str, Callable[[Database, Actor, str], object]] = {
    "extend": lambda db, who, p: plan_acts.extend(db, who, p, ExtensionRequest(DAY, 5, "x")),
    "refer": lambda db, who, p: plan_acts.refer_to_panel(db, who, p, DAY, ["size"]),
    "determine": lambda db, who, p: plan_acts.record_determination(
        db, who, p, Determination(DAY, MEMBERS, "x")
    ),
    "decide": lambda db, who, p: plan_acts.decide(db, who, p, APPROVAL),
    "revise": lambda db, who, p: plan_acts.revise(db, who, p, 20_000, 0, DAY),
    "notice": lambda db, who, p: plan_acts.mail_notice(db, who, p, "application", DAY, list(PANEL)),
    "decision_notice": lambda db, who, p: plan_acts.mail_notice(
        db, who, p, "decision", DAY, [*PANEL, APPLICANT]
    ),
    "copy_request": lambda db, who, p: plan_acts.request_copy(db, who, p, "Pat", "9 Elm", DAY),
    "document": lambda db, who, p: notice_document.document(db, who, p, "application"),
}


@pytest.mark.parametrize("act", sorted(ACTS))
def test_another_lgus_plan_is_not_found_and_nothing_is_written(db: Database, act: str) -> None:
    owner, other = lgu_of(db), lgu_of(db)
    plan_id = plan_of(db, owner)
    before = plan_row(db, plan_id)
    error = refused(NotFound, lambda: ACTS[act](db, other, plan_id))
    assert error.code == "not_found"
    after = plan_row(db, plan_id)
    assert after.version == before.version and after.decided_on is None
    for table in (PlanExtension, PlanPanel, PlanRevision, PlanNotice, CopyRequest):
        assert count(db, table, plan_id) == 0


def test_the_board_acts_on_any_plan(db: Database) -> None:
    plan_id = plan_of(db, lgu_of(db))
    panel = plan_acts.refer_to_panel(db, SYSTEM, plan_id, DAY, ["type"])
    assert isinstance(panel, plan_panel.PanelView) and panel.questions == ("type",)
