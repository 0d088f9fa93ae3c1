"""Whether a piece of text shows anything.  Pure.

One judgement for the whole system: the API's schemas refuse a name, an address or a reason that
shows nothing (``api.schemas.common.text_of``), and the deposit rules treat a treatment pond's
``associated_project`` that shows nothing as none given (Subd. 12 (c)(4)).
"""

from __future__ import annotations

import unicodedata

#: letters and symbols that draw nothing: the Hangul fillers and the blank braille pattern,
#: pasted as "invisible" names
_BLANK_GLYPHS = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def visible(text: str) -> bool:
    """Whether ``text`` shows anything: at least one letter, digit, punctuation mark or symbol
    (Unicode categories L, N, P, S) other than ``_BLANK_GLYPHS``.  Spaces and line or paragraph
    separators (Z), control and format characters (Cc, Cf: a bell, a zero-width space, a
    direction mark), private-use, unassigned and surrogate code points, and combining marks (M,
    which only change the character before them) show nothing on their own."""
    return any(unicodedata.category(c)[0] in "LNPS" and c not in _BLANK_GLYPHS for c in text)
