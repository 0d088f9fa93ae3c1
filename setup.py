"""The wheel's packages, and the commit it is built from (everything else about it is in
pyproject.toml, which cannot say this).

The code's packages are found, so a new folder of ``api``, ``bank`` or ``ledger`` ships without
anyone listing it; the top-level ``migrations/`` folder, where developers and alembic.ini keep
it, ships as the package ``wetbank_migrations``, so that an installed service migrates its
database (``api/schema_check.py``).  tests/system/test_wheel.py checks that the wheel holds
every source file.

The version in pyproject.toml does not change with each commit, so the build also writes the
commit it is built from into the package (``api/BUILD``, read by ``api/version.py``), which
``wetbank --version`` prints: after an upgrade it shows that the new code is the one installed.
"""

import subprocess
from pathlib import Path

from setuptools import find_namespace_packages, setup
from setuptools.command.build_py import build_py

CODE = ("api", "bank", "ledger")
HERE = Path(__file__).resolve().parent
#: api/version.py's BUILD_FILE
BUILD_FILE = Path("api") / "BUILD"


def source_commit() -> str | None:
    """``git describe --always --dirty`` of this checkout (``-dirty``: built with uncommitted
    changes), or ``None`` outside a git checkout of its own."""

    def git(*args: str) -> str:
        done = subprocess.run(
            ["git", "-C", str(HERE), *args], capture_output=True, text=True, check=True
        )
        return done.stdout.strip()

    try:
        if Path(git("rev-parse", "--show-toplevel")).resolve() != HERE:
            return None  # a copy of the sources inside some other repository
        return git("describe", "--always", "--dirty", "--abbrev=12")
    except (OSError, subprocess.CalledProcessError):
        return None


class BuildWithCommit(build_py):
    def run(self) -> None:
        super().run()
        if self.dry_run or self.editable_mode:  # an editable install runs the checkout itself
            return
        stamp, commit = Path(self.build_lib) / BUILD_FILE, source_commit()
        if commit:
            stamp.write_text(commit + "\n")
        else:  # nor an earlier build's, left in build/lib
            stamp.unlink(missing_ok=True)


setup(
    packages=[
        *find_namespace_packages(
            include=[*CODE, *(f"{name}.*" for name in CODE)], exclude=["*__pycache__*"]
        ),
        "wetbank_migrations",
        "wetbank_migrations.versions",
    ],
    package_dir={"wetbank_migrations": "migrations"},
    cmdclass={"build_py": BuildWithCommit},
)
