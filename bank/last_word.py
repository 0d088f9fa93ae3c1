"""A draw's last word: the checks a transfer's or a reservation's record statement makes as it
inserts (``bank.transfers``, ``bank.reservations``), written once for both.

The statement that records a draw locks, FOR KEY SHARE, the sites of the lots drawn on and the
caller's token (and the accounts, which differ between the two), after every lock the draw may
have waited for, and inserts only if no such site is frozen and the token is not revoked.  A
freeze or a revocation that answered meanwhile is seen (a locking read that waited for one
returns the row as it left it); one still running waits for this transaction.  It answers with
what it found, and ``confirm`` turns that into the refusal a caller hears.  The sites and the
token are read through aggregates, so every row is read, and so locked.

PostgreSQL runs the checks as CTEs of the record's statement (``SITES_AND_TOKEN``, then
``FROZEN_SITES`` and ``REVOKED`` in its ``checked`` CTE); SQLite, whose one writer holds the
whole database, as conditions of its INSERT (``NOT_FROZEN_NOR_REVOKED``) and columns of its
answer (``FROZEN_SITES_SQLITE``, ``REVOKED_SQLITE``).  Parameters: ``:site_ids``, a JSON array of
site ids, and ``:token_id``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from sqlalchemy.orm import Session

from bank import access
from bank.access import Actor
from bank.lot_picking import check_sites

SITES_AND_TOKEN = """sites AS (
    SELECT id, frozen FROM bank_sites
    WHERE id = ANY(ARRAY(SELECT jsonb_array_elements_text(:site_ids::jsonb)))
    ORDER BY id
    FOR KEY SHARE
), token AS (
    SELECT revoked_at FROM api_tokens WHERE id = :token_id FOR KEY SHARE
)"""
FROZEN_SITES = "(SELECT array_agg(id ORDER BY id) FILTER (WHERE frozen) FROM sites)"
REVOKED = "(SELECT count(revoked_at) FROM token)"

NOT_FROZEN_NOR_REVOKED = """NOT EXISTS (SELECT 1 FROM bank_sites
                  WHERE frozen AND id IN (SELECT value FROM json_each(:site_ids)))
  AND NOT EXISTS (SELECT 1 FROM api_tokens WHERE id = :token_id AND revoked_at IS NOT NULL)"""
FROZEN_SITES_SQLITE = """(SELECT json_group_array(id) FROM (
            SELECT id FROM bank_sites
            WHERE frozen AND id IN (SELECT value FROM json_each(:site_ids)) ORDER BY id))"""
REVOKED_SQLITE = "(SELECT count(revoked_at) FROM api_tokens WHERE id = :token_id)"


def confirm(
    session: Session,
    actor: Actor,
    frozen_sites: Sequence[str] | None,
    revoked: int,
    check_accounts: Callable[[], None],
) -> None:
    """Refuse as the record's answer says, in the order a request meets the same checks first:
    a revoked token (``TokenRevoked``), then the accounts (``check_accounts``, the caller's, on
    the statuses its statement read), then a frozen site (``AccountFrozen``).  Else record that
    the unit of work has confirmed its token, so that the API's own last check
    (``access.confirm_token``) is not run again."""
    if revoked:
        raise access.TokenRevoked("the bearer token was revoked")
    access.token_confirmed(session, actor.token_id)
    check_accounts()
    check_sites(list(frozen_sites or []))
