"""Parties and places: account holders, LGUs (with their calendar choices), bank sites, accounts.

The board registers holders and LGUs and may read each of them; a holder may read its own record,
and any token an LGU's (public reference data).  The tables are in ``bank.party_tables``.
"""

from __future__ import annotations

from typing import TypeVar

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from bank import policy, status_history
from bank.access import Actor
from bank.errors import Conflict, NotFound, ValidationFailed, found
from bank.ids import new_id
from bank.party_tables import AccountNumber
from bank.party_tables import BankAccount as BankAccount
from bank.party_tables import BankSite as BankSite
from bank.party_tables import Holder as Holder
from bank.party_tables import Lgu as Lgu
from bank.rules.ruleset import Ruleset
from ledger import clock
from ledger.db import Database
from ledger.schema import Base

R = TypeVar("R", bound=Base)
P = TypeVar("P", BankSite, BankAccount)

LGU_KINDS = ("county", "city", "township", "watershed_district", "swcd", "state_agency")
ACCOUNT_STATUSES = ("open", "frozen", "closed")


def create_holder(
    db: Database, actor: Actor, *, name: str, email: str | None, address: str | None
) -> Holder:
    """Register an account holder (board)."""
    policy.require_board(actor, "register holders")
    with db.transaction() as session:
        holder = Holder(
            id=new_id("hld"), name=name, email=email, address=address, created_at=clock.utcnow()
        )
        return _added(session, holder)


def create_lgu(
    db: Database,
    actor: Actor,
    *,
    name: str,
    kind: str,
    observes_indigenous_peoples_day: bool = False,
    observes_friday_after_thanksgiving: bool = False,
) -> Lgu:
    """Register an LGU (board) with its choices of the two optional holidays (both off unless
    set)."""
    policy.require_board(actor, "register LGUs")
    if kind not in LGU_KINDS:
        raise ValidationFailed("unknown LGU kind", {"kind": [f"one of {', '.join(LGU_KINDS)}"]})
    with db.transaction() as session:
        lgu = Lgu(
            id=new_id("lgu"),
            name=name,
            kind=kind,
            observes_indigenous_peoples_day=observes_indigenous_peoples_day,
            observes_friday_after_thanksgiving=observes_friday_after_thanksgiving,
            created_at=clock.utcnow(),
        )
        return _added(session, lgu)


def _added(session: Session, row: R) -> R:
    """``row``, added and flushed (its constraints checked now)."""
    session.add(row)
    session.flush()
    return row


def show_holder(db: Database, actor: Actor, holder_id: str) -> Holder:
    """A holder (board, or the holder itself; ``not_found`` for anyone else)."""
    if not policy.sees_holdings(actor, holder_id):
        raise NotFound(f"no holder {holder_id}")
    with db.transaction() as session:
        return get_holder(session, holder_id)


def show_lgu(db: Database, actor: Actor, lgu_id: str) -> Lgu:
    """An LGU: public reference data for any token."""
    with db.transaction() as session:
        return get_lgu(session, lgu_id)


def create_bank_site(
    session: Session,
    ruleset: Ruleset,
    *,
    name: str,
    holder_id: str,
    service_area: int,
    county: str,
    major_watershed: str | None = None,
) -> BankSite:
    """Register a bank site in a bank service area, unfrozen (as its history, empty, says)."""
    site = BankSite(
        id=new_id("site"),
        name=name,
        holder_id=holder_id,
        county=county,
        major_watershed=major_watershed,
        frozen=False,
    )
    return _placed(session, ruleset, site, service_area)


def open_account(
    session: Session,
    ruleset: Ruleset,
    *,
    holder_id: str,
    service_area: int,
    county: str,
    name: str | None = None,
) -> BankAccount:
    """Open a bank account for a holder, numbered ``WB-000001`` onwards: ``open`` (as its
    history, empty, says)."""
    account = BankAccount(
        id=new_id("acct"), holder_id=holder_id, county=county, name=name, status="open", lot_count=0
    )
    return _placed(session, ruleset, account, service_area)


def _placed(session: Session, ruleset: Ruleset, row: P, service_area: int) -> P:
    """A new site or account of an existing holder in a bank service area, added; an account
    takes the next number once both are known good."""
    get_holder(session, row.holder_id, field="holder_id")
    check_service_area(ruleset, service_area)
    row.service_area, row.created_at = service_area, clock.utcnow()
    if isinstance(row, BankAccount):
        row.number = _next_account_number(session)
    return _added(session, row)


