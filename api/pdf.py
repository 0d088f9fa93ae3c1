"""A minimal PDF writer for the notices (PDF 1.4, US Letter, the standard Helvetica fonts).

Notices are a few pages of plain text: a title, headings, paragraphs and a mailing list.  The
standard 14 fonts need no embedding and every PDF reader has them, so a page is a text stream and
the file is a handful of objects; a library for layout, images or embedded fonts would be more
code than this.  Text is WinAnsi (cp1252): a character it lacks prints as "?".
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from bank.notice_document import NoticeDocument

PAGE_WIDTH, PAGE_HEIGHT, MARGIN = 612, 792, 72
#: Helvetica's average character width, as a share of the font size (for wrapping lines)
AVERAGE_WIDTH = 0.5
REGULAR, BOLD = "F1", "F2"

Line = tuple[str, float, str]  # (font, size, text)


def document(doc: NoticeDocument) -> bytes:
    """The notice as a PDF file."""
    lines: list[Line] = [
        (BOLD, 16, doc.title),
        (REGULAR, 10, doc.statute),
        (REGULAR, 11, ""),
        (REGULAR, 11, f"From: {doc.lgu_name}"),
        (REGULAR, 11, f"Mailed on: {doc.mailed_on}"),
    ]
    for section in doc.sections:
        lines += [(REGULAR, 11, ""), (BOLD, 12, section.heading)]
        lines += [(REGULAR, 11, paragraph) for paragraph in section.paragraphs]
    lines += [(REGULAR, 11, ""), (BOLD, 12, "Mailed to")]
    lines += [
        (REGULAR, 11, f"{r['name']}, {r['address']} ({r['role_label']})") for r in doc.recipients
    ]
    return render(lines)


def render(lines: Iterable[Line]) -> bytes:
    """Lines of text, wrapped to the page and paginated, as a PDF file."""
    pages: list[list[str]] = [[]]
    y: float = PAGE_HEIGHT - MARGIN
    for font, size, text in lines:
        for part in _wrapped(text, size):
            leading = size * 1.35
            if y - leading < MARGIN:
                pages.append([])
                y = PAGE_HEIGHT - MARGIN
            y -= leading
            pages[-1].append(f"BT /{font} {size:g} Tf {MARGIN} {y:.1f} Td ({_escaped(part)}) Tj ET")
    return _file(["\n".join(page) for page in pages])


def _wrapped(text: str, size: float) -> list[str]:
    width = int((PAGE_WIDTH - 2 * MARGIN) / (size * AVERAGE_WIDTH))
    return textwrap.wrap(text, width) or [""]


def _escaped(text: str) -> str:
    raw = text.encode("cp1252", errors="replace").decode("latin-1")
    return raw.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _file(streams: list[str]) -> bytes:
    """Catalog, page tree, two fonts, then a page and its content stream per page."""
    first_page = 5
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(len(streams)))
    font = "<< /Type /Font /Subtype /Type1 /BaseFont /{} /Encoding /WinAnsiEncoding >>"
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(streams)} >>",
        font.format("Helvetica"),
        font.format("Helvetica-Bold"),
    ]
    for i, stream in enumerate(streams):
        data = stream.encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {PAGE_WIDTH} {PAGE_HEIGHT}] "
            f"/Resources << /Font << /{REGULAR} 3 0 R /{BOLD} 4 0 R >> >> "
            f"/Contents {first_page + 2 * i + 1} 0 R >>"
        )
        objects.append(f"<< /Length {len(data)} >>\nstream\n{stream}\nendstream")
    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode("latin-1")
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode("latin-1")
    out += "".join(f"{offset:010d} 00000 n \n" for offset in offsets).encode("latin-1")
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n"
    ).encode("latin-1")
    return bytes(out)
