"""The HTTP API (docs/http.md): app factory, configuration, views, problem details, command line."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from flask import Flask
from flask_smorest import Api

from api import (
    auth,
    body_limit,
    docs_pages,
    logs,
    metrics,
    openapi,
    openapi_problems,
    problems,
    web,
)
from api.application import Application
from api.config import build_config, embedded_database
from api.forwarded import ForwardedHeaders
from api.ratelimit import WriteLimiter
from api.schema_check import SchemaGuard
from api.schemas.common import ProblemSchema, date_range_property
from ledger import sealer
from ledger.db import Database


def create_app(config: Mapping[str, Any] | None = None) -> Flask:
    """Build the app: defaults, then the environment, then ``config``.  Connects lazily."""
    app = Application(__name__, instance_relative_config=True)
    app.config.update(build_config(app.instance_path, config))
    app.json.sort_keys = False  # type: ignore[attr-defined]
    logs.configure(app)  # first: its clock times every other hook

    db = Database.from_url(
        app.config["DATABASE_URL"],
        prepared_statements=app.config["WETBANK_PG_PREPARE"],
        **_pool(app.config),
    )
    app.extensions["wetbank.sealer"] = sealer.attach(db)  # None where each write seals (SQLite)
    app.extensions["wetbank.db"] = db
    if app.config.get("WETBANK_WRITE_RATE_LIMIT"):
        app.extensions["wetbank.write_limiter"] = WriteLimiter.parse(
            str(app.config["WETBANK_WRITE_RATE_LIMIT"])
        )

    api = _ProblemApi(
        app,
        spec_kwargs={
            "components": {"securitySchemes": _security()},
            "extra_plugins": [openapi.DocumentPlugin(app)],
        },
    )
    api.spec.options["security"] = [{"bearer": []}]
    # before the blueprints: their schemas are written into the document as they register
    api.ma_plugin.converter.add_attribute_function(date_range_property)
    _register_blueprints(api)
    problems.register(app)  # after Api, so our handlers replace flask-smorest's
    app.before_request(auth.assign_request_id)
    if app.config["WETBANK_CHECK_SCHEMA"]:
        SchemaGuard(db).register(app)
    auth.register(app)
    web.register(app)  # after auth: its session hook sets the actor that auth's hook resets
    docs_pages.register(app)
    body_limit.install(app)  # a chunked body over the limit is 413, never truncated
    metrics.install(app)
    hops = app.config["WETBANK_TRUST_PROXY"]
    if hops:
        # behind TLS-terminating proxies: the client's scheme, host and address as they sent them
        # (and the prefix and port, when they cannot point the service's URLs elsewhere)
        app.wsgi_app = ForwardedHeaders(  # type: ignore[method-assign]
            app.wsgi_app, x_for=hops, x_proto=hops, x_host=hops, x_port=hops, x_prefix=hops
        )
    return app


def _pool(config: Mapping[str, Any]) -> dict[str, Any]:
    """Each process's connection pool to a database server (PostgreSQL); an embedded database
    (SQLite) keeps SQLAlchemy's own."""
    if embedded_database(config):
        return {}
    return {
        "pool_size": config["WETBANK_POOL_SIZE"],
        "max_overflow": config["WETBANK_POOL_OVERFLOW"],
        "pool_timeout": config["WETBANK_POOL_TIMEOUT"],
    }


class _ProblemApi(Api):  # type: ignore[misc]  # flask-smorest is untyped
    """Documents error responses as they are sent: problem details, application/problem+json
    (flask-smorest's default describes another error body, as application/json)."""

    ERROR_SCHEMA = ProblemSchema

    def _register_responses(self) -> None:
        # ``code``: an enum of the stable codes
        self.ERROR_SCHEMA = openapi_problems.problem_schema()
        self.DEFAULT_RESPONSE_CONTENT_TYPE = problems.PROBLEM_JSON  # for the error responses only
        try:
            super()._register_responses()
        finally:
            del self.DEFAULT_RESPONSE_CONTENT_TYPE


def _security() -> dict[str, Any]:
    return {"bearer": {"type": "http", "scheme": "bearer"}}


def _register_blueprints(api: Api) -> None:
    from api import readiness
    from api.views import accounts, audit, money, movements, parties, plans, service

    for module in (service, readiness, parties, accounts, movements, plans, money, audit):
        api.register_blueprint(module.blp)
