"""``GET /audit/journal?kind=`` takes exactly the kinds of ledger transaction the bank writes
(``bank.journal.KINDS``): a kind missing from the list would be refused though transactions
have it, and one no write names would be accepted and match nothing.

Read with ``ast``: every call of the engine's writes (``ledger.transfer``, ``ledger.reserve``,
...) in ``bank``, and the engine's own ``write`` of an expiry, names its kind as text or as an
f-string whose words are filled in (``f"payment_{request.kind}"``).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bank.journal import KINDS

ROOT = Path(__file__).resolve().parents[2]
#: the engine's writes, and where their ``kind`` is when it is not passed by name
_POSITION = {
    "transfer": 1,
    "reserve": 1,
    "write": 1,
    "post_pending": None,
    "void_pending": None,
    "resolve_pending": None,
    "reverse": None,
}


def _kind_argument(call: ast.Call, name: str) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "kind":
            return keyword.value
    position = _POSITION[name]
    return call.args[position] if position is not None and len(call.args) > position else None


def _pattern(node: ast.expr) -> str:
    """The kinds ``node`` can name, as a regular expression."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return re.escape(node.value)
    if isinstance(node, ast.JoinedStr):
        return "".join(
            re.escape(part.value) if isinstance(part, ast.Constant) else "[a-z_]+"
            for part in node.values
        )
    raise AssertionError(f"a kind that is neither text nor an f-string: {ast.dump(node)}")


def _writes() -> list[tuple[str, str]]:
    """``(where, pattern)`` of every engine write the bank makes, and of the engine's expiry."""
    found = []
    for path in sorted((ROOT / "bank").rglob("*.py")) + [ROOT / "ledger" / "write.py"]:
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                name = func.attr if func.value.id == "ledger" else None
            elif isinstance(func, ast.Name) and path.parent.name == "ledger":
                name = func.id
            else:
                name = None
            if name not in _POSITION:
                continue
            kind = _kind_argument(node, name)
            where = f"{path.relative_to(ROOT)}:{node.lineno}"
            assert kind is not None, f"{where} leaves the kind to the engine's default"
            if isinstance(kind, ast.Name) and path.parent.name == "ledger":
                continue  # the engine passing on its caller's kind
            found.append((where, _pattern(kind)))
    return found


def test_every_write_names_a_kind_the_journal_filter_takes() -> None:
    writes = _writes()
    assert len(writes) >= 12, writes  # the scan found the bank's writes
    unlisted = [
        where for where, pattern in writes if not any(re.fullmatch(pattern, k) for k in KINDS)
    ]
    assert unlisted == []


def test_every_kind_the_filter_takes_is_written_somewhere() -> None:
    patterns = [pattern for _where, pattern in _writes()]
    unwritten = [kind for kind in KINDS if not any(re.fullmatch(p, kind) for p in patterns)]
    assert unwritten == []
    assert len(set(KINDS)) == len(KINDS)
