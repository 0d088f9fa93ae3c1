"""Configuration: defaults, then the environment (`WETBANK_*`, `DATABASE_URL`), then overrides."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

DEFAULTS: dict[str, Any] = {
    "API_TITLE": "Wetland bank ledger",
    "API_VERSION": "v1",
    "OPENAPI_VERSION": "3.0.3",
    "OPENAPI_URL_PREFIX": "/api/v1",
    "OPENAPI_JSON_PATH": "openapi.json",
    # a body over this size is refused with 413 before it is parsed
    "MAX_CONTENT_LENGTH": 1024 * 1024,
    "WETBANK_WRITE_RATE_LIMIT": None,  # e.g. "60/minute" per token; off unless configured
    "WETBANK_CHECK_SCHEMA": True,
    "JSON_SORT_KEYS": False,
    # the pages' session cookie is Secure (sent over HTTPS only) unless turned off for plain HTTP
    "WETBANK_COOKIE_SECURE": True,
}

#: environment variables read, and the config key each sets
ENVIRONMENT = {
    "DATABASE_URL": "DATABASE_URL",
    "WETBANK_SECRET_KEY": "SECRET_KEY",
    "WETBANK_WRITE_RATE_LIMIT": "WETBANK_WRITE_RATE_LIMIT",
    "WETBANK_MAX_BODY_BYTES": "MAX_CONTENT_LENGTH",
    "WETBANK_COOKIE_SECURE": "WETBANK_COOKIE_SECURE",
}

_FALSE = {"0", "false", "no", "off"}


def build_config(instance_path: str, overrides: Mapping[str, Any] | None) -> dict[str, Any]:
    """The app's configuration, in order of precedence: overrides, environment, defaults."""
    config = dict(DEFAULTS)
    for variable, key in ENVIRONMENT.items():
        if os.environ.get(variable):
            config[key] = os.environ[variable]
    config.update(overrides or {})
    if not config.get("DATABASE_URL"):
        Path(instance_path).mkdir(parents=True, exist_ok=True)
        config["DATABASE_URL"] = f"sqlite:///{Path(instance_path) / 'wetbank.sqlite3'}"
    if not config.get("SECRET_KEY"):
        config["SECRET_KEY"] = secrets.token_hex(32)
    config["MAX_CONTENT_LENGTH"] = int(config["MAX_CONTENT_LENGTH"])
    if isinstance(config["WETBANK_COOKIE_SECURE"], str):
        config["WETBANK_COOKIE_SECURE"] = config["WETBANK_COOKIE_SECURE"].lower() not in _FALSE
    return config
