"""``Idempotency-Key`` for every POST that writes (docs/http.md "Writes").

The key is claimed, the use case runs and the response is stored in ONE database transaction, so
a write and the record of its result commit together or not at all.  Only 2xx results are kept:
an error rolls the claim back with everything else, and the request may be corrected and retried
under the same key.  Keys are scoped to the token.

The token is checked in the same transaction, and the key claimed in the same statement as that
check (``access.authenticate_claiming``): a claim made for a caller then refused (its role, the
rate limit) is rolled back with the rest, so the answer is the one a check made before the claim
would give.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import Response, g, make_response, request
from sqlalchemy.orm import Session

from api import roles, strict_json
from api.context import AUTHENTICATES_IN_UNIT, actor, database, set_actor
from api.problems import ApiProblem
from api.ratelimit import check_write
from bank import access
from bank.access import Actor, StoredResult

F = TypeVar("F", bound=Callable[..., Any])
MAX_KEY_LENGTH = 255
#: the key claimed for this request, and the claim's answer, not read yet (``_claimed``)
_UNCLAIMED = object()


def writes(view: F) -> F:
    """Run a writing view in one unit of work, honouring ``Idempotency-Key``."""

    secrets: tuple[str, ...] = getattr(view, SECRET_FIELDS, ())

    @wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Response:
        def unit(session: Session) -> Response:
            key = request.headers.get("Idempotency-Key")
            # the token is checked here, in this unit of work (with the key claimed, if any)
            who, claim = _authenticate(session, key)
            roles.check(view)  # then its role, before the key or the body: 403 whatever it sent
            if not g.get("write_counted"):  # once per request, not per retry of the unit
                g.write_counted = True
                check_write(who.token_id)
            if key is not None and not _valid(key):
                raise ApiProblem(
                    400,
                    "bad_request",
                    f"Idempotency-Key must be 1 to {MAX_KEY_LENGTH} characters.",
                )
            if key is not None:
                replay = _replay(session, who, key, claim)
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
                    _kept(response, secrets),
                    response.mimetype or "application/json",
                )
            return response

        try:
            return database().run(unit)
        except _Refused as refused:
            return refused.response

    setattr(wrapper, AUTHENTICATES_IN_UNIT, True)
    return wrapper  # type: ignore[return-value]


#: the attribute naming the fields of a view's reply that are never kept (``secret_in_reply``)
SECRET_FIELDS = "secret_fields"


def secret_in_reply(*fields: str) -> Callable[[F], F]:
    """Declare fields of the view's JSON reply that exist in that response only (a new token's
    secret): the result kept under an ``Idempotency-Key`` holds them as null, so a replay
    answers without them and no table holds the secret in clear."""

    def declare(view: F) -> F:
        setattr(view, SECRET_FIELDS, fields)
        return view

    return declare


def _kept(response: Response, secrets: tuple[str, ...]) -> str:
    """The response body as it is kept for replays: ``secrets`` blanked."""
    body = response.get_data(as_text=True)
    if not secrets:
        return body
    reply = json.loads(body)
    for field in secrets:
        if field in reply:
            reply[field] = None
    return json.dumps(reply)


class _Refused(Exception):
    def __init__(self, response: Response) -> None:
        super().__init__(response.status)
        self.response = response


def _valid(key: str) -> bool:
    return 0 < len(key) <= MAX_KEY_LENGTH


def _authenticate(session: Session, key: str | None) -> tuple[Actor, Any]:
    """The caller, and the claim of ``key`` made with the token's check (``_UNCLAIMED`` if
    none was: no key, a key refused later, or a caller already known)."""
    secret = g.get("bearer_secret")
    if key is None or not _valid(key) or g.get("actor") is not None or not secret:
        return actor(), _UNCLAIMED
    who, stored = access.authenticate_claiming(session, secret, key, request_fingerprint())
    if who is None:
        raise ApiProblem(401, "unauthorized", "The bearer token is unknown or revoked.")
    set_actor(who)
    return who, stored


def _replay(session: Session, who: Actor, key: str, claim: Any) -> Response | None:
    """``None`` when the key is ours to write under, else the earlier request's response (409
    if that request was another)."""
    stored: StoredResult | None = (
        access.claim_key(session, who.token_id, key, request_fingerprint())
        if claim is _UNCLAIMED
        else claim
    )
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
    found: str | None = g.get("request_fingerprint")
    if found is None:
        found = g.request_fingerprint = _fingerprint()
    return found


def _fingerprint() -> str:
    parsed = strict_json.body()  # the body as the strict check parsed it, if it did
    if parsed is not strict_json.UNPARSED:
        body = _canonical(parsed)
    else:
        raw = request.get_data(cache=True)
        try:
            body = _canonical(json.loads(raw)) if raw else ""
        except ValueError:
            body = raw.decode("utf-8", "replace")
    return hashlib.sha256(f"{request.method} {request.path}\n{body}".encode()).hexdigest()


def _canonical(value: Any) -> str:
    """A parsed body as compared: an empty object is no body, as a bodiless write takes either
    (``strict_json.takes_no_body``) and a body's schema reads no body as an empty object, so a
    retry that sends the other form replays rather than conflicts."""
    if value == {}:
        return ""
    return json.dumps(value, sort_keys=True, separators=(",", ":"))
