"""API.md "Parties and reference data": holders, LGUs, bank sites, service areas."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from api.context import actor, database, require_board, ruleset
from api.idempotency import writes
from api.pagination import Listing
from api.roles import roles
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
)
from bank import parties, party_edits, party_lists, policy, site_register
from bank.errors import NotFound

blp = Blueprint("parties", __name__, url_prefix="/api/v1", description="Parties and places")

HOLDERS = Listing("/holders", id_prefix="hld")
LGUS = Listing("/lgus", id_prefix="lgu")
SITES = Listing("/bank-sites", id_prefix="site")


def _edit(kind: str, party_id: str, data: dict[str, Any]) -> Any:
    """Correct a party (board), recording what changed and the reason."""
    board = require_board()
    changes = {name: value for name, value in data.items() if name != "reason"}
    with database().transaction() as session:
        return party_edits.edit_party(session, board, kind, party_id, changes, data["reason"])


@blp.route("/holders")
class Holders(MethodView):
    @writes
    @roles("board")
    @blp.arguments(HolderIn)
    @blp.response(201, HolderOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register an account holder (board)."""
        require_board()
        with database().transaction() as session:
            return parties.create_holder(session, **data)

    @roles("board")
    @blp.arguments(NameQueryArgs, location="query")
    @blp.response(200, HolderPage)
    def get(self, args: dict[str, Any]) -> Any:
        """Holders (board), by id; ``q`` filters on text the name contains."""
        require_board()
        after = HOLDERS.after(args["cursor"])
        with database().transaction() as session:
            rows = party_lists.holders(session, args["q"], after, args["limit"])
            items = [parties.as_dict(row, *HolderOut().fields) for row in rows]
        return HOLDERS.page(items, args["limit"], key=lambda item: item["id"])


@blp.route("/holders/<holder_id>")
class HolderById(MethodView):
    @roles("board", "holder")
    @blp.response(200, HolderOut)
    def get(self, holder_id: str) -> Any:
        """A holder (board, or the holder itself)."""
        who = actor()
        if not policy.sees_holdings(who, holder_id):
            raise NotFound(f"no holder {holder_id}")
        with database().transaction() as session:
            return parties.get_holder(session, holder_id)

    @writes
    @roles("board")
    @blp.arguments(HolderEditIn)
    @blp.response(200, HolderOut)
    def patch(self, data: dict[str, Any], holder_id: str) -> Any:
        """Correct a holder's name, email or address (board), with a reason, recorded."""
        return _edit("holder", holder_id, data)


