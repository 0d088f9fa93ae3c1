"""Who may act: bearer tokens, the audit trail of access, and stored results of idempotent writes.

Tokens are random, shown once and stored only as a SHA-256 hash; a token is found by its hash and
the match re-checked in constant time.  Revoking one stops it at once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, NamedTuple, cast

from sqlalchemy import DateTime, Table, event, insert, select, update
from sqlalchemy.orm import Session, SessionTransaction

from bank import policy
from bank.access_tables import ApiToken as ApiToken
from bank.access_tables import AuditEvent as AuditEvent
from bank.access_tables import IdempotencyRecord as IdempotencyRecord
from bank.errors import BankError, NotFound, ValidationFailed
from bank.ids import new_id
from ledger import clock, store

ROLES = policy.ROLES
TOKEN_PREFIX = "wbt_"
#: a token's name: who or what uses it (``api_tokens.name`` holds this many characters)
TOKEN_NAME_MAX_LENGTH = 200
#: last-used time is refreshed at most this often, so reads do not all become writes
LAST_USED_RESOLUTION = timedelta(minutes=1)


@dataclass(frozen=True)
class Actor:
    """The authenticated caller."""

    token_id: str
    role: str
    name: str
    lgu_id: str | None = None
    holder_id: str | None = None

    @property
    def label(self) -> str:
        """How the ledger records this actor: ``name (token id)``."""
        return f"{self.name} ({self.token_id})"

    @property
    def is_board(self) -> bool:
        return self.role == "board"


#: the actor of command-line and demo writes
SYSTEM = Actor(token_id="system", role="board", name="system")


def hash_token(token: str) -> str:
    """The stored form of a token."""
    return hashlib.sha256(token.encode()).hexdigest()


def create_token(
    session: Session,
    *,
    role: str,
    name: str,
    lgu_id: str | None = None,
    holder_id: str | None = None,
    created_by: str | None = None,
) -> tuple[ApiToken, str]:
    """Create a token; returns the row and the secret, which is never stored or shown again."""
    _check_token_fields(role, name, lgu_id, holder_id)
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    row = ApiToken(
        id=new_id("tok"),
        token_hash=hash_token(secret),
        role=role,
        name=name,
        lgu_id=lgu_id if role == "lgu" else None,
        holder_id=holder_id if role == "holder" else None,
        created_at=clock.utcnow(),
        created_by=created_by,
    )
    session.add(row)
    session.flush()
    return row, secret


def check_token_name(name: str) -> None:
    """A token's name: 1 to ``TOKEN_NAME_MAX_LENGTH`` characters, not all blank.  The one rule
    for the API, the pages and ``wetbank token create``."""
    if not name.strip():
        raise ValidationFailed("a token needs a name", {"name": ["must not be blank"]})
    if len(name) > TOKEN_NAME_MAX_LENGTH:
        raise ValidationFailed(
            "a token's name is too long",
            {"name": [f"at most {TOKEN_NAME_MAX_LENGTH} characters, not {len(name)}"]},
        )


def _check_token_fields(role: str, name: str, lgu_id: str | None, holder_id: str | None) -> None:
    if role not in ROLES:
        raise ValidationFailed("unknown role", {"role": [f"must be one of {', '.join(ROLES)}"]})
    check_token_name(name)
    if role == "lgu" and not lgu_id:
        raise ValidationFailed("an lgu token needs lgu_id", {"lgu_id": ["required for role lgu"]})
    if role == "holder" and not holder_id:
        raise ValidationFailed(
            "a holder token needs holder_id", {"holder_id": ["required for role holder"]}
        )
    # a party the role does not act for is a mistake, not something to drop silently
    if lgu_id and role != "lgu":
        raise ValidationFailed(f"a {role} token acts for no LGU", {"lgu_id": ["only for role lgu"]})
    if holder_id and role != "holder":
        raise ValidationFailed(
            f"a {role} token acts for no holder", {"holder_id": ["only for role holder"]}
        )


class TokenRevoked(BankError):
    """The request's token was revoked before the request could commit."""

    code = "unauthorized"


