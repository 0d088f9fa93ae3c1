"""Withdrawals of reserved credits against an approved plan's impact (docs/domain.md §3).

A withdrawal posts the reservations made for the plan as ONE ledger transaction: restricted
credits serve only the part above 1:1, unrestricted credits meet the first 1:1 and the rest, and
whatever was reserved beyond the requirement is released.  Withdrawn credits are used once; an
appeal that reverses the approval reverses the withdrawal with a compensating transaction.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import select
from sqlalchemy.orm import Session

import ledger
from bank import credit_needs, credits, plans, status_history
from bank.access import Actor
from bank.credit_needs import met_portions
from bank.errors import Conflict, NotFound, ValidationFailed
from bank.ids import new_id
from bank.lot_picking import confirm_can_send
from bank.parties import BankAccount
from bank.plan_tables import Plan
from bank.reservations import Reservation, ReservationLot, shares, status_of
from bank.rules import replacement_rules
from bank.withdrawal_tables import Withdrawal, WithdrawalAllocation
from ledger import clock, locks, store
from ledger.account_cache import AccountRow
from ledger.db import Database
from ledger.slices import grouped

APPROVALS = frozenset({"approved", "deemed_approved"})
WITHDRAWABLE_STATUSES = frozenset({"approved", "deemed_approved", "final"})


@dataclass(frozen=True)
class AllocationView:
    """Some credits of a reservation's lot meeting one portion of the requirement."""

    reservation_id: str
    lot_id: str
    credit_class: str
    amount_sqft: int
    portion: str


@dataclass(frozen=True)
class WithdrawalView:
    """A withdrawal with its allocations, as the API shows it (ledger ids as text)."""

    id: str
    plan_id: str
    transaction_id: str
    reversal_transaction_id: str | None
    withdrawn_sqft: int
    created_at: datetime
    allocations: list[AllocationView]
    external_refs: dict[str, str]


def withdraw(
    db: Database,
    actor: Actor,
    plan_id: str,
    reservation_ids: list[str],
    request_id: str | None,
    external_refs: dict[str, str] | None = None,
) -> WithdrawalView:
    """Post the plan's reservations (its LGU, or the board) as one ledger transaction, with
    the plan locked."""
    with db.transaction() as session:
        plan = plans.visible_plan(session, actor, plan_id, lock=True)
        area, met = check_withdrawable(session, plan)
        chosen = _reservations(session, plan, reservation_ids)
        offers, share_of = _offers(session, chosen)
        ratio = replacement_rules.parse_ratio(plan.replacement_ratio)
        allocation = replacement_rules.allocate_withdrawal(area, ratio, offers, met)
        used = _used_by_key(allocation)
        row = _post(session, plan, actor, request_id, share_of, used, external_refs)
        _record_allocations(session, row.id, allocation, share_of)
        _confirm_can_withdraw(session, chosen, [share_of[key] for key, n in used.items() if n])
        return view(session, row)


def _resolutions(
    share_of: dict[str, ReservationLot], used: dict[str, int]
) -> list[ledger.posting.Resolution]:
    """Each reserved share posted (in part when only part of it is used) or, unused, voided."""
    items: list[ledger.posting.Resolution] = []
    for key, share in share_of.items():
        taken = used.get(key, 0)
        if taken == 0:
            items.append((share.pending_transaction_id, "voided", None))
        else:
            partly = None if taken == share.amount_sqft else taken
            items.append((share.pending_transaction_id, "posted", partly))
    return items


def _post(
    session: Session,
    plan: Plan,
    actor: Actor,
    request_id: str | None,
    share_of: dict[str, ReservationLot],
    used: dict[str, int],
    external_refs: dict[str, str] | None,
) -> Withdrawal:
    """Post and void the shares as ONE ledger transaction, and record the withdrawal."""
    withdrawal_id = new_id("wd")
    posted = ledger.resolve_pending(
        session,
        _resolutions(share_of, used),
        ledger.Meta(
            f"withdrawal:{withdrawal_id}",
            clock.today(),
            memo=f"withdrawal for plan {plan.id}",
            actor=actor.label,
            request_id=request_id,
        ),
        kind="withdrawal",
    )
    row = Withdrawal(
        id=withdrawal_id,
        plan_id=plan.id,
        transaction_id=posted.transaction_id,
        withdrawn_sqft=sum(used.values()),
        created_at=clock.utcnow(),
        actor=actor.label,
        external_refs=dict(external_refs or {}),
    )
    session.add(row)
    session.flush()
    return row


