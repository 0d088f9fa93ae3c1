"""docs/http.md "Service and tokens": health, the caller, tokens."""

from __future__ import annotations

from typing import Any

from flask import request
from flask.views import MethodView
from marshmallow import Schema, fields, validate

from api.context import actor, database, request_id, require_board
from api.idempotency import secret_in_reply
from api.pagination import Listing, PageArgs
from api.roles import roles
from api.schemas.common import Timestamp, page_schema, text_of
from api.strict_json import takes_no_body
from api.views.blueprint import ApiBlueprint
from bank import access, tokens

blp = ApiBlueprint("service", __name__, description="Service and tokens")
TOKENS = Listing("/tokens", id_prefix="tok")


class HealthOut(Schema):
    status = fields.String()
    database = fields.String()


class MeOut(Schema):
    role = fields.String()
    name = fields.String()
    token_id = fields.String()
    lgu_id = fields.String(allow_none=True)
    holder_id = fields.String(allow_none=True)


class TokenIn(Schema):
    role = fields.String(required=True, validate=validate.OneOf(access.ROLES))
    name = fields.String(required=True, validate=text_of(access.TOKEN_NAME_MAX_LENGTH))
    lgu_id = fields.String(load_default=None, validate=validate.Length(max=40))
    holder_id = fields.String(load_default=None, validate=validate.Length(max=40))


class TokenOut(Schema):
    id = fields.String()
    token = fields.String(
        allow_none=True,
        metadata={
            "description": "shown once; only its hash is stored (null in a replay under the "
            "same Idempotency-Key)"
        },
    )
    role = fields.String()
    name = fields.String()
    lgu_id = fields.String(allow_none=True)
    holder_id = fields.String(allow_none=True)
    created_at = Timestamp()


class TokenInfo(Schema):
    """A token as the board sees it: never its secret, nor the hash it is stored as."""

    id = fields.String()
    role = fields.String()
    name = fields.String()
    lgu_id = fields.String(allow_none=True)
    holder_id = fields.String(allow_none=True)
    created_at = Timestamp()
    created_by = fields.String(
        allow_none=True,
        metadata={
            "description": "the token that created it (null for one made on the server: "
            "wetbank token create, wetbank demo)"
        },
    )
    last_used_at = Timestamp(
        allow_none=True,
        metadata={
            "description": "its last use, to within a minute (recorded at most once a "
            "minute); null if never used"
        },
    )
    revoked_at = Timestamp(
        allow_none=True, metadata={"description": "when it was revoked (null while it works)"}
    )


TokenPage = page_schema(TokenInfo, "TokenPage")


class TokenListArgs(PageArgs):
    """``?revoked=&role=&limit=&cursor=``"""

    revoked = fields.Boolean(
        load_default=None,
        truthy={"true"},
        falsy={"false"},
        metadata={"description": "true: the revoked tokens only; false: the live ones only"},
    )
    role = fields.String(
        load_default=None,
        validate=validate.OneOf(access.ROLES),
        metadata={"description": "only the tokens of this role"},
    )


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthOut)
    def get(self) -> dict[str, Any]:
        """Liveness: the process answers, and names the database it is configured for.  It
        touches no database, so an outage or an upgrade window does not make an orchestrator
        restart every worker; ``GET /ready`` says whether the database answers."""
        return {"status": "ok", "database": database().dialect}


@blp.route("/me")
class Me(MethodView):
    @blp.read("board", "lgu", "holder", reply=MeOut)
    def get(self) -> dict[str, Any]:
        """The caller's role and the LGU or holder its token acts for."""
        who = actor()
        return {
            "role": who.role,
            "name": who.name,
            "token_id": who.token_id,
            "lgu_id": who.lgu_id,
            "holder_id": who.holder_id,
        }


@blp.route("/tokens")
class Tokens(MethodView):
    @blp.write("board", body=TokenIn, status=201, reply=TokenOut)
    @secret_in_reply("token")
    def post(self, data: dict[str, Any]) -> Any:
        """Create a token (board).  The secret is in this response only: a replay under the
        same ``Idempotency-Key`` answers with ``token`` null (revoke that token and create
        another if the first answer was lost)."""
        return tokens.create(database(), require_board(), _request(), **data)

    @blp.read("board", query=TokenListArgs, reply=TokenPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Tokens (board), newest first (by creation time, then id), never their secrets nor
        hashes; filters: ``revoked`` (``true`` or ``false``; both when absent) and ``role``.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) tokens a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor marks a place among every token, whatever the filters (a token revoked while a
        client pages through ``revoked=false`` still marks it); one naming no token is 400
        ``bad_request``."""
        after, limit = TOKENS.after(args["cursor"]), args["limit"]
        rows = tokens.listed(
            database(),
            require_board(),
            after=after,
            limit=limit,
            revoked=args["revoked"],
            role=args["role"],
        )
        return TOKENS.page(rows, limit, key=lambda row: row.id)


@blp.route("/tokens/<token_id>")
class TokenById(MethodView):
    @blp.read("board", reply=TokenInfo)
    def get(self, token_id: str) -> Any:
        """A token (board), without its secret or hash."""
        return tokens.show(database(), require_board(), token_id)

    @roles("board")
    @takes_no_body
    @blp.response(204)
    def delete(self, token_id: str) -> None:
        """Revoke a token (board): it stops working at once.  Revoking a revoked token again
        answers 204 too, changes nothing and records no second ``token_revoked`` event.  A
        token may revoke itself (one that may have leaked): 204, and its next request is 401."""
        tokens.revoke(database(), require_board(), _request(), token_id)


def _request() -> tokens.Request:
    """This request as the audit trail of access records it."""
    return tokens.Request(f"{request.method} {request.path}", request_id())
