"""Replacement ratios, required credits, withdrawal allocation, revisions and notice kinds
(docs/domain.md §3, §4).  Pure: exact integer and ``Fraction`` arithmetic, never floats.

Every statute number comes from the ``Ruleset`` passed in.  The one constant here, the 1:1 ratio,
is the statute's own wording (Subd. 12 (c)(2)-(4): "above a 1:1 ratio"), not a tunable number.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Final, Literal

from bank.errors import InsufficientCredits, RatioTooLow, RestrictedCreditMisuse, ValidationFailed
from bank.rules.ruleset import Ruleset
from bank.wording import sqft

Portion = Literal["first_1_to_1", "above_1_to_1"]
FIRST_1_TO_1: Final = "first_1_to_1"
ABOVE_1_TO_1: Final = "above_1_to_1"
NoticeKind = Literal["summary", "full"]

#: a plain decimal: ASCII digits, an optional fraction part, no sign, exponent or spaces
_DECIMAL = re.compile(r"[0-9]{1,6}(?:\.[0-9]{1,6})?", re.ASCII)
_ONE_TO_ONE: Final = Fraction(1)
_RATIO_FIELD = "replacement_ratio"
#: the highest ratio a new plan may state, and the most decimal places it may be written with:
#: beyond them a ratio is a typing error, and its requirement (``ceil(A × r)``) stays far inside 64
#: bits for every impact area the API takes
MAX_RATIO: Final = Fraction(100)
RATIO_DECIMALS: Final = 4


# --- ratios and requirements -------------------------------------------------------------------


def parse_ratio(text: str) -> Fraction:
    """docs/domain.md §3: the LGU's replacement ratio, written as a decimal string ("2", "1.5",
    "1.25"), read exactly as a ``Fraction``.

    Anything else (a float or int object, an exponent, a sign, spaces, a fraction "3/2", zero)
    is ``ValidationFailed``.  Whether the ratio is high enough is ``check_ratio``'s question.
    """
    if not isinstance(text, str) or _DECIMAL.fullmatch(text) is None:
        raise ValidationFailed(
            f"a replacement ratio is a decimal string such as 2 or 1.5, not {text!r}",
            {_RATIO_FIELD: ["not a plain decimal number"]},
        )
    ratio = Fraction(text)
    if ratio <= 0:
        raise ValidationFailed(
            "a replacement ratio must be positive", {_RATIO_FIELD: ["must be positive"]}
        )
    return ratio


def parse_new_ratio(text: str) -> Fraction:
    """The ratio a new plan states: ``parse_ratio``'s, written with at most ``RATIO_DECIMALS``
    decimal places and at most ``MAX_RATIO`` (``ValidationFailed`` otherwise).  A plan already
    recorded is read with ``parse_ratio``, so that one stored before these bounds still reads."""
    ratio = parse_ratio(text)
    decimals = len(text.partition(".")[2])
    if decimals > RATIO_DECIMALS:
        raise ValidationFailed(
            f"a replacement ratio has at most {RATIO_DECIMALS} decimal places, not {decimals}",
            {_RATIO_FIELD: [f"at most {RATIO_DECIMALS} decimal places"]},
        )
    if ratio > MAX_RATIO:
        raise ValidationFailed(
            f"a replacement ratio is at most {MAX_RATIO}, not {text}",
            {_RATIO_FIELD: [f"at most {MAX_RATIO}"]},
        )
    return ratio


def check_ratio(ruleset: Ruleset, ratio: Fraction) -> None:
    """Subd. 12 (c) "above a 1:1 ratio" presumes at least 1:1: a lower ratio is ``RatioTooLow``
    (docs/domain.md §3, choice).  ``ruleset`` is taken so that a later ruleset may set a floor."""
    del ruleset  # the seed ruleset sets no floor other than 1:1
    _require_one_to_one(ratio)


def required_credit_sqft(area_sqft: int, ratio: Fraction) -> int:
    """docs/domain.md §3: an impact of ``A`` sq ft at ratio ``r`` needs ``ceil(A × r)`` sq ft of
    credit, computed exactly (9,001 × 1.5 = 13,501.5 → 13,502)."""
    return math.ceil(Fraction(area_sqft) * ratio)


def required_unrestricted_sqft(area_sqft: int) -> int:
    """Subd. 12 (c)(2)-(4): the first 1:1 portion (``A`` sq ft) only unrestricted credit may
    meet; restricted credit "may only be used for replacement above a 1:1 ratio"."""
    return area_sqft


# --- notices and revisions ----------------------------------------------------------------------


def notice_kind(ruleset: Ruleset, area_sqft: int) -> NoticeKind:
    """Subd. 6 (b): a summary notice for an impact below the small-impact threshold
    (10,000 sq ft in the seed ruleset); Subd. 6 (a): the full application otherwise."""
    return "summary" if area_sqft < ruleset.small_impact_threshold_sqft else "full"


def has_comment_period(ruleset: Ruleset, area_sqft: int) -> bool:
    """Subd. 8: a public comment period, except for impacts below the small-impact threshold
    (10,000 sq ft in the seed ruleset)."""
    return area_sqft >= ruleset.small_impact_threshold_sqft


def revision_counts_as_new(
    ruleset: Ruleset, original_area_sqft: int, revised_area_sqft: int, displacement_ft: int
) -> bool:
    """Subd. 6 (c): a revision is a new application when its area is at least
    ``revision_area_increase_pct`` percent larger ((c)(1); exactly that much counts) or it lies
    more than ``revision_distance_ft`` feet away ((c)(2); exactly that far does not).

    Integer arithmetic: ``revised × 100 >= original × (100 + pct)``.
    """
    larger = revised_area_sqft * 100 >= original_area_sqft * (
        100 + ruleset.revision_area_increase_pct
    )
    farther = displacement_ft > ruleset.revision_distance_ft
    return larger or farther


# --- withdrawals --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Offer:
    """Reserved credits offered to a withdrawal: ``key`` names them (a reservation or one of its
    lot shares) and must be unique among the offers."""

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
    portion: Portion


@dataclass(frozen=True)
class Allocation:
    """How a withdrawal meets its requirement, and what it gives back.

    ``allocations`` in the order they were made; ``used`` and ``released`` hold every offer's key
    (zero when nothing was used or released), so ``used[k] + released[k]`` is offer ``k``'s
    amount.  The allocations add up to ``required_sqft``.
    """

    required_sqft: int
    allocations: list[Allocated] = field(default_factory=list)
    used: dict[str, int] = field(default_factory=dict)
    released: dict[str, int] = field(default_factory=dict)


def remaining_requirement(
    area_sqft: int, ratio: Fraction, met: tuple[int, int] = (0, 0)
) -> tuple[int, int]:
    """(first 1:1 portion, portion above 1:1) still to be met once ``met`` = (first, above) sq ft
    were withdrawn: a revised plan (Subd. 6 (c)) keeps the credits withdrawn for it.  Unrestricted
    credits that met a first 1:1 portion larger than the revised one count above 1:1."""
    required = required_credit_sqft(area_sqft, ratio)
    first = required_unrestricted_sqft(area_sqft)
    first_met, above_met = met
    surplus_first = max(0, first_met - first)
    return max(0, first - first_met), max(0, required - first - above_met - surplus_first)


def allocate_withdrawal(
    area_sqft: int, ratio: Fraction, offered: list[Offer], met: tuple[int, int] = (0, 0)
) -> Allocation:
    """docs/domain.md §3 and Subd. 12 (c)(2)-(4): meet ``ceil(A × r)`` sq ft from ``offered``, less
    what ``met`` (first 1:1, above 1:1) says earlier withdrawals for the plan met.

    Restricted credits go to the portion above 1:1 first (they can serve nothing else), up to
    ``ceil(A × r) − A``; unrestricted credits then meet the first 1:1 portion (``A``) and then what
    is left above 1:1.  Offers are drawn in the order given.  Whatever is left is released.

    Raises ``InsufficientCredits`` (``insufficient_credits``) when the offers total less than the
    requirement, and ``RestrictedCreditMisuse`` when they reach it but their unrestricted part is
    less than ``A``.
    """
    _check_offers(area_sqft, offered)
    _require_one_to_one(ratio)
    first, above_needed = remaining_requirement(area_sqft, ratio, met)
    required = first + above_needed
    _check_enough(offered, required, more=met != (0, 0))
    unrestricted = [offer for offer in offered if not offer.restricted]
    restricted = [offer for offer in offered if offer.restricted]
    unrestricted_total = sum(offer.amount_sqft for offer in unrestricted)
    if unrestricted_total < first:
        raise RestrictedCreditMisuse(
            f"the first 1:1 portion of {sqft(first)} needs unrestricted credit; only "
            f"{sqft(unrestricted_total)} were offered, and restricted credit may only be used "
            "above a 1:1 ratio",
            required_unrestricted_sqft=first,
            offered_unrestricted_sqft=unrestricted_total,
        )

    allocations: list[Allocated] = []
    left = {offer.key: offer.amount_sqft for offer in offered}

    def draw(offers: list[Offer], wanted: int, portion: Portion) -> int:
        """Take up to ``wanted`` sq ft from ``offers`` in order; return how much is still
        wanted."""
        for offer in offers:
            take = min(left[offer.key], wanted)
            if take > 0:
                allocations.append(Allocated(offer.key, offer.credit_class_code, take, portion))
                left[offer.key] -= take
                wanted -= take
        return wanted

    above = draw(restricted, above_needed, ABOVE_1_TO_1)
    unmet_first = draw(unrestricted, first, FIRST_1_TO_1)
    unmet_above = draw(unrestricted, above, ABOVE_1_TO_1)
    if unmet_first or unmet_above:  # the totals were checked above: a broken offer list
        raise ValueError(f"offers left {unmet_first + unmet_above} sq ft unallocated")
    return Allocation(
        required_sqft=required,
        allocations=allocations,
        used={offer.key: offer.amount_sqft - left[offer.key] for offer in offered},
        released=dict(left),
    )


def _check_enough(offered: list[Offer], required: int, *, more: bool) -> None:
    """``insufficient_credits`` when the offers total less than ``required`` (``more``: what is
    left of a requirement earlier withdrawals met in part)."""
    offered_total = sum(offer.amount_sqft for offer in offered)
    if offered_total < required:
        raise InsufficientCredits(
            f"{sqft(offered_total)} of credit were offered; the impact needs {sqft(required)}"
            + (" more" if more else ""),
            available_sqft=offered_total,
            required_sqft=required,
        )


def _check_offers(area_sqft: int, offered: list[Offer]) -> None:
    if isinstance(area_sqft, bool) or not isinstance(area_sqft, int) or area_sqft <= 0:
        raise ValidationFailed(
            "the impact area must be a positive whole number of square feet",
            {"impact_area_sqft": ["must be a positive integer"]},
        )
    keys = [offer.key for offer in offered]
    if len(set(keys)) != len(keys):
        raise ValueError(f"offer keys must be unique: {keys}")
    for offer in offered:
        amount = offer.amount_sqft
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError(f"offer {offer.key}: amount_sqft must be a whole number >= 0")


def _require_one_to_one(ratio: Fraction) -> None:
    if ratio < _ONE_TO_ONE:
        raise RatioTooLow(
            f"a replacement ratio of {_decimal(ratio)}:1 is below 1:1",
            ratio=_decimal(ratio),
            minimum="1",
        )


def _decimal(ratio: Fraction) -> str:
    """``ratio`` as the decimal string it was parsed from when it has one ("0.99"), else "p/q"."""
    whole, rest = divmod(ratio.numerator, ratio.denominator)
    if rest == 0:
        return str(whole)
    for places in range(1, 13):
        scaled = ratio * 10**places
        if scaled.denominator == 1:
            digits = str(abs(scaled.numerator)).rjust(places + 1, "0")
            sign = "-" if ratio < 0 else ""
            return f"{sign}{digits[:-places]}.{digits[-places:]}"
    return str(ratio)
