"""Subd. 12: which restorations earn replacement credit at all (docs/domain.md §2).  Pure.

The six categories of Subd. 12 (c), what the LGU certifies about a restoration as a whole
(Subd. 12 (a) and (b)), and each category's precondition.  How much credit an eligible action
earns, and the order in which a deposit is checked, are ``bank.rules.deposit_rules``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Any, NoReturn

from bank.errors import NotEligible
from bank.rules.ruleset import Ruleset
from bank.text import visible

REPLACEMENT_WETLAND = "replacement_wetland"
VEGETATIVE_COVER = "vegetative_cover"
UPLAND_BUFFER = "upland_buffer"
EASEMENT_RESTORATION = "easement_restoration"
EASEMENT_BUFFER = "easement_buffer"
TREATMENT_POND = "treatment_pond"

#: category → whether its credit is restricted to replacement above a 1:1 ratio
#: (Subd. 12 (c)(2), (3) and (4) say so of buffers, easement buffers and ponds)
CATEGORIES: dict[str, bool] = {
    REPLACEMENT_WETLAND: False,
    VEGETATIVE_COVER: False,
    UPLAND_BUFFER: True,
    EASEMENT_RESTORATION: False,
    EASEMENT_BUFFER: True,
    TREATMENT_POND: True,
}

#: a buffer's cap is a share of the total area of this other category in the same deposit
BUFFER_BASE: dict[str, str] = {
    UPLAND_BUFFER: REPLACEMENT_WETLAND,  # (c)(2) "the replacement wetland area"
    EASEMENT_BUFFER: EASEMENT_RESTORATION,  # (c)(3) "the restored wetland area"
}


@dataclass(frozen=True)
class DepositFacts:
    """What the LGU certified about the restoration as a whole (Subd. 12 (a), (b))."""

    deposit_on: date
    completed_on: date
    designated_for_replacement: bool
    paid_by_performer: bool
    paid_back_with_interest: bool


@dataclass(frozen=True)
class ActionRequest:
    """One action of a deposit, with its category's precondition fields (Subd. 12 (c))."""

    category: str
    area_sqft: int
    credit_sqft: int
    qualifying_years: int | None = None
    established_on: date | None = None
    easement_terminated_on: date | None = None
    associated_project: str | None = None


def check_replacement_conditions(facts: DepositFacts) -> None:
    """Subd. 12 (a): designated for replacement, paid for by its performer, and completed before
    the draining or filling it replaces (checked as: ``completed_on`` not after the deposit date).
    Subd. 12 (b): none of this applies once the owner has paid the performer back with interest.
    """
    if facts.paid_back_with_interest:
        return
    if not facts.designated_for_replacement:
        _refuse_a(
            "designated_for_replacement",
            "the restoration was not specifically designated for replacement",
        )
    if not facts.paid_by_performer:
        _refuse_a(
            "paid_by_performer",
            "the restoration was not paid for by whoever performed it",
        )
    if facts.completed_on > facts.deposit_on:
        _refuse_a(
            "completed_on",
            f"the restoration was completed on {facts.completed_on.isoformat()}, after the "
            f"deposit date {facts.deposit_on.isoformat()}",
        )


def check_precondition(
    ruleset: Ruleset,
    facts: DepositFacts,
    index: int,
    action: ActionRequest,
    area_of: dict[str, int],
) -> None:
    """The category's precondition (Subd. 12 (c)(1) to (4)), and a buffer's wetland beside it:
    ``area_of`` is the area per category in the deposit, or registered on the bank site."""
    category = action.category
    if category == VEGETATIVE_COVER:
        years = action.qualifying_years
        needed = ruleset.vegetative_cover_min_years
        if years is None or years < needed:
            ineligible(
                index,
                category,
                "qualifying_years",
                f"Subd. 12 (c)(1): the wetland must have been cropped, in a crop rotation or set "
                f"aside in {needed} of the {ruleset.vegetative_cover_window_years} years before "
                f"{ruleset.vegetative_cover_reference_date.isoformat()}; "
                + ("no qualifying_years given" if years is None else f"{years} given"),
            )
    elif category == UPLAND_BUFFER:
        if action.established_on != facts.completed_on:
            given = "none" if action.established_on is None else action.established_on.isoformat()
            ineligible(
                index,
                category,
                "established_on",
                "Subd. 12 (c)(2): the buffer must be established at the time of the wetland "
                f"replacement ({facts.completed_on.isoformat()}); established_on is {given}",
            )
    elif category == EASEMENT_RESTORATION:
        ended = action.easement_terminated_on
        if ended is None or ended > facts.deposit_on:
            ineligible(
                index,
                category,
                "easement_terminated_on",
                "Subd. 12 (c)(3): only wetlands restored under terminated easements or contracts "
                "earn credit; the termination date must be given and not after the deposit date",
            )
    elif category == TREATMENT_POND:
        # text that shows nothing (a zero-width space, a bell) names no project
        if not visible(action.associated_project or ""):
            ineligible(
                index,
                category,
                "associated_project",
                "Subd. 12 (c)(4): the pond must be associated with an ongoing or proposed "
                "project that will impact a wetland",
            )
    _check_beside(index, category, area_of)


def _check_beside(index: int, category: str, area_of: dict[str, int]) -> None:
    """A buffer earns credit only beside the wetland it buffers."""
    base = BUFFER_BASE.get(category)
    if base is not None and area_of.get(base, 0) <= 0:
        ineligible(
            index,
            category,
            "category",
            f"a {category} earns credit only beside a {base} action (in the same deposit, or "
            "registered on the bank site)",
            requires=base,
        )


def _refuse_a(field: str, detail: str) -> NoReturn:
    raise NotEligible(f"Subd. 12 (a): {detail}", field=field, clause="Subd. 12 (a)")


def ineligible(index: int, category: str, field: str, detail: str, **extra: Any) -> NoReturn:
    """Refuse action ``index`` of ``category`` (``not_eligible``), naming the ``field``."""
    raise NotEligible(
        f"{category} (action {index}): {detail}",
        category=category,
        field=field,
        action_index=index,
        **extra,
    )