def revoke_token(session: Session, token_id: str, by: str | None = None) -> bool:
    """Revoke a token: it stops working at once.  Whether this call revoked it: ``False`` for a
    token revoked already, which is left as it was (its ``revoked_at`` is kept).

    The row is locked ``FOR UPDATE``, so the revocation waits for every write that has confirmed
    the token (``confirm_token``) to commit, and a write confirming it later sees it and is
    refused.  ``by``, the revoking request's own token, is locked in the same statement (ids
    ascending: two tokens revoking each other take turns, never deadlock) and must still be live
    (``TokenRevoked`` if not, even when it is the token to revoke): locked and live, it is
    confirmed for the unit of work as ``confirm_token`` would confirm it (``token_confirmed``).
    So a token may revoke itself, the one act that may end with the caller's own token revoked:
    the write's last check, run after the revocation, does not refuse it.
    """
    ids = sorted({token_id} if by is None else {token_id, by})
    rows = session.execute(
        select(ApiToken)
        .where(ApiToken.id.in_(ids))
        .order_by(ApiToken.id)
        .with_for_update()
        .execution_options(populate_existing=True)
    ).scalars()
    by_id = {row.id: row for row in rows}
    if by is not None and by in by_id:
        if by_id[by].revoked_at is not None:
            raise TokenRevoked("the bearer token was revoked")
        token_confirmed(session, by)
    row = by_id.get(token_id)
    if row is None:
        raise NotFound(f"token {token_id} does not exist")
    if row.revoked_at is not None:
        return False
    row.revoked_at = clock.utcnow()
    return True


# Fixed SQL: this runs on every request, and a statement built per call costs SQLAlchemy more
# (cache key, ORM entity loading) than the database spends on it; the store prepares it once
# per connection (on PostgreSQL through psycopg, at about half the client CPU of Core).
_TOKENS = cast(Table, ApiToken.__table__).c  # the table's columns: Core, no ORM loading
_TOKEN_BY_HASH = store.Statement(
    """SELECT id, token_hash, role, name, lgu_id, holder_id, revoked_at, last_used_at
    FROM api_tokens WHERE token_hash = :digest""",
    columns={"revoked_at": DateTime(timezone=True), "last_used_at": DateTime(timezone=True)},
)


class _TokenRow(NamedTuple):
    id: str
    token_hash: str
    role: str
    name: str
    lgu_id: str | None
    holder_id: str | None
    revoked_at: datetime | None
    last_used_at: datetime | None


def _token_by_hash(session: Session, digest: str) -> _TokenRow | None:
    found = store.of(session).run(session, _TOKEN_BY_HASH, {"digest": digest})
    return _TokenRow(*found[0]) if found else None


def authenticate(session: Session, secret: str) -> Actor | None:
    """The actor a bearer secret stands for, or ``None`` if it is unknown or revoked."""
    digest = hash_token(secret)
    return _actor_of(session, _token_by_hash(session, digest), digest)


def _actor_of(session: Session, row: _TokenRow | None, digest: str) -> Actor | None:
    if row is None or row.revoked_at is not None:
        return None
    if not hmac.compare_digest(row.token_hash, digest):
        return None
    now = clock.utcnow()
    if row.last_used_at is None or clock.as_utc(row.last_used_at) < now - LAST_USED_RESOLUTION:
        record_use(session, row.id, now)
    return Actor(row.id, row.role, row.name, row.lgu_id, row.holder_id)


#: ``Session.info`` key: the token use a unit of work recorded (``use_recorded``)
_USED = "bank.access.used"


