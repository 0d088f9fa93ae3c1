"""The board's lists of holders, LGUs and bank sites: filtered, in pages by id (keyset)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from bank.parties import BankSite, Holder, Lgu


def _page(
    session: Session, model: Any, q: str | None, after: str | None, limit: int, *where: Any
) -> list[Any]:
    """Up to ``limit + 1`` rows of ``model`` after the id ``after``, whose name contains ``q``
    (any case; ``%`` and ``_`` are plain text)."""
    query = select(model).where(*where).order_by(model.id).limit(limit + 1)
    if q:
        query = query.where(func.lower(model.name).contains(q.lower(), autoescape=True))
    if after is not None:
        query = query.where(model.id > after)
    return list(session.execute(query).scalars())


def holders(session: Session, q: str | None, after: str | None, limit: int) -> list[Holder]:
    """Holders whose name contains ``q``."""
    return _page(session, Holder, q, after, limit)


def lgus(session: Session, q: str | None, after: str | None, limit: int) -> list[Lgu]:
    """LGUs whose name contains ``q``."""
    return _page(session, Lgu, q, after, limit)


def sites(
    session: Session,
    q: str | None,
    after: str | None,
    limit: int,
    *,
    holder_id: str | None = None,
    service_area: int | None = None,
) -> list[BankSite]:
    """Bank sites whose name contains ``q``, of one holder and in one service area if given."""
    where = []
    if holder_id is not None:
        where.append(BankSite.holder_id == holder_id)
    if service_area is not None:
        where.append(BankSite.service_area == service_area)
    return _page(session, BankSite, q, after, limit, *where)
