"""The board's forms (issue #26): holders, LGUs, bank sites, accounts, deposits, appeals and
tokens, each a server-rendered form over the ``bank`` use case its API twin calls."""

from __future__ import annotations

from api.web import (
    board_accounts,
    board_appeals,
    board_deposits,
    board_parties,
    board_sites,
    board_tokens,
)


def load() -> None:
    """Declare every board form's routes on the pages' blueprint."""
    board_parties.load()
    board_sites.load()
    board_accounts.load()
    board_deposits.load()
    board_appeals.load()
    board_tokens.load()
