"""The plan use cases (``bank.plan_cases``, ``bank.appeals``, ``bank.withdrawals``) on both
databases: a plan recorded by its LGU or by the board naming the LGU, the keyset listing, the
decision on and after its 60-day deadline, the appeal window, a withdrawal refused while the plan
is not yet approved or is appealed and made once the decision is final, and another LGU's plan
answered as not found.  A refused act writes nothing."""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import func, select

from bank import (
    appeals,
    credits,
    deposits,
    money,
    notices,
    parties,
    plan_acts,
    plan_cases,
    reservations,
    site_register,
    withdrawals,
)
from bank.access import SYSTEM, Actor
from bank.errors import (
    AppealWindowClosed,
    Conflict,
    DeadlinePassed,
    Forbidden,
    NotFound,
    UnknownCursor,
    ValidationFailed,
)
from bank.plan_decisions import DecisionRequest, Resolution
from bank.plan_report import PlanReport
from bank.plan_tables import Appeal, Plan
from bank.plans import PlanRequest
from bank.rules.deposit_rules import ActionRequest
from bank.rules.ruleset import ruleset_for
from bank.withdrawal_tables import Withdrawal
from ledger import pending, slices
from ledger.db import Database
from tests.bank.account_kit import statements

DAY = date(2026, 6, 17)
RULESET = ruleset_for(DAY)
CLASS = credits.class_code(5, "2", False)
#: whom a Subd. 7 notice of decision is mailed to (a plan with no watershed district)
RECIPIENTS = [
    notices.Recipient("Ann Board", "520 Lafayette Rd N, St. Paul", "tep_member"),
    notices.Recipient("Sam Swcd", "311 Brighton Ave S, Buffalo", "tep_member"),
    notices.Recipient("Lee Lgu", "10 2nd St NW, Buffalo", "tep_member"),
    notices.Recipient("Commissioner", "500 Lafayette Rd, St. Paul", "dnr_commissioner"),
    notices.Recipient("Road Co", "1 Main St, Buffalo", "applicant"),
]


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def lgu_of(db: Database) -> Actor:
    lgu = parties.create_lgu(db, SYSTEM, name=unique("County"), kind="county")
    return Actor(token_id=f"tok_{lgu.id}", role="lgu", name="clerk", lgu_id=lgu.id)


def application(lgu_id: str | None = None, project: str | None = None) -> PlanRequest:
    """1,000 sq ft at 2:1 (no comment period), received on ``DAY``."""
    return PlanRequest(
        lgu_id=lgu_id,
        applicant="Road Co",
        project=project or unique("County road 12"),
        received_on=DAY,
        area_sqft=1_000,
        wetland_type="2",
        service_area=5,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
        location="Sec. 12, T110N, R41W",
    )


def record(db: Database, lgu: Actor) -> PlanReport:
    return plan_cases.record(db, lgu, RULESET, application())


def at(day: date) -> Any:
    return freeze_time(f"{day.isoformat()} 12:00:00")


def approve(db: Database, lgu: Actor, plan_id: str, day: date) -> PlanReport:
    """Approve the plan received on ``DAY`` on ``day``, its summary mailed on ``DAY`` first
    (Subd. 6 (b): the decision waits for it)."""
    plan_acts.mail_notice(db, lgu, plan_id, "application", DAY, RECIPIENTS)
    request = DecisionRequest("approved", day, resolution=Resolution(f"R-{day}", day))
    return plan_acts.decide(db, lgu, plan_id, request)


def petition(postmarked_on: date, received_on: date) -> appeals.PetitionRequest:
    return appeals.PetitionRequest(
        petitioner_kind="owner",
        petitioner_name="Pat Owner",
        petitioner_address="1 Elm St, Buffalo",
        postmarked_on=postmarked_on,
        received_on=received_on,
        filing_fee_cents=RULESET.appeal_filing_fee_cents,
    )


def count(db: Database, table: Any, *where: Any) -> int:
    with db.transaction() as session:
        return int(session.scalar(select(func.count()).select_from(table).where(*where)) or 0)