def _record_allocations(
    session: Session,
    withdrawal_id: str,
    allocation: replacement_rules.Allocation,
    share_of: dict[str, ReservationLot],
) -> None:
    """Which reserved share met which portion, in the order the allocation made them."""
    for allocated in allocation.allocations:
        share = share_of[allocated.key]
        session.add(
            WithdrawalAllocation(
                withdrawal_id=withdrawal_id,
                reservation_id=share.reservation_id,
                lot_id=share.lot_id,
                credit_class=allocated.credit_class_code,
                amount_sqft=allocated.amount_sqft,
                portion=allocated.portion,
            )
        )
    session.flush()


def _confirm_can_withdraw(
    session: Session, chosen: list[Reservation], drawn: Iterable[ReservationLot]
) -> None:
    """Reserved credits of a frozen account or bank site are not withdrawn (docs/domain.md §7);
    ``drawn``, the shares posted, are checked (a share only released may come from anywhere).

    Checked last, under lock, after everything the withdrawal may have waited for: a freeze that
    answered meanwhile refuses it, one still running waits for it (``confirm_can_send``).
    """
    account_of = {r.id: r.account_id for r in chosen}
    shares_drawn = list(drawn)
    lot_ids = sorted({share.lot_id for share in shares_drawn})
    sites = session.execute(
        select(credits.Lot.bank_site_id).where(credits.Lot.id.in_(lot_ids))
    ).scalars()
    senders = {account_of[share.reservation_id] for share in shares_drawn}
    confirm_can_send(session, senders, set(sites))


def check_withdrawable(
    session: Session, plan: Plan, today: date | None = None
) -> tuple[int, tuple[int, int]]:
    """What ``withdraw`` requires of the plan (on ``today``, by default the clock's): an
    approval, a replacement by bank credits, and a requirement not yet met (``bank.credit_needs``);
    answers the impact area in force and what earlier withdrawals met (a revision, Subd. 6 (c),
    may have raised the requirement since).  The plan page offers the withdrawal form by it
    (``plan_acts.open_acts``)."""
    current = plans.state(session, plan, today)
    if current.status not in WITHDRAWABLE_STATUSES or current.outcome not in APPROVALS:
        raise Conflict(
            f"credits can be withdrawn only for an approved plan; this one is {current.status}",
            status=current.status,
            outcome=current.outcome,
        )
    met = met_portions(session, plan.id)
    refusal = credit_needs.method_refusal(plan) or credit_needs.requirement_met(
        plan, current.area_sqft, met
    )
    if refusal is not None:
        raise refusal
    return current.area_sqft, met


def _reservations(session: Session, plan: Plan, ids: list[str]) -> list[Reservation]:
    if not ids or len(set(ids)) != len(ids):
        raise ValidationFailed(
            "name each reservation once", {"reservation_ids": ["empty or repeated"]}
        )
    chosen = []
    for reservation_id in ids:
        row = session.get(Reservation, reservation_id)
        if row is None or row.plan_id != plan.id:
            raise ValidationFailed(
                f"no reservation {reservation_id} for this plan",
                {"reservation_ids": [f"{reservation_id} is not reserved for this plan"]},
            )
        current = status_of(session, row)
        if current != "pending":
            raise Conflict(f"reservation {reservation_id} is {current}", reservation_id=row.id)
        chosen.append(row)
    return chosen


def _offers(
    session: Session, chosen: list[Reservation]
) -> tuple[list[replacement_rules.Offer], dict[str, ReservationLot]]:
    offers, share_of = [], {}
    for reservation in chosen:
        klass = session.get(credits.CreditClass, reservation.credit_class)
        if klass is None:  # a foreign key: the reservation's class exists
            raise NotFound(f"no credit class {reservation.credit_class}")
        for share in shares(session, reservation.id):
            key = str(share.id)
            share_of[key] = share
            offers.append(
                replacement_rules.Offer(
                    key=key,
                    restricted=klass.restricted,
                    amount_sqft=share.amount_sqft,
                    credit_class_code=klass.code,
                )
            )
    return offers, share_of


