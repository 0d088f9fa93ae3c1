"""Everything a plan's report shows beyond the plan's own row, read for a whole listing at once.

``plan_report.reports`` builds the API's plan list and its CSV export from these: one query per
table for every ``SLICE`` plans (fewer than twenty for a page of any length), where reading each
plan's record on its own sent a dozen queries per plan.  A single plan's report reads the same
way, as a listing of one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date

from sqlalchemy.orm import Session

from bank import guarantees, money, notices, plans, reservations, withdrawals
from bank.money_tables import Payment
from bank.notice_tables import CopyRequest
from bank.notices import MailedCopy, MailedNotice
from bank.plan_record_tables import PlanApplication, PlanExtension, PlanPanel
from bank.plan_tables import Appeal, Plan
from bank.reservation_tables import Reservation
from bank.withdrawal_tables import Withdrawal
from ledger import clock
from ledger.slices import grouped


@dataclass(frozen=True)
class PlanRows:
    """A listing's rows, by plan id (by (plan id, application number) for the panels).  A
    plan with none of a kind reads as empty."""

    #: the day the states are as of
    today: date
    states: Mapping[str, plans.PlanState]
    clocks: Mapping[str, plans.Clocks]
    extensions: Mapping[str, list[PlanExtension]]
    appeals: Mapping[str, list[Appeal]]
    #: each appeal's live payments, by appeal id (``money.live_appeal_payments``)
    appeal_payments: Mapping[str, list[Payment]]
    #: every notice each plan mailed, with its recipients (an earlier application's too): the
    #: plan's ``notice`` and ``decision_notice`` are among them (``notices.latest_of``)
    mailed: Mapping[str, list[MailedNotice]]
    copy_requests: Mapping[str, list[CopyRequest]]
    #: the copies mailed to those who asked, by copy request id
    copies_mailed: Mapping[str, list[MailedCopy]]
    panels: Mapping[tuple[str, int], PlanPanel]
    applications: Mapping[str, list[PlanApplication]]
    reservations: Mapping[str, list[reservations.ReservationView]]
    withdrawals: Mapping[str, list[withdrawals.WithdrawalView]]
    in_lieu_received_cents: Mapping[str, int]
    guaranteed_cents: Mapping[str, int]


def read(session: Session, listed: Sequence[Plan], today: date | None = None) -> PlanRows:
    """The rows of ``listed``'s reports, their states as of ``today`` (default: today)."""
    day = today or clock.today()
    ids = [plan.id for plan in listed]
    found = plans.listing_facts(session, listed)
    lgus, extensions, appeals = found.lgus, found.extensions, found.appeals
    mailed = notices.mailed_of(session, listed)
    return PlanRows(
        today=day,
        states={
            p.id: plans.state_with(
                p,
                lgus[p.lgu_id],
                extensions[p.id],
                appeals[p.id],
                found.paid,
                day,
                found.standing.get(p.id),
            )
            for p in listed
        },
        clocks={p.id: plans.clocks_of(p, lgus[p.lgu_id]) for p in listed},
        extensions=extensions,
        appeals=appeals,
        appeal_payments=money.live_appeal_payments(
            session, [appeal.id for found in appeals.values() for appeal in found]
        ),
        mailed=mailed,
        copy_requests=grouped(
            session,
            CopyRequest.plan_id,
            ids,
            CopyRequest.requested_on,
            CopyRequest.recorded_at,
            CopyRequest.id,
        ),
        copies_mailed=notices.copies_mailed_of(session, mailed),
        panels={
            (panel.plan_id, panel.application_number): panel
            for found in grouped(session, PlanPanel.plan_id, ids).values()
            for panel in found
        },
        applications=grouped(session, PlanApplication.plan_id, ids, PlanApplication.number),
        reservations=_reservations(session, ids),
        withdrawals=_withdrawals(session, ids),
        in_lieu_received_cents=money.in_lieu_received_of(session, ids),
        guaranteed_cents=guarantees.guaranteed_cents_of(session, ids),
    )


def _reservations(
    session: Session, ids: Sequence[str]
) -> dict[str, list[reservations.ReservationView]]:
    """Each plan's reservations, oldest first, viewed together (their shares and statuses are
    read for the whole listing)."""
    rows = grouped(
        session,
        Reservation.plan_id,
        ids,
        Reservation.created_at,
        Reservation.id,
    )
    listed = [reservation for found in rows.values() for reservation in found]
    by_plan: dict[str, list[reservations.ReservationView]] = defaultdict(list)
    for view in reservations.reservation_views(session, listed):
        by_plan[view.plan_id].append(view)
    return by_plan


def _withdrawals(
    session: Session, ids: Sequence[str]
) -> dict[str, list[withdrawals.WithdrawalView]]:
    # by id within an instant: withdrawals made in the same instant list in one order
    rows = grouped(session, Withdrawal.plan_id, ids, Withdrawal.created_at, Withdrawal.id)
    made = [withdrawal.id for found in rows.values() for withdrawal in found]
    allocations = withdrawals.allocations_by_withdrawal(session, made)
    return defaultdict(
        list,
        {
            plan_id: [withdrawals.view_with(w, allocations[w.id]) for w in found]
            for plan_id, found in rows.items()
        },
    )