def record_use(session: Session, token_id: str, at: datetime) -> None:
    """Record that the token was used ``at`` (its ``last_used_at``), unless another unit of work
    holds its row: then that one records it.

    A request checks its token inside the unit of work it reads or writes in, so this row lock
    lasts until that unit commits: concurrent requests with the token skip the update rather than
    queue behind it (PostgreSQL; SQLite has one writer anyway).  ``FOR NO KEY UPDATE``: other
    writes' ``confirm_token`` (KEY SHARE) need not wait for this one; a revocation (FOR UPDATE)
    does, until the request's unit ends.
    """
    unlocked = (
        select(_TOKENS.id)
        .where(_TOKENS.id == token_id)
        .with_for_update(skip_locked=True, key_share=True)
    )
    done = session.execute(
        update(ApiToken).where(ApiToken.id.in_(unlocked.scalar_subquery())).values(last_used_at=at)
    )
    if cast(Any, done).rowcount:
        session.info[_USED] = (token_id, at)


def use_recorded(session: Session) -> tuple[str, datetime] | None:
    """The token and time whose use this unit of work recorded (``record_use``), if it did: a
    caller that rolls the unit back (a read refused) records it again in a unit of its own."""
    found: tuple[str, datetime] | None = session.info.get(_USED)
    return found


# A write's last word on its token, taken in the write's own transaction just before it commits.
# ``FOR KEY SHARE`` conflicts with the revocation's ``FOR UPDATE`` only (not with another write's
# share, nor with the ``last_used_at`` update), and a locking read that waited for a revocation
# returns the row as the revocation left it: so a revocation either waits for this write to
# commit, or this write sees it and is refused.
_CONFIRM = store.Statement(
    "SELECT revoked_at FROM api_tokens WHERE id = :token_id {for_key_share}",
    columns={"revoked_at": DateTime(timezone=True)},
)
#: ``Session.info`` key: the token a unit of work has confirmed (``token_confirmed``)
_CONFIRMED = "bank.access.confirmed_token"


def confirm_token(session: Session, token_id: str) -> None:
    """Refuse (``TokenRevoked``, 401) a write whose token was revoked after it authenticated.

    Called last in a write's transaction (``api.idempotency.writes``), after every lock the write
    may have waited for: a revocation that has answered is seen here, and one still running waits
    for this transaction (the row stays locked until it ends).  Skipped when the unit's own
    statement already did the same (``token_confirmed``).  A token with no row (the command
    line's ``SYSTEM``) has nothing to revoke.
    """
    if session.info.get(_CONFIRMED) == token_id:
        return
    # the store runs its statement on the session's connection, without the ORM's autoflush on
    # PostgreSQL: flushed first, a change to the token's row still pending in the unit is read
    session.flush()
    found = store.of(session).run(session, _CONFIRM, {"token_id": token_id})
    if found and found[0][0] is not None:
        raise TokenRevoked("the bearer token was revoked")
    token_confirmed(session, token_id)


def token_confirmed(session: Session, token_id: str) -> None:
    """Record that this unit of work has locked and checked ``token_id`` (as ``confirm_token``
    does), in a statement of its own that also did other work."""
    session.info[_CONFIRMED] = token_id


# --- the audit trail of access -----------------------------------------------------------------
#
# ``GET /audit/events`` pages by event id (``id > cursor``), and its pages must never skip an
# event: a reader that has seen an id must already see every smaller id that will ever commit.
# An id is taken from a sequence when its row is inserted, but a transaction commits later, so
# on PostgreSQL an event of a unit of work still open (a token created or revoked in a wider
# unit) could commit after a later id had been read, behind the reader's cursor.  Two rules keep
# the order (SQLite needs neither: one writer holds the whole database from its first statement
# to its commit, so its ids commit in order):
#
# 1. A unit of work writes its events only when it commits (``before_commit``): ``record_event``
#    keeps them in the session until then.  So whatever else the unit does, the time from an
#    event's id to its commit is one INSERT and the COMMIT.
# 2. Writing them, it first takes the trail's lock (``AUDIT_TRAIL_LOCK``) shared, and holds it to
#    its commit; a reader of the trail (``settle_events``) takes it alone, which waits for the
#    writers that have taken ids to commit (or roll back) and holds new ones off (PostgreSQL
#    queues them behind it) until its one SELECT is done.  No writer then holds an id it has
#    not committed, so below any id the reader sees it sees every event that will ever commit.
#
# Why shared for writers and alone for readers, rather than writers alone (ids taken in commit
# order, readers waiting for nothing): every refused request (401, 403) is recorded in its own
# short transaction, and a hostile flood of them would then commit one at a time, each holding
# the lock over its commit's flush to disk; shared, they commit side by side and group their
# flushes.  The board's reads, few and short, wait instead: for the writers in their last
# statements, never for a unit of work still running (rule 1).
#
# No deadlock: a writer takes the lock as the last thing it does before COMMIT (after every row
# lock its unit took, the token's ``confirm_token`` included) and then waits for nothing but the
# INSERT, which conflicts with nothing (ids come from the sequence); a reader takes it first in
# its transaction and then only reads.  A long unit of work that created or revoked a token
# holds the lock for no longer than a refusal's own transaction does, so neither refusals nor
# readers queue behind it.

