"""Every error the engine or the bank can raise reaches a caller with a status the HTTP problem
catalogue explains: a code with no status is a fault the service answers with a logged 500, and
these tests find it before a caller does.

The error classes are found by walking ``LedgerError``'s subclasses after importing every module
of ``ledger``, ``bank`` and ``api``, so an error declared outside ``ledger.errors`` and
``bank.errors`` (``bank.access.TokenRevoked``, a form's own refusal in ``api.web``) is walked too.
"""

from __future__ import annotations

import importlib
import logging
import pkgutil

import pytest
from flask import Flask

import api
import bank
import bank.errors
import ledger
import ledger.errors
from api import problem_types, problems
from bank.errors import code_of
from ledger.errors import LedgerError

#: the server's entry points, which build an app (and check its environment) when imported
ENTRY_POINTS = {"api.wsgi", "api.gunicorn_config"}


def _import_every_module() -> None:
    for package in (ledger, bank, api):
        for module in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            if module.name not in ENTRY_POINTS:
                importlib.import_module(module.name)


def _subclasses(cls: type[LedgerError]) -> list[type[LedgerError]]:
    found = []
    for sub in cls.__subclasses__():
        found += [sub, *_subclasses(sub)]
    return found


_import_every_module()
ERRORS = sorted(set(_subclasses(LedgerError)), key=lambda cls: (cls.__module__, cls.__name__))


def _refusal(cls: type[LedgerError]) -> LedgerError:
    """An instance of ``cls``, whatever its own ``__init__`` asks for."""
    error = cls.__new__(cls)
    LedgerError.__init__(error, "refused")
    return error


def test_the_walk_finds_the_errors_of_both_layers() -> None:
    names = {cls.__name__ for cls in ERRORS}
    assert {"InsufficientFunds", "UnknownAccount", "NotFound", "InsufficientCredits"} <= names
    assert {"TokenRevoked"} <= names


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__name__)
def test_every_error_class_declares_its_code(cls: type[LedgerError]) -> None:
    assert isinstance(vars(cls).get("code"), str), f"{cls.__qualname__} inherits its code"


@pytest.mark.parametrize("cls", ERRORS, ids=lambda cls: cls.__name__)
def test_every_error_code_maps_to_a_status_the_catalogue_explains(
    cls: type[LedgerError],
) -> None:
    code = code_of(_refusal(cls))
    status = problems.status_for(code)
    assert code in problem_types.CATALOGUE, f"{code} ({cls.__name__}) is not in the catalogue"
    assert problem_types.CATALOGUE[code].status == status
    assert problem_types.status_of(code) == status


def test_a_code_with_no_status_is_an_error_not_a_conflict() -> None:
    with pytest.raises(problems.UnmappedCode):
        problems.status_for("no_such_code")
    with pytest.raises(problems.UnmappedCode):
        problem_types.status_of("no_such_code")


def test_a_refusal_with_no_status_is_answered_500_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    app = Flask(__name__)
    problems.register(app)
    rogue = LedgerError("the refusal's own words")
    rogue.code = "no_such_code"  # an instance's, so that no class of the walk is added

    @app.get("/refuse")
    def refuse() -> None:
        raise rogue

    with caplog.at_level(logging.ERROR, logger="wetbank.api"):
        response = app.test_client().get("/refuse")
    assert response.status_code == 500
    assert response.json is not None
    assert response.json["code"] == "internal_error"
    assert "own words" not in response.get_data(as_text=True)
    assert "no_such_code" in caplog.text
