"""Reservations of credits for a replacement plan: two-phase, on the ledger's pending transfers.

A reservation by credit class may draw on several lots: each lot's share is its own pending
transfer (lot → the class's withdrawn account), all sharing the reservation's expiry, so that a
withdrawal can post each in full or in part and release the rest.  A reservation expires at the
end of its ``expires_on`` date, Minnesota time, whether or not anything runs then.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime

from sqlalchemy import JSON, Date, DateTime, bindparam, case, func, select
from sqlalchemy.orm import Session

import ledger
from bank import credit_needs, credits, last_word, parties, plans, policy
from bank.access import Actor
from bank.draw_sources import RESERVATION_SOURCES
from bank.errors import Conflict, NotEligible, NotFound, ValidationFailed, found
from bank.ids import new_id
from bank.lot_picking import (
    Candidate,
    CreditSource,
    check_can_send,
    check_sender_status,
    draw_params,
    pick_drawn,
)
from bank.plan_tables import Plan
from bank.reservation_tables import Reservation as Reservation
from bank.reservation_tables import ReservationLot as ReservationLot
from bank.withdrawal_tables import Withdrawal, WithdrawalAllocation
from ledger import clock, store
from ledger.account_cache import AccountRow
from ledger.db import Database
from ledger.pending import is_expired
from ledger.slices import grouped, slices


@dataclass(frozen=True)
class ReservationRequest(CreditSource):
    """``POST /accounts/{id}/reservations``: by ``credit_class`` or by ``lot_id`` (exactly one)."""

    account_id: str
    plan_id: str
    amount_sqft: int
    expires_on: date


@dataclass(frozen=True)
class ReservationView:
    """A reservation as the API shows it: its status from the ledger, and each lot's share."""

    id: str
    account_id: str
    plan_id: str
    credit_class: credits.CreditClass
    lot_id: str | None
    amount_sqft: int
    expires_on: date
    status: str
    #: the square feet the withdrawal that posted it took from it (its allocations: less than
    #: ``amount_sqft`` when posted in part, the rest released to its lots); 0 unless posted, and
    #: still what was taken after a reversal on appeal returned it
    withdrawn_sqft: int
    created_at: datetime
    lots: tuple[ReservationLot, ...]
    #: posted by a withdrawal that an appeal then reversed: its credits went back to their lots
    #: (the status stays the ledger's ``posted``)
    reversed_on_appeal: bool


def reserve_for_plan(
    db: Database, actor: Actor, request: ReservationRequest, request_id: str | None
) -> ReservationView:
    """Reserve credits for a plan (the account's holder, or the board), in a unit of work of its
    own or the caller's (retried after a deadlock): as ``reserve``, the plan's row held."""

    def unit(session: Session) -> ReservationView:
        # a reversal on appeal or a withdrawal for the plan waits for this reservation (and a
        # reversal voids it with the plan's others), or this waits for it and sees what it
        # wrote; the plan stays in the session for ``reserve`` to find without reading it again
        plans.held_for_share(session, request.plan_id)
        return reserve(session, actor, request, request_id)

    return db.run(unit)


def reserve(
    session: Session, actor: Actor, request: ReservationRequest, request_id: str | None
) -> ReservationView:
    """Reserve credits for a plan (the account's holder, or the board) in the caller's unit of
    work; nothing for a plan a reservation cannot serve as of today
    (``credit_needs.reservation_refusal``: denied, its requirement met by withdrawals, or not
    replaced with bank credits), the caller holding the plan's row
    (``plans.held_for_share``) so that no decision or withdrawal changes that meanwhile.
    Available drops at once.  A unit of work that may run beside other writes runs in
    ``Database.run``: choosing the lots may deadlock (``_draw``), and the unit is then
    retried."""
    account = parties.visible_account(session, actor, request.account_id)
    plan = session.get(Plan, request.plan_id)
    if plan is None:
        raise ValidationFailed("no such plan", {"plan_id": ["no such plan"]})
    if request.expires_on < clock.today():
        raise ValidationFailed("the expiry is in the past", {"expires_on": ["in the past"]})
    met = credit_needs.met_portions(session, plan.id)
    refusal = credit_needs.reservation_refusal(plan, plans.state(session, plan), met)
    if refusal is not None:
        raise refusal
    check_can_send(account)
    picks, code, held_rows = _draw(session, actor, request)
    klass = found(session.get(credits.CreditClass, code), f"no credit class {code}")
    _check_service_area(plan, klass)
    reservation = Reservation(
        id=new_id("res"),
        account_id=account.id,
        plan_id=plan.id,
        credit_class=klass.code,
        lot_id=request.lot_id,
        amount_sqft=request.amount_sqft,
        expires_on=request.expires_on,
        created_at=clock.utcnow(),
        actor=actor.label,
    )
    held = _hold(session, reservation, klass, picks, held_rows, actor, request_id)
    sites = {item.bank_site_id for item, _ in picks}
    _record(session, reservation, held, account.number, sites, actor)
    return _made_view(reservation, klass, held)


