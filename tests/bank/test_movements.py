"""The use cases of movements (``bank.transfers``, ``bank.reservations``,
``bank.account_reservations``) on both databases: credits transferred, reserved for a plan,
voided, expired and listed against the account, and their refusals.  A refused act writes
nothing."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta

import pytest
from freezegun import freeze_time

from bank import (
    account_reservations,
    accounts,
    credits,
    homes,
    notice_document,
    notices,
    parties,
    plan_decisions,
    plans,
    reservations,
    transfers,
)
from bank.access import SYSTEM
from bank.errors import (
    AccountFrozen,
    BankError,
    Conflict,
    InsufficientCredits,
    NotFound,
    ValidationFailed,
)
from bank.plan_tables import Plan
from bank.reservation_tables import Reservation
from bank.transfer_tables import Transfer
from ledger import pending, slices
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    SUMMARY_RECIPIENTS,
    count,
    deposit,
    holder_actor,
    lgu_actor,
    new_account,
    new_holder,
    new_lgu,
    new_site,
    request,
    statements,
    unique,
    wetland,
)

EXPIRY = DAY + timedelta(days=30)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


@dataclass(frozen=True)
class Bank:
    """A holder's account funded with 10,000 sq ft and an empty one of the same holder, another
    holder (``stranger_id``), and a plan of an LGU's (not yet decided) in the same service
    area."""

    holder_id: str
    funded: str
    empty: str
    stranger_id: str
    lgu_id: str
    plan_id: str
    credit_class: str


@pytest.fixture
def bank(db: Database) -> Bank:
    holder, stranger, lgu = new_holder(db), new_holder(db), new_lgu(db)
    funded, empty = new_account(db, holder).id, new_account(db, holder).id
    deposit(db, request(funded, new_site(db, holder), lgu, wetland(10_000)))
    with db.transaction() as session:
        plan = plans.create_plan(session, RULESET, _plan(lgu))
    return Bank(holder, funded, empty, stranger, lgu, plan.id, credits.class_code(5, "2", False))


def _plan(lgu_id: str) -> plans.PlanRequest:
    return plans.PlanRequest(
        lgu_id=lgu_id,
        applicant="Hollis Township",
        project=unique("Road 12 widening"),
        received_on=DAY - timedelta(days=5),
        area_sqft=2_000,
        wetland_type="2",
        service_area=5,
        county="Lyon",
        on_agricultural_land=False,
        replacement_ratio="2",
        method="bank_credits",
    )


def freeze(db: Database, account_id: str) -> None:
    accounts.set_status(db, SYSTEM, account_id, "frozen")


def available(db: Database, account_id: str) -> tuple[int, int]:
    """What the account holds: (posted, reserved) over its lots."""
    with db.transaction() as session:
        account = session.get(parties.BankAccount, account_id)
        assert account is not None
        lots = credits.lots_of(session, account)
    return sum(lot.posted_sqft for lot in lots), sum(lot.reserved_sqft for lot in lots)


def transfer_of(bank: Bank, amount: int, target: str | None = None) -> transfers.TransferRequest:
    return transfers.TransferRequest(
        bank.funded, target or bank.empty, amount, credit_class=bank.credit_class
    )


def reservation_of(bank: Bank, amount: int) -> reservations.ReservationRequest:
    return reservations.ReservationRequest(
        bank.funded, bank.plan_id, amount, EXPIRY, credit_class=bank.credit_class
    )


# --- transfers ----------------------------------------------------------------------------------


def test_a_holder_transfers_credits_out_of_its_own_account(db: Database, bank: Bank) -> None:
    owner = holder_actor(bank.holder_id)
    done = transfers.transfer(db, owner, transfer_of(bank, 4_000), "req-1")
    assert (done.from_account_id, done.to_account_id, done.amount_sqft) == (
        bank.funded,
        bank.empty,
        4_000,
    )
    assert done.credit_class.code == bank.credit_class and done.transaction_id.isdigit()
    [lot] = done.lots
    assert lot.amount_sqft == 4_000
    assert available(db, bank.funded) == (6_000, 0)
    assert available(db, bank.empty) == (4_000, 0)
    with db.transaction() as session:
        stored = session.get(Transfer, done.id)
        assert stored is not None
        assert (str(stored.transaction_id), stored.actor) == (done.transaction_id, owner.label)
        received = session.get(credits.Lot, lot.to_lot_id)
        assert received is not None and received.parent_lot_id == lot.from_lot_id


def test_a_transfer_between_lots_it_locked_reads_nothing_more_about_their_accounts(
    db: Database, bank: Bank
) -> None:
    """The statement that picks and locks a transfer's lots returns their accounts' asset and
    limits: the ledger's write does not read them again, even in a process that has never
    written to those accounts (a new engine: nothing of theirs is cached)."""
    owner = holder_actor(bank.holder_id)
    transfers.transfer(db, owner, transfer_of(bank, 1_000), "req-1")  # the receiving lot now exists
    new_process = Database.from_url(db.engine.url.render_as_string(hide_password=False))
    try:
        with statements(new_process) as sent:
            transfers.transfer(new_process, owner, transfer_of(bank, 1_000), "req-2")
    finally:
        new_process.dispose()
    assert not [s for s in sent if "FROM ledger_accounts" in s]
    assert available(db, bank.funded) == (8_000, 0)
    assert available(db, bank.empty) == (2_000, 0)


@pytest.mark.parametrize(
    ("refusal", "error", "code"),
    [
        ("more than available", InsufficientCredits, "insufficient_credits"),
        ("frozen account", AccountFrozen, "account_frozen"),
        ("another holder's account", NotFound, "not_found"),
        ("nothing at all", ValidationFailed, "validation_error"),
    ],
)
def test_a_refused_transfer_moves_nothing(
    db: Database, bank: Bank, refusal: str, error: type[BankError], code: str
) -> None:
    who, amount = holder_actor(bank.holder_id), 4_000
    if refusal == "more than available":
        amount = 10_001
    elif refusal == "frozen account":
        freeze(db, bank.funded)
    elif refusal == "nothing at all":
        amount = 0
    else:
        who = holder_actor(bank.stranger_id)
    with pytest.raises(error) as refused:
        transfers.transfer(db, who, transfer_of(bank, amount), None)
    assert refused.value.code == code
    assert count(db, Transfer, Transfer.from_account_id == bank.funded) == 0
    assert available(db, bank.funded) == (10_000, 0)
    assert available(db, bank.empty) == (0, 0)


def test_no_transfer_into_a_closed_account(db: Database, bank: Bank) -> None:
    accounts.set_status(db, SYSTEM, bank.empty, "closed")
    with pytest.raises(Conflict):
        transfers.transfer(db, SYSTEM, transfer_of(bank, 1_000), None)
    assert available(db, bank.funded) == (10_000, 0)


# --- reservations -------------------------------------------------------------------------------


def test_a_reservation_holds_credits_and_its_holder_and_the_plans_lgu_see_it(
    db: Database, bank: Bank
) -> None:
    owner = holder_actor(bank.holder_id)
    made = reservations.reserve_for_plan(db, owner, reservation_of(bank, 3_000), "req-2")
    assert (made.status, made.amount_sqft, made.plan_id) == ("pending", 3_000, bank.plan_id)
    assert made.credit_class.code == bank.credit_class and made.expires_on == EXPIRY
    assert [share.amount_sqft for share in made.lots] == [3_000]
    assert available(db, bank.funded) == (10_000, 3_000)
    for who in (owner, lgu_actor(bank.lgu_id), SYSTEM):
        shown = reservations.show_reservation(db, who, made.id)
        assert (shown.id, shown.status, shown.lots[0].lot_id) == (
            made.id,
            "pending",
            made.lots[0].lot_id,
        )
    with pytest.raises(NotFound):
        reservations.show_reservation(db, holder_actor(bank.stranger_id), made.id)
    with pytest.raises(NotFound):
        reservations.show_reservation(db, SYSTEM, "res_missing")


def test_a_voided_reservation_releases_its_credits_once(db: Database, bank: Bank) -> None:
    owner = holder_actor(bank.holder_id)
    made = reservations.reserve_for_plan(db, owner, reservation_of(bank, 3_000), None)
    with pytest.raises(NotFound):  # the plan's LGU sees it but does not act on it
        reservations.void(db, lgu_actor(bank.lgu_id), made.id, None)
    voided = reservations.void(db, owner, made.id, "req-3")
    assert voided.status == "voided"
    assert available(db, bank.funded) == (10_000, 0)
    with pytest.raises(Conflict) as again:
        reservations.void(db, owner, made.id, None)
    assert again.value.code == "conflict"


def test_a_reservation_expires_at_the_end_of_its_day(db: Database, bank: Bank) -> None:
    made = reservations.reserve_for_plan(db, SYSTEM, reservation_of(bank, 3_000), None)
    with freeze_time(f"{EXPIRY.isoformat()} 12:00:00"):
        assert reservations.show_reservation(db, SYSTEM, made.id).status == "pending"
    with freeze_time(f"{(EXPIRY + timedelta(days=1)).isoformat()} 12:00:00"):
        assert reservations.show_reservation(db, SYSTEM, made.id).status == "expired"
        assert available(db, bank.funded) == (10_000, 0)
        with pytest.raises(Conflict):
            reservations.void(db, SYSTEM, made.id, None)


@pytest.mark.parametrize(
    ("refusal", "error", "code"),
    [
        ("more than available", InsufficientCredits, "insufficient_credits"),
        ("frozen account", AccountFrozen, "account_frozen"),
        ("another holder's account", NotFound, "not_found"),
        ("denied plan", Conflict, "conflict"),
        ("nothing at all", ValidationFailed, "validation_error"),
    ],
)
def test_a_refused_reservation_holds_nothing(
    db: Database, bank: Bank, refusal: str, error: type[BankError], code: str
) -> None:
    who, amount = holder_actor(bank.holder_id), 3_000
    if refusal == "more than available":
        amount = 10_001
    elif refusal == "frozen account":
        freeze(db, bank.funded)
    elif refusal == "another holder's account":
        who = holder_actor(bank.stranger_id)
    elif refusal == "nothing at all":
        amount = 0
    else:
        _deny(db, bank.plan_id)
    with pytest.raises(error) as refused:
        reservations.reserve_for_plan(db, who, reservation_of(bank, amount), None)
    assert refused.value.code == code
    assert count(db, Reservation, Reservation.account_id == bank.funded) == 0
    assert available(db, bank.funded) == (10_000, 0)


def _deny(db: Database, plan_id: str) -> None:
    with db.transaction() as session:
        plan = session.get(Plan, plan_id)
        assert plan is not None
        # the summary first (Subd. 6 (b)): the decision waits for it
        printed = functools.partial(notice_document.as_mailed, session, plan)
        notices.record_application_notice(session, plan, DAY, list(SUMMARY_RECIPIENTS), printed)
        plan_decisions.record_decision(
            session,
            plan,
            plan_decisions.DecisionRequest("denied", DAY, reasons="the impact can be avoided"),
        )
        assert plans.current_outcome(session, plan_id) == "denied"


# --- the account's reservations -----------------------------------------------------------------


def test_the_holder_lists_the_reservations_against_its_account_with_their_plan(
    db: Database, bank: Bank
) -> None:
    owner = holder_actor(bank.holder_id)
    kept = reservations.reserve_for_plan(db, owner, reservation_of(bank, 3_000), None)
    with freeze_time(f"{DAY.isoformat()} 12:00:01"):
        dropped = reservations.reserve_for_plan(db, owner, reservation_of(bank, 1_000), None)
    reservations.void(db, owner, dropped.id, None)
    listed = account_reservations.account_reservations(db, owner, bank.funded)
    assert [(r.id, r.status, r.amount_sqft) for r in listed.items] == [
        (kept.id, "pending", 3_000),
        (dropped.id, "voided", 1_000),
    ]
    first = listed.items[0]
    assert (first.account_id, first.credit_class.code, first.expires_on) == (
        bank.funded,
        bank.credit_class,
        EXPIRY,
    )
    with db.transaction() as session:
        plan = session.get(Plan, bank.plan_id)
        assert plan is not None
        lgu = parties.get_lgu(session, bank.lgu_id)
        expected = (plan.id, plan.project, lgu.name, plans.state(session, plan).status)
    assert {(r.plan.id, r.plan.project, r.plan.lgu_name, r.plan.status) for r in listed.items} == {
        expected
    }
    assert account_reservations.account_reservations(db, SYSTEM, bank.empty).items == ()
    with pytest.raises(NotFound):
        account_reservations.account_reservations(db, holder_actor(bank.stranger_id), bank.funded)


def test_listing_reservations_reads_as_many_statements_for_four_as_for_one(
    db: Database, bank: Bank
) -> None:
    """The account's reservations and the holder's home read each reservation's status and plan
    with a query for all of them, not one per reservation (nor one per lot it holds)."""
    owner = holder_actor(bank.holder_id)
    reservations.reserve_for_plan(db, owner, reservation_of(bank, 1_000), None)

    def reads() -> tuple[int, int]:
        with statements(db) as listed:
            assert account_reservations.account_reservations(db, owner, bank.funded).items
        with statements(db) as home:
            assert homes.home(db, owner, DAY).reservations  # type: ignore[union-attr]
        return len(listed), len(home)

    for_one = reads()
    for _ in range(3):
        reservations.reserve_for_plan(db, owner, reservation_of(bank, 1_000), None)
    assert reads() == for_one


def test_reservations_read_in_slices_are_the_same(
    db: Database, bank: Bank, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Past ``ledger.slices.SLICE`` keys the batched reads go slice by slice: one key a slice
    here, so two reservations of two plans take several slices, and read the same."""
    owner = holder_actor(bank.holder_id)
    kept = reservations.reserve_for_plan(db, owner, reservation_of(bank, 1_000), None)
    voided = reservations.reserve_for_plan(db, owner, reservation_of(bank, 2_000), None)
    reservations.void(db, owner, voided.id, None)

    def read() -> list[tuple[object, ...]]:
        listed = account_reservations.account_reservations(db, owner, bank.funded).items
        return [
            (r.id, r.status, r.amount_sqft, r.credit_class.code, r.plan)
            + tuple((s.lot_id, s.amount_sqft, s.pending_transaction_id) for s in r.lots)
            for r in listed
        ]

    whole = read()
    one_by_one = functools.partial(slices.slices, size=1)
    monkeypatch.setattr(reservations, "slices", one_by_one)
    monkeypatch.setattr(pending, "slices", one_by_one)
    monkeypatch.setattr(slices, "slices", one_by_one)  # ``slices.grouped``: plans' facts
    sliced = read()

    assert sliced == whole
    assert sorted(r[:2] for r in sliced) == sorted([(kept.id, "pending"), (voided.id, "voided")])
