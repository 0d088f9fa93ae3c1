"""docs/http.md "Parties and reference data": holders, LGUs, bank sites, service areas."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any

from flask.views import MethodView

from api.context import actor, database, require_board, ruleset
from api.pagination import Listing
from api.schemas.bank import (
    CreditAreaAmendIn,
    HolderEditIn,
    HolderIn,
    HolderOut,
    HolderPage,
    LguEditIn,
    LguIn,
    LguOut,
    LguPage,
    NameQueryArgs,
    ServiceAreaList,
    SiteEditIn,
    SiteIn,
    SiteOut,
    SitePage,
    SiteQueryArgs,
    StatusHistory,
)
from api.views.blueprint import ApiBlueprint
from bank import parties, party_edits, party_lists, site_register

blp = ApiBlueprint("parties", __name__, description="Parties and places")

HOLDERS = Listing("/holders", id_prefix="hld")
LGUS = Listing("/lgus", id_prefix="lgu")
SITES = Listing("/bank-sites", id_prefix="site")
#: a party listing's own arguments; any others are its filters
PAGE_ARGS = ("q", "cursor", "limit")


def _page(listing: Listing, lister: Callable[..., list[Any]], args: dict[str, Any]) -> Any:
    """One page of a listing of parties (board): ``lister(db, board, q, after, limit, ...)``
    with the query's other filters by name; a cursor naming no row is 400 ``bad_request``."""
    filters = {name: value for name, value in args.items() if name not in PAGE_ARGS}
    after, limit = listing.after(args["cursor"]), args["limit"]
    board = require_board()
    rows = lister(database(), board, args["q"], after, limit, **filters)
    return listing.page(rows, limit, key=lambda row: row.id)


