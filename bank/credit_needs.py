"""What a replacement plan still takes in bank credits (docs/domain.md §3): the one rule that a
reservation for the plan (``bank.reservations``), the reserve form's choice of plans
(``bank.reservable_plans``) and a withdrawal (``bank.withdrawals``) apply, from the plan's state
and what its withdrawals that no appeal reversed met.

A plan denied takes nothing; nor does one whose requirement withdrawals met in full (until a
revision raises it, Subd. 6 (c)); nor one whose replacement is not bank credits (project-specific
replacement or a monetary payment, which its impact blockers count instead of credits, §5): a
plan's method is set when it is recorded and nothing changes it, so no withdrawal would ever take
credits reserved for such a plan.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bank import wording
from bank.errors import BankError, Conflict, NotEligible
from bank.plan_tables import Plan
from bank.plans import PlanState
from bank.rules import replacement_rules
from bank.withdrawal_tables import Withdrawal, WithdrawalAllocation
from ledger.slices import slices

#: the replacement method whose requirement bank credits meet (``plans.METHODS``)
BANK_CREDITS = "bank_credits"
#: plan outcomes after which nothing more may be reserved for it
CLOSED_OUTCOMES = frozenset({"denied"})


def reservation_refusal(plan: Plan, state: PlanState, met: tuple[int, int]) -> BankError | None:
    """Why a reservation for ``plan`` (its state ``state`` today, ``met`` what its withdrawals
    met) could serve nothing, a withdrawal for the plan never taking its credits; ``None`` when
    it can.  The reserve form offers only the plans this answers ``None`` for."""
    if state.outcome in CLOSED_OUTCOMES:
        return Conflict("the plan was denied: nothing can be reserved for it")
    refused = method_refusal(plan)
    if refused is not None:
        return refused
    return requirement_met(plan, state.area_sqft, met)


def method_refusal(plan: Plan) -> BankError | None:
    """``not_eligible`` when the plan's replacement is not bank credits: credits replace none of
    its impact."""
    if plan.method == BANK_CREDITS:
        return None
    return NotEligible(
        f"the plan's replacement is {plan.method.replace('_', ' ')}, not bank credits: "
        "no credits replace its impact",
        method=plan.method,
    )


def requirement_met(plan: Plan, area_sqft: int, met: tuple[int, int]) -> BankError | None:
    """``conflict`` when withdrawals ``met`` the requirement of an impact of ``area_sqft`` in
    full: nothing is left to withdraw for the plan."""
    ratio = replacement_rules.parse_ratio(plan.replacement_ratio)
    if replacement_rules.remaining_requirement(area_sqft, ratio, met) != (0, 0):
        return None
    required = replacement_rules.required_credit_sqft(area_sqft, ratio)
    return Conflict(
        f"the plan's requirement of {wording.sqft(required)} of credits is met by its withdrawals: "
        "nothing is left to withdraw for it",
        required_sqft=required,
    )


def met_portions(session: Session, plan_id: str) -> tuple[int, int]:
    """(first 1:1, above 1:1) sq ft the plan's withdrawals that no appeal reversed met."""
    return met_portions_of(session, [plan_id])[plan_id]


def met_portions_of(session: Session, plan_ids: Sequence[str]) -> dict[str, tuple[int, int]]:
    """``met_portions`` of each plan of ``plan_ids``, by plan id, with one query per slice of
    them (not one per plan); (0, 0) for a plan nothing was withdrawn for."""
    met = dict.fromkeys(plan_ids, (0, 0))
    for part in slices(list(met)):
        rows = session.execute(
            select(
                Withdrawal.plan_id,
                WithdrawalAllocation.portion,
                func.sum(WithdrawalAllocation.amount_sqft),
            )
            .join(Withdrawal, Withdrawal.id == WithdrawalAllocation.withdrawal_id)
            .where(Withdrawal.plan_id.in_(part), Withdrawal.reversal_transaction_id.is_(None))
            .group_by(Withdrawal.plan_id, WithdrawalAllocation.portion)
        ).all()
        for plan_id, portion, amount in rows:
            first, above = met[plan_id]
            if portion == replacement_rules.FIRST_1_TO_1:
                met[plan_id] = (first + int(amount), above)
            else:
                met[plan_id] = (first, above + int(amount))
    return met
