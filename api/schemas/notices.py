"""Schemas of the notices Subd. 6 and 7 require, the copies the public asks for (and those
mailed to them after a notice), draws on a security (Subd. 3), and the board's LGU compliance
report (Subd. 1 (c))."""

from __future__ import annotations

from dataclasses import dataclass

from marshmallow import Schema, fields, validate

from api.schemas.common import Address, EventDate, Name, PeriodArgs, RecordId
from api.schemas.replies import reply_schema
from bank.compliance import ComplianceReport
from bank.notice_document import ListedNotice, RecipientShown
from bank.notices import ROLES, CopyAsked, MailedCopy, OwedCopy, Recipient
from bank.securities import DrawView

#: how many people one notice may list (the panel, the agencies, the public who asked)
MAX_RECIPIENTS = 500


class RecipientIn(Schema):
    name = Name(required=True)
    address = Address(required=True)
    role = fields.String(required=True, validate=validate.OneOf(ROLES))


class NoticeIn(Schema):
    mailed_on = EventDate(required=True)
    #: everyone the notice was mailed to; the statute's roles are checked against the plan
    recipients = fields.List(
        fields.Nested(RecipientIn),
        required=True,
        validate=validate.Length(min=1, max=MAX_RECIPIENTS),
    )


RecipientOut = reply_schema(Recipient, "RecipientOut")


class CopyRequestIn(Schema):
    name = Name(required=True)
    address = Address(required=True)
    requested_on = EventDate(required=True)


class CopyMailedIn(Schema):
    #: the notice a copy of which was mailed: one the request's ``owed`` lists
    notice_id = RecordId(required=True)
    mailed_on = EventDate(required=True)


OwedCopyOut = reply_schema(OwedCopy, "OwedCopyOut")
MailedCopyOut = reply_schema(MailedCopy, "MailedCopyOut")
CopyRequestOut = reply_schema(CopyAsked, "CopyRequestOut")
DrawOut = reply_schema(DrawView, "DrawOut")


@dataclass(frozen=True)
class NoticeLinks:
    """Where a notice is printed as it was mailed."""

    #: ``GET /api/v1/plans/{id}/notices/{notice_id}``: a printable page (HTML)
    document: str
    #: the same, as PDF (``?format=pdf``)
    pdf: str
    #: the notice as a page of the site, for a person signed in
    page: str


@dataclass(frozen=True)
class NoticeItem(ListedNotice):
    """A notice of ``GET /plans/{id}/notices``, with where it is printed."""

    links: NoticeLinks


RecipientShownOut = reply_schema(RecipientShown, "NoticeRecipientOut")
NoticeLinksOut = reply_schema(NoticeLinks, "NoticeLinksOut")
NoticeItemOut = reply_schema(NoticeItem, "NoticeItemOut")


class NoticeList(Schema):
    #: every notice the plan mailed, of each of its applications, in the order recorded
    items = fields.List(fields.Nested(NoticeItemOut))


ComplianceArgs = PeriodArgs


class ComplianceRow(Schema):
    lgu_id = fields.String()
    lgu_name = fields.String()
    plans_received = fields.Integer()
    decided_in_time = fields.Integer()
    deemed_approved = fields.Integer()
    notices_late = fields.Integer()
    notices_missing = fields.Integer()
    decision_notices_late = fields.Integer()
    decision_notices_missing = fields.Integer()
    reversed_on_appeal = fields.Integer()
    #: copies of notices owed to members of the public who asked and not mailed (``owed``)
    copies_owed = fields.Integer()


ComplianceOut = reply_schema(
    ComplianceReport, "ComplianceOut", items=fields.List(fields.Nested(ComplianceRow))
)
