"""One unit of work per read (docs/scaling.md "Few round trips per request").

A view declared with ``ApiBlueprint.read`` runs inside one database transaction, and its token is
checked in it (``api.context.actor`` joins the open unit): the check, the record of the token's
use and the read share one BEGIN and one connection, as a write's do (``api.idempotency``).

The unit is the one its use case's ``Database.transaction()`` joins.  A use case that reads on
connections of its own (it seals the chain first, reads a snapshot or streams) must not run
inside it: the request would hold two connections, and on PostgreSQL the token's row while it
waits for the sealer.  Its view says ``one_unit=False`` and checks its token first, in a
transaction of its own.

What the token's check records stays recorded whatever the read answers: a refused read (403,
404, 422) rolls its unit back, and the token's use it recorded (``access.record_use``, at most
once a minute) is recorded again in a transaction of its own.  The audit of a 401 or 403 is
written after the unit, as for any request (``api.auth``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from datetime import datetime
from functools import wraps
from typing import Any, TypeVar

from api.context import AUTHENTICATES_IN_UNIT, database
from bank import access

F = TypeVar("F", bound=Callable[..., Any])
log = logging.getLogger("wetbank.api")


def reads(view: F) -> F:
    """Run a reading view, its token's check first, in one unit of work."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        used: tuple[str, datetime] | None = None
        try:
            with database().transaction() as session:
                try:
                    return view(*args, **kwargs)
                except Exception:
                    used = access.use_recorded(session)
                    raise
        except Exception:
            if used is not None:
                _record_use_again(*used)
            raise

    setattr(wrapper, AUTHENTICATES_IN_UNIT, True)
    return wrapper  # type: ignore[return-value]


def _record_use_again(token_id: str, at: datetime) -> None:
    try:
        with database().transaction() as session:
            access.record_use(session, token_id, at)
    except Exception:  # never turn the read's own answer into a 500 for this
        log.exception("could not record the use of token %s", token_id)