def _draw(
    session: Session, actor: Actor, request: ReservationRequest
) -> tuple[list[tuple[Candidate, int]], str, Mapping[int, AccountRow]]:
    """The lots the reservation holds credits in, what it takes from each, and their credit
    class: the oldest unfrozen ones of the class with credits available, or the lot named; only
    those are locked, unless they were drawn on while this waited for them: every candidate is
    then locked and the choice made again, out of the global lock order, and the unit of work
    may deadlock and be retried (``lot_picking.pick_drawn``; ``reserve_for_plan`` runs in
    ``Database.run``); and the lots' balance rows as it locked them."""
    params = draw_params(actor, request.account_id, None, request, request.amount_sqft)
    rows = store.of(session).run(session, RESERVATION_SOURCES, params)
    chosen_from, (picks, held) = pick_drawn(session, RESERVATION_SOURCES, params, rows)
    return picks, chosen_from[0][11], held  # _take refused if there were no candidates


def _hold(
    session: Session,
    reservation: Reservation,
    klass: credits.CreditClass,
    picks: list[tuple[Candidate, int]],
    locked: Mapping[int, AccountRow],
    actor: Actor,
    request_id: str | None,
) -> list[ReservationLot]:
    """Each lot's share as a pending transfer to the class's withdrawn account, expiring at the
    end of the reservation's ``expires_on``; the shares, in the order drawn (``_record`` inserts
    them in that order, so their ids follow it, as ``shares`` reads them).  ``locked``: the lots'
    balance rows as the draw locked them (each share writes to its own lot only, so the others'
    rows stay as locked)."""
    held = []
    for item, amount in picks:
        pending = ledger.reserve(
            session,
            "reservation",
            [ledger.Leg(item.ledger_account_id, klass.withdrawn_account_id, amount)],
            ledger.Meta(
                f"reservation:{reservation.id}:{item.lot_id}",
                clock.today(),
                memo=f"reserved for plan {reservation.plan_id}",
                actor=actor.label,
                request_id=request_id,
            ),
            expires_at=clock.end_of_day(reservation.expires_on),
            held=locked,
        )
        held.append(
            ReservationLot(
                reservation_id=reservation.id,
                lot_id=item.lot_id,
                amount_sqft=amount,
                pending_transaction_id=pending.transaction_id,
            )
        )
    return held


