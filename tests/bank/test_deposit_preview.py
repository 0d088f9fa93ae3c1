"""The deposit preview (``bank.deposit_preview``) on both databases: the caps, credit so far and
restriction of each action, computed as the deposit computes them, and nothing written."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from freezegun import freeze_time

from bank import deposit_preview
from bank.access import SYSTEM
from bank.deposit_tables import Deposit
from bank.errors import CapExceeded, Conflict, Forbidden, ValidationFailed
from bank.party_tables import SiteCreditArea
from bank.rules.deposit_rules import ActionRequest
from ledger.db import Database
from tests.bank.account_kit import (
    DAY,
    RULESET,
    count,
    deposit,
    holder_actor,
    new_account,
    new_holder,
    new_lgu,
    new_site,
    request,
    wetland,
)

BUFFER = ActionRequest("upland_buffer", 4_000, 3_000, established_on=DAY)


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


@pytest.fixture
def place(db: Database) -> tuple[str, str, str, str]:
    """(holder, LGU, bank site with 10,000 sq ft of wetland registered, open account)."""
    holder = new_holder(db)
    return holder, new_lgu(db), new_site(db, holder), new_account(db, holder).id


def writes(db: Database, site_id: str) -> tuple[int, int]:
    return (
        count(db, Deposit, Deposit.bank_site_id == site_id),
        count(db, SiteCreditArea, SiteCreditArea.bank_site_id == site_id),
    )


def test_each_action_shows_its_cap_credit_so_far_and_restriction(db: Database, place) -> None:
    _holder, lgu, site, account = place
    deposit(db, request(account, site, lgu, wetland(4_000)))
    before = writes(db, site)

    shown = deposit_preview.preview(
        db, RULESET, SYSTEM, request(account, site, lgu, wetland(3_000), BUFFER)
    )

    assert shown.refusal is None
    assert shown.total_credit_sqft == 6_000
    wet, buffer = shown.actions
    assert (wet.category, wet.restricted, wet.cap_sqft) == ("replacement_wetland", False, 10_000)
    assert (wet.credited_sqft, wet.remaining_sqft) == (4_000, 6_000)
    assert not wet.registered_by_this_deposit
    # the buffer registers its area with this deposit; its cap is 75% of the site's wetland
    assert (buffer.category, buffer.restricted) == ("upland_buffer", True)
    assert buffer.registered_by_this_deposit and buffer.registered_area_sqft == 4_000
    assert (buffer.cap_sqft, buffer.credited_sqft, buffer.remaining_sqft) == (4_000, 0, 4_000)
    assert writes(db, site) == before


def test_a_deposit_over_the_sites_cap_is_previewed_with_its_refusal(db: Database, place) -> None:
    _holder, lgu, site, account = place
    deposit(db, request(account, site, lgu, wetland(8_000)))

    shown = deposit_preview.preview(
        db, RULESET, SYSTEM, request(account, site, lgu, wetland(3_000))
    )

    (line,) = shown.actions
    assert (line.cap_sqft, line.credited_sqft, line.remaining_sqft) == (10_000, 8_000, 2_000)
    assert isinstance(shown.refusal, CapExceeded)
    assert "at most 10,000 sq ft" in shown.refusal.detail
    assert count(db, Deposit, Deposit.bank_site_id == site) == 1


def test_a_request_posting_would_refuse_outright_is_refused(db: Database, place) -> None:
    holder, lgu, site, account = place
    with pytest.raises(ValidationFailed) as unknown:
        deposit_preview.preview(db, RULESET, SYSTEM, request("acct_nope", site, lgu, wetland(10)))
    assert unknown.value.fields["errors"] == {"account_id": ["no such account"]}
    with pytest.raises(Forbidden):
        deposit_preview.preview(
            db, RULESET, holder_actor(holder), request(account, site, lgu, wetland(10))
        )
    other = new_account(db, new_holder(db)).id
    with pytest.raises(Exception) as foreign:
        deposit_preview.preview(db, RULESET, SYSTEM, request(other, site, lgu, wetland(10)))
    assert getattr(foreign.value, "code", None) == "not_eligible"
    assert not isinstance(foreign.value, Conflict)
    assert writes(db, site) == (0, 1)
