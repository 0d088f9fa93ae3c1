"""The problem responses of the OpenAPI document: one component per status, each listing its
stable codes with an example of each, and the ``Problem`` schema whose ``code`` enumerates them.

Derived from ``api.problem_types`` when the app is built, so a new error code is documented
without editing this module.
"""

from __future__ import annotations

from typing import Any

from marshmallow import fields

from api import problem_types, problems
from api.schemas.common import ProblemSchema

PROBLEM_JSON = problems.PROBLEM_JSON

#: status → (response component, what the problems of that status are about)
PROBLEM_RESPONSES: dict[int, tuple[str, str]] = {
    400: ("BadRequest", "The request could not be read."),
    401: ("Unauthorized", "No valid bearer token."),
    403: ("Forbidden", "The token's role may not call this endpoint."),
    404: ("NotFound", "No such resource, or one the caller may not see."),
    409: ("Conflict", "The key or the record's state does not allow this request."),
    413: ("PayloadTooLarge", "The body is over the size limit."),
    415: ("UnsupportedMediaType", "The body is not JSON."),
    422: ("UnprocessableContent", "A field or a rule of the domain refuses the request."),
    429: ("TooManyRequests", "Over the write rate limit."),
    503: ("ServiceUnavailable", "The service cannot answer now."),
}
#: the response for any other problem (405, 500)
OTHER_PROBLEM = "OtherProblem"


def problem_schema() -> type[ProblemSchema]:
    """``ProblemSchema`` with ``code`` as the enum of every stable code (computed when the app
    is built, once every error class is defined)."""
    return type(
        "ProblemSchema",  # named "Problem" in the document, as flask-smorest names it
        (ProblemSchema,),
        {
            "type": fields.String(
                metadata={
                    "description": "`/problems/<code>`: a page of this service that explains the "
                    "code (a reference relative to the URL that was called)."
                }
            ),
            "code": fields.String(
                required=True,
                metadata={
                    "enum": problem_types.codes(),
                    "description": "Stable: branch on it, not on `detail`.",
                },
            ),
        },
    )


def problem_response(status: int | None, about: str) -> dict[str, Any]:
    """A problem response: what it is about, its codes (each linked to its page), an example of
    each, and its headers."""
    codes = [
        c for c in problem_types.codes() if status is None or problem_types.status_of(c) == status
    ]
    if status is None:
        codes = [c for c in codes if problem_types.status_of(c) not in PROBLEM_RESPONSES]
    listed = "; ".join(f"[`{code}`](/problems/{code})" for code in codes)
    headers: dict[str, Any] = {"X-Request-Id": "X-Request-Id"}
    if status in (429, 503):
        headers["Retry-After"] = "Retry-After"
    return {
        "description": f"{about} Codes: {listed}." if listed else about,
        "headers": headers,
        "content": {
            PROBLEM_JSON: {
                "schema": "Problem",
                "examples": {code: {"value": example_problem(code)} for code in codes},
            }
        },
    }


def example_problem(code: str) -> dict[str, Any]:
    known = problem_types.explained(code)
    return {
        "type": f"/problems/{code}",
        "title": problems.title_of(code),
        "status": problem_types.status_of(code),
        "detail": known.meaning if known else code,
        "code": code,
        "request_id": "5d1c0a4e9b7f4c2a8e3b6f1d0c9a8b7e",
    }