# The reservation and its shares in one statement, as a transfer's record is
# (``bank.transfers._RECORD_TRANSFER``), and the reservation's last word too
# (``bank.last_word``): it locks the account FOR KEY SHARE, as it does the sites and the token,
# inserts only if the account is still open, no such site frozen and the token not revoked, and
# answers with what it found and the shares' ids, in the order given.  SQLite runs the same
# checks and inserts as three statements.
_RECORD_RESERVATION = store.Statement(
    postgresql=f"""
WITH account AS (
    SELECT status FROM bank_accounts WHERE id = :account_id FOR KEY SHARE
), {last_word.SITES_AND_TOKEN}, checked AS (
    SELECT (SELECT status FROM account) AS status,
           {last_word.FROZEN_SITES} AS frozen_sites,
           {last_word.REVOKED} AS revoked
), made AS (
    INSERT INTO reservations (id, account_id, plan_id, credit_class, lot_id, amount_sqft,
        expires_on, created_at, actor)
    SELECT :id, :account_id, :plan_id, :credit_class, :lot_id, :amount_sqft, :expires_on,
        :created_at, :actor
    FROM checked
    WHERE status = 'open' AND frozen_sites IS NULL AND revoked = 0
    RETURNING id
), shares AS (
    INSERT INTO reservation_lots (reservation_id, lot_id, amount_sqft, pending_transaction_id)
    SELECT made.id, share->>0, (share->>1)::bigint, (share->>2)::bigint
    FROM made CROSS JOIN jsonb_array_elements(:shares::jsonb) WITH ORDINALITY AS l(share, n)
    ORDER BY l.n
    RETURNING id
)
SELECT status, frozen_sites, revoked, (SELECT array_agg(id ORDER BY id) FROM shares) FROM checked
""",
    sqlite=(
        f"""
INSERT INTO reservations (id, account_id, plan_id, credit_class, lot_id, amount_sqft,
    expires_on, created_at, actor)
SELECT :id, :account_id, :plan_id, :credit_class, :lot_id, :amount_sqft, :expires_on,
    :created_at, :actor
WHERE (SELECT status FROM bank_accounts WHERE id = :account_id) = 'open'
  AND {last_word.NOT_FROZEN_NOR_REVOKED}
""",
        """
INSERT INTO reservation_lots (reservation_id, lot_id, amount_sqft, pending_transaction_id)
SELECT reservations.id, json_extract(share.value, '$[0]'), json_extract(share.value, '$[1]'),
    json_extract(share.value, '$[2]')
FROM reservations JOIN json_each(:shares) AS share
WHERE reservations.id = :id
ORDER BY share.key
""",
        f"""
SELECT (SELECT status FROM bank_accounts WHERE id = :account_id) AS status,
       {last_word.FROZEN_SITES_SQLITE} AS frozen_sites,
       {last_word.REVOKED_SQLITE} AS revoked,
       (SELECT json_group_array(id) FROM (
            SELECT id FROM reservation_lots WHERE reservation_id = :id ORDER BY id)
       ) AS share_ids
""",
    ),
    types={"created_at": DateTime(timezone=True), "expires_on": Date()},
    columns={"frozen_sites": JSON(), "share_ids": JSON()},
)


def _record(
    session: Session,
    reservation: Reservation,
    held: list[ReservationLot],
    number: str,
    sites: set[str],
    actor: Actor,
) -> None:
    """Insert the reservation and its shares (given their ids, in ``held``'s order), once the
    account and the ``sites`` drawn on are confirmed as they were, after every lock the
    reservation may have waited for."""
    params = {
        "id": reservation.id,
        "account_id": reservation.account_id,
        "plan_id": reservation.plan_id,
        "credit_class": reservation.credit_class,
        "lot_id": reservation.lot_id,
        "amount_sqft": reservation.amount_sqft,
        "expires_on": reservation.expires_on,
        "created_at": reservation.created_at,
        "actor": reservation.actor,
        "shares": json.dumps(
            [[share.lot_id, share.amount_sqft, share.pending_transaction_id] for share in held]
        ),
        "site_ids": json.dumps(sorted(sites)),
        "token_id": actor.token_id,
    }
    (found_row,) = store.of(session).run(session, _RECORD_RESERVATION, params)
    status, frozen_sites, revoked, share_ids = found_row
    last_word.confirm(
        session,
        actor,
        frozen_sites,
        revoked,
        lambda: check_sender_status(status, number, reservation.account_id),
    )
    for share, share_id in zip(held, share_ids, strict=True):
        share.id = share_id


def _made_view(
    reservation: Reservation, klass: credits.CreditClass, held: list[ReservationLot]
) -> ReservationView:
    """``reservation_view`` of a reservation this unit of work just made, from what it wrote
    rather than read back: its shares are pending transfers nothing has resolved yet, all
    expiring when the reservation does, so its status is pending until then."""
    expired = is_expired(clock.end_of_day(reservation.expires_on), clock.utcnow())
    return _view(reservation, klass, "expired" if expired else "pending", held, _NOTHING_TAKEN)