# --- recording and reading -------------------------------------------------------------------


def test_an_lgu_records_its_own_plan(db: Database) -> None:
    lgu, other = lgu_of(db), lgu_of(db)

    plan = plan_cases.record(db, lgu, RULESET, application(lgu_id=other.lgu_id))

    assert plan.id.startswith("plan_") and plan.lgu_id == lgu.lgu_id
    assert (plan.status, plan.outcome, plan.notice_kind) == ("received", None, "summary")
    assert (plan.impact.area_sqft, plan.required_credit_sqft) == (1_000, 2_000)
    assert plan.deadlines.decision_due > DAY and plan.impact_may_proceed is False
    assert [b.code for b in plan.impact_blockers] == ["not_approved", "credits_not_withdrawn"]
    assert plan_cases.show(db, lgu, plan.id) == plan
    assert plan_cases.show(db, SYSTEM, plan.id) == plan


def test_the_board_names_the_plans_lgu(db: Database) -> None:
    lgu = lgu_of(db)
    project = unique("Bridge")
    holder = Actor(token_id="tok_h", role="holder", name="owner", holder_id="hld_0")

    with pytest.raises(ValidationFailed) as unnamed:
        plan_cases.record(db, SYSTEM, RULESET, application(project=project))
    with pytest.raises(Forbidden):
        plan_cases.record(db, holder, RULESET, application(lgu.lgu_id, project))
    assert unnamed.value.code == "validation_error"
    assert count(db, Plan, Plan.project == project) == 0

    plan = plan_cases.record(db, SYSTEM, RULESET, application(lgu.lgu_id, project))
    assert plan.lgu_id == lgu.lgu_id
    assert plan_cases.show(db, lgu, plan.id).project == project


def test_another_lgu_sees_neither_the_plan_nor_its_appeals(db: Database) -> None:
    lgu, other = lgu_of(db), lgu_of(db)
    plan = record(db, lgu)
    with at(DAY + timedelta(days=1)):
        approve(db, lgu, plan.id, DAY + timedelta(days=1))
        plan_acts.mail_notice(db, lgu, plan.id, "decision", DAY + timedelta(days=1), RECIPIENTS)
    with at(DAY + timedelta(days=3)):
        day = DAY + timedelta(days=3)
        appeal = appeals.file(db, SYSTEM, plan.id, petition(day, day))

        for act in (
            lambda: plan_cases.show(db, other, plan.id),
            lambda: plan_cases.complete_replacement(db, other, plan.id, day),
            lambda: plan_cases.require_appeal_security(db, other, plan.id, 10_000),
            lambda: withdrawals.withdraw(db, other, plan.id, ["res_0"], None),
            lambda: appeals.show(db, other, appeal.id),
        ):
            with pytest.raises(NotFound) as hidden:
                act()
            assert hidden.value.code == "not_found"
        assert appeals.show(db, lgu, appeal.id) == appeal
    assert plan.id not in [p.id for p in plan_cases.every(db, other)]
    assert plan.id not in [p.id for p in plan_cases.page(db, other, 50)]


def test_the_listing_pages_by_keyset_and_filters_by_status(db: Database) -> None:
    lgu = lgu_of(db)
    made = [record(db, lgu).id for _ in range(4)]  # one instant: the id orders them
    with at(DAY + timedelta(days=1)):
        approve(db, lgu, made[1], DAY + timedelta(days=1))
        approve(db, lgu, made[3], DAY + timedelta(days=1))

        first = plan_cases.page(db, lgu, 2)
        rest = plan_cases.page(db, lgu, 2, after=first[1].id)
        approved = plan_cases.page(db, lgu, 1, status="approved")
        after_approved = plan_cases.page(db, lgu, 1, status="approved", after=approved[0].id)
        with pytest.raises(UnknownCursor):  # a cursor naming no plan marks no place
            plan_cases.page(db, lgu, 2, after="plan_0")

    assert [p.id for p in first] == sorted(made)[:3]  # the extra one says there are more
    assert [p.id for p in rest] == sorted(made)[2:]
    assert [p.id for p in approved] == sorted([made[1], made[3]])
    assert [p.id for p in after_approved] == sorted([made[1], made[3]])[1:]


