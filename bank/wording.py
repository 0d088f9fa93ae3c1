"""How the bank's sentences word amounts: money in dollars, areas with thousands separators.

The API and the ledger count money in integer cents and credits in square feet (docs/domain.md
§1); a refusal's ``detail``, a blocker's ``detail`` and a field's message are read by people, on
the pages and off them, so they say ``$200.00`` and ``25,931 sq ft``.  The machine-readable
fields beside them (``available_sqft``, ``fee_cents``, ...) keep the integers.
"""

from __future__ import annotations


def dollars(cents: int) -> str:
    """``123456`` → ``$1,234.56``; ``-5`` → ``-$0.05``."""
    sign = "-" if cents < 0 else ""
    whole, rest = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{rest:02d}"


def sqft(area: int) -> str:
    """``25931`` → ``25,931 sq ft``."""
    return f"{area:,} sq ft"
