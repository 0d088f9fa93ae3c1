"""Opaque, prefixed resource identifiers (docs/http.md "Conventions")."""

from __future__ import annotations

import secrets


def new_id(prefix: str) -> str:
    """A random id such as ``acct_3f9c0a1b2c3d4e5f``: unguessable, so ids leak nothing."""
    return f"{prefix}_{secrets.token_hex(8)}"
