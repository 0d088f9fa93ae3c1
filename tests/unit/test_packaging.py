"""The wheel's package list (pyproject.toml) names every folder of the code and the migrations.

The list is written out, not discovered, so that ``migrations/`` ships as ``wetbank_migrations``
(tests/system/test_wheel.py installs the wheel and migrates with it); a new folder added to
``api``, ``bank`` or ``ledger`` must be added to it too, or the installed service lacks it.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _setuptools() -> dict[str, object]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    return dict(config["tool"]["setuptools"])


def _folders(top: Path, name: str) -> set[str]:
    """``name`` and the dotted name of every folder below ``top`` holding a file."""
    found = {name}
    for folder in top.rglob("*"):
        if not folder.is_dir() or "__pycache__" in folder.parts:
            continue
        if any(f.is_file() for f in folder.iterdir()):
            found.add(".".join([name, *folder.relative_to(top).parts]))
    return found


def test_every_folder_of_the_code_and_the_migrations_is_packaged() -> None:
    settings = _setuptools()
    listed = set(settings["packages"])  # type: ignore[call-overload]
    expected = set()
    for package in ("api", "bank", "ledger"):
        expected |= _folders(ROOT / package, package)
    directories = settings["package-dir"]
    assert directories == {"wetbank_migrations": "migrations"}
    expected |= _folders(ROOT / "migrations", "wetbank_migrations")
    assert listed == expected


def test_the_data_files_are_packaged() -> None:
    data = _setuptools()["package-data"]
    assert data == {
        "api.web.static": ["*"],
        "api.web.templates": ["*.html"],
        "wetbank_migrations": ["script.py.mako"],
    }
