"""Which notices already mailed a member of the public who asked for a copy is owed (Subd. 6
(a), 7: "individual members of the public who request a copy"; ``bank.notices.owed_copies``)."""

from __future__ import annotations

from datetime import date

from bank.notices import MailedNotice, Recipient, owed_copies

PAT = ("Pat Public", "5 Lake St")


def mailed(
    notice: str, day: int, *recipients: Recipient, application: int = 1, current: bool = True
) -> MailedNotice:
    return MailedNotice(
        f"ntc_{notice}", notice, "full", date(2026, 6, day), recipients, application, current, True
    )


def test_a_notice_mailed_on_or_after_the_request_without_them_is_owed() -> None:
    notices = [mailed("application", 22), mailed("decision", 27)]
    assert [(o.notice, o.mailed_on.day) for o in owed_copies(*PAT, date(2026, 6, 22), notices)] == [
        ("application", 22),
        ("decision", 27),
    ]
    assert [o.notice for o in owed_copies(*PAT, date(2026, 6, 23), notices)] == ["decision"]
    assert owed_copies(*PAT, date(2026, 6, 28), notices) == ()


def test_a_notice_mailed_to_them_as_a_requester_is_not_owed_compared_as_recipients_are() -> None:
    sent = mailed("application", 22, Recipient("  pat   PUBLIC", "5 lake st ", "public_requester"))
    assert owed_copies(*PAT, date(2026, 6, 20), [sent]) == ()


def test_a_notice_to_another_address_or_in_another_role_still_owes_the_copy() -> None:
    elsewhere = mailed("application", 22, Recipient(*PAT[:1], "9 Elm St", "public_requester"))
    as_applicant = mailed("decision", 27, Recipient(*PAT, "applicant"))
    owed = owed_copies(*PAT, date(2026, 6, 20), [elsewhere, as_applicant])
    assert [o.notice for o in owed] == ["application", "decision"]
    assert owed[1].detail == (
        "asked for a copy on 2026-06-20: the notice of decision mailed on 2026-06-27 was not "
        "mailed to them (Subd. 7); a copy is owed"
    )


def test_a_notice_a_copy_of_which_was_mailed_to_them_since_is_owed_no_more() -> None:
    notices = [mailed("application", 22), mailed("decision", 27)]
    owed = owed_copies(*PAT, date(2026, 6, 22), notices, {"ntc_application"})
    assert [(o.notice_id, o.notice) for o in owed] == [("ntc_decision", "decision")]
    assert owed_copies(*PAT, date(2026, 6, 22), notices, {"ntc_application", "ntc_decision"}) == ()


def test_a_notice_of_an_earlier_application_without_them_is_owed_and_says_so() -> None:
    """A revision counting as new (Subd. 6 (c)) superseded application 1: its notice mailed
    without them is owed still, named with its application."""
    earlier = mailed("decision", 27, application=1, current=False)
    (owed,) = owed_copies(*PAT, date(2026, 6, 20), [earlier])
    assert (owed.notice_id, owed.application_number) == ("ntc_decision", 1)
    assert owed.detail == (
        "asked for a copy on 2026-06-20: the notice of decision mailed on 2026-06-27 for "
        "application 1, which a revision counting as new superseded, was not mailed to them "
        "(Subd. 7); a copy is owed"
    )
