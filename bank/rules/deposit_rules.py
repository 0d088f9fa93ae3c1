"""Subd. 12: how much replacement credit a deposit's actions earn (docs/domain.md §2).  Pure.

Which restorations earn credit at all (the categories, Subd. 12 (a) and (b), each category's
precondition) is ``bank.rules.deposit_eligibility``; this module applies it in a fixed order
and caps the credit.  Every number comes from the ``Ruleset`` passed in.  Caps are whole square feet
rounded down (never more credit than the law allows), computed with integers only, and no
action's credit may exceed its own area either.

Order of checks, so that a refusal is always the same for the same request:

1. the shape of every action, in request order (``ValidationFailed``): a known category, and
   positive whole square feet of area and credit;
2. Subd. 12 (a), unless (b) lifts it (``NotEligible``);
3. every action in request order: its category's precondition (``NotEligible``), then its cap
   (``CapExceeded``).  The first failure refuses the whole deposit.  With the site's register,
   every action's precondition and registered area are checked before any cap.

Subd. 12 (c) caps a restoration, not a request: given the bank site's register (``SiteRegister``:
the area of each credited action under its banking plan and the credit already yielded), an
action's area may not exceed its category's registered area (``NotEligible``), and the credit the
site yields in a category, this deposit included, may not exceed the cap on the registered area
(``CapExceeded``).  So the same deposit made twice is refused, and phased releases are accepted up
to the cap.  A buffer's cap is a share of the site's registered wetland area.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import date
from typing import Any, NoReturn

from bank.errors import CapExceeded, ValidationFailed
from bank.rules.deposit_eligibility import (
    BUFFER_BASE,
    CATEGORIES,
    EASEMENT_BUFFER,
    EASEMENT_RESTORATION,
    REPLACEMENT_WETLAND,
    TREATMENT_POND,
    UPLAND_BUFFER,
    VEGETATIVE_COVER,
    ActionRequest,
    DepositFacts,
    check_precondition,
    check_replacement_conditions,
    ineligible,
)
from bank.rules.ruleset import Ruleset
from bank.wording import sqft

__all__ = [
    "CATEGORIES",
    "ActionCredit",
    "ActionRequest",
    "DepositFacts",
    "SiteRegister",
    "cap_sqft",
    "check_replacement_conditions",
    "evaluate_deposit",
]


@dataclass(frozen=True)
class ActionCredit:
    """The credit an action earns, the cap that applied to it, and whether it is restricted."""

    category: str
    area_sqft: int
    credit_sqft: int
    cap_sqft: int
    restricted: bool


@dataclass(frozen=True)
class SiteRegister:
    """A bank site's credit register before a deposit: per category, the area of the credited
    action under the site's banking plan, and the credit the site has yielded so far."""

    areas: Mapping[str, int] = field(default_factory=dict)
    credited: Mapping[str, int] = field(default_factory=dict)
    #: per category credited, the ``completed_on`` of the first standing deposit crediting it:
    #: when that restoration was completed, which a buffer released later is established at
    completed_on: Mapping[str, date] = field(default_factory=dict)

    def with_first_areas(self, actions: list[ActionRequest]) -> SiteRegister:
        """The register once this deposit has registered the categories it credits first: a
        category without a registered area registers the area the deposit states for it."""
        areas = dict(self.areas)
        for category, area in _areas_by_category(actions).items():
            areas.setdefault(category, area)
        return SiteRegister(areas, self.credited, self.completed_on)

    def cap_sqft(self, ruleset: Ruleset, category: str) -> int:
        """Subd. 12 (c)'s cap on the category's whole registered area."""
        whole = ActionRequest(category, self.areas.get(category, 0), 0)
        return cap_sqft(ruleset, whole, dict(self.areas))


