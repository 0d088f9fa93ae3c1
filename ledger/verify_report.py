"""What a verify finds (docs/reliability.md, guarantee 8): the first break, the chain head, the
counts.

Shared by the full pass and the check since the last checkpoint (``ledger.verification``), the
link checkers (``ledger.verify_links``, ``ledger.store.postgresql_verify``) and the checkpoint
(``ledger.checkpoint``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ledger.checkpoint import Checkpoint, Implied

#: the whole chain and every balance recomputed from the entries
FULL = "full"
#: only what was written since the last full pass, from its checkpoint
SINCE_CHECKPOINT = "since_checkpoint"


@dataclass
class Break:
    """The first place where the stored ledger disagrees with what its entries say."""

    kind: str
    detail: str
    transaction_id: int | None = None
    seq: int | None = None
    account_id: int | None = None
    #: a sealed row that disagrees with its seal (``ledger.row_seals``): its table and id
    table: str | None = None
    row_id: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if v is not None}


@dataclass(frozen=True)
class Anchor:
    """A link of the chain, recorded outside the database: ``SEQ:HASH``.

    The chain proves that nothing before its last link changed, but not that the last links
    are still there, nor that someone with write access did not recompute every hash after an
    edit. A head printed by one verify and kept elsewhere (a file, a ticket, a letter), then
    given back to a later verify, closes both gaps up to that link.
    """

    seq: int
    hash: str

    @classmethod
    def parse(cls, text: str) -> Anchor:
        seq, sep, hash_ = text.strip().partition(":")
        if (
            not (sep and seq.isascii() and seq.isdigit())
            or int(seq) < 1
            or not is_sha256_hex(hash_)
        ):
            raise ValueError(f"an anchor is SEQ:HASH (a link number, a SHA-256 in hex): {text!r}")
        return cls(int(seq), hash_.lower())

    def __str__(self) -> str:
        return f"{self.seq}:{self.hash}"


def is_sha256_hex(text: str) -> bool:
    return len(text) == 64 and all(c in "0123456789abcdefABCDEF" for c in text)


@dataclass
class Report:
    """What a verify found: ``ok`` when everything it checked recomputes exactly.

    ``head`` is the chain's last link as verified: record it outside the database and pass it
    back as an anchor to a later verify.  It is ``None`` for an empty chain or a broken one, and
    set when only an anchor or a balance failed: read it when ``ok``.

    ``mode`` says what was checked (``FULL`` or ``SINCE_CHECKPOINT``).  A full pass that found
    everything ok sets ``implied``, what a checkpoint of it records; ``checkpoint`` is the last
    full pass's checkpoint: the one a check since it started from, or the one recorded for it.
    """

    transactions_checked: int = 0
    accounts_checked: int = 0
    first_broken: Break | None = None
    head: Anchor | None = None
    extra: dict[str, Any] = field(default_factory=dict)
    mode: str = FULL
    seconds: float = 0.0
    implied: Implied | None = None
    checkpoint: Checkpoint | None = None

    @property
    def ok(self) -> bool:
        return self.first_broken is None


Progress = Callable[[int], None]
