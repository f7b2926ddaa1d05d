"""Sending an e-mail to one person, and what a failure to send it says in the logs.

An SMTP error names the address it was about: smtplib's SMTPRecipientsRefused is a dict keyed by the refused
addresses, and a server's reply usually repeats it ("550 5.1.1 <jane@example.org>: Recipient address rejected").
The exception goes up through the job (RQ retries it) into the workers' log and /admin/rq/'s failed jobs as a
traceback, and into `logger.exception` lines: every address that bounced was written there. So each sender hands
its message to `send` with the person's id, and a failure is raised again as EmailNotSent, which says whose e-mail it
was (`user 42`), what kind of failure and the server's code and reply, each address in it masked (`j***@example.org`:
the domain stays, for a server that refuses a whole domain). `from None`: the original, with the address, is not
chained into the traceback.
"""

from __future__ import annotations

import re
import smtplib
from collections.abc import Iterable

from django.core.mail import EmailMessage

from core.contact_details import EMAIL


class EmailNotSent(Exception):
    """An e-mail to one person was not sent: SMTP refused it, or no server answered (retried by the job's caller)."""


def _masked(address: str) -> str:
    return f"{address[0]}***@{address.rpartition('@')[2]}"


def masked_addresses(text: str, *, known: Iterable[str] = ()) -> str:
    """`text` with each e-mail address written as its first character, `***` and its domain: first the `known`
    addresses (the message's own recipients) wherever they appear, whatever their case, then any other the pattern
    finds. The pattern alone missed addresses Django sends to ("jane@localhost", "jane@[192.0.2.1]",
    "jane.o'brien@example.ie" came out as "jane.o'b***@")."""
    for address in sorted({a for a in known if "@" in a}, key=len, reverse=True):
        text = re.sub(re.escape(address), _masked(address), text, flags=re.IGNORECASE)
    return EMAIL.sub(lambda found: _masked(found.group()), text)


def _reply(code: int, message: bytes | str) -> str:
    text = message.decode("utf-8", "replace") if isinstance(message, bytes) else str(message)
    return f"{code} {text}"


def described(exc: BaseException, *, addresses: Iterable[str] = ()) -> str:
    """What went wrong, for an operator, without an address (`addresses`: those the message went to, masked wherever
    they appear): the kind of failure and the server's code and reply."""
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        replies = "; ".join(_reply(code, message) for code, message in exc.recipients.values())
        text = f"SMTPRecipientsRefused: {replies}"
    elif isinstance(exc, smtplib.SMTPResponseException):
        text = f"{type(exc).__name__}: {_reply(exc.smtp_code, exc.smtp_error)}"
    else:
        text = f"{type(exc).__name__}: {exc}"
    return masked_addresses(text, known=addresses)


def send(message: EmailMessage, *, recipient: str) -> None:
    """Send `message`; `recipient` names its person for the logs without their address ("user 42"). Raises
    EmailNotSent on an SMTP error or a connection that fails."""
    try:
        message.send()
    except OSError as exc:  # smtplib's errors are OSErrors, as are a refused or a dropped connection
        raise EmailNotSent(
            f"e-mail to {recipient} not sent: {described(exc, addresses=message.recipients())}") from None
