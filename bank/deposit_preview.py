"""What a deposit would credit, shown before it is posted (the board's deposit form).

A preview applies the same checks and Subd. 12 rules as ``bank.deposits.make_deposit`` to the
same request, on the bank site's register as it stands, and writes nothing: per action, its
category, whether its credit is restricted to replacement above a 1:1 ratio, the cap Subd. 12
(c) puts on the site's registered area of the category, what the site has credited so far (this
deposit's earlier actions included), and what is left.  A request the rules refuse is still
previewed: the lines show the figures and ``refusal`` says what posting it would answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from bank import deposits, policy, site_register
from bank.access import Actor
from bank.errors import BankError
from bank.rules.deposit_rules import (
    CATEGORIES,
    ActionRequest,
    SiteRegister,
    cap_sqft,
    evaluate_deposit,
)
from bank.rules.ruleset import Ruleset
from ledger.db import Database


@dataclass(frozen=True)
class ActionPreview:
    """One action of the deposit against the site's register."""

    category: str
    #: Subd. 12 (c)(2)-(4): the credit may serve only replacement above a 1:1 ratio
    restricted: bool
    area_sqft: int
    credit_sqft: int
    #: the category's area on the site's register (this deposit registers it when it is new)
    registered_area_sqft: int
    registered_by_this_deposit: bool
    #: Subd. 12 (c)'s cap on the whole registered area
    cap_sqft: int
    #: the site's credit in the category so far, this deposit's earlier actions included
    credited_sqft: int
    remaining_sqft: int
    #: the most this action may earn on its own area (never more than the area)
    action_cap_sqft: int


@dataclass(frozen=True)
class DepositPreview:
    """The deposit as it would post: its lines, and the refusal posting it would meet."""

    account_id: str
    bank_site_id: str
    actions: list[ActionPreview]
    total_credit_sqft: int
    refusal: BankError | None


def preview(
    db: Database, ruleset: Ruleset, actor: Actor, request: deposits.DepositRequest
) -> DepositPreview:
    """The deposit ``request`` as ``post_deposit`` would make it (board), written nowhere.

    A refusal about the account, site, banking plan's LGU or dates is raised as posting would
    raise it; a refusal of Subd. 12's rules comes back in ``refusal``, beside the figures."""
    policy.require_board(actor, "deposit credits")
    with db.transaction() as session:
        _account, site = deposits.check_request(session, request, lock=False)
        actions = list(request.actions)
        before = site_register.register_of(session, site.id)
        register = before.with_first_areas(actions)
        refusal = None
        try:
            evaluate_deposit(ruleset, deposits.facts_of(request), actions, register)
        except BankError as refused:
            refusal = refused
        lines = _lines(ruleset, actions, before, register)
    return DepositPreview(
        account_id=request.account_id,
        bank_site_id=site.id,
        actions=lines,
        total_credit_sqft=sum(action.credit_sqft for action in actions),
        refusal=refusal,
    )


def _lines(
    ruleset: Ruleset,
    actions: list[ActionRequest],
    before: SiteRegister,
    register: SiteRegister,
) -> list[ActionPreview]:
    """Each action of a known category, in order, as ``evaluate_deposit`` caps it on the site."""
    granted: dict[str, int] = {}
    out = []
    for action in actions:
        category = action.category
        if category not in CATEGORIES:
            continue  # the refusal names it
        cap = register.cap_sqft(ruleset, category)
        already = register.credited.get(category, 0) + granted.get(category, 0)
        out.append(
            ActionPreview(
                category=category,
                restricted=CATEGORIES[category],
                area_sqft=action.area_sqft,
                credit_sqft=action.credit_sqft,
                registered_area_sqft=register.areas.get(category, 0),
                registered_by_this_deposit=category not in before.areas,
                cap_sqft=cap,
                credited_sqft=already,
                remaining_sqft=max(0, cap - already),
                action_cap_sqft=cap_sqft(ruleset, action, dict(register.areas)),
            )
        )
        granted[category] = granted.get(category, 0) + action.credit_sqft
    return out
