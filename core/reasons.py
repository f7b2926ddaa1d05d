"""The one length limit of a reason a person writes for a decision (staff's removals, lifts, overrides,
harm-report and policy decisions): the owner reads it, and it is cleaned (moderation.statements) and stored
with the decision. Every form and domain function checks it against this; a longer one is a clear error
next to the field, with the rest of the form kept.

What others read word for word (the page owner, everyone once published) holds no contact details: a reason or a
rationale with an e-mail address or a telephone number (core.contact_details) is refused with what was found and
who would have read it (`contact_problem`).

A decision that requires a reason asks for it and refuses it the same way at every door: `required_reason` (the
domain's check), `reason_field` (the browser form's field, worded as the domain words it) and `reason_body` (the API
body's field, as the OpenAPI document declares it).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from ninja import Field

from core.contact_details import find_contact_details

MAX_REASON = 2000
# Beside each field where staff write a reason the page owner reads as written (moderation's notices quote it, and
# a restricting action's statement of reasons, which is public): staff write it for the owner, not for each other.
OWNER_READS_IN_NOTICE = (
    "The page owner reads this word for word in their notice: no reporter's details, no internal notes."
)
OWNER_READS_IN_NOTICE_AND_STATEMENT = (
    "The page owner reads this word for word in their notice and statement of reasons, which is public: no names "
    "of private people, addresses or contact details, no reporter's details, no internal notes."
)
# Who reads a text word for word, as the refusal of the contact details in it says: why they do not belong there.
OWNER_READS = "The page owner reads this reason word for word"
PUBLISHED = "The rationale is published word for word, on the claim's public page and in its ClaimReview"
FACT_CHECKERS_READ = "Fact-checkers of every organisation read this note word for word"
KEPT_FOR_GOOD = "This reason is kept for good in the post's record"
# A refusal names this many of the details it found, then counts the rest.
NAMED_DETAILS = 3
# Control characters (C0 but tab, line feed and carriage return; DEL; C1) mean nothing in what a person writes,
# and in the plain-text e-mails the owners and reviewers get, an escape sequence drives the reader's terminal.
CONTROLS = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# The same as the API's document says it of a free-text field: any text without them, and text that is not blank.
_WRITTEN = r"[^\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]"
WRITTEN_TEXT = rf"^{_WRITTEN}*$"
WRITTEN_NOT_BLANK = rf"^{_WRITTEN}*[^\s\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]{_WRITTEN}*$"
CONTROLS_MESSAGE = "Take out the control characters (such as ESC): they show as nothing, and upset e-mail readers."


def written(text: str | None) -> str:
    """What a person wrote, as the record keeps it and its limits count it: each line break one "\n" (a browser sends
    "\r\n", which counted twice against a limit its own counter counted once: "it has 2,032" for 2,000 characters
    and 32 lines), without the white space around it; "" when nothing in it shows (white space and format characters
    such as a zero-width space only, which made a rationale or a statement that says nothing)."""
    text = (text or "").replace("\r\n", "\n").replace("\r", "\n").strip()
    return text if any(not char.isspace() and unicodedata.category(char) != "Cf" for char in text) else ""


class WrittenText(forms.CharField):
    """A form's field for what a person writes for the record, cleaned to `written` before its validators run: its
    limit counts line breaks once, as the page's counter and the domain do (a limit counted on the value the
    browser sent refused a 1,999-character reason on 40 lines as "it has 2,038"), and nothing but invisible
    characters is nothing written ("required" applies)."""

    def to_python(self, value) -> str:
        return written(super().to_python(value))


def control_problem(text: str) -> str | None:
    """The message for text that holds a control character, or None: every free text a person writes for the
    record (rationales, reasons, statements, labels) is checked with this."""
    return CONTROLS_MESSAGE if CONTROLS.search(text) else None


def refuse_too_long(text: str) -> None:
    """A form field's validator: too_long as the field's error, worded as every door words it ("it has 2,001"). A
    validator, not max_length: a maxlength attribute would let the browser cut a pasted reason short."""
    if problem := too_long(text):
        raise ValidationError(problem, code="max_length")


def refuse_control_characters(text: str) -> None:
    """A form field's validator: control_problem as the field's error."""
    if problem := control_problem(text):
        raise ValidationError(problem, code="control_characters")


def contact_problem(text: str, *, read_by: str) -> str | None:
    """The message for text that holds e-mail addresses or telephone numbers, naming them, or None. `read_by`: who
    reads it word for word (OWNER_READS, PUBLISHED, ...)."""
    found = find_contact_details(text)
    if not found:
        return None
    named = [f"the {detail.kind} {detail.text}" for detail in found[:NAMED_DETAILS]]
    if len(found) > NAMED_DETAILS:
        named.append(f"{len(found) - NAMED_DETAILS:,} more")
    listed = f"{', '.join(named[:-1])} and {named[-1]}" if len(named) > 1 else named[0]
    return f"{read_by}: leave out e-mail addresses and phone numbers (it has {listed})."


# A distribution label (the enforcement policy's, staff's override's): shown with the post to everyone who sees it.
MAX_LABEL = 200
LABEL_READ_BY = "A label is shown with the post to everyone who sees it, and in its owner's notice"


def label_problem(label: str) -> str | None:
    """The message for a distribution label that cannot be shown as written, or None: the one check of every label
    staff write (an override's, the enforcement policy's), at every door."""
    if problem := control_problem(label):
        return problem
    if len(label) > MAX_LABEL:
        return f"Keep a label to {MAX_LABEL:,} characters (it has {len(label):,})."
    return contact_problem(label, read_by=LABEL_READ_BY)


def refuse_label_problem(label: str) -> None:
    """A form field's validator: label_problem as the field's error."""
    if problem := label_problem(label):
        raise ValidationError(problem, code="label")


def refuse_contact_details(read_by: str) -> Callable[[str], None]:
    """A form field's validator: contact_problem as the field's error."""

    def validate(text: str) -> None:
        if problem := contact_problem(text, read_by=read_by):
            raise ValidationError(problem, code="contact_details")

    return validate


def reason_problem(reason: str, *, read_by: str | None = None) -> str | None:
    """What is wrong with a decision's reason (too long, control characters, contact details where `read_by` reads
    it word for word; None: only staff read it, in the audit log), or None."""
    return (too_long(reason) or control_problem(reason)
            or (contact_problem(reason, read_by=read_by) if read_by is not None else None))


def too_long(reason: str) -> str | None:
    """The message for a reason over MAX_REASON, or None when it fits."""
    if len(reason) <= MAX_REASON:
        return None
    return f"Keep the reason to {MAX_REASON:,} characters (it has {len(reason):,})."


def required_reason(text: str | None, *, missing: str, read_by: str | None) -> tuple[str, str | None]:
    """A decision's required reason, the one check behind every door that asks for it (browser and API alike): the
    reason as the record keeps it (`written`), and what is wrong with it, or None: `missing` when nothing is
    written, else reason_problem's. Each caller raises its own refusal with the problem (its code is its
    interface's)."""
    reason = written(text)
    return reason, (reason_problem(reason, read_by=read_by) if reason else missing)


def reason_field(*, label: str = "Reason", help_text: str, read_by: str | None = None,
                 required_message: str = "A reason is required: every staff decision records why.",
                 widget: forms.Widget | None = None) -> WrittenText:
    """The reason a form asks for: what a person writes for the record, at most MAX_REASON characters, without
    control characters, and without contact details when `read_by` (OWNER_READS, ...) reads it word for word; a
    form error next to the field otherwise, worded as the domain words it (`required_message` is its `missing`)."""
    contact_details = [refuse_contact_details(read_by)] if read_by is not None else []
    return WrittenText(
        label=label,
        widget=widget or forms.Textarea(attrs={"rows": 4, "cols": 60}),
        help_text=help_text,
        validators=[refuse_too_long, refuse_control_characters, *contact_details],
        error_messages={"required": required_message},
    )


def reason_body(description: str) -> Any:
    """The `reason` of an API body that asks for one (`{"reason"}`): what the OpenAPI document promises clients, the
    rules `required_reason` enforces with its own messages (declared, not checked here, so that a refusal names the
    field as the domain words it)."""
    return Field(description=description,
                 json_schema_extra={"minLength": 1, "maxLength": MAX_REASON, "pattern": WRITTEN_NOT_BLANK})
