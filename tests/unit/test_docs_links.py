"""The documents a clone carries point only at files it carries.

Every relative link in README.md, docs/*.md and bench/README.md names a file of the repository
(and a heading of it, for a ``#fragment``), and every document they name in a code span
(```docs/scaling.md```) exists too; nothing points outside the repository. bench/README.md stays
short enough to read (at most 170 lines: its prose and one run's results) and keeps the markers
``python -m bench`` writes its results between. docs/http.md lists every endpoint of the
authorization matrix.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote

import pytest

from bench.__main__ import BEGIN, END
from tests.system.test_authorization_matrix import MATRIX

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = sorted(
    [ROOT / "README.md", ROOT / "bench" / "README.md", *(ROOT / "docs").glob("*.md")]
)

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_INLINE_LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.M)
_SCHEME = re.compile(r"^[a-z][a-z0-9+.-]*:", re.I)
_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$", re.M)
_NAMED_DOCUMENT = re.compile(r"`((?:\.{1,2}/)?[\w./-]+\.md)(?:#[\w-]+)?`")
#: a path in a code span that starts from the document's folder (``../shared/spec/``)
_RELATIVE_PATH = re.compile(r"`(\.{1,2}/[^`\s]*)`")


def _prose(text: str) -> str:
    """``text`` without fenced blocks and code spans, where link syntax is literal."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def _links(document: Path) -> list[str]:
    text = _prose(document.read_text(encoding="utf-8"))
    return _INLINE_LINK.findall(text) + _REFERENCE.findall(text)


def _slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]|\[([^\]]*)\]\([^)]*\)", r"\1", heading).strip().lower()
    return re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", text))


def _anchors(document: Path) -> set[str]:
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", document.read_text("utf-8")))}


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT))


def test_the_documents_are_found() -> None:
    names = {_name(d) for d in DOCUMENTS}
    assert {"README.md", "bench/README.md", "docs/http.md", "docs/scaling.md"} <= names


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_every_relative_link_resolves_to_a_file_of_the_repository(document: Path) -> None:
    broken = []
    for target in _links(document):
        if _SCHEME.match(target):
            continue  # a web address, mailto:
        path_part, _, fragment = target.partition("#")
        resolved = (document.parent / unquote(path_part)).resolve() if path_part else document
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{target}: outside the repository")
        elif not resolved.is_file():
            broken.append(f"{target}: no such file")
        elif fragment and resolved.suffix == ".md" and fragment not in _anchors(resolved):
            broken.append(f"{target}: no heading #{fragment} in {_name(resolved)}")
    assert not broken, f"{_name(document)}: {broken}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_every_document_named_in_a_code_span_exists_in_the_repository(document: Path) -> None:
    missing = []
    for named in _NAMED_DOCUMENT.findall(_FENCE.sub("", document.read_text("utf-8"))):
        candidates = {(document.parent / named).resolve(), (ROOT / named).resolve()}
        if not any(c.is_relative_to(ROOT) and c.is_file() for c in candidates):
            missing.append(named)
    assert not missing, f"{_name(document)} names documents a clone does not have: {missing}"


@pytest.mark.parametrize("document", DOCUMENTS, ids=_name)
def test_no_path_in_a_code_span_leaves_the_repository(document: Path) -> None:
    text = _FENCE.sub("", document.read_text("utf-8"))
    outside = [
        named
        for named in _RELATIVE_PATH.findall(text)
        if not (document.parent / named).resolve().is_relative_to(ROOT)
        or not (document.parent / named).resolve().exists()
    ]
    assert not outside, f"{_name(document)} points outside the repository: {outside}"


def test_bench_readme_is_at_most_170_lines_and_keeps_the_results_markers() -> None:
    text = (ROOT / "bench" / "README.md").read_text("utf-8")
    assert len(text.splitlines()) <= 170
    assert text.count(BEGIN) == 1 and text.count(END) == 1  # ``python -m bench`` writes between
    assert text.index(BEGIN) < text.index(END)


def test_the_http_guide_lists_every_endpoint_of_the_authorization_matrix() -> None:
    guide = (ROOT / "docs" / "http.md").read_text("utf-8")
    missing = [endpoint for endpoint in MATRIX if f"`{endpoint}`" not in guide]
    assert not missing, f"docs/http.md does not list {missing}"
