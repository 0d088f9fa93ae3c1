"""docs/http.md "Accounts, deposits and transfers" (the transfers) and "Reservations"."""

from __future__ import annotations

from operator import attrgetter
from typing import Any

from flask.views import MethodView

from api.context import actor, database, request_id
from api.pagination import Listing, PageArgs
from api.schemas.bank import (
    AccountReservationPage,
    ReservationIn,
    ReservationOut,
    TransferIn,
    TransferOut,
)
from api.views.blueprint import ApiBlueprint
from bank import account_reservations, reservations, transfers

blp = ApiBlueprint("movements", __name__, description="Transfers, reservations")
#: one listing of every account's reservations: a cursor names a reservation, looked up in the
#: account asked for
RESERVATIONS = Listing("/accounts/{account_id}/reservations", id_prefix="res")


@blp.route("/transfers")
class Transfers(MethodView):
    @blp.write("board", "holder", body=TransferIn, status=201, reply=TransferOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Transfer credits between accounts (board, or the holder of the source account)."""
        request = transfers.TransferRequest(**data)
        return transfers.transfer(database(), actor(), request, request_id())


@blp.route("/accounts/<account_id>/reservations")
class AccountReservations(MethodView):
    @blp.write("board", "holder", body=ReservationIn, status=201, reply=ReservationOut)
    def post(self, data: dict[str, Any], account_id: str) -> Any:
        """Reserve credits for a plan (the account's holder, or board)."""
        request = reservations.ReservationRequest(account_id=account_id, **data)
        return reservations.reserve_for_plan(database(), actor(), request, request_id())

    @blp.read("board", "holder", query=PageArgs, reply=AccountReservationPage)
    def get(self, args: dict[str, Any], account_id: str) -> Any:
        """Every reservation made against the account (board, or its holder), oldest first,
        each with the plan it is for: its project, LGU and status.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) reservations a
        page, and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the
        next.  A cursor of another account's reservations is 400 ``bad_request``."""
        after, limit = RESERVATIONS.after(args["cursor"]), args["limit"]
        items = account_reservations.page_of_account_reservations(
            database(), actor(), account_id, limit, after
        )
        return RESERVATIONS.page(items, limit, key=attrgetter("id"))


@blp.route("/reservations/<reservation_id>")
class ReservationById(MethodView):
    @blp.read("board", "holder", "lgu", reply=ReservationOut)
    def get(self, reservation_id: str) -> Any:
        """A reservation (board, the account's holder, or the plan's LGU)."""
        return reservations.show_reservation(database(), actor(), reservation_id)


@blp.route("/reservations/<reservation_id>/void")
class ReservationVoid(MethodView):
    @blp.write("board", "holder", status=200, reply=ReservationOut)
    def post(self, reservation_id: str) -> Any:
        """Release a pending reservation (the account's holder, or board)."""
        return reservations.void(database(), actor(), reservation_id, request_id())