def _view(
    reservation: Reservation,
    klass: credits.CreditClass,
    status: str,
    held: Sequence[ReservationLot],
    taken: _Taken,
) -> ReservationView:
    return ReservationView(
        id=reservation.id,
        account_id=reservation.account_id,
        plan_id=reservation.plan_id,
        credit_class=klass,
        lot_id=reservation.lot_id,
        amount_sqft=reservation.amount_sqft,
        expires_on=reservation.expires_on,
        status=status,
        withdrawn_sqft=taken.sqft,
        created_at=reservation.created_at,
        lots=tuple(held),
        reversed_on_appeal=taken.reversed_on_appeal,
    )


def _check_service_area(plan: Plan, klass: credits.CreditClass) -> None:
    """Credits come from the impact's service area unless the LGU approved otherwise (choice)."""
    if klass.service_area != plan.impact_service_area and not plan.replacement_outside_service_area:
        raise NotEligible(
            f"credits of service area {klass.service_area} cannot replace an impact in "
            f"service area {plan.impact_service_area}",
            credit_service_area=klass.service_area,
            impact_service_area=plan.impact_service_area,
        )


_LOCK_RESERVATION = (
    select(Reservation.id).where(Reservation.id == bindparam("id")).with_for_update(key_share=True)
)


def lock(session: Session, reservation_id: str) -> None:
    """Lock the reservation's row until the unit of work ends, as ``void`` does first: of two
    acts releasing it, the second waits for the first and then finds it released."""
    session.execute(_LOCK_RESERVATION, {"id": reservation_id}).all()


def void(
    db: Database, actor: Actor, reservation_id: str, request_id: str | None
) -> ReservationView:
    """Release a pending reservation (its holder, or the board), in a unit of work of its own or
    the caller's.

    The reservation's row is locked first (``FOR NO KEY UPDATE``: inserts referencing it are not
    held up), so of concurrent voids one releases it and the others, once it has committed, see
    it voided: ``conflict``.  (The ledger alone would answer them with the winner's void, which
    shares their idempotency key.)
    """
    with db.transaction() as session:
        reservation = visible_reservation(session, actor, reservation_id, acting=True)
        lock(session, reservation.id)
        held = shares(session, reservation.id)
        status = _status(session, held)
        if status != "pending":
            raise Conflict(f"the reservation is {status}, not pending")
        for share in held:
            ledger.void_pending(
                session,
                share.pending_transaction_id,
                ledger.Meta(
                    f"void:{share.pending_transaction_id}",
                    clock.today(),
                    actor=actor.label,
                    request_id=request_id,
                ),
                kind="reservation_void",
            )
        return reservation_view(session, reservation)


def show_reservation(db: Database, actor: Actor, reservation_id: str) -> ReservationView:
    """A reservation (the board, the account's holder, or the plan's LGU; else ``not_found``)."""
    with db.transaction() as session:
        return reservation_view(session, visible_reservation(session, actor, reservation_id))


def shares(session: Session, reservation_id: str) -> list[ReservationLot]:
    """The per-lot pending transfers of a reservation, in lot order."""
    of_reservation = select(ReservationLot).where(ReservationLot.reservation_id == reservation_id)
    return list(session.scalars(of_reservation.order_by(ReservationLot.id)))


def status_of(session: Session, reservation: Reservation, now: datetime | None = None) -> str:
    """pending, posted, voided or expired: the ledger's state of its pending transfers."""
    return _status(session, shares(session, reservation.id), now)


def shares_of(
    session: Session, reservation_ids: Collection[str]
) -> dict[str, list[ReservationLot]]:
    """``shares`` of each of ``reservation_ids``, read with one query per ``SLICE`` of them."""
    held: dict[str, list[ReservationLot]] = {rid: [] for rid in reservation_ids}
    held.update(grouped(session, ReservationLot.reservation_id, list(held), ReservationLot.id))
    return held


