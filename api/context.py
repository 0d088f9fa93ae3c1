"""Per-app and per-request state: the database, the request id, the authenticated actor."""

from __future__ import annotations

from flask import current_app, g

from api.problems import ApiProblem
from bank import access
from bank.access import Actor
from bank.rules.ruleset import Ruleset, ruleset_for
from ledger import clock
from ledger.db import Database


def database() -> Database:
    """The app's ledger database."""
    db: Database = current_app.extensions["wetbank.db"]
    return db


#: set on a view that authenticates inside its own unit of work (``api.idempotency.writes``,
#: ``api.reads.reads``)
AUTHENTICATES_IN_UNIT = "authenticates_in_unit"


def actor() -> Actor:
    """The authenticated caller (every non-public endpoint has one).

    A bearer token not yet checked is checked now, in the current unit of work if there is one
    (a write's or a read's), so that the look-up shares its transaction; 401 if it is unknown or
    revoked.
    """
    current: Actor | None = g.get("actor")
    if current is None and g.get("bearer_secret"):
        with database().transaction() as session:
            current = access.authenticate(session, g.bearer_secret)
        if current is None:
            raise ApiProblem(401, "unauthorized", "The bearer token is unknown or revoked.")
        g.actor = current
    if current is None:
        raise ApiProblem(401, "unauthorized", "A bearer token is required.")
    return current


def set_actor(who: Actor) -> None:
    """Record the caller, its token checked by the request's own unit of work."""
    g.actor = who


def require_board() -> Actor:
    """The caller, who must be board staff (403 otherwise)."""
    current = actor()
    if not current.is_board:
        raise ApiProblem(403, "forbidden", "Only board staff may do this.")
    return current


def require_role(*roles: str) -> Actor:
    """The caller, whose role must be one of ``roles`` (403 otherwise)."""
    current = actor()
    if current.role not in roles:
        raise ApiProblem(403, "forbidden", f"Only {' or '.join(roles)} tokens may do this.")
    return current


def request_id() -> str | None:
    """This request's id, recorded with each write."""
    value = g.get("request_id")
    return str(value) if value else None


def ruleset() -> Ruleset:
    """The ruleset in force today."""
    return ruleset_for(clock.today())
