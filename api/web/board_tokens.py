"""The board's tokens page: every token, newest first and paged as the other lists are (name,
role, the LGU or holder it acts for, when it was created and last used, whether it is revoked),
each live one with its "Revoke" button; create a token (its secret shown on the page that answers
the form, once, and never again) and revoke one by its id.

The list is ``bank.tokens.listed``, as ``GET /api/v1/tokens`` is; creating and revoking call the
``bank.tokens`` use cases their API twins call (``api/views/service.py``), with the API's input
schema, through ``api.web.forms``: a row's "Revoke" button posts the revoke form with the row's
token id hidden, its own CSRF secret and Idempotency-Key.  The answer kept under the form's
Idempotency-Key is the page to go to, never the secret: a second submit of the same form creates
nothing and shows the token's id without its secret.

The token a board user signed in with may be revoked from its row too (it may have leaked): the
session rested on it, so it ends with it, and the answer is the sign-in page saying so (the
browser told to drop the session's cookie); that form sent again lands there as well.
"""

from __future__ import annotations

import secrets
from typing import Any

from flask import Response, g, request, url_for
from marshmallow import Schema, fields, validate
from werkzeug.wrappers import Response as BaseResponse

from api.context import database, request_id
from api.views.service import TokenIn
from api.web import forms, lists, signin
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, labelled
from api.web.forms import Field, Form, Item
from bank import access, tokens
from bank.access import Actor
from bank.errors import UnknownCursor

CREATED = forms.confirmation(
    "token-created", "The token was created; its secret was shown once, when it was created."
)
REVOKED = forms.confirmation("token-revoked", "The token is revoked: it stopped working at once.")
#: ``flask.g``: the token this request created, for the page that shows its secret
_ISSUED = "issued_token"


class TokenRevokeIn(Schema):
    """The token to revoke (``DELETE /tokens/{id}``'s path parameter)."""

    token_id = fields.String(required=True, validate=validate.Length(min=1, max=40))


def load() -> None:
    """The routes are declared below, on import; this makes the import explicit."""


def _create_form() -> Form:
    items: tuple[Item, ...] = (
        Field("role", "Role", "select", True, labelled(access.ROLES)),
        Field("name", "Name", required=True, hint="Who or what will use the token."),
        Field("lgu_id", "LGU id", hint="For an LGU's token: the LGU it acts for."),
        Field("holder_id", "Holder id", hint="For a holder's token: the holder it acts for."),
    )
    return Form(url_for("web.token_create"), items, "Create the token")


def _revoke_form() -> Form:
    items = (Field("token_id", "Token id", required=True, hint="It stops working at once."),)
    return Form(url_for("web.token_revoke"), items, "Revoke the token")


def _listed(who: Actor) -> dict[str, Any]:
    """The page of tokens the address asks for (``after``, ``limit``), newest first, and what
    each row's "Revoke" button needs."""
    args = lists.page_args()
    try:
        rows = tokens.listed(database(), who, after=args["after"], limit=args["limit"])
    except UnknownCursor:  # a place no page gives: none there, and the first
        rows = []
    return {
        **lists.paged(rows, args["limit"], "web.tokens_page"),
        "current_token": who.token_id,
        "button_key": lambda: secrets.token_urlsafe(24),
    }


def _page(who: Actor, status: int = 200, **refused: Form) -> Response:
    return forms.page(
        "board_tokens.html",
        status,
        create=refused.get("create") or _create_form(),
        revoke=refused.get("revoke") or _revoke_form(),
        issued=None,
        token_id=request.args.get("token_id"),
        **_listed(who),
    )


@web.get("/tokens")
@board_only
def tokens_page(who: Actor) -> Response:
    return _page(who)


@web.post("/tokens")
@board_only
def token_create(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        made = calling(tokens.create, database(), who, _access_request(), **data)
        setattr(g, _ISSUED, made)
        return forms.done("web.tokens_page", CREATED, token_id=made.id)

    def again(form: Form, status: int) -> Response:
        return _page(who, status, create=form)

    answer = forms.post(who, _create_form, TokenIn(), act, again, open_now=forms.always_open)
    issued = g.pop(_ISSUED, None)
    if issued is None or getattr(answer, "status_code", None) != 303:
        return answer  # a refusal, or a second submit: the secret is not shown again
    return forms.page(
        "board_tokens.html",
        201,
        create=_create_form(),
        revoke=_revoke_form(),
        issued=issued,
        token_id=None,
        **_listed(who),
    )


@web.post("/tokens/revoke")
@board_only
def token_revoke(who: Actor) -> Any:
    signed_out = url_for("web.sign_in_form", next=url_for("web.tokens_page"))

    def act(data: dict[str, Any]) -> str:
        calling(tokens.revoke, database(), who, _access_request(), data["token_id"])
        if data["token_id"] == who.token_id:
            return signed_out  # the session rested on it: it has ended
        return forms.done("web.tokens_page", REVOKED, token_id=data["token_id"])

    def again(form: Form, status: int) -> Response:
        return _page(who, status, revoke=form)

    # revoking a token revoked already changes nothing and is not refused (``tokens.revoke``):
    # no token's state closes the form, and what it refuses is the id typed
    answer = forms.post(who, _revoke_form, TokenRevokeIn(), act, again, open_now=forms.always_open)
    if isinstance(answer, BaseResponse) and answer.location == signed_out:
        # the token revoked was the session's own (or this is that form sent again): the
        # browser drops the session's cookie, and the sign-in page says why
        return signin.ended_session(answer, signin.ENDED_BY_OWN_REVOCATION)
    return answer


def _access_request() -> tokens.Request:
    """This form's request as the audit trail of access records it."""
    return tokens.Request(f"{request.method} {request.path}", request_id())
