"""API.md "Parties and reference data": holders, LGUs, bank sites, service areas."""

from __future__ import annotations

from typing import Any

from flask.views import MethodView
from flask_smorest import Blueprint

from api.context import actor, database, require_board, ruleset
from api.idempotency import writes
from api.roles import roles
from api.schemas.bank import (
    CreditAreaAmendIn,
    HolderIn,
    HolderOut,
    LguIn,
    LguOut,
    ServiceAreaList,
    SiteIn,
    SiteOut,
)
from bank import parties, site_register
from bank.errors import NotFound

blp = Blueprint("parties", __name__, url_prefix="/api/v1", description="Parties and places")


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


@blp.route("/holders/<holder_id>")
class HolderById(MethodView):
    @roles("board", "holder")
    @blp.response(200, HolderOut)
    def get(self, holder_id: str) -> Any:
        """A holder (board, or the holder itself)."""
        who = actor()
        if not (who.is_board or who.holder_id == holder_id):
            raise NotFound(f"no holder {holder_id}")
        with database().transaction() as session:
            return parties.get_holder(session, holder_id)


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


@blp.route("/lgus/<lgu_id>")
class LguById(MethodView):
    @roles("board", "lgu", "holder")
    @blp.response(200, LguOut)
    def get(self, lgu_id: str) -> Any:
        """An LGU (public reference data for any token)."""
        actor()
        with database().transaction() as session:
            return parties.get_lgu(session, lgu_id)


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


@blp.route("/bank-sites/<site_id>")
class SiteById(MethodView):
    @roles("board", "holder")
    @blp.response(200, SiteOut)
    def get(self, site_id: str) -> Any:
        """A bank site (board, or its holder)."""
        who = actor()
        with database().transaction() as session:
            site = parties.get_site(session, site_id)
            if not (who.is_board or who.holder_id == site.holder_id):
                raise NotFound(f"no bank site {site_id}")
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
