"""The board's tokens page: create a token (its secret shown on the page that answers the form,
once, and never again) and revoke one.

Both call the ``bank.tokens`` use case their API twins call (``api/views/service.py``), with the
API's input schema, through ``api.web.forms``.  The answer kept under the form's
Idempotency-Key is the page to go to, never the secret: a second submit of the same form creates
nothing and shows the token's id without its secret.
"""

from __future__ import annotations

from typing import Any

from flask import Response, g, request, url_for
from marshmallow import Schema, fields, validate

from api.context import database, request_id
from api.views.service import TokenIn
from api.web import forms
from api.web.blueprint import web
from api.web.board_forms import board_only, calling, labelled
from api.web.forms import Field, Form, Item, Refused
from bank import access, tokens
from bank.access import Actor

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


def _page(status: int = 200, **refused: Form) -> Response:
    return forms.page(
        "board_tokens.html",
        status,
        create=refused.get("create") or _create_form(),
        revoke=refused.get("revoke") or _revoke_form(),
        issued=None,
        token_id=request.args.get("token_id"),
    )


@web.get("/tokens")
@board_only
def tokens_page(who: Actor) -> Response:
    return _page()


@web.post("/tokens")
@board_only
def token_create(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        made = calling(tokens.create, database(), who, _access_request(), **data)
        setattr(g, _ISSUED, made)
        return forms.done("web.tokens_page", CREATED, token_id=made.id)

    def again(why: Refused) -> Response:
        return _page(why.status, create=forms.refused(_create_form(), why))

    answer = forms.submit(who, _create_form(), TokenIn(), act, again)
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
    )


@web.post("/tokens/revoke")
@board_only
def token_revoke(who: Actor) -> Any:
    def act(data: dict[str, Any]) -> str:
        calling(tokens.revoke, database(), who, _access_request(), data["token_id"])
        return forms.done("web.tokens_page", REVOKED)

    def again(why: Refused) -> Response:
        return _page(why.status, revoke=forms.refused(_revoke_form(), why))

    return forms.submit(who, _revoke_form(), TokenRevokeIn(), act, again)


def _access_request() -> tokens.Request:
    """This form's request as the audit trail of access records it."""
    return tokens.Request(f"{request.method} {request.path}", request_id())
