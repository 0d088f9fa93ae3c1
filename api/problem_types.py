"""The problem types a caller can meet: every stable ``code``, its status, what it means and what
to do about it.

A problem's ``type`` is ``/problems/<code>`` (``api.problems.type_uri``), a page of this service
that explains the code (``api.docs_pages``); the OpenAPI document lists the same codes as the
``Problem`` schema's ``code`` enum (``api.openapi``).  The codes are collected from where they are
raised: ``CATALOGUE``, which explains each, and the HTTP layer's tables in ``api/problems.py``
(tests/api/test_openapi.py checks that every code an error of the domain, the engine or the HTTP
layer can carry is among them).
"""

from __future__ import annotations

from dataclasses import dataclass

from api import problems


@dataclass(frozen=True)
class ProblemType:
    code: str
    status: int
    meaning: str
    action: str

    @property
    def title(self) -> str:
        return problems.title_of(self.code)


def _entry(code: str, status: int, meaning: str, action: str) -> tuple[str, ProblemType]:
    return code, ProblemType(code, status, meaning, action)


_RETRY_SAME_KEY = "Retry with the same Idempotency-Key: a write is made at most once."

#: every code, in the order of its status
CATALOGUE: dict[str, ProblemType] = dict(
    [
        _entry(
            "bad_request",
            400,
            "The request could not be read: its body is not strict JSON (a repeated key, NaN or "
            "Infinity, nesting deeper than 32 levels, bytes that are not UTF-8), a cursor the "
            "listing did not issue, an Idempotency-Key that is empty or longer than 255 "
            "characters, or a request line or header that is not valid HTTP/1.1 (refused by "
            "the server before the service reads it).",
            "Fix the request as `detail` says and send it again.",
        ),
        _entry(
            "unauthorized",
            401,
            "No bearer token was sent, or the token is unknown or was revoked (a write whose "
            "token was revoked while it waited is refused too).",
            "Send `Authorization: Bearer <token>` with a token the board created and has not "
            "revoked.",
        ),
        _entry(
            "forbidden",
            403,
            "The token's role may not call this endpoint. The answer does not depend on the "
            "body or the Idempotency-Key: they are not read.",
            "Use a token of a role the endpoint allows (the OpenAPI description of each "
            "operation names them).",
        ),
        _entry(
            "not_found",
            404,
            "There is no such resource, or it belongs to another LGU or holder: the service does "
            "not reveal what it holds for others.",
            "Check the id, and that the token acts for the LGU or holder the resource belongs to.",
        ),
        _entry(
            "method_not_allowed",
            405,
            "The path exists, but not for this method.",
            "Use one of the methods the `Allow` header lists.",
        ),
        _entry(
            "idempotency_conflict",
            409,
            "The Idempotency-Key was used before, by the same token, with a different request "
            "(another method, path or body).",
            "Use a new key for a new request; repeat a key only to retry the very same request.",
        ),
        _entry(
            "conflict",
            409,
            "The record's state does not allow the action: a plan decided twice, a released "
            "security released again, a deposit reversed after its credits moved. "
            "`current_status` names the state it is in.",
            "Read the record again and act on its current state.",
        ),
        _entry(
            "payload_too_large",
            413,
            "The body is over the size limit (WETBANK_MAX_BODY_BYTES, 1 MiB unless configured), "
            "whether it was sent with a Content-Length or chunked. Nothing was read or written.",
            "Send a smaller body.",
        ),
        _entry(
            "uri_too_long",
            414,
            "The request line (method, path and query) is over the 4,094 bytes the server "
            "reads; refused before the service reads the request. Nothing was read or written.",
            "Send a shorter query: fewer or shorter parameters.",
        ),
        _entry(
            "unsupported_media_type",
            415,
            "The body is not `application/json`.",
            "Send the body as JSON with `Content-Type: application/json`.",
        ),
        _entry(
            "expectation_failed",
            417,
            "An `Expect` header other than `100-continue`; refused before the service reads "
            "the request.",
            "Send no `Expect` header, or `Expect: 100-continue`.",
        ),
        _entry(
            "validation_error",
            422,
            "A field is missing, of the wrong type, out of bounds, not a valid date, or a date in "
            "the future. `errors` maps each field path (`impact.area_sqft`, "
            "`actions.0.credit_sqft`) to its messages.",
            "Correct the fields `errors` names and send the request again (under the same "
            "Idempotency-Key if you like: refused requests keep no key).",
        ),
        _entry(
            "insufficient_credits",
            422,
            "The account's available credits (posted, less reserved and frozen) do not cover the "
            "amount asked.",
            "Ask for no more than the account's `available_sqft`, or move credits into it first.",
        ),
        _entry(
            "cap_exceeded",
            422,
            "A deposit would credit an action of the bank site past its cap (Minn. Stat. "
            "103G.2242 Subd. 12 (c)), or a deposit's reversal or an amendment of the site's "
            "registered area would leave the site's credit in a category (`category`, "
            "`credited_sqft`) standing past the cap it would then have (`cap_sqft`): a buffer "
            "credited beside the wetland the reversed deposit credited, a category credited "
            "more than its amended area allows.",
            "Credit no more than the cap the problem names, less what was credited before; to "
            "reverse a wetland's deposit, first reverse the deposits of the buffer credited "
            "beside it; amend an area to no less than its credit (and its buffers') needs.",
        ),
        _entry(
            "not_eligible",
            422,
            "A precondition of Subd. 12 (a) or of the action's category fails, the credits "
            "lie outside the plan's service area, or the plan is not replaced with bank credits "
            "(`method` names how it is).",
            "Check the deposit's or plan's facts against the rule `detail` names.",
        ),
        _entry(
            "restricted_credit_misuse",
            422,
            "Credits usable only for the part of a replacement above 1:1 were offered for the "
            "first 1:1.",
            "Cover the first 1:1 with unrestricted credits.",
        ),
        _entry(
            "ratio_too_low",
            422,
            "A replacement ratio below 1:1.",
            "Use a ratio of at least 1.",
        ),
        _entry(
            "comment_period_open",
            422,
            "A decision (or the resolution that makes it) before the plan's notice of "
            "application is recorded, or, from 10,000 sq ft, before the Subd. 8 comment period "
            "has run. Under 10,000 sq ft there is no comment period, but the summary of the "
            "application (Subd. 6 (b)) is mailed all the same and cannot be recorded once the "
            "plan is decided. `deadline` names what is awaited: `notice_due` (with `due`) or "
            "`comment_period_ends` (with `ends` once the notice is recorded). A revision of a "
            "decided plan that does not count as a new application keeps its decision, so it is "
            "refused too when it would take the area to 10,000 sq ft or more and the decision "
            "was made before that period had run (`errors.area_sqft`).",
            "Record the notice of application (a late one is accepted while the plan is "
            "undecided), then the decision; from 10,000 sq ft, dated after the comment period "
            "ends. A decided plan stays below 10,000 sq ft unless revised as a new application.",
        ),
        _entry(
            "deadline_passed",
            422,
            "A decision, an extension or a notice of application dated after the decision was "
            "due; `deadline` names the day.",
            "A plan not decided in time is deemed approved: read it again.",
        ),
        _entry(
            "appeal_window_closed",
            422,
            "A petition postmarked after the appeal window closed.",
            "Nothing: the window is set by statute.",
        ),
        _entry(
            "invalid_fee",
            422,
            "An appeal filing fee other than the statute's, or none recorded for a grant; or "
            "appeal security above the statute's maximum, where the LGU required none, or "
            "above the amount it required.",
            "Send the fee and security the problem names; post security only as the LGU "
            "required it.",
        ),
        _entry(
            "security_required",
            422,
            "The appeal security the LGU required is not posted in full.",
            "Post the required security before the board grants the petition.",
        ),
        _entry(
            "account_frozen",
            422,
            "The account, or the bank site its credits came from, is frozen: it accepts deposits "
            "but sends nothing out.",
            "Ask the board to unfreeze the account or site.",
        ),
        _entry(
            "unbalanced",
            422,
            "A ledger transaction whose debits and credits differ.",
            "Report it with the request id: the service built a transaction it should not have.",
        ),
        _entry(
            "rate_limited",
            429,
            "The token made more writes than WETBANK_WRITE_RATE_LIMIT allows (off unless "
            "configured).",
            "Wait the seconds `Retry-After` gives, then retry with the same Idempotency-Key.",
        ),
        _entry(
            "header_fields_too_large",
            431,
            "A header is over the 8,190 bytes the server reads, or there are more than 100 "
            "headers; refused before the service reads the request.",
            "Send fewer or shorter headers.",
        ),
        _entry(
            "internal_error",
            500,
            "An unexpected error. It was logged with the request id.",
            "Report the `request_id`; " + _RETRY_SAME_KEY,
        ),
        _entry(
            "unsupported_transfer_coding",
            501,
            "A `Transfer-Encoding` coding the server does not know (only `chunked` is decoded; "
            "`gzip`, `deflate` and `compress` are refused as 400 `bad_request`); refused before "
            "the service reads the request.",
            "Send the body with a `Content-Length`, or chunked.",
        ),
        _entry(
            "service_unavailable",
            503,
            "The database is unreachable, or every pooled connection stayed busy, or the "
            "request conflicted with concurrent writes (a deadlock, a serialization failure, a "
            "busy SQLite file) on every retry, or (for `GET /ready`) the process is not ready. "
            "Nothing was written.",
            "Wait the seconds `Retry-After` gives. " + _RETRY_SAME_KEY,
        ),
        _entry(
            "schema_behind",
            503,
            "The database schema is older than the code.",
            "The operator runs `wetbank db upgrade`; then retry.",
        ),
    ]
)


def codes() -> list[str]:
    """Every code a problem can carry, by status: the catalogue's and the HTTP layer's."""
    found = set(CATALOGUE) | set(problems.STATUS_BY_CODE) | set(problems.CODE_BY_STATUS.values())
    return sorted(found, key=lambda code: (status_of(code), code))


def status_of(code: str) -> int:
    """The HTTP status a problem of ``code`` is sent with; ``problems.UnmappedCode`` for a code
    neither the catalogue nor the domain's table gives one."""
    known = CATALOGUE.get(code)
    return known.status if known else problems.status_for(code)


def explained(code: str) -> ProblemType | None:
    """The code's entry, for a code any problem can carry; ``None`` for any other."""
    if code not in codes():
        return None
    return CATALOGUE.get(code) or ProblemType(
        code, status_of(code), "A refusal of the service.", "Read the problem's `detail`."
    )
