"""Replacement ratios, required credits, withdrawal allocation and revisions (DOMAIN.md §3, §4).
Pure."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction

from bank.errors import RatioTooLow, RestrictedCreditMisuse, ValidationFailed
from bank.ruleset import Ruleset
from ledger.errors import InsufficientFunds

_DECIMAL = re.compile(r"^\d{1,6}(\.\d{1,6})?$")
FIRST, ABOVE = "first_1_to_1", "above_1_to_1"


def parse_ratio(text: str) -> Fraction:
    """A ratio written as a decimal string ("2", "1.5"): exact, never a float."""
    cleaned = text.strip()
    if not _DECIMAL.match(cleaned):
        raise ValidationFailed(
            "a ratio is a decimal string such as 2 or 1.5",
            {"replacement_ratio": ["not a decimal number"]},
        )
    ratio = Fraction(cleaned)
    if ratio <= 0:
        raise ValidationFailed("a ratio is positive", {"replacement_ratio": ["must be positive"]})
    return ratio


def check_ratio(ruleset: Ruleset, ratio: Fraction) -> None:
    """Below 1:1 is refused (choice: "above a 1:1 ratio" presumes at least 1:1)."""
    if ratio < 1:
        raise RatioTooLow(f"a replacement ratio of {ratio} is below 1:1", ratio=str(ratio))


def required_credit_sqft(area_sqft: int, ratio: Fraction) -> int:
    """``ceil(A × r)`` square feet of credit."""
    return math.ceil(area_sqft * ratio)


def required_unrestricted_sqft(area_sqft: int) -> int:
    """The first 1:1 portion, which only unrestricted credits may meet (Subd. 12 (c))."""
    return area_sqft


def notice_kind(ruleset: Ruleset, area_sqft: int) -> str:
    """Subd. 6 (b): a summary notice below 10,000 sq ft, else the full application."""
    return "summary" if area_sqft < ruleset.small_impact_threshold_sqft else "full"


def has_comment_period(ruleset: Ruleset, area_sqft: int) -> bool:
    """Subd. 8: a 30-day comment period, except for impacts below 10,000 sq ft."""
    return area_sqft >= ruleset.small_impact_threshold_sqft


def revision_counts_as_new(
    ruleset: Ruleset, original_area_sqft: int, revised_area_sqft: int, displacement_ft: int
) -> bool:
    """Subd. 6 (c): at least 10% larger (exactly 10% counts), or more than 500 ft away."""
    larger = revised_area_sqft * 100 >= original_area_sqft * (
        100 + ruleset.revision_area_increase_pct
    )
    return larger or displacement_ft > ruleset.revision_distance_ft


@dataclass(frozen=True)
class Offer:
    """Reserved credits offered to a withdrawal."""

    key: str
    restricted: bool
    amount_sqft: int
    credit_class_code: str


@dataclass(frozen=True)
class Allocated:
    """Some credits of one offer meeting one portion of the requirement."""

    key: str
    credit_class_code: str
    amount_sqft: int
    portion: str


@dataclass
class Allocation:
    """How a withdrawal meets the requirement, and what it releases."""

    allocations: list[Allocated] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)
    released: dict[str, int] = field(default_factory=dict)


def allocate_withdrawal(area_sqft: int, ratio: Fraction, offers: list[Offer]) -> Allocation:
    """DOMAIN.md §3: restricted credits go to the part above 1:1 first (they can serve nothing
    else); unrestricted credits meet the first 1:1, then the rest; the excess is released."""
    required = required_credit_sqft(area_sqft, ratio)
    total = sum(o.amount_sqft for o in offers)
    if total < required:
        raise InsufficientFunds(
            f"{total} sq ft reserved, {required} required",
            available_sqft=total,
            requested_sqft=required,
        )
    above_left = required - area_sqft
    result = Allocation()
    for offer in (o for o in offers if o.restricted):
        above_left -= _take(result, offer, above_left, ABOVE)
    unrestricted = [o for o in offers if not o.restricted]
    if sum(o.amount_sqft for o in unrestricted) < area_sqft:
        raise RestrictedCreditMisuse(
            f"only {sum(o.amount_sqft for o in unrestricted)} sq ft of unrestricted credit for a "
            f"first 1:1 of {area_sqft} sq ft",
            required_unrestricted_sqft=area_sqft,
        )
    first_left = area_sqft
    for offer in unrestricted:
        first_left -= _take(result, offer, first_left, FIRST)
        above_left -= _take(result, offer, above_left, ABOVE)
    for offer in offers:
        result.released[offer.key] = offer.amount_sqft - result.used.get(offer.key, 0)
    return result


def _take(result: Allocation, offer: Offer, wanted: int, portion: str) -> int:
    left = offer.amount_sqft - result.used.get(offer.key, 0)
    take = min(left, max(wanted, 0))
    if take > 0:
        result.allocations.append(Allocated(offer.key, offer.credit_class_code, take, portion))
        result.used[offer.key] = result.used.get(offer.key, 0) + take
    return take
