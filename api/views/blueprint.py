"""The blueprint each area of docs/http.md "Endpoints" is declared on, and the one-line
declaration of its views.

A view says who may call it, what it reads and what it answers.  ``write`` and ``read`` say it in
one decorator and stack flask-smorest's in the one order that works: ``writes`` or ``reads``
outermost (its unit of work checks the token, then the role), then ``roles`` above the body or
query (a role that may not call the view hears 403 whatever it sends: ``api.roles``), then what
it reads and what it answers.  Public views, and those that answer in other ways, use
flask-smorest's own decorators.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from flask_smorest import Blueprint
from marshmallow import Schema

from api.idempotency import writes
from api.reads import reads
from api.roles import roles
from api.strict_json import takes_no_body

F = TypeVar("F", bound=Callable[..., Any])


class ApiBlueprint(Blueprint):  # type: ignore[misc]  # flask-smorest is untyped
    """A flask-smorest blueprint of routes under ``/api/v1``."""

    def __init__(self, name: str, import_name: str, description: str) -> None:
        super().__init__(name, import_name, url_prefix="/api/v1", description=description)

    def write(
        self,
        *allowed: str,
        body: type[Schema] | None = None,
        status: int,
        reply: type[Schema],
    ) -> Callable[[F], F]:
        """A view that writes in one unit of work (``api.idempotency.writes``), for the
        ``allowed`` roles: it reads ``body`` (JSON), or, with none, refuses a body that asks for
        anything (``api.strict_json.takes_no_body``), and answers ``status`` with ``reply``."""

        def declare(view: F) -> F:
            view = self.response(status, reply)(view)
            view = takes_no_body(view) if body is None else self.arguments(body)(view)
            return writes(roles(*allowed)(view))

        return declare

    def read(
        self,
        *allowed: str,
        query: type[Schema] | None = None,
        reply: type[Schema],
        one_unit: bool = True,
    ) -> Callable[[F], F]:
        """A view that reads, for the ``allowed`` roles: it takes the ``query`` parameters, if
        any, and answers 200 with ``reply`` (and with what any ``alt_response`` below adds).

        It runs in one unit of work that checks its token too (``api.reads``), unless its use
        case reads on connections of its own (sealing first, a snapshot, a stream:
        ``one_unit=False``), when its token is checked first in a transaction of its own."""

        def declare(view: F) -> F:
            view = self.response(200, reply)(view)
            if query is not None:
                view = self.arguments(query, location="query")(view)
            view = roles(*allowed)(view)
            return reads(view) if one_unit else view

        return declare
