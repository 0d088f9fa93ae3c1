"""A bank site's credit register (Subd. 12 (c) caps a restoration, not a request).

The register holds, per credited category, the area of that action under the site's approved
banking plan: stated when the site is registered, or by the first deposit that credits the
category, and amended by the board with a reason.  Entries are appended, never changed (sealed:
``bank.registry``); a category's area is its latest entry.  What the site has yielded is the sum of
its deposits' credits, reversed deposits excluded.

The board registers a site with its register, corrects its names (``bank.party_edits``), amends
its register and freezes its credits here; each of these use cases answers with a ``SiteView``,
the site and its register read in the same unit of work.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bank import party_edits, policy, status_history
from bank.access import Actor
from bank.deposit_tables import Deposit, DepositAction, DepositReversal
from bank.errors import CapExceeded, NotFound, ValidationFailed
from bank.parties import BankSite, create_bank_site, get_site, set_site_frozen
from bank.party_tables import SiteCreditArea as SiteCreditArea
from bank.rules.deposit_eligibility import BUFFER_BASE
from bank.rules.deposit_rules import CATEGORIES, SiteRegister
from bank.rules.ruleset import Ruleset
from bank.wording import sqft
from ledger import clock
from ledger.db import Database


def check_areas(areas: list[dict[str, Any]], field: str = "credit_areas") -> dict[str, int]:
    """``[{"category", "area_sqft"}]`` as a map; a category named twice is ``validation_error``."""
    out: dict[str, int] = {}
    for index, item in enumerate(areas):
        category, area = item["category"], item["area_sqft"]
        if category not in CATEGORIES:
            raise ValidationFailed(
                f"unknown category {category!r}", {f"{field}.{index}.category": ["unknown"]}
            )
        if category in out:
            raise ValidationFailed(
                f"{category} is registered twice", {f"{field}.{index}.category": ["repeated"]}
            )
        out[category] = area
    return out


def record(
    session: Session,
    site_id: str,
    areas: dict[str, int],
    actor: Actor,
    *,
    source: str,
    reason: str | None = None,
    deposit_id: str | None = None,
) -> None:
    """Append register entries for ``areas``."""
    now = clock.utcnow()
    for category, area in areas.items():
        session.add(
            SiteCreditArea(
                bank_site_id=site_id,
                category=category,
                area_sqft=area,
                source=source,
                reason=reason,
                deposit_id=deposit_id,
                recorded_at=now,
                actor=actor.label,
            )
        )
    session.flush()


def registered_areas(
    session: Session,
    site_id: str,
    credited_now: dict[str, int] | None = None,
    *,
    reversing: str | None = None,
) -> dict[str, int]:
    """Each category's current area: its latest entry that stands.  An area a deposit stated
    first stands while that deposit does, or while another deposit that stands credits the
    category: reversing the only deposit with a mistyped area leaves the category unregistered,
    so the corrected deposit states it afresh (else a mistyped larger area would stay a cap the
    restoration could be credited up to); with other credits standing under it, the area stays
    until the board amends it (else the next deposit could state any area it liked).  With
    ``reversing``, as the areas would stand once that deposit were reversed too."""
    if credited_now is None:
        credited_now = credited(session, site_id, reversing=reversing)
    rows = session.execute(
        select(
            SiteCreditArea.category,
            SiteCreditArea.area_sqft,
            SiteCreditArea.deposit_id,
            DepositReversal.deposit_id.is_not(None),
        )
        .outerjoin(DepositReversal, DepositReversal.deposit_id == SiteCreditArea.deposit_id)
        .where(SiteCreditArea.bank_site_id == site_id)
        .order_by(SiteCreditArea.id)
    )
    latest: dict[str, int] = {}
    for category, area, deposit_id, reversed_ in rows:
        # (an entry the site's registration or an amendment made names no deposit)
        gone = reversed_ or (reversing is not None and deposit_id == reversing)
        if gone and credited_now.get(category, 0) <= 0:
            continue
        latest[category] = int(area)
    return latest


def _standing(site_id: str, reversing: str | None) -> list[Any]:
    """The conditions on ``Deposit`` of the site's deposits that stand (with ``reversing``, as
    they would once that one were reversed too)."""
    out = [Deposit.bank_site_id == site_id, DepositReversal.deposit_id.is_(None)]
    if reversing is not None:
        out.append(Deposit.id != reversing)
    return out


def credited(session: Session, site_id: str, *, reversing: str | None = None) -> dict[str, int]:
    """Credit the site's deposits have yielded per category, reversed deposits excluded (and
    ``reversing``, when given)."""
    rows = session.execute(
        select(DepositAction.category, func.sum(DepositAction.credit_sqft))
        .join(Deposit, Deposit.id == DepositAction.deposit_id)
        .outerjoin(DepositReversal, DepositReversal.deposit_id == Deposit.id)
        .where(*_standing(site_id, reversing))
        .group_by(DepositAction.category)
    )
    return {category: int(total) for category, total in rows}


def completed_on(
    session: Session, site_id: str, *, reversing: str | None = None
) -> dict[str, date]:
    """Per category the site's standing deposits credit, the ``completed_on`` of the first of
    them (recorded first)."""
    rows = session.execute(
        select(DepositAction.category, Deposit.completed_on)
        .join(Deposit, Deposit.id == DepositAction.deposit_id)
        .outerjoin(DepositReversal, DepositReversal.deposit_id == Deposit.id)
        .where(*_standing(site_id, reversing))
        .order_by(Deposit.recorded_at, Deposit.id)
    )
    first: dict[str, date] = {}
    for category, day in rows:
        first.setdefault(category, day)
    return first


def register_of(session: Session, site_id: str, *, reversing: str | None = None) -> SiteRegister:
    """The site's register as the deposit rules read it; with ``reversing`` (a deposit's id),
    as it would stand once that deposit were reversed."""
    credited_now = credited(session, site_id, reversing=reversing)
    return SiteRegister(
        registered_areas(session, site_id, credited_now, reversing=reversing),
        credited_now,
        completed_on(session, site_id, reversing=reversing),
    )


@dataclass(frozen=True)
class OverCap:
    """A category whose credit would stand over its cap: what it credited, and the cap."""

    category: str
    credited_sqft: int
    cap_sqft: int

    def facts(self) -> dict[str, Any]:
        """The fields of the ``cap_exceeded`` refusal it makes, whichever change it refuses (a
        deposit's reversal, a register amendment): one place, so the two cannot drift."""
        return {
            "category": self.category,
            "cap_sqft": self.cap_sqft,
            "credited_sqft": self.credited_sqft,
        }


def over_cap(
    ruleset: Ruleset, before: SiteRegister, after: SiteRegister, categories: set[str]
) -> OverCap | None:
    """The first of ``categories`` (by name) whose credit ``after`` would stand over its cap,
    where the change from ``before`` put it there: its cap falls below its credit, or further
    below it (a site credited over a cap before the register existed may still have its other
    categories changed, or the short one raised), or the category had no area before.

    A buffer's cap counts its wetland only while the wetland's credit stands (docs/domain.md
    §2: a buffer earns credit only beside its wetland credited by a deposit that stands), so
    reversing the wetland's deposit cannot leave its buffer's credit standing beside an area
    merely registered."""
    for name in sorted(categories & set(after.credited)):
        amount = after.credited[name]
        cap, was = _standing_cap(ruleset, after, name), _standing_cap(ruleset, before, name)
        if amount > cap and (cap < was or name not in before.areas):
            return OverCap(name, amount, cap)
    return None


def _standing_cap(ruleset: Ruleset, register: SiteRegister, category: str) -> int:
    base = BUFFER_BASE.get(category)
    if base is not None and register.credited.get(base, 0) <= 0:
        return 0
    return register.cap_sqft(ruleset, category)


def lock_site(session: Session, site_id: str) -> BankSite:
    """The site, locked: its deposits, reversals and amendments take turns, so two of them
    cannot both find room under a cap that has room for one.

    ``FOR NO KEY UPDATE``: a transfer reads the sites of its lots ``FOR KEY SHARE`` at its end
    (so that a freeze is seen), which this does not wait for, so a reversal holding the site and
    then the lots cannot deadlock with a transfer holding lots and then reading the site."""
    site = session.get(
        BankSite, site_id, with_for_update={"key_share": True}, populate_existing=True
    )
    if site is None:
        raise NotFound(f"no bank site {site_id}")
    return site


def amend(
    db: Database,
    ruleset: Ruleset,
    actor: Actor,
    site_id: str,
    *,
    category: str,
    area_sqft: int,
    reason: str,
) -> SiteView:
    """Amend one category's area (board), with a reason.  Never below what the site has
    already credited: the caps the amendment changes (the category's own, and its buffers',
    which follow its wetland's area) must still cover their credit, or at least not fall
    further below it (a site credited over a cap before the register existed may still have
    its other categories amended, or the short one raised); otherwise ``cap_exceeded``, as a
    deposit or a reversal that would leave credit past a Subd. 12 (c) cap is."""
    policy.require_board(actor, "amend a site's register")
    with db.transaction() as session:
        site = lock_site(session, site_id)
        check_areas([{"category": category, "area_sqft": area_sqft}], field="category")
        before = register_of(session, site_id)
        after = SiteRegister({**before.areas, category: area_sqft}, before.credited)
        changed = {category} | {b for b, base in BUFFER_BASE.items() if base == category}
        over = over_cap(ruleset, before, after, changed)
        if over is not None:  # the deposits' Subd. 12 (c) rule, met from the other side
            raise CapExceeded(
                f"the site has already credited {sqft(over.credited_sqft)} of {over.category}; "
                f"an area of {sqft(area_sqft)} for {category} would cap it at "
                f"{sqft(over.cap_sqft)}",
                **over.facts(),
            )
        record(session, site_id, {category: area_sqft}, actor, source="amended", reason=reason)
        return site_view(session, ruleset, site)


@dataclass(frozen=True)
class CreditAreaLine:
    """One category of a site's register as ``GET /bank-sites/{id}`` shows it."""

    category: str
    area_sqft: int
    cap_sqft: int
    credited_sqft: int
    remaining_sqft: int


@dataclass(frozen=True)
class SiteView:
    """A bank site as the API shows it, with its credit register."""

    id: str
    name: str
    holder_id: str
    service_area: int
    county: str
    major_watershed: str | None
    frozen: bool
    created_at: datetime
    credit_areas: list[CreditAreaLine]


def summary(session: Session, ruleset: Ruleset, site_id: str) -> list[CreditAreaLine]:
    """``credit_areas`` as ``GET /bank-sites/{id}`` shows it, in the categories' order."""
    register = register_of(session, site_id)
    out = []
    for category in CATEGORIES:
        if category not in register.areas:
            continue
        cap = register.cap_sqft(ruleset, category)
        done = register.credited.get(category, 0)
        area = register.areas[category]
        out.append(CreditAreaLine(category, area, cap, done, max(0, cap - done)))
    return out


def site_view(session: Session, ruleset: Ruleset, site: BankSite) -> SiteView:
    """The site with its credit register, read now."""
    return SiteView(
        id=site.id,
        name=site.name,
        holder_id=site.holder_id,
        service_area=site.service_area,
        county=site.county,
        major_watershed=site.major_watershed,
        frozen=site.frozen,
        created_at=site.created_at,
        credit_areas=summary(session, ruleset, site.id),
    )


def register_site(
    db: Database,
    ruleset: Ruleset,
    actor: Actor,
    *,
    credit_areas: list[dict[str, Any]],
    **site_fields: Any,
) -> SiteView:
    """Register a bank site (board) with the area of each credited action under its approved
    banking plan, where known; a category left out registers with its first deposit."""
    policy.require_board(actor, "register bank sites")
    areas = check_areas(credit_areas)
    with db.transaction() as session:
        site = create_bank_site(session, ruleset, **site_fields)
        record(session, site.id, areas, actor, source="site_registered")
        return site_view(session, ruleset, site)


def show_site(db: Database, ruleset: Ruleset, actor: Actor, site_id: str) -> SiteView:
    """A bank site (board, or its holder; ``not_found`` for anyone else)."""
    with db.transaction() as session:
        return site_view(session, ruleset, _visible_site(session, actor, site_id))


def _visible_site(session: Session, actor: Actor, site_id: str) -> BankSite:
    """The site, to the board or its holder; ``not_found`` for anyone else."""
    site = get_site(session, site_id)
    if not policy.sees_holdings(actor, site.holder_id):
        raise NotFound(f"no bank site {site_id}")
    return site


def edit_site(
    db: Database, ruleset: Ruleset, actor: Actor, site_id: str, *, reason: str, **changes: Any
) -> SiteView:
    """Correct a bank site's name, county or major watershed (board), with a reason, recorded;
    its holder and service area are sealed."""
    with db.transaction() as session:
        site = party_edits.edit_party(session, actor, BankSite, site_id, changes, reason)
        return site_view(session, ruleset, site)


def status_changes(
    db: Database, actor: Actor, site_id: str
) -> list[status_history.StatusChangeView]:
    """The site's freeze history, first to last: each freeze and unfreeze, with who and when
    (board, or its holder); none while it is as registered."""
    with db.transaction() as session:
        site = _visible_site(session, actor, site_id)
        rows = status_history.history_of(session, site.id)
        return [status_history.StatusChangeView.of(row) for row in rows]


def freeze_site(
    db: Database, ruleset: Ruleset, actor: Actor, site_id: str, frozen: bool
) -> SiteView:
    """Freeze (or unfreeze) every credit that came from the site, wherever it now is (board)."""
    policy.require_board(actor, "freeze bank sites")
    with db.transaction() as session:
        return site_view(session, ruleset, set_site_frozen(session, site_id, frozen, actor))