def evaluate_deposit(
    ruleset: Ruleset,
    facts: DepositFacts,
    actions: list[ActionRequest],
    site: SiteRegister | None = None,
) -> list[ActionCredit]:
    """Apply Subd. 12 (a), (b) and (c) to a deposit: one ``ActionCredit`` per action, in order.

    Raises ``ValidationFailed`` for a malformed action, ``NotEligible`` when Subd. 12 (a) or a
    category's precondition fails, ``CapExceeded`` when an action asks more than its cap.  The
    first failure refuses the whole deposit (see the module docstring for the order).  With the
    bank site's ``site`` register (already holding this deposit's first areas:
    ``SiteRegister.with_first_areas``) the caps apply to the site's registered areas and what it
    has yielded; without it, to this deposit's own actions.
    """
    for index, action in enumerate(actions):
        _check_shape(ruleset, index, action)
    check_replacement_conditions(facts)
    area_of = dict(site.areas) if site is not None else _areas_by_category(actions)
    if site is not None:  # whether each action may earn credit here, before how much
        in_deposit = {action.category for action in actions}
        for index, action in enumerate(actions):
            _check_on_site(ruleset, facts, index, action, site, in_deposit)
    granted: dict[str, int] = {}
    evaluated = []
    for index, action in enumerate(actions):
        if site is None:
            credit = _evaluate(ruleset, facts, index, action, area_of, granted)
        else:
            credit = _evaluate_on_site(ruleset, facts, index, action, site, granted)
        granted[action.category] = granted.get(action.category, 0) + credit.credit_sqft
        evaluated.append(credit)
    return evaluated


def cap_sqft(
    ruleset: Ruleset, action: ActionRequest, area_of: dict[str, int], granted: int = 0
) -> int:
    """Subd. 12 (c): the most credit ``action`` may earn, in whole square feet rounded down.

    ``area_of`` is the total area per category in the same deposit; ``granted`` is the credit
    already given to earlier actions of a buffer category in the same deposit, since (c)(2) and
    (c)(3) cap the buffer credit as a whole against the wetland it surrounds.  The cap is never
    more than the action's own area, and never below zero.
    """
    pct, base = _cap_basis(ruleset, action, area_of)
    share = base * pct // 100
    if action.category in BUFFER_BASE:
        share -= granted
    return max(0, min(action.area_sqft, share))


# --- internals ---------------------------------------------------------------------------------