#: the trail's lock: PostgreSQL's transaction-level advisory lock of this key (next to the
#: sealer's ``ledger.chain.SEALER_LOCK_KEY``); on SQLite nothing, the writer holds the database
AUDIT_TRAIL_LOCK = 0x1ED6E8
#: ``Session.info`` key: the events a unit of work has recorded, written when it commits
_EVENTS = "bank.access.events"


def record_event(
    session: Session,
    *,
    kind: str,
    path: str,
    status: int,
    actor: str | None,
    request_id: str | None,
) -> None:
    """Append one access event to the audit trail: written when the unit of work commits, and
    with it rolled back (``at`` is now, when it happened)."""
    pending: list[dict[str, Any]] | None = session.info.get(_EVENTS)
    if pending is None:
        pending = session.info[_EVENTS] = []
        if not event.contains(session, "before_commit", _write_events):
            event.listen(session, "before_commit", _write_events)
            event.listen(session, "after_transaction_end", _forget_events)
    pending.append(
        {
            "at": clock.utcnow(),
            "actor": actor,
            "kind": kind,
            "path": path[:500],
            "request_id": request_id,
            "status": status,
        }
    )


def _write_events(session: Session) -> None:
    if session.in_nested_transaction():
        return  # a savepoint's release: its events wait for the outermost commit
    pending = session.info.pop(_EVENTS, None)
    if pending:
        session.flush()  # the unit's own changes first: no row lock is waited for under the lock
        store.of(session).advisory_lock(session, AUDIT_TRAIL_LOCK, shared=True)
        session.execute(insert(AuditEvent), pending)


def _forget_events(session: Session, transaction: SessionTransaction) -> None:
    if transaction.parent is None:  # the unit of work ended: rolled back, its events with it
        session.info.pop(_EVENTS, None)


def settle_events(session: Session) -> None:
    """Before a read of the trail: wait for the units of work writing events to end, and keep
    new ones from taking ids until this transaction ends.  Its next statement (READ COMMITTED:
    a snapshot of its own) sees every event whose id is below one it sees."""
    store.of(session).advisory_lock(session, AUDIT_TRAIL_LOCK)


# --- idempotent writes ------------------------------------------------------------------------


@dataclass(frozen=True)
class StoredResult:
    """What a key holds: its request hash and, once the write succeeded, its response."""

    request_hash: str
    status: int | None
    body: str | None
    content_type: str | None


