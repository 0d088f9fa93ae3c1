"""``Idempotency-Key`` for every POST that writes (API.md "Idempotency").

The key is claimed, the use case runs and the response is stored in ONE database transaction, so
a write and the record of its result commit together or not at all.  Only 2xx results are kept:
an error rolls the claim back with everything else, and the request may be corrected and retried
under the same key.  Keys are scoped to the token.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Response, g, make_response, request
from sqlalchemy.orm import Session

from api import roles
from api.context import AUTHENTICATES_IN_UNIT, actor, database
from api.problems import ApiProblem
from api.ratelimit import check_write
from bank import access

F = TypeVar("F", bound=Callable[..., Any])
MAX_KEY_LENGTH = 255


def writes(view: F) -> F:
    """Run a writing view in one unit of work, honouring ``Idempotency-Key``."""

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Response:
        def unit(session: Session) -> Response:
            who = actor()  # the token is checked here, in this unit of work
            roles.check(view)  # then its role, before the key or the body: 403 whatever it sent
            if not g.get("write_counted"):  # once per request, not per retry of the unit
                g.write_counted = True
                check_write(who.token_id)
            key = request.headers.get("Idempotency-Key")
            if key is not None and not 0 < len(key) <= MAX_KEY_LENGTH:
                raise ApiProblem(
                    400,
                    "bad_request",
                    f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.",
                )
            if key is not None:
                replay = _claim(session, key)
                if replay is not None:
                    return replay
            response = make_response(view(*args, **kwargs))
            if not 200 <= response.status_code < 300:
                raise _Refused(response)  # roll back: a refusal writes nothing, keeps no key
            # last, after every lock the write waited for: a token revoked meanwhile is 401
            access.confirm_token(session, who.token_id)
            if key is not None:
                access.store_result(
                    session,
                    who.token_id,
                    key,
                    response.status_code,
                    response.get_data(as_text=True),
                    response.mimetype or "application/json",
                )
            return response

        try:
            return database().run(unit)
        except _Refused as refused:
            return refused.response

    setattr(wrapper, AUTHENTICATES_IN_UNIT, True)
    return wrapper  # type: ignore[return-value]


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


def _claim(session: Session, key: str) -> Response | None:
    stored = access.claim_key(session, actor().token_id, key, request_fingerprint())
    if stored is None:
        return None
    if stored.request_hash != request_fingerprint():
        raise ApiProblem(
            409,
            "idempotency_conflict",
            "This Idempotency-Key was used with a different request.",
        )
    response = Response(stored.body, status=stored.status, mimetype=stored.content_type)
    response.headers["Idempotent-Replayed"] = "true"
    return response


def request_fingerprint() -> str:
    """A hash of the method, path and body; JSON bodies are compared by content, not layout."""
    raw = request.get_data(cache=True)
    try:
        body = json.dumps(json.loads(raw), sort_keys=True, separators=(",", ":")) if raw else ""
    except ValueError:
        body = raw.decode("utf-8", "replace")
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()