def test_the_listing_reads_as_many_statements_for_three_plans_as_for_one(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each listed plan's whole record (its notices and their recipients, its appeals, its
    reservations...) is read for the page at once (``bank.plan_rows``), not plan by plan."""
    lgu = lgu_of(db)
    day = DAY + timedelta(days=1)

    def add_plan() -> None:
        plan = record(db, lgu)
        with at(day):
            approve(db, lgu, plan.id, day)
            plan_acts.mail_notice(db, lgu, plan.id, "decision", day, RECIPIENTS)
            appeals.file(db, SYSTEM, plan.id, petition(day, day))

    def listed() -> tuple[list[PlanReport], int]:
        with at(day), statements(db) as sent:
            page = plan_cases.page(db, lgu, 10)
        return page, len(sent)

    add_plan()
    _, for_one = listed()
    add_plan()
    add_plan()
    three, for_three = listed()

    assert (len(three), for_three) == (3, for_one)
    assert all(p.appeals and p.decision_notice and p.decision_notice.recipients for p in three)
    with at(day):
        assert three == [plan_cases.show(db, lgu, p.id) for p in three]
    # past ``ledger.slices.SLICE`` plans the reads go slice by slice (here one plan a slice)
    one_by_one = functools.partial(slices.slices, size=1)
    for module in (slices, money, reservations, pending):
        monkeypatch.setattr(module, "slices", one_by_one)
    assert listed()[0] == three


def test_the_listing_reads_a_plans_notices_once(db: Database) -> None:
    """The plan's ``notice`` and ``decision_notice``, the copies its notices are owed and those
    mailed since come of one read of its notices and one of their recipients (``bank.plan_rows``),
    not one read for the latest of each kind, one for every notice and one for those copied."""
    lgu = lgu_of(db)
    day = DAY + timedelta(days=1)
    plan = record(db, lgu)
    with at(day):
        approve(db, lgu, plan.id, day)
        mailed = plan_acts.mail_notice(db, lgu, plan.id, "decision", day, RECIPIENTS)
        asked = plan_acts.request_copy(db, lgu, plan.id, "Pat Public", "5 Lake St, Buffalo", day)
        assert mailed.id is not None and [o.notice_id for o in asked.owed] == [mailed.id]
        plan_acts.mail_copy(db, lgu, plan.id, asked.id, mailed.id, day)
        with statements(db) as sent:
            (shown,) = plan_cases.page(db, lgu, 10)
    reads = {
        table: [s for s in sent if re.search(rf"\bFROM {table}\b", s)]
        for table in ("plan_notices", "plan_notice_recipients")
    }
    assert {table: len(found) for table, found in reads.items()} == {
        "plan_notices": 1,
        "plan_notice_recipients": 1,
    }
    assert shown.notice is not None and shown.notice.recipients == tuple(RECIPIENTS)
    assert shown.decision_notice == mailed
    ((copy,),) = [c.copies_mailed for c in shown.copy_requests]
    assert (copy.notice_id, copy.mailed_on, shown.copy_requests[0].owed) == (mailed.id, day, ())


# --- the decision's deadline -----------------------------------------------------------------


def test_a_decision_on_its_deadline_stands_and_one_after_it_is_refused(db: Database) -> None:
    lgu = lgu_of(db)
    on_time, late = record(db, lgu), record(db, lgu)
    due = on_time.deadlines.decision_due
    assert due == late.deadlines.decision_due

    with at(due):
        decided = approve(db, lgu, on_time.id, due)
    with at(due + timedelta(days=1)):
        with pytest.raises(DeadlinePassed) as refused:
            approve(db, lgu, late.id, due + timedelta(days=1))
        deemed = plan_cases.show(db, lgu, late.id)

    assert (decided.status, decided.outcome) == ("approved", "approved")
    assert refused.value.code == "deadline_passed"
    assert (deemed.status, deemed.decision) == ("deemed_approved", None)


# --- appeals ---------------------------------------------------------------------------------


def approved_and_noticed(db: Database, lgu: Actor) -> tuple[PlanReport, date]:
    """A plan approved and its decision mailed the day after ``DAY``; its window's last day."""
    plan = record(db, lgu)
    day = DAY + timedelta(days=1)
    with at(day):
        approve(db, lgu, plan.id, day)
        plan_acts.mail_notice(db, lgu, plan.id, "decision", day, RECIPIENTS)
        noticed = plan_cases.show(db, lgu, plan.id)
    ends = noticed.deadlines.appeal_window_ends
    assert ends is not None
    return noticed, ends


