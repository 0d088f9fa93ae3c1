"""A minimal PDF writer for the notices (PDF 1.4, US Letter, the standard Helvetica fonts).

Notices are a few pages of plain text: a title, headings, paragraphs and a mailing list.  The
standard 14 fonts need no embedding and every PDF reader has them, so a page is a text stream and
the file is a handful of objects; a library for layout, images or embedded fonts would be more
code than this.

Lines are wrapped by the fonts' own advance widths (``WIDTHS``), so a line ends at the right
margin whatever its letters; a word wider than the line is broken across lines.  The fonts print
WinAnsi (cp1252) only: a letter outside it is printed as its nearest plain letters ("Nguyễn" as
"Nguyen", "Đ" as "D"), a character with none as "?", and the document then says so under its
title (the HTML document shows the text as written).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

from bank.notice_document import NoticeDocument

PAGE_WIDTH, PAGE_HEIGHT, MARGIN = 612, 792, 72
LINE_WIDTH = PAGE_WIDTH - 2 * MARGIN
REGULAR, BOLD = "F1", "F2"
FIRST_CODE = 32

#: The advance widths (thousandths of the font size) of WinAnsiEncoding's codes 32-255 in
#: Helvetica (``F1``) and Helvetica-Bold (``F2``), from Adobe's AFM files for the standard 14
#: fonts (Helvetica.afm, Helvetica-Bold.afm: the ``WX`` of each code's glyph in WinAnsi's glyph
#: names, PDF 1.7 annex D); 0 for the codes WinAnsi leaves undefined (127, 129, 141, 143, 144,
#: 157), which are never printed.  The font dictionaries carry them as ``/Widths`` too, so a
#: reader lays the text out with the widths it was wrapped by.
WIDTHS = {
    REGULAR: (
        278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278,
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 278, 278, 584, 584, 584, 556,
        1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833, 722, 778,
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556,
        333, 556, 556, 500, 556, 556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556,
        556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334, 260, 334, 584, 0,
        556, 0, 222, 556, 333, 1000, 556, 556, 333, 1000, 667, 333, 1000, 0, 611, 0,
        0, 222, 222, 333, 333, 350, 556, 1000, 333, 1000, 500, 333, 944, 0, 500, 667,
        278, 333, 556, 556, 556, 556, 260, 556, 333, 737, 370, 556, 584, 333, 737, 333,
        400, 584, 333, 333, 333, 556, 537, 278, 333, 333, 365, 556, 834, 834, 834, 611,
        667, 667, 667, 667, 667, 667, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278,
        722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611,
        556, 556, 556, 556, 556, 556, 889, 500, 556, 556, 556, 556, 278, 278, 278, 278,
        556, 556, 556, 556, 556, 556, 556, 584, 611, 556, 556, 556, 556, 500, 556, 500,
    ),
    BOLD: (
        278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278,
        556, 556, 556, 556, 556, 556, 556, 556, 556, 556, 333, 333, 584, 584, 584, 611,
        975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833, 722, 778,
        667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556,
        333, 556, 611, 556, 611, 556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611,
        611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389, 280, 389, 584, 0,
        556, 0, 278, 556, 500, 1000, 556, 556, 333, 1000, 667, 333, 1000, 0, 611, 0,
        0, 278, 278, 500, 500, 350, 556, 1000, 333, 1000, 556, 333, 944, 0, 500, 667,
        278, 333, 556, 556, 556, 556, 280, 556, 333, 737, 370, 556, 584, 333, 737, 333,
        400, 584, 333, 333, 333, 611, 556, 278, 333, 333, 365, 556, 834, 834, 834, 611,
        722, 722, 722, 722, 722, 722, 1000, 722, 667, 667, 667, 667, 278, 278, 278, 278,
        722, 722, 778, 778, 778, 778, 778, 584, 778, 722, 722, 722, 722, 667, 667, 611,
        556, 556, 556, 556, 556, 556, 889, 556, 556, 556, 556, 556, 278, 278, 278, 278,
        611, 611, 611, 611, 611, 611, 611, 584, 611, 611, 611, 611, 611, 556, 611, 556,
    ),
}  # fmt: skip

#: Letters that Unicode does not decompose into a WinAnsi letter and accents, by the letter a
#: reader would write for them; and a few marks WinAnsi lacks, by the ones it has
NEAREST = str.maketrans(
    {
        "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h", "ı": "i", "Ł": "L", "ł": "l", "Ŋ": "N",
        "ŋ": "n", "Ŧ": "T", "ŧ": "t", "ĸ": "k", "ſ": "s", "ʻ": "‘", "ʼ": "’", "‐": "-",
        "‒": "-", "−": "-", "′": "’", "″": "”",
    }
)  # fmt: skip
#: How a changed letter is shown, for the note under the title (``_note``)
SHOWN = {"folded": "without some accents", "unknown": 'as "?"'}

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
    """Lines of text, the first a title, wrapped to the page and paginated, as a PDF file;
    when a letter had to be shown otherwise than written, a note under the title says so."""
    shown: list[Line] = []
    changes: set[str] = set()
    for font, size, text in lines:
        printable, changed = _printable(text)
        shown.append((font, size, printable))
        changes |= changed
    if changes:  # under the title, before any name it concerns
        shown.insert(1, (REGULAR, 9, _note(changes)))
    pages: list[list[str]] = [[]]
    y: float = PAGE_HEIGHT - MARGIN
    for font, size, text in shown:
        for part in _wrapped(text, font, size):
            leading = size * 1.35
            if y - leading < MARGIN:
                pages.append([])
                y = PAGE_HEIGHT - MARGIN
            y -= leading
            pages[-1].append(f"BT /{font} {size:g} Tf {MARGIN} {y:.1f} Td ({_escaped(part)}) Tj ET")
    return _file(["\n".join(page) for page in pages])


def _printable(text: str) -> tuple[str, set[str]]:
    """``text`` in the characters the fonts have, and what had to change: ``folded`` (a letter
    shown as its nearest plain letters: its Unicode compatibility decomposition without the
    combining marks, or ``NEAREST``), ``unknown`` (a character with none, shown as "?").
    Whitespace is a space; invisible format characters (zero-width space, soft hyphen) go."""
    shown: list[str] = []
    changes: set[str] = set()
    for char in unicodedata.normalize("NFC", text):  # "e" + U+0301 is "é", which WinAnsi has
        if char.isspace():
            shown.append(" ")
        elif unicodedata.category(char) == "Cf":  # invisible: WinAnsi prints U+00AD as "-"
            continue
        elif _in_fonts(char):
            shown.append(char)
        else:
            decomposed = unicodedata.normalize("NFKD", char)
            plain = "".join(c for c in decomposed if not unicodedata.combining(c))
            plain = plain.translate(NEAREST)
            if plain and all(_in_fonts(c) for c in plain):
                shown.append(plain)
                changes.add("folded")
            else:
                shown.append("?")
                changes.add("unknown")
    return "".join(shown), changes


def _in_fonts(char: str) -> bool:
    try:
        code = char.encode("cp1252")[0]
    except UnicodeEncodeError:
        return False
    return code >= FIRST_CODE and WIDTHS[REGULAR][code - FIRST_CODE] > 0


def _note(changes: set[str]) -> str:
    how = " or ".join(SHOWN[change] for change in SHOWN if change in changes)
    return (
        f"Some letters this PDF's font cannot print are shown {how}; the HTML version of "
        "this document shows them as written."
    )


def _wrapped(text: str, font: str, size: float) -> list[str]:
    """``text`` (printable) in lines that fit between the margins, broken between words; a
    word wider than a whole line is broken where the line is full."""
    lines: list[str] = []
    line = ""
    for word in text.split():
        joined = f"{line} {word}" if line else word
        if _width(joined, font, size) <= LINE_WIDTH:
            line = joined
            continue
        if line:
            lines.append(line)
        while _width(word, font, size) > LINE_WIDTH:
            cut = _fitting(word, font, size)
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    return [*lines, line]


def _width(text: str, font: str, size: float) -> float:
    """The width of ``text`` (printable) in points, as a PDF reader sets it."""
    widths = WIDTHS[font]
    return sum(widths[code - FIRST_CODE] for code in text.encode("cp1252")) * size / 1000


def _fitting(word: str, font: str, size: float) -> int:
    """How many of ``word``'s first characters fit on a line (at least one)."""
    total = 0.0
    for count, char in enumerate(word):
        total += _width(char, font, size)
        if total > LINE_WIDTH:
            return max(count, 1)
    return len(word)


def _escaped(text: str) -> str:
    raw = text.encode("cp1252").decode("latin-1")
    return raw.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def _file(streams: list[str]) -> bytes:
    """Catalog, page tree, two fonts, then a page and its content stream per page."""
    first_page = 5
    kids = " ".join(f"{first_page + 2 * i} 0 R" for i in range(len(streams)))
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {len(streams)} >>",
        _font("Helvetica", WIDTHS[REGULAR]),
        _font("Helvetica-Bold", WIDTHS[BOLD]),
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


def _font(name: str, widths: tuple[int, ...]) -> str:
    last = FIRST_CODE + len(widths) - 1
    return (
        f"<< /Type /Font /Subtype /Type1 /BaseFont /{name} /Encoding /WinAnsiEncoding "
        f"/FirstChar {FIRST_CODE} /LastChar {last} /Widths [{' '.join(map(str, widths))}] >>"
    )
