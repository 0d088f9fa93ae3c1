"""A small but realistic demo bank (``wetbank demo``): idempotent, it loads its data once.

Every run prints a fresh token per role, since tokens are shown only when created.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import (
    access,
    accounts,
    credits,
    deposits,
    parties,
    plan_cases,
    plans,
    reservations,
    site_register,
    transfers,
)
from bank.access import SYSTEM
from bank.rules.deposit_rules import ActionRequest
from bank.rules.ruleset import Ruleset, ruleset_for
from ledger import clock
from ledger.db import Database

DEMO_MARKER = "Prairie Creek LLC"


@dataclass(frozen=True)
class DemoTokens:
    """The tokens a demo run created, by role."""

    board: str
    lgu: str
    holder: str

    @classmethod
    def create(cls, session: Session) -> DemoTokens:
        """A new token for each role, the LGU's and the holder's scoped to the demo's own."""
        holder_id, lgu_id = _demo_ids(session)
        _row, board = access.create_token(session, role="board", name="demo board")
        _row, lgu = access.create_token(session, role="lgu", name="demo lgu", lgu_id=lgu_id)
        _row, holder = access.create_token(
            session, role="holder", name="demo holder", holder_id=holder_id
        )
        for _ in range(3):  # in the audit trail, as every token created is
            access.record_event(
                session,
                kind="token_created",
                path="wetbank demo",
                status=201,
                actor="demo",
                request_id=None,
            )
        return cls(board=board, lgu=lgu, holder=holder)


def load(db: Database) -> DemoTokens:
    """Load the demo data unless it is there already; return a new token for each role."""
    with db.transaction() as session:
        holder = session.execute(
            select(parties.Holder).where(parties.Holder.name == DEMO_MARKER)
        ).scalar_one_or_none()
        if holder is None:
            _load_data(db)
        return DemoTokens.create(session)


@dataclass(frozen=True)
class _Bank:
    """What the demo's later steps build on: the seller's and the buyer's accounts, the LGU
    that approved the banking plans and decides the road plan, and the two bank sites."""

    seller: str
    buyer: str
    lgu: str
    prairie_creek: str
    crow_river_marsh: str


def _load_data(db: Database) -> None:
    """Demo data: the seller's deposit, a sale to the buyer and the township's road plan reserving
    credits, the seller's own reservation for it (so that the demo holder has one to void), plus
    a second site in another service area."""
    ruleset = ruleset_for(clock.today())
    bank = _parties_and_places(db, ruleset)
    _deposits(db, ruleset, bank, clock.today())  # the day its accounts open, not before
    _sales(db, bank)
    road_plan = _road_plan_reservations(db, ruleset, bank)
    _reserve(db, bank.seller, road_plan, restricted=False, amount=2_000)


#: the seller's two bank sites, in two service areas
_SITES = (
    {
        "name": "Prairie Creek",
        "service_area": 5,
        "county": "Lyon",
        "major_watershed": "Redwood River",
    },
    {
        "name": "Crow River Marsh",
        "service_area": 7,
        "county": "Wright",
        "major_watershed": "Crow River",
    },
)


def _parties_and_places(db: Database, ruleset: Ruleset) -> _Bank:
    """Two holders, two LGUs, the seller's two bank sites and an account for each holder."""
    prairie = parties.create_holder(
        db, SYSTEM, name=DEMO_MARKER, email="bank@prairiecreek.example", address="Lyon County, MN"
    )
    hollis = parties.create_holder(db, SYSTEM, name="Hollis Township", email=None, address=None)
    lyon = parties.create_lgu(db, SYSTEM, name="Lyon County", kind="county")
    parties.create_lgu(
        db,
        SYSTEM,
        name="City of Buffalo",
        kind="city",
        observes_indigenous_peoples_day=True,
        observes_friday_after_thanksgiving=True,
    )
    sites = [
        site_register.register_site(
            db, ruleset, SYSTEM, credit_areas=[], holder_id=prairie.id, **place
        ).id
        for place in _SITES
    ]
    seller, buyer = (
        accounts.open_account(
            db, ruleset, SYSTEM, holder_id=holder, service_area=5, county="Lyon", name=name
        ).id
        for holder, name in ((prairie.id, "Prairie Creek"), (hollis.id, "Road account"))
    )
    return _Bank(seller, buyer, lyon.id, *sites)