def test_a_petition_is_filed_within_the_appeal_window_only(db: Database) -> None:
    lgu = lgu_of(db)
    plan, ends = approved_and_noticed(db, lgu)
    late = ends + timedelta(days=1)

    with at(late):
        with pytest.raises(AppealWindowClosed) as closed:
            appeals.file(db, SYSTEM, plan.id, petition(late, late))
        with pytest.raises(Forbidden):
            appeals.file(db, lgu, plan.id, petition(ends, late))
        assert count(db, Appeal, Appeal.plan_id == plan.id) == 0

        filed = appeals.file(db, SYSTEM, plan.id, petition(ends, late))
        unpaid = plan_cases.show(db, lgu, plan.id)
        # the fee in its envelope (the petition's postmark, the window's last day)
        fee = money.PaymentRequest(
            "appeal_filing_fee", RULESET.appeal_filing_fee_cents, "P", late, appeal_id=filed.id
        )
        money.receive_payment(db, RULESET, SYSTEM, fee, None)
        paid = appeals.show(db, SYSTEM, filed.id)
        shown = plan_cases.show(db, lgu, plan.id)

    assert closed.value.code == "appeal_window_closed"
    # past the window with no fee recorded yet, it obtained no appeal (Subd. 9)
    assert (filed.status, unpaid.status, unpaid.appeals) == ("no_fee_in_window", "final", [filed])
    assert (paid.plan_id, paid.status, paid.petition, paid.decision) == (
        plan.id,
        "petition_received",
        None,
        None,
    )
    assert paid.grant_decision_due > late and paid.decision_due is None
    assert shown.status == "appealed" and shown.appeals == [paid]


def test_the_boards_decisions_on_an_appeal(db: Database) -> None:
    lgu = lgu_of(db)
    plan, ends = approved_and_noticed(db, lgu)
    with at(ends):
        appeal = appeals.file(db, SYSTEM, plan.id, petition(ends, ends))
        denial = appeals.PetitionDecision(False, ends, grounds=("trivial", "meritless"))
        with pytest.raises(Forbidden):
            appeals.decide_petition(db, lgu, appeal.id, denial, None)
        with pytest.raises(Conflict):
            appeals.record_service(db, SYSTEM, appeal.id, ends)
        denied = appeals.decide_petition(db, SYSTEM, appeal.id, denial, None)
        with pytest.raises(Conflict):
            appeals.decide_appeal(db, SYSTEM, appeal.id, "plan_upheld", ends, None, None)

    assert denied.status == "petition_denied" and denied.grounds == ["meritless", "trivial"]
    assert denied.petition is not None and denied.petition.late is False


# --- withdrawals -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Reserved:
    lgu: Actor
    plan_id: str
    reservation_id: str