def _used_by_key(allocation: replacement_rules.Allocation) -> dict[str, int]:
    used: dict[str, int] = {}
    for a in allocation.allocations:
        used[a.key] = used.get(a.key, 0) + a.amount_sqft
    return used


def active_withdrawals(session: Session, plan_id: str) -> list[Withdrawal]:
    """The plan's withdrawals that no appeal has reversed."""
    return list(
        session.execute(
            select(Withdrawal).where(
                Withdrawal.plan_id == plan_id, Withdrawal.reversal_transaction_id.is_(None)
            )
        ).scalars()
    )


# The balance rows a reversal on appeal touches: the limited ones (lots) among the accounts the
# withdrawals' transactions posted to and those the pending transfers it voids reserve on,
# locked in ONE statement in ascending account id (``ledger.locks.held_cte``, the global lock
# order), before anything is written.  Reversing the withdrawals one by one, each locking its
# own lots, then voiding each pending transfer in turn, would take a plan's lots out of that
# order whenever they drew on different lots: a transfer or a reservation locking the same lots
# in order could then deadlock with it.  The transactions' ids travel as JSON arrays.
_REVERSED_LOTS = store.Statement(
    postgresql=f"""
WITH {
        locks.held_cte(
            "SELECT account_id FROM ledger_entries WHERE phase = 'posted' AND transaction_id = "
            "ANY(ARRAY(SELECT jsonb_array_elements_text(:transaction_ids::jsonb)::bigint)) "
            "UNION ALL "
            "SELECT account_id FROM ledger_entries WHERE phase = 'pending' AND transaction_id = "
            "ANY(ARRAY(SELECT jsonb_array_elements_text(:pending_ids::jsonb)::bigint))"
        )
    }
SELECT {", ".join(locks.HELD_COLUMNS)} FROM held ORDER BY account_id
""",
    sqlite=f"""
WITH {
        locks.held_cte(
            "SELECT account_id FROM ledger_entries WHERE phase = 'posted' AND transaction_id IN "
            "(SELECT value FROM json_each(:transaction_ids)) "
            "UNION ALL "
            "SELECT account_id FROM ledger_entries WHERE phase = 'pending' AND transaction_id IN "
            "(SELECT value FROM json_each(:pending_ids))"
        )
    }
SELECT {", ".join(locks.HELD_COLUMNS)} FROM held ORDER BY account_id
""",
)


def reverse_for_plan(
    session: Session,
    plan_id: str,
    actor: Actor,
    request_id: str | None,
    since: datetime | None = None,
    until: datetime | None = None,
    *,
    voiding: Collection[int] = (),
) -> dict[int, AccountRow]:
    """An appeal reversed the approval: compensate each withdrawal (each made ``since``, when
    only a revision's approval was reversed and the approval before it stands; each made before
    ``until``, when the approval reversed is one a later revision superseded and what was
    withdrawn since is that revision's); credits return to their lots.

    The lots' balance rows of every withdrawal reversed, and of the pending transfers
    ``voiding`` that the caller voids next in this unit of work, are locked first, all at once in
    the global order (``_REVERSED_LOTS``), and each reversal's ledger write takes them (``held``);
    then the withdrawals' headers, ascending, as each is reversed.  Answers the rows no reversal
    wrote to, for the voids' writes to take (``ledger.void_pending``'s ``held``)."""
    chosen = sorted(
        (row for row in active_withdrawals(session, plan_id) if _reversed_now(row, since, until)),
        key=lambda row: row.transaction_id,
    )
    if not chosen and not voiding:
        return {}
    params = {
        "transaction_ids": json.dumps([row.transaction_id for row in chosen]),
        "pending_ids": json.dumps(sorted(voiding)),
    }
    held = locks.held_rows(store.of(session).run(session, _REVERSED_LOTS, params))
    if not chosen:
        return held
    _reopen_closed_sources(session, [row.id for row in chosen], plan_id, actor)
    for row in chosen:
        reversal = ledger.reverse(
            session,
            row.transaction_id,
            reversed_on_appeal(f"withdrawal-reversal:{row.id}", plan_id, actor, request_id),
            kind="withdrawal_reversal",
            held=held,
        )
        row.reversal_transaction_id = reversal.transaction_id
        forget_written(held, reversal)
    session.flush()
    return held