@blp.route("/holders")
class Holders(MethodView):
    @blp.write("board", body=HolderIn, status=201, reply=HolderOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register an account holder (board)."""
        return parties.create_holder(database(), require_board(), **data)

    @blp.read("board", query=NameQueryArgs, reply=HolderPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Holders (board), by id; ``q`` filters on text the name contains.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) holders a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor naming no holder is 400 ``bad_request``."""
        return _page(HOLDERS, party_lists.holders, args)


@blp.route("/holders/<holder_id>")
class HolderById(MethodView):
    @blp.read("board", "holder", reply=HolderOut)
    def get(self, holder_id: str) -> Any:
        """A holder (board, or the holder itself)."""
        return parties.show_holder(database(), actor(), holder_id)

    @blp.write("board", body=HolderEditIn, status=200, reply=HolderOut)
    def patch(self, data: dict[str, Any], holder_id: str) -> Any:
        """Correct a holder's name, email or address (board), with a reason, recorded."""
        return party_edits.edit_holder(database(), require_board(), holder_id, **data)


@blp.route("/lgus")
class Lgus(MethodView):
    @blp.write("board", body=LguIn, status=201, reply=LguOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register an LGU with its holiday choices (board)."""
        return parties.create_lgu(database(), require_board(), **data)

    @blp.read("board", query=NameQueryArgs, reply=LguPage)
    def get(self, args: dict[str, Any]) -> Any:
        """LGUs (board), by id; ``q`` filters on text the name contains.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) LGUs a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor naming no LGU is 400 ``bad_request``."""
        return _page(LGUS, party_lists.lgus, args)


@blp.route("/lgus/<lgu_id>")
class LguById(MethodView):
    @blp.read("board", "lgu", "holder", reply=LguOut)
    def get(self, lgu_id: str) -> Any:
        """An LGU (public reference data for any token)."""
        return parties.show_lgu(database(), actor(), lgu_id)

    @blp.write("board", body=LguEditIn, status=200, reply=LguOut)
    def patch(self, data: dict[str, Any], lgu_id: str) -> Any:
        """Correct an LGU's name (board), with a reason, recorded."""
        return party_edits.edit_lgu(database(), require_board(), lgu_id, **data)


@blp.route("/bank-sites")
class Sites(MethodView):
    @blp.write("board", body=SiteIn, status=201, reply=SiteOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register a bank site (board), with the area of each credited action under its banking
        plan where known (Subd. 12 (c) caps apply to these areas)."""
        return site_register.register_site(database(), ruleset(), require_board(), **data)

    @blp.read("board", query=SiteQueryArgs, reply=SitePage)
    def get(self, args: dict[str, Any]) -> Any:
        """Bank sites (board), by id; filters: ``q`` (text the name contains), ``holder_id``,
        ``service_area``.

        Paged by cursor like every long list: ``limit`` (1 to 500, default 50) sites a page,
        and ``next_cursor`` (null on the last page) passed back as ``cursor`` for the next.  A
        cursor marks a place among every site, whatever the filters; one naming no site is 400
        ``bad_request``."""
        return _page(SITES, partial(party_lists.sites, ruleset=ruleset()), args)


@blp.route("/bank-sites/<site_id>")
class SiteById(MethodView):
    @blp.read("board", "holder", reply=SiteOut)
    def get(self, site_id: str) -> Any:
        """A bank site (board, or its holder)."""
        return site_register.show_site(database(), ruleset(), actor(), site_id)

    @blp.write("board", body=SiteEditIn, status=200, reply=SiteOut)
    def patch(self, data: dict[str, Any], site_id: str) -> Any:
        """Correct a bank site's name, county or major watershed (board), with a reason,
        recorded; its holder and service area are sealed."""
        return site_register.edit_site(database(), ruleset(), require_board(), site_id, **data)


@blp.route("/bank-sites/<site_id>/credit-areas")
class SiteCreditAreas(MethodView):
    @blp.write("board", body=CreditAreaAmendIn, status=200, reply=SiteOut)
    def post(self, data: dict[str, Any], site_id: str) -> Any:
        """Amend the registered area of one category (board), with a reason.

        Never so that the category's credit, or that of a buffer beside it (whose cap follows
        its wetland's area), would stand past the Subd. 12 (c) cap it would then have: 422
        ``cap_exceeded`` naming ``category``, ``cap_sqft`` and ``credited_sqft``, as for a
        deposit or a reversal past a cap."""
        return site_register.amend(database(), ruleset(), require_board(), site_id, **data)


@blp.route("/bank-sites/<site_id>/freeze")
class SiteFreeze(MethodView):
    @blp.write("board", status=200, reply=SiteOut)
    def post(self, site_id: str) -> Any:
        """Freeze every credit that came from the site, wherever it now is (board)."""
        return site_register.freeze_site(database(), ruleset(), require_board(), site_id, True)


@blp.route("/bank-sites/<site_id>/unfreeze")
class SiteUnfreeze(MethodView):
    @blp.write("board", status=200, reply=SiteOut)
    def post(self, site_id: str) -> Any:
        """Unfreeze the site's credits (board)."""
        return site_register.freeze_site(database(), ruleset(), require_board(), site_id, False)


@blp.route("/bank-sites/<site_id>/status-history")
class SiteStatusHistory(MethodView):
    @blp.read("board", "holder", reply=StatusHistory)
    def get(self, site_id: str) -> Any:
        """The site's freeze history, first to last (board, or the site's holder).

        Each freeze and unfreeze, with ``from_status``, ``to_status``, the ``actor`` who made
        it and ``recorded_at``.  None while the site is as it was registered (not frozen); one
        stored before migration 0033 starts with the row that migration wrote.  Sealed in the
        registry: verify names a change edited or deleted, and a site whose freeze is not the
        one its last change set."""
        return {"items": site_register.status_changes(database(), actor(), site_id)}


@blp.route("/service-areas")
class ServiceAreas(MethodView):
    @blp.read("board", "lgu", "holder", reply=ServiceAreaList)
    def get(self) -> Any:
        """The bank service areas (practice: ten)."""
        count = ruleset().service_area_count
        return {
            "items": [{"number": n, "name": f"Bank Service Area {n}"} for n in range(1, count + 1)]
        }
