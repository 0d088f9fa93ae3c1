"""``bank.access.confirm_token`` on both databases: a write's last check on its token reads the
token as its own unit of work has left it, pending changes included, not only as the database
held it when the unit last flushed."""

from __future__ import annotations

import pytest

from bank import access
from bank.access import ApiToken
from ledger import clock
from ledger.db import Database


def test_a_token_revoked_earlier_in_the_unit_is_refused_by_its_last_check(db: Database) -> None:
    """No request of the service changes its own token in its unit and then confirms it (a
    token revoking itself is confirmed as it is locked): this holds the check to its word for
    a unit that does, its change still pending in the session when the check reads the row."""
    with db.transaction() as session:
        row, _secret = access.create_token(session, role="board", name="revoked in the unit")
    with pytest.raises(access.TokenRevoked), db.transaction() as session:
        token = session.get(ApiToken, row.id)
        assert token is not None and token.revoked_at is None
        token.revoked_at = clock.utcnow()  # pending: not flushed yet
        access.confirm_token(session, row.id)
    # the refused unit rolled back: the token is live, and a unit leaving it so confirms it
    with db.transaction() as session:
        access.confirm_token(session, row.id)
        refreshed = session.get(ApiToken, row.id)
        assert refreshed is not None and refreshed.revoked_at is None
