"""The ledger against a reference model, on both databases.

Hypothesis drives random accounts of two assets (an unlimited issuer, no-overdraft holders and an
unlimited plain account per asset) through transfers, batches, pending transfers (posted in full
or in part, voided, or expired by a frozen clock moving forward), reversals and idempotent retries
and conflicts.  A tiny in-Python model says what each step must do.  After every step: per-asset
sums are zero, every balance equals the model, no no-overdraft account is negative, a refused step
changed nothing, and every stored balance equals the model.  The hash chain and the stored
balances are verified in full after every ``CHAIN_EVERY`` steps and once more at the end of a run
(its teardown): a full verification reads the whole ledger, so after every step it would cost
time quadratic in the run, and a chain broken at one step stays broken until the next point.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from freezegun import freeze_time
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)
from sqlalchemy.orm import Session

from ledger import (
    AlreadyResolved,
    AlreadyReversed,
    Database,
    IdempotencyConflict,
    InsufficientFunds,
    LedgerError,
    Leg,
    Meta,
    PendingExpired,
    Posted,
    UnbalancedTransaction,
    balances,
    clock,
    pending_state,
    post_pending,
    reserve,
    reverse,
    transfer,
    verify,
    void_pending,
)
from ledger.sealer import seal_all
from tests.integration.ledger_kit import open_accounts, row_counts, stored_rows, unique

START = datetime(2030, 1, 1, 17, 0, tzinfo=UTC)
ISSUER, PLAIN = 0, 4  # account slots per asset; 1-3 are no-overdraft holders
SLOTS = st.integers(0, 4)
ASSET = st.integers(0, 1)
AMOUNT = st.integers(1, 300)
PICK = st.integers(0, 10**6)  # an index into whatever list a rule picks from, modulo its length
CHAIN_EVERY = 5  # steps between two full verifications of the hash chain and stored balances

Write = Callable[[Session], Posted]


@dataclass
class PendingModel:
    debit: int
    credit: int
    amount: int
    expires_at: datetime | None
    resolution: str | None = None  # "posted" or "voided"


@dataclass
class Done:
    """A write the engine accepted: replaying it must return ``transaction_id``."""

    write: Write
    key: str
    transaction_id: int


class LedgerMachine(RuleBasedStateMachine):
    db: Database  # set by the test, one private database per backend

    def __init__(self) -> None:
        super().__init__()
        self.freezer = freeze_time(START)
        self.clock = self.freezer.start()
        try:
            self.setup()
        except BaseException:
            self.freezer.stop()  # teardown only runs for a machine that was built
            raise

    def setup(self) -> None:
        self.now = START
        tag = unique("A")[:14]
        self.assets = [f"{tag}-X", f"{tag}-Y"]
        self.slots: list[list[int]] = [
            open_accounts(self.db, asset, False, True, True, True, False) for asset in self.assets
        ]
        self.accounts = [a for slots in self.slots for a in slots]
        self.limited = {slots[i] for slots in self.slots for i in (1, 2, 3)}
        self.posted: dict[int, int] = defaultdict(int)
        self.pendings: dict[int, PendingModel] = {}
        self.reversible: dict[int, dict[int, int]] = {}  # transaction -> posted amount per account
        self.reversed: set[int] = set()
        self.done: list[Done] = []
        # steps run, counted by an invariant: Hypothesis checks the invariants once before the
        # first step too, which makes this 0
        self.steps = -1
        self.verified_at: int | None = None  # the step after which the chain last verified
        for asset in (0, 1):  # the holders start with something to spend, reserve or overdraw
            self.move([(asset, ISSUER, holder, 200) for holder in (1, 2, 3)])

    def teardown(self) -> None:
        try:
            if self.verified_at is None or self.verified_at < self.steps:
                self.the_ledger_verifies()
        finally:
            self.freezer.stop()

    # --- the model --------------------------------------------------------------------------

    def live(self) -> list[PendingModel]:
        return [
            p
            for p in self.pendings.values()
            if p.resolution is None and (p.expires_at is None or p.expires_at > self.now)
        ]

    def reserved(self, account: int) -> tuple[int, int]:
        live = self.live()
        return (
            sum(p.amount for p in live if p.debit == account),
            sum(p.amount for p in live if p.credit == account),
        )

    def overdraws(self, deltas: dict[int, int]) -> bool:
        """Whether posting ``deltas`` would take a no-overdraft account's available below 0."""
        return any(
            self.posted[a] + d - self.reserved(a)[0] < 0
            for a, d in deltas.items()
            if a in self.limited
        )

    def state_of(self, pending: PendingModel) -> str:
        if pending.resolution:
            return pending.resolution
        if pending.expires_at is not None and pending.expires_at <= self.now:
            return "expired"
        return "pending"

    def meta(self) -> Meta:
        return Meta(unique("key"), clock.today())

    # --- running a step ---------------------------------------------------------------------

    def snapshot(self) -> Any:
        return row_counts(self.db), stored_rows(self.db, self.accounts)

    def refused(self, write: Write, error: type[LedgerError]) -> None:
        before = self.snapshot()
        with pytest.raises(error) as refusal:
            self.db.run(write)
        assert type(refusal.value) is error, repr(refusal.value)
        assert self.snapshot() == before, "a refused step changed the ledger"

    def accepted(self, write: Write, key: str) -> Posted:
        result = self.db.run(write)
        assert result.replayed is False
        self.done.append(Done(write, key, result.transaction_id))
        return result

    def post_deltas(self, transaction_id: int, deltas: dict[int, int]) -> None:
        for account, delta in deltas.items():
            self.posted[account] += delta
        self.reversible[transaction_id] = {a: d for a, d in deltas.items() if d}

    def account(self, asset: int, slot: int) -> int:
        return self.slots[asset][slot]

    # --- rules ------------------------------------------------------------------------------

    @rule(asset=ASSET, source=SLOTS, dest=SLOTS, amount=AMOUNT)
    def transfer_one(self, asset: int, source: int, dest: int, amount: int) -> None:
        self.move([(asset, source, dest, amount)])

    @rule(legs=st.lists(st.tuples(ASSET, SLOTS, st.integers(1, 4), AMOUNT), min_size=2, max_size=4))
    def batch(self, legs: list[tuple[int, int, int, int]]) -> None:
        # each leg moves between two different accounts; one of them may overdraw
        self.move([(a, s, (s + offset) % 5, n) for a, s, offset, n in legs])

    def move(self, specs: list[tuple[int, int, int, int]]) -> None:
        legs = [Leg(self.account(a, s), self.account(a, t), n) for a, s, t, n in specs]
        meta = self.meta()

        def write(session: Session) -> Posted:
            return transfer(session, "transfer", legs, meta)

        deltas: dict[int, int] = defaultdict(int)
        for leg in legs:
            deltas[leg.debit_account_id] -= leg.amount
            deltas[leg.credit_account_id] += leg.amount
        if any(leg.debit_account_id == leg.credit_account_id for leg in legs):
            self.refused(write, UnbalancedTransaction)
        elif self.overdraws(deltas):
            self.refused(write, InsufficientFunds)
        else:
            result = self.accepted(write, meta.idempotency_key)
            self.post_deltas(result.transaction_id, deltas)

    @rule(source=SLOTS, dest=SLOTS, amount=AMOUNT)
    def transfer_across_assets(self, source: int, dest: int, amount: int) -> None:
        leg = Leg(self.account(0, source), self.account(1, dest), amount)
        meta = self.meta()
        self.refused(lambda s: transfer(s, "transfer", [leg], meta), UnbalancedTransaction)

    @rule(
        asset=ASSET,
        source=SLOTS,
        offset=st.integers(0, 4),
        amount=AMOUNT,
        ttl=st.sampled_from([1, 60, 599, 600]),
    )
    def reserve_until_expiry(
        self, asset: int, source: int, offset: int, amount: int, ttl: int
    ) -> None:
        self.reserve_one(asset, source, offset, amount, ttl)

    @rule(asset=ASSET, source=SLOTS, offset=st.integers(0, 4), amount=AMOUNT)
    def reserve_until_resolved(self, asset: int, source: int, offset: int, amount: int) -> None:
        self.reserve_one(asset, source, offset, amount, None)

    def reserve_one(
        self, asset: int, source: int, offset: int, amount: int, ttl: int | None
    ) -> None:
        # offset 0 reserves from an account to itself, which is refused
        debit = self.account(asset, source)
        credit = self.account(asset, (source + offset) % 5)
        expires_at = self.now + timedelta(seconds=ttl) if ttl is not None else None
        meta = self.meta()

        def write(session: Session) -> Posted:
            return reserve(
                session, "hold", [Leg(debit, credit, amount)], meta, expires_at=expires_at
            )

        if debit == credit:
            self.refused(write, UnbalancedTransaction)
        elif self.overdraws({debit: -amount}):
            self.refused(write, InsufficientFunds)
        else:
            result = self.accepted(write, meta.idempotency_key)
            self.pendings[result.transaction_id] = PendingModel(debit, credit, amount, expires_at)

    def pick_pending(self, pick: int, unresolved: bool) -> int:
        """A pending transfer, by preference one not resolved yet (it may have expired)."""
        ids = sorted(self.pendings)
        fresh = [i for i in ids if self.pendings[i].resolution is None]
        choices = fresh if unresolved and fresh else ids
        return choices[pick % len(choices)]

    @precondition(lambda self: self.pendings)
    @rule(
        pick=PICK,
        unresolved=st.booleans(),
        how=st.sampled_from(["in full", "one", "half", "all", "zero", "too much"]),
    )
    def post(self, pick: int, unresolved: bool, how: str) -> None:
        pending_id = self.pick_pending(pick, unresolved)
        pending = self.pendings[pending_id]
        part = {
            "in full": None,
            "one": 1,
            "half": max(1, pending.amount // 2),
            "all": pending.amount,
            "zero": 0,
            "too much": pending.amount + 1,
        }[how]
        meta = self.meta()

        def write(session: Session) -> Posted:
            return post_pending(session, pending_id, meta, amount=part)

        state = self.state_of(pending)
        if state == "expired":
            self.refused(write, PendingExpired)
        elif state != "pending":
            self.refused(write, AlreadyResolved)
        elif part is not None and not 0 < part <= pending.amount:
            self.refused(write, LedgerError)
        else:
            result = self.accepted(write, meta.idempotency_key)
            amount = pending.amount if part is None else part
            pending.resolution = "posted"
            self.post_deltas(
                result.transaction_id, {pending.debit: -amount, pending.credit: amount}
            )

    @precondition(lambda self: self.pendings)
    @rule(pick=PICK, unresolved=st.booleans())
    def void(self, pick: int, unresolved: bool) -> None:
        pending_id = self.pick_pending(pick, unresolved)
        pending = self.pendings[pending_id]
        meta = self.meta()

        def write(session: Session) -> Posted:
            return void_pending(session, pending_id, meta)

        state = self.state_of(pending)
        if state == "expired":
            self.refused(write, PendingExpired)
        elif state != "pending":
            self.refused(write, AlreadyResolved)
        else:
            self.accepted(write, meta.idempotency_key)
            pending.resolution = "voided"

    @rule(seconds=st.sampled_from([1, 30, 120, 599, 600, 601, 3600]))
    def time_passes(self, seconds: int) -> None:
        self.clock.tick(timedelta(seconds=seconds))
        self.now += timedelta(seconds=seconds)
        assert clock.utcnow() == self.now

    def upcoming(self) -> list[datetime]:
        return sorted(
            p.expires_at
            for p in self.live()
            if p.expires_at is not None and p.expires_at > self.now
        )

    @precondition(lambda self: self.upcoming())
    @rule(pick=PICK, nudge=st.sampled_from([-1, 0, 1]))
    def time_reaches_an_expiry(self, pick: int, nudge: int) -> None:
        """The clock stops one microsecond before, at, or one microsecond after an expiry."""
        upcoming = self.upcoming()
        moment = upcoming[pick % len(upcoming)] + timedelta(microseconds=nudge)
        if moment > self.now:
            self.clock.move_to(moment)
            self.now = moment
        assert clock.utcnow() == self.now

    @precondition(lambda self: self.reversible)
    @rule(pick=PICK)
    def reverse_one(self, pick: int) -> None:
        original = sorted(self.reversible)[pick % len(self.reversible)]
        meta = self.meta()

        def write(session: Session) -> Posted:
            return reverse(session, original, meta)

        deltas = {a: -d for a, d in self.reversible[original].items()}
        if original in self.reversed:
            self.refused(write, AlreadyReversed)
        elif self.overdraws(deltas):
            self.refused(write, InsufficientFunds)
        else:
            result = self.accepted(write, meta.idempotency_key)
            self.reversed.add(original)
            self.post_deltas(result.transaction_id, deltas)

    @precondition(lambda self: self.done)
    @rule(pick=PICK)
    def retry(self, pick: int) -> None:
        done = self.done[pick % len(self.done)]
        before = self.snapshot()
        again = self.db.run(done.write)
        assert (again.transaction_id, again.replayed) == (done.transaction_id, True)
        assert self.snapshot() == before, "a replay wrote something"

    @precondition(lambda self: self.done)
    @rule(pick=PICK, asset=ASSET, amount=AMOUNT)
    def reuse_a_key(self, pick: int, asset: int, amount: int) -> None:
        done = self.done[pick % len(self.done)]
        leg = Leg(self.account(asset, ISSUER), self.account(asset, PLAIN), amount)
        meta = Meta(done.key, clock.today(), memo="a different request")
        self.refused(lambda s: transfer(s, "other", [leg], meta), IdempotencyConflict)

    # --- after every step, and every few steps ----------------------------------------------

    @invariant()
    def balances_match_the_model(self) -> None:
        with self.db.transaction() as session:
            got = balances(session, self.accounts)
            states = {pid: pending_state(session, pid) for pid in self.pendings}
        for pid, pending in self.pendings.items():
            assert states[pid] == self.state_of(pending), pid
        for slots in self.slots:
            for account in slots:
                balance = got[account]
                assert balance.posted == self.posted[account], account
                assert (balance.reserved_debits, balance.reserved_credits) == self.reserved(account)
                if account in self.limited:
                    assert balance.posted >= 0 and balance.available >= 0
            assert sum(got[a].posted for a in slots) == 0
            assert sum(got[a].reserved_debits for a in slots) == sum(
                got[a].reserved_credits for a in slots
            )
        for account_id, debits, credits, *_ in stored_rows(self.db, self.accounts):
            assert credits - debits == self.posted[account_id]

    @invariant()
    def the_ledger_verifies_every_few_steps(self) -> None:
        self.steps += 1
        if self.steps and self.steps % CHAIN_EVERY == 0:
            self.the_ledger_verifies()

    def the_ledger_verifies(self) -> None:
        seal_all(self.db)
        with self.db.engine.connect() as connection:
            report = verify(connection)
        assert report.ok, report.first_broken
        self.verified_at = self.steps


SETTINGS = settings(
    max_examples=25,
    stateful_step_count=25,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def test_the_ledger_behaves_like_its_reference_model(fresh_db: Database) -> None:
    class Machine(LedgerMachine):
        db = fresh_db

    run_state_machine_as_test(Machine, settings=SETTINGS)
