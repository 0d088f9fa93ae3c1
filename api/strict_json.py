"""Request bodies are strict JSON (API.md "Errors"; issue 8 "Hostile input").

Python's parser accepts what JSON does not (``NaN``, ``Infinity``), silently keeps the last of
duplicate keys (so two parsers can read one body two ways), and fails with ``RecursionError`` (a
500) on deeply nested input; and PostgreSQL cannot store a NUL character or an unpaired surrogate
(another 500).  Every JSON body is checked here once, before any view parses it: each of those
is a 4xx problem, and nothing is written.
"""

from __future__ import annotations

import json
from typing import Any

from api.problems import ApiProblem

#: no request body of the API nests deeper than a few levels
MAX_DEPTH = 32


class _Duplicate(Exception):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _Constant(Exception):
    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.name = name


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise _Constant(name)


def check_body(raw: bytes) -> None:
    """Refuse a JSON body that is ambiguous, not JSON, too deep, or not storable: also on
    writes that take no body (freeze, void, refund), which would otherwise ignore it."""
    if not raw:
        return
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ApiProblem(400, "bad_request", "The request body is not UTF-8.") from None
    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant)
    except _Duplicate as error:
        raise ApiProblem(
            400, "bad_request", f"The JSON object repeats the key {error.key[:100]!r}."
        ) from None
    except _Constant as error:
        raise ApiProblem(400, "bad_request", f"{error.name} is not a JSON value.") from None
    except RecursionError:
        raise ApiProblem(
            400, "bad_request", f"The JSON nests more than {MAX_DEPTH} levels deep."
        ) from None
    except ValueError:  # not JSON, or a number of more than 4300 digits
        raise ApiProblem(400, "bad_request", "The request body is not valid JSON.") from None
    _check_tree(value)


def _check_tree(value: Any) -> None:
    stack: list[tuple[Any, str, int]] = [(value, "", 0)]
    while stack:
        node, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise ApiProblem(
                400, "bad_request", f"The JSON nests more than {MAX_DEPTH} levels deep."
            )
        if isinstance(node, str):
            _check_string(node, path or "body")
        elif isinstance(node, dict):
            for key, item in node.items():
                here = f"{path}.{key}" if path else key
                _check_string(key, here)
                stack.append((item, here, depth + 1))
        elif isinstance(node, list):
            for index, item in enumerate(node):
                stack.append((item, f"{path}.{index}" if path else str(index), depth + 1))


def _check_string(text: str, path: str) -> None:
    if "\x00" in text:
        message = "must not contain a NUL character"
    else:
        try:
            text.encode("utf-8")
            return
        except UnicodeEncodeError:
            message = "is not valid Unicode (an unpaired surrogate)"
    raise ApiProblem(
        422,
        "validation_error",
        "Some fields are missing or not valid: see errors.",
        errors={path[:200]: [message]},
    )
