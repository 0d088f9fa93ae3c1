"""Notices to the people the statute names (Subd. 6 and 7; docs/domain.md §4), on both databases.

A notice of application goes to the three panel members, the DNR commissioner, the watershed
district's managers when the plan has a district (full notices: Subd. 6 (a)) and every member of
the public who asked by the mailing date; a notice of decision to the panel, the applicant, the
commissioner, the watershed district whatever the kind (Subd. 7) and the public who asked.  Each
notice keeps its kind as mailed and is printed as HTML and PDF.
"""

from __future__ import annotations

import html
import os
import re
import shutil
import subprocess
from typing import Any

import pytest

from tests.api.kit import (
    RECIPIENTS,
    Kit,
    decision_body,
    mailing,
    ok,
    on,
    problem,
    recipients_for,
    unique,
)
from tests.api.web_kit import parse, signed_in

PANEL = [r for r in RECIPIENTS if r["role"] == "tep_member"]


@pytest.fixture
def kit(api, app) -> Kit:
    return Kit(api, app)


def without(plan: dict, *roles: str) -> list[dict[str, str]]:
    """Everyone the plan's notices name (``recipients_for``) but ``roles``."""
    return [r for r in recipients_for(plan) if r["role"] not in roles]


def notice(kit: Kit, plan: dict, lgu: dict, day: str, recipients: list, *, decision=False) -> Any:
    path = f"/plans/{plan['id']}/{'decision-notice' if decision else 'notices'}"
    with on(day):
        return kit.api.post(path, {"mailed_on": day, "recipients": recipients}, token=lgu["token"])


def ask(kit: Kit, plan: dict, lgu: dict, day: str, name: str = "Pat Public") -> dict[str, Any]:
    body = {"name": name, "address": "5 Lake St, Buffalo, MN", "requested_on": day}
    with on(day):
        return dict(
            ok(kit.api.post(f"/plans/{plan['id']}/copy-requests", body, token=lgu["token"]))
        )


def requester(asked: dict[str, Any]) -> dict[str, str]:
    return {"name": asked["name"], "address": asked["address"], "role": "public_requester"}


def full_plan(kit: Kit, lgu: dict, **extra: Any) -> dict[str, Any]:
    """A 25,000 sq ft plan (a full notice) received Wednesday 2026-06-17 in a watershed
    district; its notice is due Monday 06-29."""
    extra.setdefault("watershed_district", "Crow River Watershed District")
    with on("2026-06-17"):
        return kit.plan(lgu, received_on="2026-06-17", area_sqft=25_000, **extra)


def decided(kit: Kit, plan: dict, lgu: dict, day: str = "2026-07-24") -> None:
    with on(day):
        path = f"/plans/{plan['id']}/decision"
        ok(kit.api.post(path, decision_body("approved", day), token=lgu["token"]))


def errors_of(response: Any) -> list[str]:
    return list(problem(response, 422, "validation_error")["errors"]["recipients"])


# --- who a notice of application goes to ------------------------------------------------------


