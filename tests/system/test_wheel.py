"""Issue 25 §1: the wheel is the service, outside its source checkout.

Build the wheel from the project's files, install it (and its dependencies from the package
index, nothing else) into a new virtual environment, and from a directory that is neither the
checkout nor the environment: migrate a PostgreSQL database, create a board token, serve, check
health and readiness, and make one deposit through the API.  SQLite's default database is
migrated from there too.  The build runs on a copy of the sources (committed to a git
repository of its own, as a checkout is), so nothing lands in the working tree.

``wetbank --version`` names the commit the wheel was built from; docs/operations.md §8's
commands, run as written, replace the installed code with a new wheel's of the same version
number (pip's ``--upgrade`` alone keeps the old code), and back.
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.system.harness import (
    HOST,
    ROOT,
    Bank,
    Client,
    Server,
    available,
    open_account,
    unique,
)
from tests.system.ops_kit import SYSTEM_PATH

pytestmark = pytest.mark.system

SOURCES = ("pyproject.toml", "setup.py", "README.md", "api", "bank", "ledger", "migrations")
#: where a source folder's files are in the wheel
IN_THE_WHEEL = {
    "api": "api",
    "bank": "bank",
    "ledger": "ledger",
    "migrations": "wetbank_migrations",
}


def build_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}


def git(source: Path, *args: str) -> str:
    """git in the copy, as a developer who committed there."""
    identity = ["-c", "user.name=wheel tests", "-c", "user.email=tests@localhost"]
    return run(["git", *identity, "-C", str(source), *args], source, build_env()).strip()


def build_wheel(source: Path, dist: Path) -> Path:
    pip = [sys.executable, "-m", "pip"]
    # an absolute path: pip takes a bare word for the name of a package on the index
    run(
        [*pip, "wheel", "--no-deps", "--quiet", "-w", str(dist), str(source)],
        dist.parent,
        build_env(),
    )
    wheels = list(dist.glob("wetland_bank_ledger-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def run(args: list[str], cwd: Path, env: dict[str, str], timeout: float = 300) -> str:
    done = subprocess.run(
        args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{args} failed ({done.returncode}):\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The wheel, built from a copy of the sources committed to a git repository; and that
    copy."""
    top = tmp_path_factory.mktemp("wheel")
    source = top / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, source / name, ignore=ignore)
        else:
            shutil.copy2(ROOT / name, source / name)
    git(source, "init", "--quiet")
    git(source, "add", "--all")
    git(source, "commit", "--quiet", "-m", "the sources under test")
    return build_wheel(source, top / "dist"), source


