"""API.md "Transfers between accounts" and "Reservations"."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from api.context import actor, database, request_id, require_role
from api.idempotency import writes
from api.roles import roles
from api.schemas.bank import (
    AccountReservationList,
    ReservationIn,
    ReservationOut,
    TransferIn,
    TransferOut,
)
from bank import account_reservations, reservations, transfers

blp = Blueprint("movements", __name__, url_prefix="/api/v1", description="Transfers, reservations")


@blp.route("/transfers")
class Transfers(MethodView):
    @writes
    @roles("board", "holder")
    @blp.arguments(TransferIn)
    @blp.response(201, TransferOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Transfer credits between accounts (board, or the holder of the source account)."""
        who = require_role("board", "holder")
        request = transfers.TransferRequest(**data)
        return transfers.transfer(database(), who, request, request_id())


@blp.route("/accounts/<account_id>/reservations")
class AccountReservations(MethodView):
    @writes
    @roles("board", "holder")
    @blp.arguments(ReservationIn)
    @blp.response(201, ReservationOut)
    def post(self, data: dict[str, Any], account_id: str) -> Any:
        """Reserve credits for a plan (the account's holder, or board)."""
        who = require_role("board", "holder")
        request = reservations.ReservationRequest(account_id=account_id, **data)
        return reservations.reserve_for_plan(database(), who, request, request_id())

    @roles("board", "holder")
    @blp.response(200, AccountReservationList)
    def get(self, account_id: str) -> Any:
        """The reservations held against the account (board, or its holder), each with the plan
        it is for: its project, LGU and status."""
        return account_reservations.account_reservations(database(), actor(), account_id)


@blp.route("/reservations/<reservation_id>")
class ReservationById(MethodView):
    @roles("board", "holder", "lgu")
    @blp.response(200, ReservationOut)
    def get(self, reservation_id: str) -> Any:
        """A reservation (board, the account's holder, or the plan's LGU)."""
        return reservations.show_reservation(database(), actor(), reservation_id)


@blp.route("/reservations/<reservation_id>/void")
class ReservationVoid(MethodView):
    @writes
    @roles("board", "holder")
    @blp.response(200, ReservationOut)
    def post(self, reservation_id: str) -> Any:
        """Release a pending reservation (the account's holder, or board)."""
        who = require_role("board", "holder")
        return reservations.void(database(), who, reservation_id, request_id())