def _deposits(db: Database, ruleset: Ruleset, bank: _Bank, day: date) -> None:
    """Story 1's deposit at Prairie Creek, and one of type 3 at Crow River Marsh."""
    prairie, marsh = bank.prairie_creek, bank.crow_river_marsh
    _deposit(db, ruleset, bank, prairie, day, "2", _story_one_actions(day))
    marsh_actions = [
        ActionRequest("replacement_wetland", 20_000, 20_000),
        ActionRequest("vegetative_cover", 10_000, 5_000, qualifying_years=7),
        ActionRequest("easement_restoration", 8_000, 6_000, easement_terminated_on=day),
        ActionRequest("easement_buffer", 4_000, 2_000),
    ]
    _deposit(db, ruleset, bank, marsh, day, "3", marsh_actions)


def _sales(db: Database, bank: _Bank) -> None:
    """The seller sells the township unrestricted and restricted credits of type 2."""
    for restricted, amount in ((False, 20_000), (True, 8_000)):
        transfers.transfer(
            db,
            SYSTEM,
            transfers.TransferRequest(
                bank.seller,
                bank.buyer,
                amount,
                credit_class=credits.class_code(5, "2", restricted),
                price_per_sqft_cents=150,
            ),
            None,
        )


def _road_plan_reservations(db: Database, ruleset: Ruleset, bank: _Bank) -> str:
    """Story 2: the township's road plan, and its credits reserved for it; returns the plan's
    id."""
    plan = plan_cases.record(
        db,
        SYSTEM,
        ruleset,
        plans.PlanRequest(
            lgu_id=bank.lgu,
            applicant="Hollis Township",
            project="Township road 12 widening",
            received_on=clock.today() - timedelta(days=5),
            area_sqft=9_000,
            wetland_type="2",
            service_area=5,
            county="Lyon",
            on_agricultural_land=False,
            replacement_ratio="2",
            method="bank_credits",
            watershed_district="Yellow Medicine River Watershed District",
            location="Township road 12, Sections 14 and 15, Hollis Township, Lyon County",
        ),
    )
    for restricted, amount in ((False, 10_000), (True, 8_000)):
        _reserve(db, bank.buyer, plan.id, restricted=restricted, amount=amount)
    return plan.id


def _reserve(db: Database, account_id: str, plan_id: str, *, restricted: bool, amount: int) -> None:
    """``amount`` sq ft of type 2 credits of service area 5 reserved from the account for the
    plan for 90 days, as ``POST /accounts/{id}/reservations`` reserves them."""
    reservations.reserve_for_plan(
        db,
        SYSTEM,
        reservations.ReservationRequest(
            account_id,
            plan_id,
            amount,
            clock.today() + timedelta(days=90),
            credit_class=credits.class_code(5, "2", restricted),
        ),
        None,
    )


def _story_one_actions(day: date) -> list[ActionRequest]:
    return [
        ActionRequest("replacement_wetland", 60_000, 60_000),
        ActionRequest("upland_buffer", 52_000, 45_000, established_on=day),
        ActionRequest("treatment_pond", 12_001, 9_000, associated_project="CSAH 9 rebuild"),
    ]


def _deposit(
    db: Database,
    ruleset: Ruleset,
    bank: _Bank,
    site_id: str,
    day: date,
    wetland_type: str,
    actions: list[ActionRequest],
) -> None:
    deposits.post_deposit(
        db,
        ruleset,
        SYSTEM,
        deposits.DepositRequest(
            account_id=bank.seller,
            bank_site_id=site_id,
            effective_on=day,
            banking_plan_reference=f"BP-{day.year}-{site_id[-4:]}",
            banking_plan_approved_on=day,
            banking_plan_lgu_id=bank.lgu,
            wetland_type=wetland_type,
            completed_on=day,
            federally_approved=True,
            designated_for_replacement=True,
            paid_by_performer=True,
            paid_back_with_interest=False,
            actions=tuple(actions),
        ),
        None,
    )


def _demo_ids(session: Session) -> tuple[str, str]:
    holder = session.execute(
        select(parties.Holder.id).where(parties.Holder.name == DEMO_MARKER)
    ).scalar_one()
    lgu = session.execute(
        select(parties.Lgu.id).where(parties.Lgu.name == "Lyon County")
    ).scalar_one()
    return holder, lgu
