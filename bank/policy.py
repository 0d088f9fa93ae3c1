"""Who may see or act on which record: one answer for the API, the pages and the use cases.

Three roles hold tokens (docs/http.md "Authentication and roles"): board staff see and do
everything the statute gives the board; an LGU sees the plans it decides and what hangs off them
(reservations for them, payments, securities, notices); a holder sees its own accounts, bank
sites and what draws on them.  A record the caller may not see is answered as if it did not
exist (``not_found``), so ids of other parties' records cannot be probed; an action on a record
the caller may see but not change is ``forbidden``.

Each question is a predicate here, answered from the record's owner ids, so a use case asks it
after loading the record, a listing turns it into a query condition, and a page hides a link.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from bank.errors import Forbidden, ValidationFailed

if TYPE_CHECKING:
    from bank.access import Actor

BOARD = "board"
LGU = "lgu"
HOLDER = "holder"
ROLES = (BOARD, LGU, HOLDER)


def sees_plan(actor: Actor, plan_lgu_id: str | None) -> bool:
    """A plan, and what is recorded on it: the board, or the plan's LGU."""
    return actor.is_board or (actor.lgu_id is not None and actor.lgu_id == plan_lgu_id)


def sees_holdings(actor: Actor, holder_id: str | None) -> bool:
    """A holder's record, accounts, bank sites and deposits: the board, or that holder."""
    return actor.is_board or (actor.holder_id is not None and actor.holder_id == holder_id)


def sees_reservation(
    actor: Actor, holder_id: str | None, plan_lgu_id: str | None, *, acting: bool = False
) -> bool:
    """A reservation: the board and the account's holder see and act on it; the LGU of the plan
    it is for only sees it."""
    if sees_holdings(actor, holder_id):
        return True
    return not acting and sees_plan(actor, plan_lgu_id)


def lists_accounts(actor: Actor) -> bool:
    """Account lists and pages of balances are the board's and holders'."""
    return actor.role in (BOARD, HOLDER)


def lists_plans(actor: Actor) -> bool:
    """Plan lists are the board's and LGUs'."""
    return actor.role in (BOARD, LGU)


def own_holder(actor: Actor) -> str | None:
    """The holder a listing keeps to: ``None`` (every holder) for the board."""
    return None if actor.is_board else actor.holder_id


def own_lgu(actor: Actor) -> str | None:
    """The LGU a listing keeps to: ``None`` (every LGU) for the board."""
    return None if actor.is_board else actor.lgu_id


def plan_lgu_for(actor: Actor, requested: str | None) -> str:
    """The LGU a new plan is recorded for: an LGU records its own; the board names one."""
    lgu_id = requested if actor.is_board else actor.lgu_id
    if not lgu_id:
        raise ValidationFailed("name the plan's LGU", {"lgu_id": ["required for the board"]})
    return lgu_id


def require_board(actor: Actor, doing: str) -> None:
    """Refuse (``forbidden``) what only board staff may do, saying what it was."""
    if not actor.is_board:
        raise Forbidden(f"only board staff {doing}")
