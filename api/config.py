"""Configuration: defaults, then the environment (`WETBANK_*`, `DATABASE_URL`), then overrides."""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ledger import store

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
    # proxies in front of the service whose X-Forwarded-* headers are believed (ProxyFix hops)
    "WETBANK_TRUST_PROXY": 0,
    # server-side prepared statements on PostgreSQL; off behind a pooler in transaction mode
    "WETBANK_PG_PREPARE": True,
    # each process's connection pool (PostgreSQL): kept open, extra under load, wait for one
    "WETBANK_POOL_SIZE": 10,
    "WETBANK_POOL_OVERFLOW": 20,
    "WETBANK_POOL_TIMEOUT": 30,
    # /api/v1/ready answers 503 while a committed transaction has waited longer to be sealed
    "WETBANK_READY_MAX_SEAL_AGE_SECONDS": 60,
}

#: environment variables read, and the config key each sets
ENVIRONMENT = {
    "DATABASE_URL": "DATABASE_URL",
    "WETBANK_SECRET_KEY": "SECRET_KEY",
    "WETBANK_WRITE_RATE_LIMIT": "WETBANK_WRITE_RATE_LIMIT",
    "WETBANK_MAX_BODY_BYTES": "MAX_CONTENT_LENGTH",
    "WETBANK_COOKIE_SECURE": "WETBANK_COOKIE_SECURE",
    "WETBANK_TRUST_PROXY": "WETBANK_TRUST_PROXY",
    "WETBANK_PG_PREPARE": "WETBANK_PG_PREPARE",
    "WETBANK_POOL_SIZE": "WETBANK_POOL_SIZE",
    "WETBANK_POOL_OVERFLOW": "WETBANK_POOL_OVERFLOW",
    "WETBANK_POOL_TIMEOUT": "WETBANK_POOL_TIMEOUT",
    "WETBANK_READY_MAX_SEAL_AGE_SECONDS": "WETBANK_READY_MAX_SEAL_AGE_SECONDS",
}

_FALSE = {"0", "false", "no", "off"}
_TRUE = {"1", "true", "yes", "on"}
#: config key -> the smallest whole number it takes
_WHOLE_NUMBERS = {
    "MAX_CONTENT_LENGTH": 1,
    "WETBANK_TRUST_PROXY": 0,
    "WETBANK_POOL_SIZE": 1,
    "WETBANK_POOL_OVERFLOW": 0,
    "WETBANK_POOL_TIMEOUT": 1,
    "WETBANK_READY_MAX_SEAL_AGE_SECONDS": 1,
}
#: the file in the instance folder that keeps a SQLite installation's generated secret key
SECRET_KEY_FILE = "secret_key"


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
    if config.get("SECRET_KEY"):
        config["WETBANK_SECRET_KEY_SOURCE"] = "configured"
    elif embedded_database(config):
        # every worker runs on this machine: one generated key, kept where each finds it
        config["SECRET_KEY"] = instance_secret(Path(instance_path))
        config["WETBANK_SECRET_KEY_SOURCE"] = "instance"
    else:
        # this process's own: ``wetbank serve`` and ``api.wsgi`` refuse to serve with it
        config["SECRET_KEY"] = secrets.token_hex(32)
        config["WETBANK_SECRET_KEY_SOURCE"] = "process"
    for key, minimum in _WHOLE_NUMBERS.items():
        config[key] = _whole_number(key, config[key], minimum)
    if isinstance(config["WETBANK_COOKIE_SECURE"], str):
        config["WETBANK_COOKIE_SECURE"] = config["WETBANK_COOKIE_SECURE"].lower() not in _FALSE
    config["WETBANK_PG_PREPARE"] = _switch("WETBANK_PG_PREPARE", config["WETBANK_PG_PREPARE"])
    return config


def embedded_database(config: Mapping[str, Any]) -> bool:
    """Whether ``DATABASE_URL`` names a database this machine's processes open themselves
    (SQLite, ``ledger.store.Store.embedded``): every worker then runs here, sharing the
    instance folder, and no database server counts their connections."""
    return store.for_url(str(config["DATABASE_URL"])).embedded


def shared_secret_problem(config: Mapping[str, Any]) -> str | None:
    """Why a server may not start with this secret key, or ``None``.

    Every worker must hold the same key; with a database server (PostgreSQL, production), whose
    workers may run on several machines, it must be configured.
    """
    if embedded_database(config) or config.get("WETBANK_SECRET_KEY_SOURCE") != "process":
        return None
    return (
        "WETBANK_SECRET_KEY is not set: on PostgreSQL every worker needs the same secret key. "
        "Generate one (python3 -c 'import secrets; print(secrets.token_hex(32))') and set it "
        "in the service's environment (docs/operations.md)."
    )


def instance_secret(folder: Path) -> str:
    """The secret key kept in ``folder`` (created on first use, readable by its owner only)."""
    path = folder / SECRET_KEY_FILE
    try:
        return _read_secret(path)
    except FileNotFoundError:
        pass
    folder.mkdir(parents=True, exist_ok=True)
    draft = folder / f".{SECRET_KEY_FILE}.{secrets.token_hex(8)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(secrets.token_hex(32))
    try:
        os.link(draft, path)  # atomic, and never replaces a key another worker wrote first
    except FileExistsError:
        pass
    finally:
        draft.unlink()
    return _read_secret(path)


def _read_secret(path: Path) -> str:
    value = path.read_text().strip()
    if not value:
        raise ValueError(f"{path} is empty: delete it and a new secret key is generated")
    return value


def _whole_number(key: str, value: Any, minimum: int) -> int:
    try:
        number = int(str(value).strip())
    except ValueError:
        number = minimum - 1
    if number < minimum:
        name = next((v for v, k in ENVIRONMENT.items() if k == key), key)
        raise ValueError(f"{name} must be a whole number of at least {minimum}, not {value!r}")
    return number


def _switch(key: str, value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text not in _TRUE | _FALSE:
        raise ValueError(f"{key} must be on or off, not {value!r}")
    return text in _TRUE
