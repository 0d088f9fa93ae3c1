"""Which service this is: the package's version and the commit its wheel was built from.

The version number (pyproject.toml) does not change with every commit, so it alone cannot say
whether an upgrade installed the new code; setup.py writes the commit into the wheel as
``api/BUILD`` (``git describe --always --dirty``), and ``wetbank --version`` prints both.
"""

from __future__ import annotations

from importlib import metadata, resources

PACKAGE = "wetland-bank-ledger"
#: written into the built package by setup.py's ``build_py``; absent in a source checkout
BUILD_FILE = "BUILD"


def version() -> str:
    try:
        return metadata.version(PACKAGE)
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown"


def commit() -> str | None:
    """The commit the running code was built from, or ``None`` (a source checkout, or a wheel
    built outside a git checkout)."""
    try:
        text = resources.files("api").joinpath(BUILD_FILE).read_text().strip()
    except (FileNotFoundError, NotADirectoryError):
        return None
    return text or None


def describe() -> str:
    """``wetbank 0.1.0 (commit 0123456789ab)``, as ``wetbank --version`` prints it."""
    built = commit()
    where = f"commit {built}" if built else "commit unknown: not built as a wheel from git"
    return f"wetbank {version()} ({where})"