def forget_written(held: dict[int, AccountRow], written: ledger.Posted) -> None:
    """Drop from ``held`` the rows of the accounts ``written`` wrote to: a later write on the
    same account reads its row again (still held by this unit of work, so it waits for
    nothing)."""
    for account_id, _amount, _phase in written.entries:
        held.pop(account_id, None)


def _reversed_now(row: Withdrawal, since: datetime | None, until: datetime | None) -> bool:
    """Whether the withdrawal is one the reversal of an approval between ``since`` and
    ``until`` compensates."""
    if since is not None and clock.as_utc(row.created_at) < clock.as_utc(since):
        return False  # withdrawn for the approval that stands
    if until is not None and clock.as_utc(row.created_at) >= clock.as_utc(until):
        return False  # withdrawn for an application that followed the approval reversed
    return True


def _reopen_closed_sources(
    session: Session, withdrawal_ids: list[str], plan_id: str, actor: Actor
) -> None:
    """The accounts the withdrawals drew on get their credits back: one closed meanwhile (its
    plan was final, and a petition mailed in time reached the board later) is reopened, as it
    would otherwise hold credits nothing could move (``bank.account_close``), to the status it
    had when it was closed: one the board froze stays frozen until the board lifts the freeze.
    Each reopening is recorded in the account's history, with the reversal's reason.  Locked
    after the lots' balance rows, as a transfer locks its accounts after its lots."""
    closed = session.execute(
        select(BankAccount)
        .where(
            BankAccount.status == "closed",
            BankAccount.id.in_(
                select(credits.Lot.account_id)
                .join(WithdrawalAllocation, WithdrawalAllocation.lot_id == credits.Lot.id)
                .where(WithdrawalAllocation.withdrawal_id.in_(withdrawal_ids))
            ),
        )
        .order_by(BankAccount.id)
        .with_for_update()
    ).scalars()
    for account in closed:
        restored = status_history.status_when_closed(session, account.id)
        status_history.record(
            session,
            status_history.ACCOUNT,
            account.id,
            "closed",
            restored,
            actor,
            reason=f"approval of plan {plan_id} reversed on appeal: credits returned",
        )
        account.status = restored


def reversed_on_appeal(
    idempotency_key: str, plan_id: str, actor: Actor, request_id: str | None
) -> ledger.Meta:
    """What a ledger write that undoes the plan's approval records: the board reversed it."""
    return ledger.Meta(
        idempotency_key,
        clock.today(),
        memo=f"approval of plan {plan_id} reversed on appeal",
        actor=actor.label,
        request_id=request_id,
    )


def view(session: Session, row: Withdrawal) -> WithdrawalView:
    """A withdrawal with its allocations, as the API shows it."""
    return view_with(row, allocations_by_withdrawal(session, [row.id])[row.id])


def allocations_by_withdrawal(
    session: Session, withdrawal_ids: Sequence[str]
) -> defaultdict[str, list[WithdrawalAllocation]]:
    """The allocations of each of ``withdrawal_ids``, in the order made, read at once."""
    return grouped(
        session, WithdrawalAllocation.withdrawal_id, withdrawal_ids, WithdrawalAllocation.id
    )


def view_with(row: Withdrawal, allocations: Iterable[WithdrawalAllocation]) -> WithdrawalView:
    """``view`` given the withdrawal's allocations, in the order made."""
    return WithdrawalView(
        id=row.id,
        plan_id=row.plan_id,
        transaction_id=str(row.transaction_id),
        reversal_transaction_id=(
            str(row.reversal_transaction_id) if row.reversal_transaction_id else None
        ),
        withdrawn_sqft=row.withdrawn_sqft,
        created_at=row.created_at,
        external_refs=row.external_refs or {},
        allocations=[
            AllocationView(a.reservation_id, a.lot_id, a.credit_class, a.amount_sqft, a.portion)
            for a in allocations
        ],
    )
