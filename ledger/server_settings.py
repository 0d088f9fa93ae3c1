"""PostgreSQL settings the ledger relies on, checked when the service starts.

With autovacuum off (or ``track_counts`` off, which stops autovacuum too) the planner keeps the
statistics of a table's first rows for good, and plans cached by connections are never thrown
away: a statement that reads a batch by index when the statistics are fresh can read every
entry ever written instead (docs/scaling.md "PostgreSQL settings the service relies on").
Nothing is wrong with the data, so the service still starts; it says so, once, where the
operator looks.
"""

from __future__ import annotations

from collections.abc import Mapping

from sqlalchemy import Connection, Engine

from ledger import store

#: setting -> the value the ledger needs, and why (said in the warning)
REQUIRED: dict[str, tuple[str, str]] = {
    "autovacuum": (
        "on",
        "planner statistics are never refreshed and cached plans never replaced, so statements "
        "can fall back to scanning whole tables as they grow",
    ),
    "track_counts": (
        "on",
        "autovacuum cannot tell which tables changed, so it never analyzes or vacuums them",
    ),
}


def warnings_for(settings: Mapping[str, str]) -> list[str]:
    """One warning per setting in ``settings`` (name -> value) that is not what we need."""
    found = []
    for name, (needed, why) in REQUIRED.items():
        value = settings.get(name)
        if value is not None and value != needed:
            found.append(
                f"PostgreSQL {name} is {value}: {why} "
                f'(docs/scaling.md, "PostgreSQL settings the service relies on")'
            )
    return found


def setting_warnings(engine: Engine) -> list[str]:
    """Warnings about the server's settings; none where there is no server (SQLite)."""
    with engine.connect() as connection:
        settings = store.of(connection).server_settings(connection, list(REQUIRED))
    return warnings_for(settings)


def takes_no_writes(connection: Connection) -> bool:
    """Whether the database refuses every write now: a hot standby, or
    ``default_transaction_read_only`` set on its database or role (PostgreSQL's
    ``transaction_read_only`` in ``connection``'s transaction).  Never where there is no server."""
    settings = store.of(connection).server_settings(connection, ["transaction_read_only"])
    return settings.get("transaction_read_only") == "on"