@pytest.fixture(scope="module")
def installed(built: tuple[Path, Path], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A new virtual environment holding the wheel and its dependencies; its bin folder."""
    top = tmp_path_factory.mktemp("venv")
    env = build_env()
    pip = [sys.executable, "-m", "pip"]
    venv = top / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], top, env)
    python = venv / "bin" / "python"
    run([*pip, "--python", str(python), "install", "--quiet", str(built[0])], top, env)
    return venv / "bin"


def test_the_wheel_holds_every_file_of_the_code_the_pages_and_the_migrations(
    built: tuple[Path, Path],
) -> None:
    wheel, source = built
    with zipfile.ZipFile(wheel) as archive:
        held = set(archive.namelist())
    expected = {
        f"{IN_THE_WHEEL[folder]}/{path.relative_to(source / folder).as_posix()}"
        for folder in IN_THE_WHEEL
        for path in (source / folder).rglob("*")
        if path.is_file()
    }
    assert expected, "nothing to look for"
    assert not expected - held, sorted(expected - held)


def outside_env(bin_dir: Path, **extra: str) -> dict[str, str]:
    """An environment that knows nothing of the checkout: the installed scripts, the system."""
    env = {
        "PATH": f"{bin_dir}:{SYSTEM_PATH}",
        "HOME": os.environ.get("HOME", "/root"),
        "LANG": "C.UTF-8",
    }
    env.update(extra)
    return env


def test_the_installed_package_is_the_wheels_not_the_checkouts(
    installed: Path, tmp_path: Path
) -> None:
    found = run(
        [
            str(installed / "python"),
            "-c",
            "import json, api, wetbank_migrations; "
            "print(json.dumps([api.__file__, list(wetbank_migrations.__path__)[0]]))",
        ],
        tmp_path,
        outside_env(installed),
    )
    api_file, migrations = json.loads(found)
    site = str(installed.parent / "lib")
    assert api_file.startswith(site) and migrations.startswith(site)
    assert (Path(migrations) / "env.py").exists()
    assert str(ROOT) not in found


def test_an_installed_service_migrates_serves_and_takes_a_deposit_from_any_directory(
    installed: Path, pg_url: str, tmp_path: Path
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = outside_env(installed, DATABASE_URL=pg_url, WETBANK_SECRET_KEY="wheel-" + "3" * 58)
    wetbank = str(installed / "wetbank")

    upgraded = run([wetbank, "db", "upgrade"], elsewhere, env)
    assert "is up to date" in upgraded
    created = run([wetbank, "token", "create", "--role", "board", "--name", "x"], elsewhere, env)
    board = created.strip().splitlines()[-1]
    assert board.startswith("wbt_")

    server = Server(
        pg_url,
        workers=2,
        log_path=tmp_path / "server.log",
        command=[wetbank],
        cwd=elsewhere,
        base_env=env,
    )
    with server, Client(server.port, token=board) as client:
        health = client.ok("GET", "/health", status=200)
        assert health == {"status": "ok", "database": "postgresql"}
        assert client.ok("GET", "/ready", status=200)["status"] == "ready"
        lgu = client.ok("POST", "/lgus", {"name": unique("LGU"), "kind": "county"})
        holder = client.ok("POST", "/holders", {"name": unique("Holder")})
        site = client.ok(
            "POST",
            "/bank-sites",
            {
                "name": unique("Site"),
                "holder_id": holder["id"],
                "service_area": 5,
                "county": "Lyon",
                "credit_areas": [{"category": "replacement_wetland", "area_sqft": 10**6}],
            },
        )
        bank = Bank(board, lgu["id"], "", holder["id"], "", site["id"])
        account = open_account(client, bank, 4_000)  # the account, and one deposit into it
        assert available(client, account, board) == 4_000
        # the pages' templates and stylesheet came with the wheel, and so did the API's docs
        for path in (
            "/sign-in",
            "/assets/site.css",
            "/api/v1/docs",
            "/api/v1/docs/assets/swagger-ui-bundle.js",
            "/problems/conflict",
        ):
            page = http.client.HTTPConnection(HOST, server.port, timeout=30)
            try:
                page.request("GET", path)
                response = page.getresponse()
                response.read()
            finally:
                page.close()
            assert response.status == 200, path
    server_log = server.log_path.read_text()
    assert "No module named" not in server_log and "Traceback" not in server_log


def test_an_installed_service_migrates_its_default_sqlite_database_from_any_directory(
    installed: Path, tmp_path: Path
) -> None:
    env = outside_env(installed)
    upgraded = run([str(installed / "wetbank"), "db", "upgrade"], tmp_path, env)
    assert "sqlite:///" in upgraded and "is up to date" in upgraded
    # the database, and the secret key every worker shares, live in the environment's
    # instance folder, not in the directory it was run from
    instance = installed.parent / "var" / "api-instance"
    assert (instance / "wetbank.sqlite3").exists() and (instance / "secret_key").exists()
    assert not list(tmp_path.iterdir())


# --- which code is installed, and the upgrade of docs/operations.md §8 --------------------------


def installed_version(bin_dir: Path, cwd: Path) -> str:
    """What ``wetbank --version`` of that environment prints."""
    return run([str(bin_dir / "wetbank"), "--version"], cwd, outside_env(bin_dir)).strip()


def test_wetbank_version_names_the_service_and_the_commit_its_wheel_was_built_from(
    built: tuple[Path, Path], installed: Path, tmp_path: Path
) -> None:
    commit = git(built[1], "rev-parse", "--short=12", "HEAD")
    shown = installed_version(installed, tmp_path)
    assert shown == f"wetbank 0.1.0 (commit {commit})", shown
    assert "Flask" not in shown


def documented_upgrade() -> list[str]:
    """§8 step 3's commands, as docs/operations.md gives them (comments left out)."""
    section = (ROOT / "docs" / "operations.md").read_text().split("## 8. Upgrade", 1)[1]
    section = section.split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    lines = [line.strip() for line in block.splitlines()]
    commands = [line for line in lines if line and not line.startswith("#")]
    assert any(" install " in c for c in commands), commands
    return commands


def upgrade_as_documented(bin_dir: Path, wheel: Path, cwd: Path) -> None:
    """§8's commands, with the test's environment for /opt/wetbank and ``wheel`` for the new
    one.  The environment has no pip of its own: this interpreter's pip installs into it."""
    pip = [sys.executable, "-m", "pip", "--python", str(bin_dir / "python")]
    for command in documented_upgrade():
        words = shlex.split(command)
        program = words[0].removeprefix("/opt/wetbank/bin/")
        args = [
            str(wheel) if re.fullmatch(r"wetland_bank_ledger-.*\.whl", w) else w for w in words[1:]
        ]
        if program == "pip":
            run([*pip, *args], cwd, build_env())
        else:
            run([str(bin_dir / program), *args], cwd, outside_env(bin_dir))


def test_the_documented_upgrade_installs_a_new_wheel_of_the_same_version_and_back(
    built: tuple[Path, Path], installed: Path, tmp_path: Path
) -> None:
    first, source = built
    before = git(source, "rev-parse", "--short=12", "HEAD")
    marker = "# a change that the upgrade must install"
    try:  # the next commit: new code, the same version number in pyproject.toml
        changed = source / "api" / "version.py"
        changed.write_text(changed.read_text() + f"\n{marker}\n")
        git(source, "commit", "--quiet", "--all", "-m", "a change")
        after = git(source, "rev-parse", "--short=12", "HEAD")
        second = build_wheel(source, tmp_path / "dist")
    finally:  # the copy stays at the commit of the module's wheel
        git(source, "reset", "--quiet", "--hard", before)
    assert second.name == first.name  # the same version: pip cannot tell them apart by it
    site_file = next((installed.parent / "lib").glob("python3*/site-packages/api/version.py"))

    upgrade_as_documented(installed, second, tmp_path)
    assert installed_version(installed, tmp_path) == f"wetbank 0.1.0 (commit {after})"
    assert marker in site_file.read_text()

    upgrade_as_documented(installed, first, tmp_path)  # and back, as a rollback would
    assert installed_version(installed, tmp_path) == f"wetbank 0.1.0 (commit {before})"
    assert marker not in site_file.read_text()
