"""Who may call each endpoint: declared on its view with ``@roles(...)``, decided before the
request's body or query is read.

A role that may not use an endpoint hears 403 ``forbidden`` whatever it sends: ``{}``, JSON that
does not parse, another content type, a body over the size limit.  Validating first would
answer such a caller 422 with the endpoint's required fields, which is not its business.  The
check runs in three places, whichever comes first for a request:

* ``api.idempotency.writes``, inside the write's unit of work, as soon as the token is checked
  (the key is claimed in the same statement, but a refusal rolls the claim back, and the body
  is not parsed yet);
* the ``@roles`` wrapper itself, outside flask-smorest's argument parsing (reads);
* ``api.auth``, when a body fails the checks made before any view runs (size, content type,
  strict JSON).

A view may still refuse a caller of an allowed role, for the resource it names (another
holder's account is 404).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from api.context import require_role
from bank.access import ROLES

F = TypeVar("F", bound=Callable[..., Any])

#: the attribute that carries a view's allowed roles (kept by ``functools.wraps``)
ALLOWED_ROLES = "allowed_roles"


def roles(*allowed: str) -> Callable[[F], F]:
    """Declare the roles that may call the view below; any other token gets 403."""
    unknown = set(allowed) - set(ROLES)
    if not allowed or unknown:
        raise ValueError(f"roles must be some of {ROLES}, not {sorted(unknown) or 'none'}")

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            require_role(*allowed)
            return view(*args, **kwargs)

        setattr(wrapper, ALLOWED_ROLES, allowed)
        return wrapper  # type: ignore[return-value]

    return decorate


def declared(handler: Any) -> tuple[str, ...] | None:
    """The roles ``handler`` allows, or ``None`` if it declares none (a public endpoint)."""
    allowed = getattr(handler, ALLOWED_ROLES, None)
    return tuple(allowed) if allowed else None


def check(handler: Any) -> None:
    """403 ``forbidden`` unless the caller's role is one ``handler`` allows (401 without a
    valid token); nothing for a handler that declares no roles."""
    allowed = declared(handler)
    if allowed:
        require_role(*allowed)
