"""The use cases of parties and places (``bank.parties``, ``bank.party_lists``,
``bank.party_edits``, ``bank.site_register``, ``bank.tokens``) on both databases: a holder, an
LGU and a bank site registered, listed, read and corrected with a reason (recorded), a site
frozen, a token created and revoked, and their refusals.  A refused act writes nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest
from freezegun import freeze_time
from sqlalchemy import func, select

from bank import access, parties, party_edits, party_lists, site_register, tokens
from bank.access import SYSTEM, Actor
from bank.access_tables import ApiToken, AuditEvent
from bank.errors import Forbidden, NotFound, ValidationFailed
from bank.party_tables import BankSite, Holder, Lgu, PartyEdit
from bank.rules.ruleset import ruleset_for
from ledger.db import Database

DAY = date(2026, 6, 17)
RULESET = ruleset_for(DAY)
REQUEST = tokens.Request("POST /api/v1/tokens", "req-refused")


@pytest.fixture(autouse=True)
def frozen() -> Iterator[None]:
    with freeze_time(f"{DAY.isoformat()} 12:00:00"):
        yield


def unique(prefix: str) -> str:
    return f"{prefix} {uuid.uuid4().hex[:10]}"


def holder_actor(holder_id: str) -> Actor:
    return Actor(token_id=f"tok_{holder_id}", role="holder", name="owner", holder_id=holder_id)


def count(db: Database, model: Any, *where: Any) -> int:
    with db.transaction() as session:
        return int(session.execute(select(func.count()).select_from(model).where(*where)).scalar())


def edits(db: Database, kind: str, party_id: str) -> list[PartyEdit]:
    with db.transaction() as session:
        return party_edits.edits_of(session, kind, party_id)


def new_site(db: Database, holder_id: str, **fields: Any) -> site_register.SiteView:
    place = {"service_area": 5, "county": "Lyon", "major_watershed": None, **fields}
    return site_register.register_site(
        db,
        RULESET,
        SYSTEM,
        credit_areas=[{"category": "replacement_wetland", "area_sqft": 10_000}],
        name=unique("Site"),
        holder_id=holder_id,
        **place,
    )


# --- holders ------------------------------------------------------------------------------------


def test_a_holder_is_registered_listed_read_and_corrected_with_its_reason(db: Database) -> None:
    name = unique("Prairie Creek")
    holder = parties.create_holder(db, SYSTEM, name=name, email=None, address="Lyon County")
    assert holder.id.startswith("hld_") and holder.name == name

    listed = party_lists.holders(db, SYSTEM, name.upper(), None, 10)
    assert [row.id for row in listed] == [holder.id]
    assert parties.show_holder(db, holder_actor(holder.id), holder.id).name == name

    fixed = party_edits.edit_holder(
        db, SYSTEM, holder.id, reason="typo in the name", name="Prairie Creek LLC", address=None
    )
    assert (fixed.name, fixed.address) == ("Prairie Creek LLC", None)
    [edit] = edits(db, "holder", holder.id)
    assert edit.reason == "typo in the name" and edit.actor == SYSTEM.label
    assert edit.changes == {
        "name": {"from": name, "to": "Prairie Creek LLC"},
        "address": {"from": "Lyon County", "to": None},
    }
    assert parties.show_holder(db, SYSTEM, holder.id).name == "Prairie Creek LLC"


def test_a_holder_list_pages_by_id(db: Database) -> None:
    tag = uuid.uuid4().hex[:10]
    made = sorted(
        parties.create_holder(db, SYSTEM, name=f"Page {tag} {n}", email=None, address=None).id
        for n in range(3)
    )
    first = party_lists.holders(db, SYSTEM, tag, None, 2)
    assert [row.id for row in first] == made  # the extra row says there is more
    rest = party_lists.holders(db, SYSTEM, tag, made[1], 2)
    assert [row.id for row in rest] == made[2:]


def test_an_edit_without_a_reason_is_refused_and_changes_nothing(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    for reason in ("", "   "):
        with pytest.raises(ValidationFailed) as refused:
            party_edits.edit_holder(db, SYSTEM, holder.id, reason=reason, name="Other")
        assert (
            refused.value.code == "validation_error" and "reason" in refused.value.fields["errors"]
        )
    with pytest.raises(ValidationFailed) as sealed:
        party_edits.edit_holder(db, SYSTEM, holder.id, reason="why", created_at=None)
    assert "created_at" in sealed.value.fields["errors"]
    assert parties.show_holder(db, SYSTEM, holder.id).name == holder.name
    assert edits(db, "holder", holder.id) == []


def test_an_edit_that_changes_nothing_records_nothing(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    party_edits.edit_holder(db, SYSTEM, holder.id, reason="same", name=holder.name)
    assert edits(db, "holder", holder.id) == []


def test_only_the_board_registers_lists_and_corrects_and_a_holder_sees_only_itself(
    db: Database,
) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    other = parties.create_holder(db, SYSTEM, name=unique("Other"), email=None, address=None)
    owner = holder_actor(holder.id)
    before = count(db, Holder)
    with pytest.raises(Forbidden):
        parties.create_holder(db, owner, name="Mine", email=None, address=None)
    with pytest.raises(Forbidden):
        party_lists.holders(db, owner, None, None, 10)
    with pytest.raises(Forbidden) as refused:
        party_edits.edit_holder(db, owner, holder.id, reason="mine", name="Renamed")
    assert refused.value.code == "forbidden"
    with pytest.raises(NotFound):
        parties.show_holder(db, owner, other.id)
    with pytest.raises(NotFound):
        parties.show_holder(db, SYSTEM, "hld_0")
    with pytest.raises(NotFound):
        party_edits.edit_holder(db, SYSTEM, "hld_0", reason="r", name="x")
    assert count(db, Holder) == before
    assert edits(db, "holder", holder.id) == []


# --- LGUs ---------------------------------------------------------------------------------------


def test_an_lgu_is_registered_listed_read_and_corrected(db: Database) -> None:
    name = unique("City of Buffalo")
    lgu = parties.create_lgu(
        db, SYSTEM, name=name, kind="city", observes_indigenous_peoples_day=True
    )
    assert (lgu.observes_indigenous_peoples_day, lgu.observes_friday_after_thanksgiving) == (
        True,
        False,
    )
    assert [row.id for row in party_lists.lgus(db, SYSTEM, name, None, 10)] == [lgu.id]
    clerk = Actor(token_id="tok_clerk", role="lgu", name="clerk", lgu_id="lgu_other")
    assert parties.show_lgu(db, clerk, lgu.id).name == name  # public reference data

    fixed = party_edits.edit_lgu(db, SYSTEM, lgu.id, reason="official name", name="Buffalo")
    assert fixed.name == "Buffalo"
    [edit] = edits(db, "lgu", lgu.id)
    assert edit.reason == "official name" and edit.changes["name"] == {
        "from": name,
        "to": "Buffalo",
    }


def test_an_lgu_of_an_unknown_kind_or_a_sealed_field_is_refused(db: Database) -> None:
    before = count(db, Lgu)
    with pytest.raises(ValidationFailed) as refused:
        parties.create_lgu(db, SYSTEM, name=unique("Nowhere"), kind="kingdom")
    assert "kind" in refused.value.fields["errors"]
    assert count(db, Lgu) == before
    lgu = parties.create_lgu(db, SYSTEM, name=unique("County"), kind="county")
    with pytest.raises(ValidationFailed) as sealed:
        party_edits.edit_lgu(db, SYSTEM, lgu.id, reason="x", kind="city")
    assert "kind" in sealed.value.fields["errors"]
    with pytest.raises(NotFound):
        parties.show_lgu(db, SYSTEM, "lgu_0")
    assert edits(db, "lgu", lgu.id) == []


# --- bank sites ---------------------------------------------------------------------------------


def test_a_site_is_registered_listed_read_corrected_and_frozen(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    site = new_site(db, holder.id)
    assert (site.holder_id, site.service_area, site.frozen) == (holder.id, 5, False)
    [area] = site.credit_areas
    assert (area.category, area.area_sqft, area.credited_sqft) == ("replacement_wetland", 10_000, 0)
    assert area.remaining_sqft == area.cap_sqft > 0

    listed = party_lists.sites(db, SYSTEM, None, None, 10, ruleset=RULESET, holder_id=holder.id)
    assert [(row.id, row.credit_areas) for row in listed] == [(site.id, [area])]
    assert (
        party_lists.sites(
            db, SYSTEM, None, None, 10, ruleset=RULESET, holder_id=holder.id, service_area=7
        )
        == []
    )
    seen = site_register.show_site(db, RULESET, holder_actor(holder.id), site.id)
    assert (seen.id, seen.name, seen.credit_areas) == (site.id, site.name, [area])

    fixed = site_register.edit_site(
        db, RULESET, SYSTEM, site.id, reason="surveyed", county="Lincoln"
    )
    assert (fixed.county, fixed.name, fixed.credit_areas) == ("Lincoln", site.name, [area])
    [edit] = edits(db, "bank_site", site.id)
    assert edit.reason == "surveyed" and edit.changes == {
        "county": {"from": "Lyon", "to": "Lincoln"}
    }

    amended = site_register.amend(
        db, RULESET, SYSTEM, site.id, category="replacement_wetland", area_sqft=12_000, reason="r"
    )
    assert amended.credit_areas[0].area_sqft == 12_000
    assert site_register.freeze_site(db, RULESET, SYSTEM, site.id, True).frozen is True
    assert site_register.freeze_site(db, RULESET, SYSTEM, site.id, False).frozen is False


def test_a_site_refuses_another_holder_an_unknown_holder_and_a_sealed_field(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    other = parties.create_holder(db, SYSTEM, name=unique("Other"), email=None, address=None)
    site = new_site(db, holder.id)
    with pytest.raises(NotFound):
        site_register.show_site(db, RULESET, holder_actor(other.id), site.id)
    before = count(db, BankSite)
    with pytest.raises(ValidationFailed) as unknown:
        new_site(db, "hld_0")
    assert "holder_id" in unknown.value.fields["errors"]
    with pytest.raises(ValidationFailed) as area:
        new_site(db, holder.id, service_area=99)
    assert "service_area" in area.value.fields["errors"]
    with pytest.raises(Forbidden):
        site_register.register_site(
            db,
            RULESET,
            holder_actor(holder.id),
            credit_areas=[],
            name="x",
            holder_id=holder.id,
            service_area=5,
            county="Lyon",
        )
    assert count(db, BankSite) == before
    for change in ({"holder_id": other.id}, {"service_area": 7}):
        with pytest.raises(ValidationFailed):
            site_register.edit_site(db, RULESET, SYSTEM, site.id, reason="move", **change)
    with pytest.raises(Forbidden):
        site_register.freeze_site(db, RULESET, holder_actor(holder.id), site.id, True)
    after = site_register.show_site(db, RULESET, SYSTEM, site.id)
    assert (after.holder_id, after.service_area, after.frozen) == (holder.id, 5, False)
    assert edits(db, "bank_site", site.id) == []


# --- tokens -------------------------------------------------------------------------------------


def test_a_token_is_created_then_revoked_and_both_are_audit_events(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    creating = tokens.Request("POST /api/v1/tokens", unique("req"))
    issued = tokens.create(db, SYSTEM, creating, role="holder", name="owner", holder_id=holder.id)
    assert issued.token.startswith(access.TOKEN_PREFIX)
    assert (issued.role, issued.holder_id, issued.lgu_id) == ("holder", holder.id, None)
    with db.transaction() as session:
        who = access.authenticate(session, issued.token)
    assert who == Actor(issued.id, "holder", "owner", None, holder.id)

    revoking = tokens.Request(f"DELETE /api/v1/tokens/{issued.id}", unique("req"))
    tokens.revoke(db, SYSTEM, revoking, issued.id)
    tokens.revoke(db, SYSTEM, revoking, issued.id)  # again: harmless, and not recorded again
    with db.transaction() as session:
        assert access.authenticate(session, issued.token) is None
        events = session.execute(
            select(AuditEvent.kind, AuditEvent.path, AuditEvent.status, AuditEvent.actor)
            .where(AuditEvent.request_id.in_([creating.request_id, revoking.request_id]))
            .order_by(AuditEvent.id)
        ).all()
    assert [tuple(event) for event in events] == [
        ("token_created", creating.path, 201, SYSTEM.label),
        ("token_revoked", revoking.path, 204, SYSTEM.label),
    ]


def test_a_token_for_an_unknown_party_or_by_a_non_board_actor_is_refused(db: Database) -> None:
    holder = parties.create_holder(db, SYSTEM, name=unique("Holder"), email=None, address=None)
    before = (count(db, ApiToken), count(db, AuditEvent))
    with pytest.raises(ValidationFailed) as unknown:
        tokens.create(db, SYSTEM, REQUEST, role="lgu", name="clerk", lgu_id="lgu_0")
    assert "lgu_id" in unknown.value.fields["errors"]
    with pytest.raises(ValidationFailed):
        tokens.create(db, SYSTEM, REQUEST, role="holder", name="owner")
    with pytest.raises(Forbidden):
        tokens.create(db, holder_actor(holder.id), REQUEST, role="board", name="promote me")
    with pytest.raises(NotFound):
        tokens.revoke(db, SYSTEM, REQUEST, "tok_0")
    assert (count(db, ApiToken), count(db, AuditEvent)) == before