def _check_shape(ruleset: Ruleset, index: int, action: ActionRequest) -> None:
    where = f"actions.{index}"
    if action.category not in CATEGORIES:
        raise ValidationFailed(
            f"action {index}: unknown category {action.category!r}",
            {f"{where}.category": [f"one of {', '.join(CATEGORIES)}"]},
        )
    for name in ("area_sqft", "credit_sqft"):
        value = getattr(action, name)
        if not _is_int(value) or value <= 0:
            raise ValidationFailed(
                f"action {index}: {name} must be a positive whole number of square feet",
                {f"{where}.{name}": ["must be a positive integer"]},
            )
    years = action.qualifying_years
    window = ruleset.vegetative_cover_window_years
    if years is not None and (not _is_int(years) or not 0 <= years <= window):
        raise ValidationFailed(
            f"action {index}: qualifying_years counts years out of {window}",
            {f"{where}.qualifying_years": [f"must be a whole number from 0 to {window}"]},
        )


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _areas_by_category(actions: list[ActionRequest]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for action in actions:
        totals[action.category] = totals.get(action.category, 0) + action.area_sqft
    return totals


def _evaluate(
    ruleset: Ruleset,
    facts: DepositFacts,
    index: int,
    action: ActionRequest,
    area_of: dict[str, int],
    granted: dict[str, int],
) -> ActionCredit:
    check_precondition(ruleset, facts, index, action, area_of)
    cap = cap_sqft(ruleset, action, area_of, granted.get(action.category, 0))
    if action.credit_sqft > cap:
        _cap_exceeded(index, action, cap)
    return ActionCredit(
        category=action.category,
        area_sqft=action.area_sqft,
        credit_sqft=action.credit_sqft,
        cap_sqft=cap,
        restricted=CATEGORIES[action.category],
    )


def _evaluate_on_site(
    ruleset: Ruleset,
    facts: DepositFacts,
    index: int,
    action: ActionRequest,
    site: SiteRegister,
    granted: dict[str, int],
) -> ActionCredit:
    category = action.category
    registered = site.areas.get(category, 0)
    own_cap = cap_sqft(ruleset, action, dict(site.areas))
    site_cap = site.cap_sqft(ruleset, category)
    already = site.credited.get(category, 0) + granted.get(category, 0)
    if action.credit_sqft > own_cap:
        _cap_exceeded(index, action, own_cap)
    if already + action.credit_sqft > site_cap:
        raise CapExceeded(
            f"{category} (action {index}): the bank site may yield at most {sqft(site_cap)} of "
            f"{category} credit on its registered area of {sqft(registered)}; {sqft(already)} "
            f"were already credited and {sqft(action.credit_sqft)} were asked",
            category=category,
            cap_sqft=site_cap,
            credited_sqft=already,
            requested_sqft=action.credit_sqft,
            action_index=index,
        )
    return ActionCredit(
        category=category,
        area_sqft=action.area_sqft,
        credit_sqft=action.credit_sqft,
        cap_sqft=min(own_cap, site_cap - already),
        restricted=CATEGORIES[category],
    )


def _check_on_site(
    ruleset: Ruleset,
    facts: DepositFacts,
    index: int,
    action: ActionRequest,
    site: SiteRegister,
    in_deposit: set[str],
) -> None:
    """The category's precondition, and the action's area within the site's registered area."""
    category = action.category
    base = BUFFER_BASE.get(category)
    if base is not None and base not in in_deposit:
        facts = _beside_credited(facts, index, category, base, site)
    check_precondition(ruleset, facts, index, action, dict(site.areas))
    registered = site.areas.get(category, 0)
    if action.area_sqft > registered:
        ineligible(
            index,
            category,
            "area_sqft",
            f"the action's area of {sqft(action.area_sqft)} exceeds the {sqft(registered)} "
            f"registered for {category} on the bank site (Subd. 12 (c) caps the restoration)",
            registered_area_sqft=registered,
        )


def _beside_credited(
    facts: DepositFacts, index: int, category: str, base: str, site: SiteRegister
) -> DepositFacts:
    """A buffer released without its wetland in the same deposit (Subd. 12 (c)(2), (3)): the
    wetland must have been credited on the site by a deposit that stands (an area registered
    but never credited, or credited by a deposit since reversed, restores nothing beside the
    buffer), and the buffer is established at the time of that wetland's replacement, which
    is when the deposit first crediting it says it was completed."""
    completed_on = site.completed_on.get(base)
    if site.credited.get(base, 0) <= 0 or completed_on is None:
        ineligible(
            index,
            category,
            "category",
            f"a {category} earns credit only beside a {base} credited on the bank site (in the "
            "same deposit, or by an earlier deposit that stands)",
            requires=base,
        )
    return replace(facts, completed_on=completed_on)


def _cap_exceeded(index: int, action: ActionRequest, cap: int) -> NoReturn:
    raise CapExceeded(
        f"{action.category} (action {index}) may earn at most {sqft(cap)} of credit; "
        f"{sqft(action.credit_sqft)} were asked",
        category=action.category,
        cap_sqft=cap,
        requested_sqft=action.credit_sqft,
        action_index=index,
    )


def _cap_basis(ruleset: Ruleset, action: ActionRequest, area_of: dict[str, int]) -> tuple[int, int]:
    """(whole percent, base area) of the category's cap."""
    caps = ruleset.caps
    own = action.area_sqft
    category = action.category
    if category == REPLACEMENT_WETLAND:  # (choice: the statute sets no cap)
        return caps.replacement_wetland_pct, own
    if category == VEGETATIVE_COVER:  # (c)(1)
        return caps.vegetative_cover_pct, own
    if category == UPLAND_BUFFER:  # (c)(2)
        return caps.upland_buffer_pct, area_of.get(REPLACEMENT_WETLAND, 0)
    if category == EASEMENT_RESTORATION:  # (c)(3)
        return caps.easement_restoration_pct, own
    if category == EASEMENT_BUFFER:  # (c)(3)
        return caps.easement_buffer_pct, area_of.get(EASEMENT_RESTORATION, 0)
    if category == TREATMENT_POND:  # (c)(4)
        return caps.treatment_pond_pct, own
    raise ValueError(f"unknown category {category!r}")