def reserved(db: Database) -> Reserved:
    """An LGU's plan, received on ``DAY``, with 2,000 sq ft reserved for it."""
    lgu = lgu_of(db)
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    site = site_register.register_site(
        db,
        RULESET,
        SYSTEM,
        credit_areas=[],
        holder_id=holder.id,
        name=unique("Prairie Creek"),
        service_area=5,
        county="Lyon",
        major_watershed=None,
    )
    with db.transaction() as session:
        account = parties.open_account(
            session, RULESET, holder_id=holder.id, service_area=5, county="Lyon"
        )
        deposits.make_deposit(
            session, RULESET, SYSTEM, _deposit(account.id, site.id, lgu.lgu_id or ""), None
        )
    plan = record(db, lgu)
    request = reservations.ReservationRequest(
        account.id, plan.id, 2_000, DAY + timedelta(days=120), credit_class=CLASS
    )
    made = reservations.reserve_for_plan(db, SYSTEM, request, None)
    return Reserved(lgu, plan.id, made.id)


def _deposit(account_id: str, site_id: str, lgu_id: str) -> deposits.DepositRequest:
    """10,000 sq ft of unrestricted type 2 credits."""
    return deposits.DepositRequest(
        account_id=account_id,
        bank_site_id=site_id,
        effective_on=DAY,
        banking_plan_reference=unique("BP"),
        banking_plan_approved_on=DAY,
        banking_plan_lgu_id=lgu_id,
        wetland_type="2",
        completed_on=DAY,
        federally_approved=True,
        designated_for_replacement=True,
        paid_by_performer=True,
        paid_back_with_interest=False,
        actions=(ActionRequest("replacement_wetland", 10_000, 10_000),),
    )


def refused_withdrawal(db: Database, r: Reserved) -> Conflict:
    with pytest.raises(Conflict) as refused:
        withdrawals.withdraw(db, r.lgu, r.plan_id, [r.reservation_id], None)
    assert count(db, Withdrawal, Withdrawal.plan_id == r.plan_id) == 0
    return refused.value


def test_a_withdrawal_waits_for_an_approval_not_appealed(db: Database) -> None:
    r = reserved(db)
    assert refused_withdrawal(db, r).fields["status"] == "received"

    day = DAY + timedelta(days=1)
    with at(day):
        approve(db, r.lgu, r.plan_id, day)
        plan_acts.mail_notice(db, r.lgu, r.plan_id, "decision", day, RECIPIENTS)
    with at(day + timedelta(days=2)):
        appeal = appeals.file(db, SYSTEM, r.plan_id, petition(day, day + timedelta(days=2)))
        assert refused_withdrawal(db, r).fields["status"] == "appealed"
        denial = appeals.PetitionDecision(False, day + timedelta(days=2), grounds=("trivial",))
        appeals.decide_petition(db, SYSTEM, appeal.id, denial, None)

    ends = plan_cases.show(db, r.lgu, r.plan_id).deadlines.appeal_window_ends
    assert ends is not None
    with at(ends + timedelta(days=1)):
        assert plan_cases.show(db, r.lgu, r.plan_id).status == "final"
        made = withdrawals.withdraw(
            db, r.lgu, r.plan_id, [r.reservation_id], "req-1", external_refs={"erp": "W-1"}
        )
        again = refused_withdrawal_after(db, r)
        shown = plan_cases.show(db, r.lgu, r.plan_id)

    assert (made.plan_id, made.withdrawn_sqft, made.external_refs) == (
        r.plan_id,
        2_000,
        {"erp": "W-1"},
    )
    assert made.transaction_id.isdigit() and made.reversal_transaction_id is None
    assert sum(a.amount_sqft for a in made.allocations) == 2_000
    assert {a.reservation_id for a in made.allocations} == {r.reservation_id}
    assert again.code == "conflict"
    assert [w.allocations for w in shown.withdrawals] == [made.allocations]
    assert shown.impact_may_proceed is True


def refused_withdrawal_after(db: Database, r: Reserved) -> Conflict:
    """A second withdrawal is refused, and the first stays the only one."""
    with pytest.raises(Conflict) as refused:
        withdrawals.withdraw(db, r.lgu, r.plan_id, [r.reservation_id], None)
    assert count(db, Withdrawal, Withdrawal.plan_id == r.plan_id) == 1
    return refused.value
