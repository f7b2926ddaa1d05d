"""What a stored or logged text never shows: the secrets that some of Factdesk's URLs carry, and people's e-mail
addresses. config.log_masking applies it to every log line (its docstring says which URLs and why); the RQ worker
(core.worker) to the traceback of a failed job, which Redis keeps and the admin's job pages show.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote, unquote

# An e-mail address, a person's: RQ's worker writes each job's arguments in its line of the job (at INFO), and the
# reset-link job is given the address itself when Redis stalled at the request (accounts.password_reset). The pattern
# of core.contact_details, linear in the text's length (any path of a 404 is logged, and may be long).
from core.contact_details import EMAIL as EMAIL_ADDRESS

MASK = "***"
# A segment of a path: what Django's `str` converter takes, up to a query, a fragment or the request line's end.
_SEGMENT = r"[^/?#\s]+"
# What comes before a secret segment (kept), then the segment itself (written MASK).
SECRET_SEGMENT = re.compile(
    "("
    # The reset token; Django's view then redirects to .../set-password/, which holds none (the token is kept in the
    # session). The uid is the account's primary key, which admin URLs show as well.
    rf"/accounts/reset/{_SEGMENT}/(?!set-password(?:[/?#\s]|$))"
    r"|/admin/rq/stats\.json/"
    rf"){_SEGMENT}"
)

_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def masked(value: Any) -> Any:
    """`value` with each secret segment (SECRET_SEGMENT) written as MASK; anything else unchanged, a text without a
    secret too. gunicorn decodes the path before Django routes it, so a percent-encoded token counts: a text that holds
    one is written decoded."""
    if not isinstance(value, str):
        return value
    decoded = unquote(value) if "%" in value else value
    if SECRET_SEGMENT.search(decoded) is None:  # nearly every text: a search, no copy (gunicorn asks for ~50 a request)
        return value
    # Decoded, "%0A" would start a forged line in the log: control characters are written encoded again.
    return _CONTROL.sub(lambda found: quote(found.group()), SECRET_SEGMENT.sub(rf"\g<1>{MASK}", decoded))


def hidden(text: str) -> str:
    """`text` masked (`masked`) a line at a time, so that a traceback keeps its lines (`masked` writes a control
    character encoded, a newline among them), and each e-mail address in it written MASK."""
    shown = "\n".join(map(masked, text.split("\n")))
    return EMAIL_ADDRESS.sub(MASK, shown) if "@" in shown else shown
