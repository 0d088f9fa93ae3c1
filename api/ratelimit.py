"""A per-token limit on writes: off unless ``WETBANK_WRITE_RATE_LIMIT`` is set.

A sliding window per token, kept in each worker process: with N workers a token gets at most N
times the limit, which is enough to stop one client flooding writes while reads stay responsive.
"""

from __future__ import annotations

import math
import re
import threading
import time
from collections import deque

from flask import current_app

from api.problems import ApiProblem

_UNITS = {"second": 1, "minute": 60, "hour": 3600}
_SPEC = re.compile(r"^\s*(\d+)\s*/\s*(second|minute|hour)\s*$")


class WriteLimiter:
    """At most ``count`` writes per ``window`` seconds per token."""

    def __init__(self, count: int, window: float) -> None:
        self.count, self.window = count, window
        self._hits: dict[str, deque[float]] = {}
        self._lock = threading.Lock()

    @classmethod
    def parse(cls, spec: str) -> WriteLimiter:
        """``"60/minute"`` → 60 writes a minute."""
        match = _SPEC.match(spec)
        if not match:
            raise ValueError(
                "WETBANK_WRITE_RATE_LIMIT must be a count per second, minute or hour, like "
                f"60/minute, not {spec!r}"
            )
        count = int(match.group(1))
        if count < 1:  # a limit of none would refuse every write: no limit is the unset variable
            raise ValueError(
                "WETBANK_WRITE_RATE_LIMIT must be at least 1 write per second, minute or hour, "
                f"like 60/minute, not {spec!r} (unset it for no limit)"
            )
        return cls(count, _UNITS[match.group(2)])

    def check(self, token_id: str) -> None:
        """Count one write, or refuse it with 429 and ``Retry-After``."""
        now = time.monotonic()
        with self._lock:
            hits = self._hits.setdefault(token_id, deque())
            while hits and hits[0] <= now - self.window:
                hits.popleft()
            if len(hits) >= self.count:
                wait = max(1, math.ceil(hits[0] + self.window - now))
                raise ApiProblem(
                    429,
                    "rate_limited",
                    f"At most {self.count} writes per {int(self.window)} s; retry later.",
                    {"Retry-After": str(wait)},
                )
            hits.append(now)


def check_write(token_id: str) -> None:
    """Apply the app's write limit, if one is configured."""
    limiter: WriteLimiter | None = current_app.extensions.get("wetbank.write_limiter")
    if limiter is not None:
        limiter.check(token_id)