def statuses(
    session: Session, held_by: dict[str, list[ReservationLot]], now: datetime | None = None
) -> dict[str, str]:
    """``status_of`` each reservation of ``held_by`` (``shares_of``' answer), read with two
    queries for all of them (per ``SLICE``)."""
    pending_ids = [share.pending_transaction_id for held in held_by.values() for share in held]
    state_of = ledger.pending_states(session, pending_ids, now)
    return {
        rid: _first_state({state_of[share.pending_transaction_id] for share in held})
        for rid, held in held_by.items()
    }


def _status(session: Session, held: list[ReservationLot], now: datetime | None = None) -> str:
    state_of = ledger.pending_states(session, [share.pending_transaction_id for share in held], now)
    return _first_state(set(state_of.values()))


def _first_state(states: set[str]) -> str:
    """A reservation's status from its shares' states: posted if any share was posted, else
    voided, else expired, else pending."""
    for state in ("posted", "voided", "expired", "pending"):
        if state in states:
            return state
    return "pending"


def visible_reservation(
    session: Session, actor: Actor, reservation_id: str, *, acting: bool = False
) -> Reservation:
    """The reservation if the caller may see it (or act on it, when ``acting``); else 404.

    The board and the account's holder see and act; the plan's LGU only sees.
    """
    reservation = found(
        session.get(Reservation, reservation_id), f"no reservation {reservation_id}"
    )
    account = session.get(parties.BankAccount, reservation.account_id)
    plan = session.get(Plan, reservation.plan_id)
    holder_id = account.holder_id if account else None
    lgu_id = plan.lgu_id if plan else None
    if not policy.sees_reservation(actor, holder_id, lgu_id, acting=acting):
        raise NotFound(f"no reservation {reservation_id}")
    return reservation


def plan_reservations(session: Session, plan_id: str) -> list[Reservation]:
    """Every reservation made for a plan, oldest first."""
    of_plan = select(Reservation).where(Reservation.plan_id == plan_id)
    return list(session.scalars(of_plan.order_by(Reservation.created_at, Reservation.id)))


def reservation_view(session: Session, reservation: Reservation) -> ReservationView:
    """A reservation as the API shows it, read in full now (it outlives the session)."""
    return reservation_views(session, [reservation])[0]


def reservation_views(session: Session, listed: Sequence[Reservation]) -> list[ReservationView]:
    """``reservation_view`` of each of ``listed``, with five queries for all of them (per
    ``SLICE``): their shares, the shares' resolutions and pending headers, their classes, and
    what withdrawals took from them."""
    ids = [reservation.id for reservation in listed]
    held_by = shares_of(session, ids)
    status = statuses(session, held_by)
    classes = credits.classes(session, (reservation.credit_class for reservation in listed))
    taken = _taken_from(session, ids)
    return [
        _view(
            reservation,
            classes[reservation.credit_class],
            status[reservation.id],
            held_by[reservation.id],
            taken.get(reservation.id, _NOTHING_TAKEN),
        )
        for reservation in listed
    ]


@dataclass(frozen=True)
class _Taken:
    """What the withdrawal that posted a reservation took from it (the sum of its allocations
    of the reservation), and whether an appeal then reversed that withdrawal."""

    sqft: int
    reversed_on_appeal: bool


_NOTHING_TAKEN = _Taken(0, False)


def _taken_from(session: Session, reservation_ids: Sequence[str]) -> dict[str, _Taken]:
    """``_Taken`` of those of ``reservation_ids`` a withdrawal posted, one query per ``SLICE``."""
    reversed_ = case((Withdrawal.reversal_transaction_id.is_not(None), 1), else_=0)
    taken: dict[str, _Taken] = {}
    for some in slices(reservation_ids):
        rows = session.execute(
            select(
                WithdrawalAllocation.reservation_id,
                func.sum(WithdrawalAllocation.amount_sqft),
                func.max(reversed_),
            )
            .join(Withdrawal, Withdrawal.id == WithdrawalAllocation.withdrawal_id)
            .where(WithdrawalAllocation.reservation_id.in_(some))
            .group_by(WithdrawalAllocation.reservation_id)
        )
        for reservation_id, sqft, was_reversed in rows:
            taken[reservation_id] = _Taken(int(sqft), bool(was_reversed))
    return taken