def test_a_notice_missing_the_dnr_commissioner_is_refused_and_with_every_role_recorded(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    refused = notice(kit, plan, lgu, "2026-06-22", without(plan, "dnr_commissioner"))
    body = problem(refused, 422, "validation_error")
    assert "dnr_commissioner" in body["detail"]
    assert [e.split(":")[0] for e in body["errors"]["recipients"]] == ["dnr_commissioner"]
    with on("2026-06-22"):
        unchanged = kit.get_plan(plan["id"])
    assert (unchanged["status"], unchanged["notice"]) == ("received", None)

    recorded = ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    assert recorded == {
        "mailed_on": "2026-06-22",
        "due": "2026-06-29",
        "late": False,
        "kind": "full",
        "recipients": recipients_for(plan),
        "id": recorded["id"],
    }
    with on("2026-06-22"):
        shown = kit.get_plan(plan["id"])
    assert shown["status"] == "noticed"
    assert shown["notice"] == recorded
    assert shown["watershed_district"] == "Crow River Watershed District"
    assert shown["location"].startswith("Section 14")


@pytest.mark.parametrize(
    ("role", "instead"),
    [
        ("tep_member", PANEL[:2]),
        ("tep_member", PANEL[:2] + PANEL[1:2]),  # one member twice
        ("dnr_commissioner", []),
        ("watershed_district", []),
    ],
)
def test_a_full_notice_of_application_names_every_role_subd_6_a_requires(kit, role, instead):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    recipients = without(plan, role) + instead
    assert [
        e.split(":")[0] for e in errors_of(notice(kit, plan, lgu, "2026-06-22", recipients))
    ] == [role]


def test_the_applicant_need_not_be_mailed_the_notice_of_application(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    ok(notice(kit, plan, lgu, "2026-06-22", without(plan, "applicant")))


def test_a_summary_notice_needs_no_watershed_district_but_the_notice_of_decision_does(kit):
    """Subd. 6 (b) mails the summary to the panel, the public and the commissioner only; Subd. 7
    mails the decision to the district's managers whatever the size."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(
            lgu, received_on="2026-06-08", area_sqft=9_000, watershed_district="Buffalo Creek WD"
        )
    summary = ok(
        notice(kit, plan, lgu, "2026-06-10", without(plan, "watershed_district", "applicant"))
    )
    assert summary["kind"] == "summary"
    decided(kit, plan, lgu, "2026-06-15")
    refused = notice(
        kit, plan, lgu, "2026-06-16", without(plan, "watershed_district"), decision=True
    )
    assert [e.split(":")[0] for e in errors_of(refused)] == ["watershed_district"]
    assert "Buffalo Creek WD" in errors_of(refused)[0]
    ok(notice(kit, plan, lgu, "2026-06-16", recipients_for(plan), decision=True))


def test_a_plan_without_a_watershed_district_mails_no_district(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu, watershed_district=None)
    assert plan["watershed_district"] is None
    ok(notice(kit, plan, lgu, "2026-06-22", without(plan, "watershed_district")))
    decided(kit, plan, lgu)
    ok(notice(kit, plan, lgu, "2026-07-27", without(plan, "watershed_district"), decision=True))


@pytest.mark.parametrize(
    "role", ["tep_member", "applicant", "dnr_commissioner", "watershed_district"]
)
def test_a_notice_of_decision_names_every_role_subd_7_requires(kit, role):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    decided(kit, plan, lgu)
    refused = notice(kit, plan, lgu, "2026-07-27", without(plan, role), decision=True)
    assert [e.split(":")[0] for e in errors_of(refused)] == [role]
    with on("2026-07-27"):
        assert kit.get_plan(plan["id"])["decision_notice"] is None
    mailed = ok(notice(kit, plan, lgu, "2026-07-27", recipients_for(plan), decision=True))
    assert mailed["kind"] == "summary" and mailed["recipients"] == recipients_for(plan)


def test_several_missing_roles_are_named_together(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    only_panel = [*PANEL]
    body = problem(notice(kit, plan, lgu, "2026-06-22", only_panel), 422, "validation_error")
    assert [e.split(":")[0] for e in body["errors"]["recipients"]] == [
        "dnr_commissioner",
        "watershed_district",
    ]
    assert "dnr_commissioner, watershed_district" in body["detail"]


def renamed(recipients: list[dict[str, str]], role: str, *names: str) -> list[dict[str, str]]:
    """``recipients`` with those of ``role`` named ``names`` in turn."""
    given = iter(names)
    return [{**r, "name": next(given)} if r["role"] == role else r for r in recipients]


@pytest.mark.parametrize("decision", [False, True], ids=["application", "decision"])
def test_the_watershed_district_mailed_is_the_one_the_plan_names(kit, decision):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu, watershed_district="Yellow Medicine River Watershed District")
    day = "2026-06-22"
    if decision:
        ok(notice(kit, plan, lgu, day, recipients_for(plan)))
        decided(kit, plan, lgu)
        day = "2026-07-27"
    other = renamed(recipients_for(plan), "watershed_district", "Red River Watershed District")
    refused = errors_of(notice(kit, plan, lgu, day, other, decision=decision))
    assert refused == [
        "watershed_district: the managers of Yellow Medicine River Watershed District"
    ]
    with on(day):
        assert kit.get_plan(plan["id"])["decision_notice" if decision else "notice"] is None
    # the district's name within a longer one, word for word: not an abbreviation of it
    for short in (
        "Managers of Yellow Medicine River WD",
        "Yellow Medicine River",
        "Friends of the Yellow Medicine River Watershed District",
        "Board of Managers, North Fork Yellow Medicine River Watershed District",
    ):
        abbreviated = renamed(other, "watershed_district", short)
        assert errors_of(notice(kit, plan, lgu, day, abbreviated, decision=decision)) == refused
    loose = renamed(
        other, "watershed_district", "Board of Managers,  yellow medicine river WATERSHED district."
    )
    ok(notice(kit, plan, lgu, day, loose, decision=decision))
    # "the managers of the district" names it too, on a new plan (one notice of each kind)
    again = full_plan(kit, lgu, watershed_district="Yellow Medicine River Watershed District")
    if decision:
        ok(notice(kit, again, lgu, "2026-06-22", recipients_for(again)))
        decided(kit, again, lgu)
    managers = "The Managers of the Yellow Medicine River Watershed District"
    named = renamed(recipients_for(again), "watershed_district", managers)
    ok(notice(kit, again, lgu, day, named, decision=decision))


@pytest.mark.parametrize(
    ("district", "recipient"),
    [
        ("Managers Creek Watershed District", "Managers Creek Watershed District"),
        (
            "Managers Creek Watershed District",
            "Board of Managers, Managers Creek Watershed District",
        ),
        (
            "The Rice Creek Watershed District",
            "Board of Managers, The Rice Creek Watershed District",
        ),
        ("The Rice Creek Watershed District", "Managers of the Rice Creek Watershed District"),
    ],
)
def test_a_district_named_with_managers_or_the_is_mailed_under_its_own_name(
    kit, district, recipient
):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu, watershed_district=district)
    named = renamed(recipients_for(plan), "watershed_district", recipient)
    ok(notice(kit, plan, lgu, "2026-06-22", named))


def test_the_applicant_mailed_the_decision_is_the_one_the_plan_names(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    decided(kit, plan, lgu)
    someone_else = renamed(recipients_for(plan), "applicant", "Another Applicant LLC")
    refused = errors_of(notice(kit, plan, lgu, "2026-07-27", someone_else, decision=True))
    assert [e.split(":")[0] for e in refused] == ["applicant"]
    assert plan["applicant"] in refused[0]
    loose = renamed(someone_else, "applicant", f" {plan['applicant'].upper()} ")
    ok(notice(kit, plan, lgu, "2026-07-27", loose, decision=True))


def test_once_the_panel_is_on_record_its_members_are_the_ones_mailed(kit):
    """Before the determination names the panel any three members are taken; after it, the
    members it names (the notice of application mailed before it stands)."""
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    others = renamed(recipients_for(plan), "tep_member", "T1", "T2", "T3")
    ok(notice(kit, plan, lgu, "2026-06-22", others))
    members = [
        {"name": "Ann Able", "represents": "board"},
        {"name": "Ben Baker", "represents": "swcd"},
        {"name": "Cy Carter", "represents": "lgu"},
    ]
    with on("2026-06-23"):
        path = f"/plans/{plan['id']}"
        ok(
            kit.api.post(
                f"{path}/tep-referral", {"referred_on": "2026-06-23", "questions": ["size"]}
            )
        )
        determination = {"inspected_on": "2026-06-23", "members": members, "determination": "x"}
        ok(kit.api.post(f"{path}/tep-determination", determination))
    decided(kit, plan, lgu)
    refused = errors_of(notice(kit, plan, lgu, "2026-07-27", others, decision=True))
    assert [e.split(",")[0] for e in refused] == [
        "tep_member: Ann Able (board)",
        "tep_member: Ben Baker (swcd)",
        "tep_member: Cy Carter (lgu)",
    ]
    two = renamed(others, "tep_member", "Ann Able", "ben  BAKER", "T3")
    refused = errors_of(notice(kit, plan, lgu, "2026-07-27", two, decision=True))
    assert [e.split(",")[0] for e in refused] == ["tep_member: Cy Carter (lgu)"]
    with on("2026-07-27"):
        shown = kit.get_plan(plan["id"])
    assert shown["decision_notice"] is None
    ok(notice(kit, plan, lgu, "2026-07-27", recipients_for(shown), decision=True))


@pytest.mark.parametrize(
    "recipient",
    [
        {"name": "X", "address": "Y", "role": "neighbour"},
        {"name": "", "address": "Y", "role": "tep_member"},
        {"name": "   ", "address": "Y", "role": "tep_member"},
        {"name": "X", "address": " \t ", "role": "tep_member"},
        {"name": "X", "role": "tep_member"},
    ],
)
def test_a_recipient_needs_a_name_an_address_and_a_known_role(kit, recipient):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    problem(
        notice(kit, plan, lgu, "2026-06-22", [*recipients_for(plan), recipient]),
        422,
        "validation_error",
    )
    problem(notice(kit, plan, lgu, "2026-06-22", []), 422, "validation_error")


# --- members of the public who asked ---------------------------------------------------------


def test_a_member_of_the_public_who_asked_is_registered_and_shown_on_the_plan(kit):
    lgu, other = kit.lgu(), kit.lgu()
    plan = full_plan(kit, lgu)
    asked = ask(kit, plan, lgu, "2026-06-18", name=unique("Pat"))
    assert (asked["plan_id"], asked["requested_on"]) == (plan["id"], "2026-06-18")
    with on("2026-06-18"):
        assert kit.get_plan(plan["id"])["copy_requests"] == [asked]
        body = {"name": "Q", "address": "R", "requested_on": "2026-06-19"}  # tomorrow
        path = f"/plans/{plan['id']}/copy-requests"
        problem(kit.api.post(path, body, token=lgu["token"]), 422, "validation_error")
        body["requested_on"] = "2026-06-18"
        problem(kit.api.post(path, body, token=other["token"]), 404, "not_found")
        assert kit.get_plan(plan["id"])["copy_requests"] == [asked]


@pytest.mark.parametrize(
    ("requested_on", "status"), [("2026-06-16", 422), ("2026-06-17", 201)], ids=str
)
def test_a_copy_is_asked_no_earlier_than_the_plan_was_received(kit, requested_on, status):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)  # received 2026-06-17
    body = {"name": "Pat", "address": "5 Lake St", "requested_on": requested_on}
    with on("2026-06-18"):
        response = kit.api.post(f"/plans/{plan['id']}/copy-requests", body, token=lgu["token"])
        if status == 422:
            refused = problem(response, 422, "validation_error")
            assert list(refused["errors"]) == ["requested_on"]
            assert kit.get_plan(plan["id"])["copy_requests"] == []
        else:
            assert ok(response)["requested_on"] == requested_on


def test_a_copy_is_asked_no_earlier_than_the_plans_first_application(kit):
    """A revision counting as new restarts ``received_on``; a request made between the first
    receipt and the revision was made of the plan all the same."""
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)  # received 2026-06-17, revised as new 2026-08-12 below
    with on("2026-08-12"):
        body = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-08-12"}
        ok(kit.api.post(f"/plans/{plan['id']}/revisions", body, token=lgu["token"]))
        path = f"/plans/{plan['id']}/copy-requests"
        asked = {"name": "Rae Reader", "address": "7 Oak St", "requested_on": "2026-06-17"}
        ok(kit.api.post(path, asked, token=lgu["token"]))
        refused = {**asked, "name": "Sol Sooner", "requested_on": "2026-06-16"}
        problem(kit.api.post(path, refused, token=lgu["token"]), 422, "validation_error")


def test_the_same_person_asking_again_is_409_and_registered_once(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    first = ask(kit, plan, lgu, "2026-06-18", name="Pat Public")
    path = f"/plans/{plan['id']}/copy-requests"
    again = {"name": "  pat   PUBLIC", "address": "5 LAKE st, buffalo, mn ", "requested_on": ""}
    for day in ("2026-06-18", "2026-06-19"):  # the same day and a later one
        with on(day):
            response = kit.api.post(path, {**again, "requested_on": day}, token=lgu["token"])
        refused = problem(response, 409, "conflict")
        assert refused["copy_request_id"] == first["id"]
        assert "2026-06-18" in refused["detail"]
    with on("2026-06-19"):
        assert kit.get_plan(plan["id"])["copy_requests"] == [first]
        # another address is another mailing
        body = {"name": "Pat Public", "address": "9 Elm St", "requested_on": "2026-06-18"}
        elsewhere = ok(kit.api.post(path, body, token=lgu["token"]))
        assert kit.get_plan(plan["id"])["copy_requests"] == [first, elsewhere]


@pytest.mark.parametrize(("name", "address"), [("   ", "1 Main St"), ("Pat", "  ")], ids=str)
def test_a_member_of_the_public_needs_a_name_and_an_address_not_blank(kit, name, address):
    """Every later notice must be mailed to them: a blank name or address could never be."""
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    body = {"name": name, "address": address, "requested_on": "2026-06-18"}
    with on("2026-06-18"):
        path = f"/plans/{plan['id']}/copy-requests"
        refused = problem(kit.api.post(path, body, token=lgu["token"]), 422, "validation_error")
        assert refused["errors"] == {
            field: ["Must not be blank."] for field in body if body[field].isspace()
        }
        assert kit.get_plan(plan["id"])["copy_requests"] == []


def test_a_requester_registered_by_the_mailing_must_be_mailed_one_registered_after_need_not(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    on_the_day = ask(kit, plan, lgu, "2026-06-22", name="Early Asker")
    later = ask(kit, plan, lgu, "2026-06-23", name="Late Asker")
    # recorded the next day, for a notice mailed 06-22: the one who asked on 06-22 is owed it
    with on("2026-06-23"):
        path = f"/plans/{plan['id']}/notices"
        refused = kit.api.post(path, mailing("2026-06-22", plan=plan), token=lgu["token"])
        errors = errors_of(refused)
        assert len(errors) == 1 and errors[0].startswith("public_requester: Early Asker")
        # the address must match too (where it was mailed)
        moved = {**requester(on_the_day), "address": "elsewhere"}
        errors_of(kit.api.post(path, mailing("2026-06-22", moved, plan=plan), token=lgu["token"]))
        # names and addresses are compared without regard to case and spacing
        loose = {**requester(on_the_day), "name": "  early   ASKER "}
        sent = ok(kit.api.post(path, mailing("2026-06-22", loose, plan=plan), token=lgu["token"]))
    assert sent["recipients"][-1]["role"] == "public_requester"
    # the notice of decision is owed to both
    decided(kit, plan, lgu)
    refused = notice(
        kit, plan, lgu, "2026-07-27", [*recipients_for(plan), requester(on_the_day)], decision=True
    )
    assert [e.split(",")[0] for e in errors_of(refused)] == ["public_requester: Late Asker"]
    ok(
        notice(
            kit,
            plan,
            lgu,
            "2026-07-27",
            [*recipients_for(plan), requester(on_the_day), requester(later)],
            decision=True,
        )
    )


def test_a_copy_asked_by_a_notice_already_mailed_without_them_is_shown_owed(app, kit):
    """The notice of application mailed 06-22 is recorded, and only then the LGU registers a
    member of the public who asked on 06-22 (on or before the mailing: they were owed it, Subd.
    6 (a)) and one who asked on 06-23 (after it: owed nothing).  The reply and the plan say the
    first is owed the copy the 06-22 notice did not bring; one the notice was mailed to is
    owed nothing, and the notice of decision mailed to them all leaves only the 06-22 one."""
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    listed = ask(kit, plan, lgu, "2026-06-18", name="Listed Reader")
    sent = ok(notice(kit, plan, lgu, "2026-06-22", [*recipients_for(plan), requester(listed)]))
    on_the_day = ask(kit, plan, lgu, "2026-06-22", name="Late Registered")
    after = ask(kit, plan, lgu, "2026-06-23", name="After Mailing")
    owed_application = {
        "notice_id": sent["id"],
        "notice": "application",
        "mailed_on": "2026-06-22",
        "detail": (
            "asked for a copy on 2026-06-22: the notice of application mailed on 2026-06-22 "
            "was not mailed to them (Subd. 6 (a)); a copy is owed"
        ),
        "application_number": 1,
    }
    assert on_the_day["owed"] == [owed_application]
    assert (listed["owed"], after["owed"]) == ([], [])
    with on("2026-06-23"):
        shown = kit.get_plan(plan["id"])["copy_requests"]
    assert {c["name"]: c["owed"] for c in shown} == {
        "Listed Reader": [],
        "Late Registered": [owed_application],
        "After Mailing": [],
    }
    decided(kit, plan, lgu)
    everyone = [requester(asked) for asked in (listed, on_the_day, after)]
    ok(notice(kit, plan, lgu, "2026-07-27", [*recipients_for(plan), *everyone], decision=True))
    with on("2026-07-27"):
        shown = kit.get_plan(plan["id"])["copy_requests"]
        response = signed_in(app.test_client(), lgu["token"]).get(f"/plans/{plan['id']}")
    assert [c["owed"] for c in shown] == [[], [owed_application], []]
    (owed_on_page,) = parse(response.get_data(as_text=True)).one("dd", id="copies-owed").all("span")
    assert owed_on_page.attrs["data-copy-request-id"] == on_the_day["id"]
    assert owed_on_page.text == (
        f"Late Registered, 5 Lake St, Buffalo, MN: {owed_application['detail']}"
    )


# --- the kind as mailed -----------------------------------------------------------------------


def test_the_notice_keeps_the_kind_it_was_mailed_as_after_a_small_revision(kit):
    """A summary notice mailed for 9,500 sq ft stays a summary when a revision under 10% larger
    (not a new application) takes the impact to 10,400 sq ft."""
    lgu = kit.lgu()
    with on("2026-06-08"):
        plan = kit.plan(lgu, received_on="2026-06-08", area_sqft=9_500)
    ok(notice(kit, plan, lgu, "2026-06-10", recipients_for(plan)))
    with on("2026-06-12"):
        body = {"area_sqft": 10_400, "displacement_ft": 0, "received_on": "2026-06-12"}
        revision = ok(kit.api.post(f"/plans/{plan['id']}/revisions", body, token=lgu["token"]))
        assert revision["counts_as_new_application"] is False
        shown = kit.get_plan(plan["id"])
    assert shown["notice_kind"] == "full"  # what a notice for 10,400 sq ft would be now
    assert shown["notice"]["kind"] == "summary"  # what was mailed


# --- the notice as a document -----------------------------------------------------------------


def noticed_and_decided(kit: Kit, lgu: dict) -> dict[str, Any]:
    plan = full_plan(kit, lgu, appeal_security_required_cents=30_000)
    asked = ask(kit, plan, lgu, "2026-06-18", name="Pat Public")
    ok(notice(kit, plan, lgu, "2026-06-22", [*recipients_for(plan), requester(asked)]))
    decided(kit, plan, lgu)
    ok(
        notice(
            kit, plan, lgu, "2026-07-27", [*recipients_for(plan), requester(asked)], decision=True
        )
    )
    return plan


def document(kit: Kit, plan: dict, which: str, accept: str, token: str | None = None) -> Any:
    with on("2026-07-28"):
        return kit.api.get(
            f"/plans/{plan['id']}/notices/{which}", token=token, headers={"Accept": accept}
        )


def test_the_notice_of_application_prints_what_subd_6_requires(kit):
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    response = document(kit, plan, "application", "text/html", lgu["token"])
    assert response.status_code == 200
    assert response.mimetype == "text/html"
    text = response.get_data(as_text=True)
    for expected in (
        plan["applicant"],
        plan["project"],
        "Section 14, Township 120 N",  # the location
        "Crow River Watershed District",
        "25,000 square feet",
        "July 22, 2026",  # the comment period: 30 days from the 06-22 notice
        "June 22, 2026",  # mailed on
        "Subd. 6 (full notice)",
        "Pat Public",
        "Commissioner",
    ):
        assert expected in text, expected


def test_the_notice_of_decision_prints_the_decision_and_how_and_by_when_to_appeal(kit):
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    with on("2026-07-28"):
        ends = kit.get_plan(plan["id"])["deadlines"]["appeal_window_ends"]
    assert ends == "2026-08-11"  # 15 days after the 07-27 postmark
    text = document(kit, plan, "decision", "text/html").get_data(as_text=True)
    for expected in (
        plan["applicant"],
        "Approved on July 24, 2026",
        "Resolution Res.",
        "a filing fee of $200.00 to the board",
        "within 15 days after the postmarked date of this notice",
        "August 11, 2026",
        "Board of Water and Soil Resources",
        "cash of $300.00.",  # the appeal security the LGU requires
    ):
        assert expected in text, expected


def test_the_notice_of_decision_dates_the_decision_by_its_resolution(kit):
    # the resolution adopted on 07-23 is the approval (Subd. 1 (b)); the decision was recorded
    # as made on 07-24: the notice dates the approval by the resolution, and may be mailed
    # after it
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    body = decision_body("approved", "2026-07-24")
    body["resolution"]["adopted_on"] = "2026-07-23"
    with on("2026-07-24"):
        ok(kit.api.post(f"/plans/{plan['id']}/decision", body, token=lgu["token"]))
    ok(notice(kit, plan, lgu, "2026-07-23", recipients_for(plan), decision=True))
    text = document(kit, plan, "decision", "text/html").get_data(as_text=True)
    assert "Approved on July 23, 2026" in text and "Approved on July 24" not in text
    assert "Recorded as decided on July 24, 2026" in text


def require_poppler() -> None:
    if shutil.which("pdftotext") and shutil.which("pdftoppm"):
        return
    message = "poppler-utils (pdftotext, pdftoppm) is not installed"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: .ci/run installs it)", pytrace=False)
    pytest.skip(message)


#: US Letter less its one-inch margins: no text of a PDF the service makes lies right of this
RIGHT_MARGIN = 612 - 72


def pdf_words(data: bytes, tmp_path: Any) -> list[tuple[str, float]]:
    """The words of a PDF as poppler reads them, each with its right edge (points from the
    page's left), in reading order."""
    pdf = tmp_path / "read.pdf"
    pdf.write_bytes(data)
    boxes = subprocess.run(
        ["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, check=True, text=True
    ).stdout
    found = re.findall(
        r'<word xMin="[\d.]+" yMin="[\d.]+" xMax="([\d.]+)"[^>]*>([^<]*)</word>', boxes
    )
    return [(html.unescape(word), float(x_max)) for x_max, word in found]


@pytest.mark.parametrize("which", ["application", "decision"])
def test_the_notice_pdf_opens_in_a_pdf_reader_and_names_the_applicant(kit, which, tmp_path):
    require_poppler()
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    response = document(kit, plan, which, "application/pdf", lgu["token"])
    assert response.status_code == 200
    assert response.mimetype == "application/pdf"
    pdf = tmp_path / "notice.pdf"
    pdf.write_bytes(response.data)
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], capture_output=True, check=True, text=True
    ).stdout
    assert plan["applicant"] in text
    assert "cannot print" not in text  # every letter as written: no note says otherwise
    assert "Crow River Watershed District" in text
    assert ("Public comment" if which == "application" else "How and by when to appeal") in text
    subprocess.run(
        ["pdftoppm", "-png", "-r", "40", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "page")],
        capture_output=True,
        check=True,
    )
    (page,) = tmp_path.glob("page*.png")
    assert page.stat().st_size > 1_000


LONG_APPLICANT = "MINNESOTA DEPARTMENT OF TRANSPORTATION METRO DISTRICT WATER RESOURCES ENGINEERING"


def test_the_notice_pdf_wraps_a_long_name_within_the_margin_and_shows_accents_it_lacks_plainly(
    kit, tmp_path
):
    # 81 capitals are wider than the line at 11 pt: the name wraps between its words, none
    # of it beyond the right margin; "ễ" and "ă" are not in the PDF's fonts (WinAnsi): the PDF
    # prints the nearest letters, never "?", and says so, while the HTML shows the name whole
    require_poppler()
    lgu = kit.lgu()
    plan = full_plan(kit, lgu, applicant=LONG_APPLICANT)
    assert len(plan["applicant"]) == 81
    asked = ask(kit, plan, lgu, "2026-06-18", name="Nguyễn Văn Ánh")
    ok(notice(kit, plan, lgu, "2026-06-22", [*recipients_for(plan), requester(asked)]))

    page = document(kit, plan, "application", "text/html", lgu["token"]).get_data(as_text=True)
    response = document(kit, plan, "application", "application/pdf", lgu["token"])

    assert (response.status_code, response.mimetype) == (200, "application/pdf")
    words = pdf_words(response.data, tmp_path)
    text = " ".join(word for word, _ in words)
    assert LONG_APPLICANT in text
    beyond = [(word, right) for word, right in words if right > RIGHT_MARGIN + 0.01]
    assert beyond == []
    assert "Nguyen Van Ánh," in text and "Nguy?n" not in text and "V?n" not in text
    assert "shown without some accents" in text and "HTML version" in text
    assert "Nguyễn Văn Ánh" in page and "without some accents" not in page


def test_a_notice_is_the_format_asked_for_and_a_format_it_has_not_is_422(kit):
    lgu = kit.lgu()
    plan = full_plan(kit, lgu)
    ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    path = f"/plans/{plan['id']}/notices/application"
    with on("2026-07-28"):
        as_pdf = kit.api.get(f"{path}?format=pdf")
        as_html = kit.api.get(f"{path}?format=html", headers={"Accept": "application/pdf"})
        refused = [kit.api.get(f"{path}?format={word}") for word in ("xml", "json", "csv")]
    assert (as_pdf.status_code, as_pdf.mimetype) == (200, "application/pdf")
    assert as_pdf.data.startswith(b"%PDF")
    assert (as_html.status_code, as_html.mimetype) == (200, "text/html")  # ?format= decides
    for response in refused:
        body = problem(response, 422, "validation_error")
        assert body["errors"] == {"format": ["Must be one of: html, pdf."]}


def test_a_notice_not_yet_mailed_has_no_document_and_others_see_none(kit):
    lgu, other = kit.lgu(), kit.lgu()
    plan = full_plan(kit, lgu)
    problem(document(kit, plan, "application", "text/html", lgu["token"]), 404, "not_found")
    ok(notice(kit, plan, lgu, "2026-06-22", recipients_for(plan)))
    problem(document(kit, plan, "decision", "application/pdf"), 404, "not_found")
    problem(document(kit, plan, "application", "text/html", other["token"]), 404, "not_found")
    holder = kit.holder()
    problem(document(kit, plan, "application", "text/html", holder["token"]), 403, "forbidden")
    assert document(kit, plan, "application", "*/*").mimetype == "text/html"


def test_a_notice_prints_as_mailed_after_a_revision_gives_the_plan_a_new_application(kit):
    """The notices are kept as they were mailed: a revision counting as new (a larger impact,
    no decision yet) changes neither the area, the decision nor the appeal deadline they say."""
    lgu = kit.lgu()
    plan = noticed_and_decided(kit, lgu)
    with on("2026-07-28"):
        before = {
            which: document(kit, plan, which, "text/html").get_data(as_text=True)
            for which in ("application", "decision")
        }
    revision = {"area_sqft": 40_000, "displacement_ft": 0, "received_on": "2026-08-12"}
    with on("2026-08-12"):  # the approval is final: the window closed 08-11
        path = f"/plans/{plan['id']}/revisions"
        assert ok(kit.api.post(path, revision, token=lgu["token"]))["application_number"] == 2
    with on("2026-08-13"):
        for which in ("application", "decision"):
            response = kit.api.get(f"/plans/{plan['id']}/notices/{which}")
            assert response.get_data(as_text=True) == before[which], which
    assert "Approved on July 24, 2026" in before["decision"]
    assert "August 11, 2026" in before["decision"] and "25,000 square feet" in before["application"]