def _next_account_number(session: Session) -> str:
    if session.get(AccountNumber, 1) is None:
        session.add(AccountNumber(id=1, last=0))
        session.flush()
    number = session.execute(
        update(AccountNumber)
        .where(AccountNumber.id == 1)
        .values(last=AccountNumber.last + 1)
        .returning(AccountNumber.last)
    ).scalar_one()
    return f"WB-{number:06d}"


def check_service_area(ruleset: Ruleset, service_area: int) -> None:
    """Bank service areas are numbered 1..10 (practice)."""
    if not 1 <= service_area <= ruleset.service_area_count:
        raise ValidationFailed(
            "no such bank service area",
            {"service_area": [f"must be 1 to {ruleset.service_area_count}"]},
        )


def get_holder(session: Session, holder_id: str, *, field: str | None = None) -> Holder:
    """The holder, or ``not_found`` (``validation_error`` naming ``field`` when it is an input)."""
    return _get(session, Holder, holder_id, "holder", field)


def get_lgu(session: Session, lgu_id: str, *, field: str | None = None) -> Lgu:
    """The LGU, or ``not_found`` / ``validation_error``."""
    return _get(session, Lgu, lgu_id, "LGU", field)


def get_site(session: Session, site_id: str, *, field: str | None = None) -> BankSite:
    """The bank site, or ``not_found`` / ``validation_error``."""
    return _get(session, BankSite, site_id, "bank site", field)


def _get(session: Session, model: type[R], ident: str, what: str, field: str | None) -> R:
    row = session.get(model, ident)
    if row is not None:
        return row
    if field:
        raise ValidationFailed(f"no {what} {ident}", {field: [f"no such {what}"]})
    raise NotFound(f"no {what} {ident}")


def check_token_party(
    session: Session, role: str, lgu_id: str | None, holder_id: str | None
) -> None:
    """A token for an LGU or a holder must name one that exists."""
    if role == "lgu" and lgu_id:
        get_lgu(session, lgu_id, field="lgu_id")
    if role == "holder" and holder_id:
        get_holder(session, holder_id, field="holder_id")


def visible_account(session: Session, actor: Actor, account_id: str) -> BankAccount:
    """The account if the caller may see it (board, or its holder); ``not_found`` otherwise."""
    account = session.get(BankAccount, account_id)
    if account is None or not policy.sees_holdings(actor, account.holder_id):
        raise NotFound(f"no account {account_id}")
    return account


def set_account_status(session: Session, account_id: str, status: str, actor: Actor) -> BankAccount:
    """Freeze, unfreeze or close an account (board), recording the change in its history (a
    status set to the one it has is no change, and records nothing).

    The row is locked ``FOR UPDATE``: a write moving credits out confirms the account's status
    under ``FOR KEY SHARE`` as its last statement (``lot_picking.confirm_can_send``), so it either
    commits before this change or sees it and is refused.
    """
    account = found(
        session.get(BankAccount, account_id, with_for_update=True), f"no account {account_id}"
    )
    if account.status == "closed":
        raise Conflict("a closed account cannot change status", status=account.status)
    if account.status != status:
        status_history.record(
            session, status_history.ACCOUNT, account.id, account.status, status, actor
        )
        account.status = status
    return account


def set_site_frozen(session: Session, site_id: str, frozen: bool, actor: Actor) -> BankSite:
    """Freeze or unfreeze a bank site: its credits, wherever they are, follow; the change is
    recorded in its history (none when it already was).

    Locked ``FOR UPDATE``, as ``set_account_status``: a write drawing on the site's lots confirms
    the site is not frozen under ``FOR KEY SHARE`` as its last statement.
    """
    site = found(session.get(BankSite, site_id, with_for_update=True), f"no bank site {site_id}")
    if site.frozen != frozen:
        status_history.record(
            session,
            status_history.SITE,
            site.id,
            status_history.site_status(site.frozen),
            status_history.site_status(frozen),
            actor,
        )
        site.frozen = frozen
    return site


def holder_accounts(
    session: Session, holder_id: str | None, limit: int | None = None
) -> list[BankAccount]:
    """Every account (``holder_id=None``), or one holder's, in opening order; at most ``limit``."""
    query = select(BankAccount).order_by(BankAccount.created_at, BankAccount.id).limit(limit)
    if holder_id is not None:
        query = query.where(BankAccount.holder_id == holder_id)
    return list(session.execute(query).scalars())
