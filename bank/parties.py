"""Parties and places: account holders, LGUs (with their calendar choices), bank sites, accounts.

Bank service areas are numbered 1..N (practice: ten).  A bank account has a human ``number`` and a
status: open, frozen (accepts deposits, nothing out: DOMAIN.md §7) or closed.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, TypeVar

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Integer,
    String,
    Text,
    select,
    update,
)
from sqlalchemy.orm import Mapped, Session, mapped_column

from bank import policy
from bank.access import Actor
from bank.errors import Conflict, NotFound, ValidationFailed
from bank.ids import new_id
from bank.ruleset import Ruleset
from ledger import clock
from ledger.schema import Base

R = TypeVar("R", bound=Base)

LGU_KINDS = ("county", "city", "township", "watershed_district", "swcd", "state_agency")
ACCOUNT_STATUSES = ("open", "frozen", "closed")


class Holder(Base):
    """A bank account holder."""

    __tablename__ = "holders"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    email: Mapped[str | None] = mapped_column(String(300))
    address: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class Lgu(Base):
    """A local government unit; it chooses whether to observe two holidays (645.44 subd. 5)."""

    __tablename__ = "lgus"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    kind: Mapped[str] = mapped_column(String(40))
    observes_indigenous_peoples_day: Mapped[bool] = mapped_column(Boolean, default=False)
    observes_friday_after_thanksgiving: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class BankSite(Base):
    """Where credits come from; freezing it freezes its credits wherever they now sit."""

    __tablename__ = "bank_sites"

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    name: Mapped[str] = mapped_column(String(300))
    holder_id: Mapped[str] = mapped_column(ForeignKey("holders.id"))
    service_area: Mapped[int] = mapped_column(Integer)
    county: Mapped[str] = mapped_column(String(100))
    major_watershed: Mapped[str | None] = mapped_column(String(200))
    frozen: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class BankAccount(Base):
    """A holder's account in the wetland bank."""

    __tablename__ = "bank_accounts"
    __table_args__ = (CheckConstraint("status IN ('open', 'frozen', 'closed')", name="status"),)

    id: Mapped[str] = mapped_column(String(40), primary_key=True)
    number: Mapped[str] = mapped_column(String(20), unique=True)
    holder_id: Mapped[str] = mapped_column(ForeignKey("holders.id"), index=True)
    service_area: Mapped[int] = mapped_column(Integer)
    county: Mapped[str] = mapped_column(String(100))
    name: Mapped[str | None] = mapped_column(String(300))
    status: Mapped[str] = mapped_column(String(10), default="open")
    #: how many lots the account has had: the next lot's label (A, B, ..., Z, AA, ...)
    lot_count: Mapped[int] = mapped_column(BigInteger, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


class AccountNumber(Base):
    """Issues human account numbers in order (a one-row counter, locked by its UPDATE)."""

    __tablename__ = "account_numbers"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    last: Mapped[int] = mapped_column(BigInteger, default=0)


def create_holder(session: Session, *, name: str, email: str | None, address: str | None) -> Holder:
    """Register an account holder."""
    holder = Holder(
        id=new_id("hld"), name=name, email=email, address=address, created_at=clock.utcnow()
    )
    session.add(holder)
    session.flush()
    return holder


def create_lgu(
    session: Session,
    *,
    name: str,
    kind: str,
    observes_indigenous_peoples_day: bool = False,
    observes_friday_after_thanksgiving: bool = False,
) -> Lgu:
    """Register an LGU with its choices of the two optional holidays (both off unless set)."""
    if kind not in LGU_KINDS:
        raise ValidationFailed("unknown LGU kind", {"kind": [f"one of {', '.join(LGU_KINDS)}"]})
    lgu = Lgu(
        id=new_id("lgu"),
        name=name,
        kind=kind,
        observes_indigenous_peoples_day=observes_indigenous_peoples_day,
        observes_friday_after_thanksgiving=observes_friday_after_thanksgiving,
        created_at=clock.utcnow(),
    )
    session.add(lgu)
    session.flush()
    return lgu


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
    """Register a bank site in a bank service area."""
    get_holder(session, holder_id, field="holder_id")
    check_service_area(ruleset, service_area)
    site = BankSite(
        id=new_id("site"),
        name=name,
        holder_id=holder_id,
        service_area=service_area,
        county=county,
        major_watershed=major_watershed,
        frozen=False,
        created_at=clock.utcnow(),
    )
    session.add(site)
    session.flush()
    return site


def open_account(
    session: Session,
    ruleset: Ruleset,
    *,
    holder_id: str,
    service_area: int,
    county: str,
    name: str | None = None,
) -> BankAccount:
    """Open a bank account for a holder, numbered ``WB-000001`` onwards."""
    get_holder(session, holder_id, field="holder_id")
    check_service_area(ruleset, service_area)
    account = BankAccount(
        id=new_id("acct"),
        number=_next_account_number(session),
        holder_id=holder_id,
        service_area=service_area,
        county=county,
        name=name,
        status="open",
        lot_count=0,
        created_at=clock.utcnow(),
    )
    session.add(account)
    session.flush()
    return account


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


def set_account_status(session: Session, account_id: str, status: str) -> BankAccount:
    """Freeze, unfreeze or close an account (board).

    The row is locked ``FOR UPDATE``: a write moving credits out confirms the account's status
    under ``FOR KEY SHARE`` as its last statement (``transfers.confirm_can_send``), so it either
    commits before this change or sees it and is refused.
    """
    account = session.get(BankAccount, account_id, with_for_update=True)
    if account is None:
        raise NotFound(f"no account {account_id}")
    if account.status == "closed":
        raise Conflict("a closed account cannot change status", status=account.status)
    account.status = status
    return account


def set_site_frozen(session: Session, site_id: str, frozen: bool) -> BankSite:
    """Freeze or unfreeze a bank site: its credits, wherever they are, follow.

    Locked ``FOR UPDATE``, as ``set_account_status``: a write drawing on the site's lots confirms
    the site is not frozen under ``FOR KEY SHARE`` as its last statement.
    """
    site = session.get(BankSite, site_id, with_for_update=True)
    if site is None:
        raise NotFound(f"no bank site {site_id}")
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


def as_dict(row: Any, *names: str) -> dict[str, Any]:
    """The named attributes of a row, for the HTTP layer to serialize."""
    return {name: getattr(row, name) for name in names}