# Fixed SQL, as for the token: a write with a key runs these on every request.
_CLAIM = store.Statement(
    """INSERT INTO idempotency_records (token_id, key, request_hash, created_at)
    VALUES (:token_id, :key, :request_hash, :created_at)
    ON CONFLICT DO NOTHING RETURNING key""",
    types={"created_at": DateTime(timezone=True)},
)
_STORED = store.Statement(
    """SELECT request_hash, status, body, content_type FROM idempotency_records
    WHERE token_id = :token_id AND key = :key"""
)
_STORE_RESULT = store.Statement(
    """UPDATE idempotency_records SET status = :status, body = :body, content_type = :content_type
    WHERE token_id = :token_id AND key = :key"""
)
# ``authenticate`` and ``claim_key`` in one round trip: the token's row, and the key claimed for
# it if it is live (a claim made for a caller then refused, by role or otherwise, is rolled back
# with its transaction).  SQLite has no INSERT inside WITH: it claims, then reads the token and
# whether the claim inserted a row (``changes()``).
_AUTHENTICATE_CLAIMING = store.Statement(
    postgresql="""
WITH token AS (
    SELECT id, token_hash, role, name, lgu_id, holder_id, revoked_at, last_used_at
    FROM api_tokens WHERE token_hash = :digest
), claim AS (
    INSERT INTO idempotency_records (token_id, key, request_hash, created_at)
    SELECT id, :key, :request_hash, :created_at FROM token WHERE revoked_at IS NULL
    ON CONFLICT DO NOTHING
    RETURNING key
)
SELECT id, token_hash, role, name, lgu_id, holder_id, revoked_at, last_used_at,
    (SELECT count(*) FROM claim) AS claimed
FROM token
""",
    sqlite=(
        """
INSERT INTO idempotency_records (token_id, key, request_hash, created_at)
SELECT id, :key, :request_hash, :created_at FROM api_tokens
WHERE token_hash = :digest AND revoked_at IS NULL
ON CONFLICT DO NOTHING
""",
        """
SELECT id, token_hash, role, name, lgu_id, holder_id, revoked_at, last_used_at,
    changes() AS claimed
FROM api_tokens WHERE token_hash = :digest
""",
    ),
    types={"created_at": DateTime(timezone=True)},
    columns={"revoked_at": DateTime(timezone=True), "last_used_at": DateTime(timezone=True)},
)


def claim_key(session: Session, token_id: str, key: str, request_hash: str) -> StoredResult | None:
    """Claim ``key`` for this request inside the current transaction.

    Returns ``None`` when the claim is ours (go ahead and write), or the earlier request's stored
    result.  On PostgreSQL a concurrent twin's claim blocks here until that twin commits (we then
    replay it) or rolls back (the claim becomes ours): the in-flight duplicate waits.
    """
    existing = stored_result(session, token_id, key)
    if existing is not None:
        return existing
    params = {
        "token_id": token_id,
        "key": key,
        "request_hash": request_hash,
        "created_at": clock.utcnow(),
    }
    claimed = store.of(session).run(session, _CLAIM, params)
    return None if claimed else stored_result(session, token_id, key)


def authenticate_claiming(
    session: Session, secret: str, key: str, request_hash: str
) -> tuple[Actor | None, StoredResult | None]:
    """``authenticate`` and, for a live token, ``claim_key`` in the same round trip: the actor
    (``None``: unknown or revoked, and nothing claimed), and what ``claim_key`` returns."""
    digest = hash_token(secret)
    params = {
        "digest": digest,
        "key": key,
        "request_hash": request_hash,
        "created_at": clock.utcnow(),
    }
    found = store.of(session).run(session, _AUTHENTICATE_CLAIMING, params)
    row = _TokenRow(*found[0][:-1]) if found else None
    who = _actor_of(session, row, digest)
    if who is None or found[0][-1]:
        return who, None
    # the key was taken: by an earlier request, or by a twin that committed while we waited
    return who, stored_result(session, who.token_id, key)


def store_result(
    session: Session, token_id: str, key: str, status: int, body: str, content_type: str
) -> None:
    """Keep a successful write's response under its key."""
    params = {
        "token_id": token_id,
        "key": key,
        "status": status,
        "body": body,
        "content_type": content_type,
    }
    store.of(session).run(session, _STORE_RESULT, params)


def stored_result(session: Session, token_id: str, key: str) -> StoredResult | None:
    """What ``key`` holds for the token, if it was claimed."""
    found = store.of(session).run(session, _STORED, {"token_id": token_id, "key": key})
    return StoredResult(*found[0]) if found else None
