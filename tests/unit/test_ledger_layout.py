"""The ledger's shape: one store module per database, small modules and functions, no asserts.

Which database a session is on is the store's business (``ledger.store.of``): the engine's
algorithm, the bank and the API ask the store, so a change to ledger behaviour is made once.
Read with ``ast`` and plain text, as the review that set these limits measured them.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
STORE = ROOT / "ledger" / "store"
STATIC = ROOT / "api" / "static"
#: what looks at the database's kind instead of asking the store: its dialect's name, a URL's
#: scheme, a column type per dialect, the PostgreSQL store's connection used directly, or a
#: comparison with a dialect's name
_DIALECT_CHECK = re.compile(
    r"""\.dialect\.name|get_backend_name\(|is_postgresql|is_sqlite|with_variant\("""
    r"""|startswith\(\s*["'](?:sqlite|postgres)|pg_direct"""
    r"""|[=!]=\s*["'](?:sqlite|postgresql)["']|["'](?:sqlite|postgresql)["']\s*[=!]="""
    r"""|\bin\s*\(\s*["'](?:sqlite|postgresql)["']"""
)


def _modules(*packages: str) -> list[Path]:
    return sorted(p for package in packages for p in (ROOT / package).rglob("*.py"))


def test_only_the_store_modules_look_at_the_database_kind() -> None:
    checking = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _modules("api", "bank", "ledger")
        if STORE not in path.parents and STATIC not in path.parents
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if _DIALECT_CHECK.search(line)
    ]
    assert checking == []


@pytest.mark.parametrize(
    "line",
    [
        'if connection.dialect.name == "postgresql":',
        "in_memory = url.get_backend_name() == 'sqlite'",
        'if str(config["DATABASE_URL"]).startswith("sqlite"):',
        'BigId = BigInteger().with_variant(Integer(), "sqlite")',
        "from ledger import pg_direct",
        'if dialect == "sqlite" or source != "process":',
        'if "postgresql" != kind:',
    ],
)
def test_each_way_of_checking_the_dialect_is_recognised(line: str) -> None:
    assert _DIALECT_CHECK.search(line)


def test_the_bank_imports_nothing_of_one_database() -> None:
    importing = []
    for path in _modules("bank"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            if any(re.search(r"postgresql|sqlite|psycopg|pg_direct", n) for n in names):
                importing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert importing == []


@pytest.mark.parametrize("path", _modules("ledger"), ids=lambda p: str(p.relative_to(ROOT)))
def test_a_ledger_module_stays_under_400_lines_and_its_functions_under_60(path: Path) -> None:
    source = path.read_text()
    assert len(source.splitlines()) <= 400
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > 60
    ]
    assert long == []


def test_the_ledger_refuses_with_errors_not_asserts() -> None:
    # ``python -O`` drops asserts: a check a caller can reach must raise
    asserting = [
        f"{path.relative_to(ROOT)}:{node.lineno}"
        for path in _modules("ledger")
        for node in ast.walk(ast.parse(path.read_text()))
        if isinstance(node, ast.Assert)
    ]
    assert asserting == []