@blp.route("/lgus")
class Lgus(MethodView):
    @writes
    @roles("board")
    @blp.arguments(LguIn)
    @blp.response(201, LguOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register an LGU with its holiday choices (board)."""
        require_board()
        with database().transaction() as session:
            return parties.create_lgu(session, **data)

    @roles("board")
    @blp.arguments(NameQueryArgs, location="query")
    @blp.response(200, LguPage)
    def get(self, args: dict[str, Any]) -> Any:
        """LGUs (board), by id; ``q`` filters on text the name contains."""
        require_board()
        after = LGUS.after(args["cursor"])
        with database().transaction() as session:
            rows = party_lists.lgus(session, args["q"], after, args["limit"])
            items = [parties.as_dict(row, *LguOut().fields) for row in rows]
        return LGUS.page(items, args["limit"], key=lambda item: item["id"])


@blp.route("/lgus/<lgu_id>")
class LguById(MethodView):
    @roles("board", "lgu", "holder")
    @blp.response(200, LguOut)
    def get(self, lgu_id: str) -> Any:
        """An LGU (public reference data for any token)."""
        actor()
        with database().transaction() as session:
            return parties.get_lgu(session, lgu_id)

    @writes
    @roles("board")
    @blp.arguments(LguEditIn)
    @blp.response(200, LguOut)
    def patch(self, data: dict[str, Any], lgu_id: str) -> Any:
        """Correct an LGU's name (board), with a reason, recorded."""
        return _edit("lgu", lgu_id, data)


@blp.route("/bank-sites")
class Sites(MethodView):
    @writes
    @roles("board")
    @blp.arguments(SiteIn)
    @blp.response(201, SiteOut)
    def post(self, data: dict[str, Any]) -> Any:
        """Register a bank site (board), with the area of each credited action under its banking
        plan where known (Subd. 12 (c) caps apply to these areas)."""
        board = require_board()
        with database().transaction() as session:
            site = site_register.register_site(session, ruleset(), board, **data)
            return site_register.site_dict(session, ruleset(), site)

    @roles("board")
    @blp.arguments(SiteQueryArgs, location="query")
    @blp.response(200, SitePage)
    def get(self, args: dict[str, Any]) -> Any:
        """Bank sites (board), by id; filters: ``q`` (text the name contains), ``holder_id``,
        ``service_area``."""
        require_board()
        after = SITES.after(args["cursor"])
        with database().transaction() as session:
            rows = party_lists.sites(
                session,
                args["q"],
                after,
                args["limit"],
                holder_id=args["holder_id"],
                service_area=args["service_area"],
            )
            items = [site_register.site_dict(session, ruleset(), row) for row in rows]
        return SITES.page(items, args["limit"], key=lambda item: item["id"])


@blp.route("/bank-sites/<site_id>")
class SiteById(MethodView):
    @roles("board", "holder")
    @blp.response(200, SiteOut)
    def get(self, site_id: str) -> Any:
        """A bank site (board, or its holder)."""
        who = actor()
        with database().transaction() as session:
            site = parties.get_site(session, site_id)
            if not policy.sees_holdings(who, site.holder_id):
                raise NotFound(f"no bank site {site_id}")
            return site_register.site_dict(session, ruleset(), site)

    @writes
    @roles("board")
    @blp.arguments(SiteEditIn)
    @blp.response(200, SiteOut)
    def patch(self, data: dict[str, Any], site_id: str) -> Any:
        """Correct a bank site's name, county or major watershed (board), with a reason,
        recorded; its holder and service area are sealed."""
        board = require_board()
        changes = {name: value for name, value in data.items() if name != "reason"}
        with database().transaction() as session:
            site = party_edits.edit_party(
                session, board, "bank_site", site_id, changes, data["reason"]
            )
            return site_register.site_dict(session, ruleset(), site)


@blp.route("/bank-sites/<site_id>/credit-areas")
class SiteCreditAreas(MethodView):
    @writes
    @roles("board")
    @blp.arguments(CreditAreaAmendIn)
    @blp.response(200, SiteOut)
    def post(self, data: dict[str, Any], site_id: str) -> Any:
        """Amend the registered area of one category (board), with a reason; never below what
        the site has already credited (``conflict``)."""
        board = require_board()
        with database().transaction() as session:
            site = site_register.amend(session, ruleset(), board, site_id, **data)
            return site_register.site_dict(session, ruleset(), site)


@blp.route("/bank-sites/<site_id>/freeze")
class SiteFreeze(MethodView):
    @writes
    @roles("board")
    @blp.response(200, SiteOut)
    def post(self, site_id: str) -> Any:
        """Freeze every credit that came from the site, wherever it now is (board)."""
        require_board()
        with database().transaction() as session:
            site = parties.set_site_frozen(session, site_id, True)
            return site_register.site_dict(session, ruleset(), site)


@blp.route("/bank-sites/<site_id>/unfreeze")
class SiteUnfreeze(MethodView):
    @writes
    @roles("board")
    @blp.response(200, SiteOut)
    def post(self, site_id: str) -> Any:
        """Unfreeze the site's credits (board)."""
        require_board()
        with database().transaction() as session:
            site = parties.set_site_frozen(session, site_id, False)
            return site_register.site_dict(session, ruleset(), site)


@blp.route("/service-areas")
class ServiceAreas(MethodView):
    @roles("board", "lgu", "holder")
    @blp.response(200, ServiceAreaList)
    def get(self) -> Any:
        """The bank service areas (practice: ten)."""
        actor()
        count = ruleset().service_area_count
        return {
            "items": [{"number": n, "name": f"Bank Service Area {n}"} for n in range(1, count + 1)]
        }
