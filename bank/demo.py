"""A small but realistic demo bank (``wetbank demo``): idempotent, it loads its data once.

Every run prints a fresh token per role, since tokens are shown only when created.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from bank import access, credits, deposits, parties, plans, reservations, transfers
from bank.access import SYSTEM
from bank.deposit_rules import ActionRequest
from bank.ruleset import Ruleset, ruleset_for
from ledger import clock
from ledger.db import Database

DEMO_MARKER = "Prairie Creek LLC"


@dataclass(frozen=True)
class DemoTokens:
    """The tokens a demo run created, by role."""

    board: str
    lgu: str
    holder: str


def load(db: Database) -> DemoTokens:
    """Load the demo data unless it is there already; return a new token for each role."""
    with db.transaction() as session:
        holder = session.execute(
            select(parties.Holder).where(parties.Holder.name == DEMO_MARKER)
        ).scalar_one_or_none()
        if holder is None:
            _load_data(session)
        holder_id, lgu_id = _demo_ids(session)
        _row, board = access.create_token(session, role="board", name="demo board")
        _row, lgu = access.create_token(session, role="lgu", name="demo lgu", lgu_id=lgu_id)
        _row, owner = access.create_token(
            session, role="holder", name="demo holder", holder_id=holder_id
        )
    return DemoTokens(board=board, lgu=lgu, holder=owner)


def _load_data(session: Session) -> None:
    """EXAMPLES.md story 1 and 2 as demo data, plus a second site in another service area."""
    ruleset = ruleset_for(clock.today())
    prairie = parties.create_holder(
        session, name=DEMO_MARKER, email="bank@prairiecreek.example", address="Lyon County, MN"
    )
    hollis = parties.create_holder(session, name="Hollis Township", email=None, address=None)
    lyon = parties.create_lgu(session, name="Lyon County", kind="county")
    parties.create_lgu(
        session,
        name="City of Buffalo",
        kind="city",
        observes_indigenous_peoples_day=True,
        observes_friday_after_thanksgiving=True,
    )
    site = parties.create_bank_site(
        session,
        ruleset,
        name="Prairie Creek",
        holder_id=prairie.id,
        service_area=5,
        county="Lyon",
        major_watershed="Redwood River",
    )
    marsh = parties.create_bank_site(
        session,
        ruleset,
        name="Crow River Marsh",
        holder_id=prairie.id,
        service_area=7,
        county="Wright",
        major_watershed="Crow River",
    )
    seller = parties.open_account(
        session, ruleset, holder_id=prairie.id, service_area=5, county="Lyon", name="Prairie Creek"
    )
    buyer = parties.open_account(
        session, ruleset, holder_id=hollis.id, service_area=5, county="Lyon", name="Road account"
    )
    day = clock.today() - timedelta(days=30)
    _deposit(session, ruleset, seller.id, site.id, lyon.id, day, "2", _story_one_actions(day))
    _deposit(
        session,
        ruleset,
        seller.id,
        marsh.id,
        lyon.id,
        day,
        "3",
        [
            ActionRequest("replacement_wetland", 20_000, 20_000),
            ActionRequest("vegetative_cover", 10_000, 5_000, qualifying_years=7),
            ActionRequest("easement_restoration", 8_000, 6_000, easement_terminated_on=day),
            ActionRequest("easement_buffer", 4_000, 2_000),
        ],
    )
    for restricted, amount in ((False, 20_000), (True, 8_000)):
        transfers.make_transfer(
            session,
            SYSTEM,
            transfers.TransferRequest(
                seller.id,
                buyer.id,
                amount,
                credit_class=credits.class_code(5, "2", restricted),
                price_per_sqft_cents=150,
            ),
            None,
        )
    plan = plans.create_plan(
        session,
        ruleset,
        plans.PlanRequest(
            lgu_id=lyon.id,
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
    expiry = clock.today() + timedelta(days=90)
    for restricted, amount in ((False, 10_000), (True, 8_000)):
        reservations.reserve(
            session,
            SYSTEM,
            reservations.ReservationRequest(
                buyer.id,
                plan.id,
                amount,
                expiry,
                credit_class=credits.class_code(5, "2", restricted),
            ),
            None,
            None,
        )


def _story_one_actions(day: date) -> list[ActionRequest]:
    return [
        ActionRequest("replacement_wetland", 60_000, 60_000),
        ActionRequest("upland_buffer", 52_000, 45_000, established_on=day),
        ActionRequest("treatment_pond", 12_001, 9_000, associated_project="CSAH 9 rebuild"),
    ]


def _deposit(
    session: Session,
    ruleset: Ruleset,
    account_id: str,
    site_id: str,
    lgu_id: str,
    day: date,
    wetland_type: str,
    actions: list[ActionRequest],
) -> None:
    deposits.make_deposit(
        session,
        ruleset,
        SYSTEM,
        deposits.DepositRequest(
            account_id=account_id,
            bank_site_id=site_id,
            effective_on=day,
            banking_plan_reference=f"BP-{day.year}-{site_id[-4:]}",
            banking_plan_approved_on=day,
            banking_plan_lgu_id=lgu_id,
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
