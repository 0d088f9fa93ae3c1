"""API.md "Service": health, the caller, tokens."""

from __future__ import annotations

from typing import Any

from flask import g, request
from flask.views import MethodView
from flask_smorest import Blueprint
from marshmallow import Schema, fields, validate
from sqlalchemy import text

from api.context import actor, database, require_board
from api.idempotency import writes
from api.roles import roles
from bank import access, parties

blp = Blueprint("service", __name__, url_prefix="/api/v1", description="Service and tokens")


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
    name = fields.String(required=True, validate=validate.Length(min=1, max=200))
    lgu_id = fields.String(load_default=None, validate=validate.Length(max=40))
    holder_id = fields.String(load_default=None, validate=validate.Length(max=40))


class TokenOut(Schema):
    id = fields.String()
    token = fields.String(metadata={"description": "shown once; only its hash is stored"})
    role = fields.String()
    name = fields.String()
    lgu_id = fields.String(allow_none=True)
    holder_id = fields.String(allow_none=True)
    created_at = fields.DateTime()


@blp.route("/health")
class Health(MethodView):
    @blp.response(200, HealthOut)
    def get(self) -> dict[str, Any]:
        """Is the service up, and which database does it use?"""
        db = database()
        with db.engine.connect() as connection:
            connection.execute(text("SELECT 1"))
        return {"status": "ok", "database": db.dialect}


@blp.route("/me")
class Me(MethodView):
    @roles("board", "lgu", "holder")
    @blp.response(200, MeOut)
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
    @writes
    @roles("board")
    @blp.arguments(TokenIn)
    @blp.response(201, TokenOut)
    def post(self, data: dict[str, Any]) -> dict[str, Any]:
        """Create a token (board).  The secret is in this response only."""
        board = require_board()
        with database().transaction() as session:
            _check_party(session, data)
            row, secret = access.create_token(session, created_by=board.token_id, **data)
            _audit(session, "token_created", 201)
            return {
                "id": row.id,
                "token": secret,
                "role": row.role,
                "name": row.name,
                "lgu_id": row.lgu_id,
                "holder_id": row.holder_id,
                "created_at": row.created_at,
            }


@blp.route("/tokens/<token_id>")
class TokenById(MethodView):
    @roles("board")
    @blp.response(204)
    def delete(self, token_id: str) -> None:
        """Revoke a token (board): it stops working at once."""
        board = require_board()
        with database().transaction() as session:
            access.revoke_token(session, token_id, by=board.token_id)
            _audit(session, "token_revoked", 204)


def _audit(session: Any, kind: str, status: int) -> None:
    access.record_event(
        session,
        kind=kind,
        path=f"{request.method} {request.path}",
        status=status,
        actor=actor().label,
        request_id=g.get("request_id"),
    )


def _check_party(session: Any, data: dict[str, Any]) -> None:
    """An LGU or holder token must name an LGU or holder that exists."""
    parties.check_token_party(session, data["role"], data.get("lgu_id"), data.get("holder_id"))
