"""Subd. 12: which restorations earn replacement credit, and how much (DOMAIN.md §2).  Pure.

Caps are whole square feet rounded down (never more credit than the law allows), and no action's
credit may exceed its own area either.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from bank.errors import CapExceeded, NotEligible, ValidationFailed
from bank.ruleset import Ruleset

#: category → restricted to replacement above a 1:1 ratio (Subd. 12 (c)(2), (3), (4))
CATEGORIES: dict[str, bool] = {
    "replacement_wetland": False,
    "vegetative_cover": False,
    "upland_buffer": True,
    "easement_restoration": False,
    "easement_buffer": True,
    "treatment_pond": True,
}


@dataclass(frozen=True)
class DepositFacts:
    """What the LGU certified about the restoration as a whole."""

    deposit_on: date
    completed_on: date
    designated_for_replacement: bool
    paid_by_performer: bool
    paid_back_with_interest: bool


@dataclass(frozen=True)
class ActionRequest:
    """One action of a deposit, with its category's precondition fields."""

    category: str
    area_sqft: int
    credit_sqft: int
    qualifying_years: int | None = None
    established_on: date | None = None
    easement_terminated_on: date | None = None
    associated_project: str | None = None


@dataclass(frozen=True)
class ActionCredit:
    """The credit an action earns, the cap that applied, and whether it is restricted."""

    category: str
    area_sqft: int
    credit_sqft: int
    cap_sqft: int
    restricted: bool


def evaluate_deposit(
    ruleset: Ruleset, facts: DepositFacts, actions: list[ActionRequest]
) -> list[ActionCredit]:
    """Apply Subd. 12 (a)–(c) to every action, in order; the first failure refuses them all."""
    check_replacement_conditions(facts)
    totals = _areas_by_category(actions)
    return [_evaluate(ruleset, facts, action, totals) for action in actions]


def check_replacement_conditions(facts: DepositFacts) -> None:
    """Subd. 12 (a): designated for replacement, paid for by its performer, and completed before
    the draining or filling it replaces; (b): none of this applies once the owner has paid the
    performer back with interest."""
    if facts.paid_back_with_interest:
        return
    if not facts.designated_for_replacement:
        raise NotEligible(
            "Subd. 12 (a): not specifically designated for replacement",
            condition="designated_for_replacement",
        )
    if not facts.paid_by_performer:
        raise NotEligible(
            "Subd. 12 (a): not paid for by whoever performed it", condition="paid_by_performer"
        )
    if facts.completed_on > facts.deposit_on:
        raise NotEligible(
            "Subd. 12 (a): not completed before the deposit", condition="completed_on"
        )


def _areas_by_category(actions: list[ActionRequest]) -> dict[str, int]:
    totals: dict[str, int] = {}
    for action in actions:
        totals[action.category] = totals.get(action.category, 0) + action.area_sqft
    return totals


def _evaluate(
    ruleset: Ruleset, facts: DepositFacts, action: ActionRequest, totals: dict[str, int]
) -> ActionCredit:
    if action.category not in CATEGORIES:
        raise ValidationFailed("unknown category", {"category": [action.category]})
    if action.area_sqft <= 0 or action.credit_sqft <= 0:
        raise ValidationFailed(
            "areas and credits are positive whole square feet", {"area_sqft": ["must be positive"]}
        )
    _check_precondition(ruleset, facts, action)
    _check_base_exists(action, totals)
    pct, base = _cap_basis(ruleset, action, totals)
    cap = min(action.area_sqft, base * pct // 100)
    if action.credit_sqft > cap:
        raise CapExceeded(
            f"{action.category}: at most {cap} sq ft of credit, {action.credit_sqft} asked",
            category=action.category,
            cap_sqft=cap,
            requested_sqft=action.credit_sqft,
        )
    return ActionCredit(
        action.category, action.area_sqft, action.credit_sqft, cap, CATEGORIES[action.category]
    )


def _cap_basis(ruleset: Ruleset, action: ActionRequest, totals: dict[str, int]) -> tuple[int, int]:
    """(percent, base area) of the category's cap."""
    caps = ruleset.caps
    own = action.area_sqft
    return {
        "replacement_wetland": (caps.replacement_wetland_pct, own),
        "vegetative_cover": (caps.vegetative_cover_pct, own),  # (c)(1)
        "upland_buffer": (caps.upland_buffer_pct, totals.get("replacement_wetland", 0)),  # (c)(2)
        "easement_restoration": (caps.easement_restoration_pct, own),  # (c)(3)
        "easement_buffer": (caps.easement_buffer_pct, totals.get("easement_restoration", 0)),
        "treatment_pond": (caps.treatment_pond_pct, own),  # (c)(4)
    }[action.category]


def _check_precondition(ruleset: Ruleset, facts: DepositFacts, action: ActionRequest) -> None:
    category = action.category
    if category == "vegetative_cover":
        years = action.qualifying_years
        if years is None or not years <= ruleset.vegetative_cover_window_years:
            _ineligible(category, "qualifying_years", "give 0 to 10 qualifying years")
        assert years is not None
        if years < ruleset.vegetative_cover_min_years:
            _ineligible(
                category,
                "qualifying_years",
                f"Subd. 12 (c)(1): cropped in {years} of the "
                f"{ruleset.vegetative_cover_window_years} years before "
                f"{ruleset.vegetative_cover_reference_date.isoformat()}; "
                f"{ruleset.vegetative_cover_min_years} needed",
            )
    elif category == "upland_buffer":
        if action.established_on != facts.completed_on:
            _ineligible(
                category,
                "established_on",
                "Subd. 12 (c)(2): the buffer must be established at the time of the "
                "wetland replacement",
            )
    elif category == "easement_restoration":
        if (
            action.easement_terminated_on is None
            or action.easement_terminated_on > facts.deposit_on
        ):
            _ineligible(
                category,
                "easement_terminated_on",
                "Subd. 12 (c)(3): only wetlands under terminated easements or contracts",
            )
    elif category == "treatment_pond" and not (action.associated_project or "").strip():
        _ineligible(
            category,
            "associated_project",
            "Subd. 12 (c)(4): the pond must be associated with a project impacting a wetland",
        )


def _check_base_exists(action: ActionRequest, totals: dict[str, int]) -> None:
    """A buffer's cap is a share of a wetland in the same deposit: without one, no credit."""
    needs = {"upland_buffer": "replacement_wetland", "easement_buffer": "easement_restoration"}
    base = needs.get(action.category)
    if base and not totals.get(base):
        _ineligible(action.category, "category", f"no {base} action in the same deposit")


def _ineligible(category: str, field: str, detail: str) -> None:
    raise NotEligible(f"{category}: {detail}", category=category, field=field)
