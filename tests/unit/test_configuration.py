"""Issue 25 §4: configuration that is honest.

README.md's configuration table and the code agree both ways: every variable the table documents
is read, and every ``WETBANK_*`` variable the code reads is documented.  "Read" is found in the
source of ``api``, ``bank`` and ``ledger`` (``os.environ``/``os.getenv`` look-ups, click's
``envvar=``, and ``api.config.ENVIRONMENT``), and each variable of ``ENVIRONMENT`` is also shown
to change the configuration.  The secret key is one for every worker, and required on
PostgreSQL.
"""

from __future__ import annotations

import ast
import os
import re
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import click
import pytest
from click.testing import CliRunner

from api import cli
from api.config import ENVIRONMENT, build_config, instance_secret

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("api", "bank", "ledger")
PG_NOWHERE = "postgresql+psycopg://postgres@127.0.0.1:9/nowhere"  # never connected to


def documented() -> list[str]:
    """The variables of README.md's configuration table, in order."""
    text = (ROOT / "README.md").read_text()
    section = text.split("## Configuration (environment)", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Z][A-Z0-9_]*)` \|", section, flags=re.MULTILINE)


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level ``NAME = "text"`` constants."""
    found = {}
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found[target.id] = node.value.value
    return found


def _text(node: ast.AST, constants: dict[str, str]) -> str | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.Name):
        return constants.get(node.id)
    return None


def _is_environ(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "environ"


def read_by_the_code() -> dict[str, str]:
    """Every environment variable the service's code reads -> where."""
    found: dict[str, str] = {name: "api/config.py ENVIRONMENT" for name in ENVIRONMENT}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            constants = _constants(tree)
            where = str(path.relative_to(ROOT))
            for node in ast.walk(tree):
                names: list[ast.AST] = []
                if isinstance(node, ast.Call):
                    func = node.func
                    # os.environ.get(X) / os.environ.setdefault(X) / os.getenv(X)
                    if (
                        isinstance(func, ast.Attribute)
                        and (_is_environ(func.value) or func.attr == "getenv")
                        and func.attr in ("get", "getenv", "setdefault", "pop")
                        and node.args
                    ):
                        names.append(node.args[0])
                    names += [k.value for k in node.keywords if k.arg == "envvar"]
                elif isinstance(node, ast.Subscript) and _is_environ(node.value):
                    names.append(node.slice)  # os.environ[X]
                for name in names:
                    value = _text(name, constants)
                    if value:
                        found.setdefault(value, where)
    return found


def test_the_readme_documents_the_variables_it_should() -> None:
    names = documented()
    assert len(names) == len(set(names)), "a variable is documented twice"
    # the reading below is not vacuous: it finds what we know is there
    assert {"DATABASE_URL", "WETBANK_SECRET_KEY", "WETBANK_TRUST_PROXY"} <= set(names)


def test_every_documented_variable_is_read_by_the_code() -> None:
    read = read_by_the_code()
    unread = [name for name in documented() if name not in read]
    assert not unread, f"README.md documents variables the code never reads: {unread}"


def test_every_wetbank_variable_the_code_reads_is_documented() -> None:
    read = read_by_the_code()
    assert {"WETBANK_WORKERS", "WETBANK_LOG_LEVEL", "PROMETHEUS_MULTIPROC_DIR"} <= set(read)
    missing = {
        name: where
        for name, where in read.items()
        if name.startswith("WETBANK_") and name not in documented()
    }
    assert not missing, f"variables read but not in README.md's table: {missing}"


#: a value for each variable of ``api.config.ENVIRONMENT`` and what it must make of it
SAMPLES: dict[str, tuple[str, Any]] = {
    "DATABASE_URL": ("sqlite:////tmp/elsewhere.sqlite3", "sqlite:////tmp/elsewhere.sqlite3"),
    "WETBANK_SECRET_KEY": ("k" * 64, "k" * 64),
    "WETBANK_WRITE_RATE_LIMIT": ("60/minute", "60/minute"),
    "WETBANK_MAX_BODY_BYTES": ("2048", 2048),
    "WETBANK_COOKIE_SECURE": ("0", False),
    "WETBANK_TRUST_PROXY": ("2", 2),
    "WETBANK_PG_PREPARE": ("off", False),
    "WETBANK_POOL_SIZE": ("3", 3),
    "WETBANK_POOL_OVERFLOW": ("0", 0),
    "WETBANK_POOL_TIMEOUT": ("7", 7),
    "WETBANK_READY_MAX_SEAL_AGE_SECONDS": ("120", 120),
}


def test_a_sample_covers_every_variable_of_the_app_configuration() -> None:
    assert set(SAMPLES) == set(ENVIRONMENT)


@pytest.mark.parametrize("variable", sorted(SAMPLES))
def test_each_variable_changes_the_app_configuration(
    variable: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    value, expected = SAMPLES[variable]
    for name in ENVIRONMENT:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv(variable, value)
    assert build_config(str(tmp_path), None)[ENVIRONMENT[variable]] == expected


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("WETBANK_POOL_SIZE", "0"),
        ("WETBANK_POOL_SIZE", "ten"),
        ("WETBANK_TRUST_PROXY", "-1"),
        ("WETBANK_PG_PREPARE", "maybe"),
    ],
)
def test_a_value_that_makes_no_sense_is_refused_naming_the_variable(
    variable: str, value: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=variable):
        build_config(str(tmp_path), None)


# --- the secret key -----------------------------------------------------------------------------


def test_the_secret_key_from_the_environment_is_the_apps(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("WETBANK_SECRET_KEY", "s" * 64)
    config = build_config(str(tmp_path), {"DATABASE_URL": PG_NOWHERE})
    assert config["SECRET_KEY"] == "s" * 64
    assert not (tmp_path / "secret_key").exists()


def test_on_sqlite_every_worker_shares_one_generated_key_kept_in_the_instance_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("WETBANK_SECRET_KEY", raising=False)
    folder = tmp_path / "instance"
    keys: list[str] = []

    def worker() -> None:  # workers starting together race to create it
        keys.append(build_config(str(folder), None)["SECRET_KEY"])

    threads = [threading.Thread(target=worker) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(keys) == 8 and len(set(keys)) == 1 and len(keys[0]) == 64
    kept = folder / "secret_key"
    assert kept.read_text() == keys[0]
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600  # readable by its owner only
    assert [p.name for p in folder.iterdir()] == ["secret_key"]  # no drafts left behind
    # a restart keeps it (the pages' sessions would otherwise be signed anew)
    assert instance_secret(folder) == keys[0]


def test_on_postgresql_serve_refuses_to_start_without_a_secret_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("WETBANK_SECRET_KEY", raising=False)
    started: list[Any] = []
    monkeypatch.setattr(cli.os, "execvp", lambda *args: started.append(args))
    served = CliRunner().invoke(cli.main, ["serve"], env={"DATABASE_URL": PG_NOWHERE})
    assert served.exit_code == 1
    assert "WETBANK_SECRET_KEY is not set" in served.output
    assert not started


def test_on_postgresql_the_wsgi_app_refuses_to_load_without_a_secret_key(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "WETBANK_SECRET_KEY"}
    env["DATABASE_URL"] = PG_NOWHERE

    def load(extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", "import api.wsgi"],
            env={**env, **extra},
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )

    refused = load({})
    assert refused.returncode != 0
    assert "WETBANK_SECRET_KEY is not set" in refused.stderr
    assert load({"WETBANK_SECRET_KEY": "w" * 64}).returncode == 0, refused.stderr


# --- the environment file of docs/operations.md ------------------------------------------------


def documented_environment_file() -> str:
    """The production environment file docs/operations.md §2 shows."""
    text = (ROOT / "docs" / "operations.md").read_text()
    section = text.split("## 2. Configure", 1)[1].split("\n## ", 1)[0]
    block = section.split("```sh\n", 1)[1].split("```", 1)[0]
    assert block.startswith("# /etc/wetbank/wetbank.env"), block
    return block


def read_as_systemd_does(text: str) -> dict[str, str]:
    """``EnvironmentFile=``: a line whose first character (after blanks) is ``#`` or ``;`` is a
    comment; in ``KEY=VALUE`` everything after the ``=`` is the value, a ``#`` in it and the rest
    of the line included, less the blanks around it and one pair of enclosing quotes."""
    found = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        key, equals, value = line.partition("=")
        assert equals, f"not KEY=VALUE: {raw!r}"
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        found[key.strip()] = value
    return found


def read_as_the_shell_does(text: str, tmp_path: Path) -> dict[str, str]:
    """``set -a; . FILE`` (docs/operations.md §3): what the shell exports from it."""
    path = tmp_path / "wetbank.env"
    path.write_text(text)
    shown = subprocess.run(
        ["sh", "-c", 'set -a; . "$1"; exec env -0', "sh", str(path)],
        env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    pairs = (item.partition("=") for item in shown.stdout.split("\0") if item)
    return {key: value for key, _, value in pairs}


def test_the_documented_environment_file_configures_the_service_under_systemd_and_the_shell(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    text = documented_environment_file()
    values = read_as_systemd_does(text)
    assert set(values) <= set(documented()), "the file sets a variable README.md does not list"
    assert {"DATABASE_URL", "WETBANK_SECRET_KEY", "WETBANK_TRUST_PROXY"} <= set(values)
    for name in {*ENVIRONMENT, "WETBANK_WORKERS", "WETBANK_THREADS", "WETBANK_TIMEOUT"}:
        monkeypatch.delenv(name, raising=False)
    for key, value in values.items():
        monkeypatch.setenv(key, value)
    config = build_config(str(tmp_path), None)  # every value the app reads makes sense to it
    assert config["WETBANK_TRUST_PROXY"] == 1
    assert config["DATABASE_URL"] == values["DATABASE_URL"]
    # and so does every value `wetbank serve` reads
    serve = cli.main.get_command(click.Context(cli.main), "serve")
    assert serve is not None
    options = serve.make_context("serve", []).params
    assert (options["workers"], options["threads"]) == (
        int(values["WETBANK_WORKERS"]),
        int(values["WETBANK_THREADS"]),
    )
    # and the shell (docs/operations.md §3) reads the same values from it
    shell = read_as_the_shell_does(text, tmp_path)
    assert {key: shell.get(key) for key in values} == values
