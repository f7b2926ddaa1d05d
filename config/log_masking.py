"""What the logs never show: the secrets that some of Factdesk's URLs carry, and the headers that carry credentials.

A password-reset link (accounts:password_reset_confirm, `/accounts/reset/<uidb64>/<token>/`) sets the account's
password for whoever opens it, until a password is saved with it or for PASSWORD_RESET_TIMEOUT (an hour); an
invitation's link, at the same path, for FACTDESK_INVITATION_DAYS (a week: accounts.tokens). gunicorn's access log
wrote it whole (`GET /accounts/reset/OA/dj7eli-99e642f6.../ 302`), so anyone reading the logs within that time
could take over an account whose owner had not used the link yet. django-rq's statistics take its API token in the
path (`/admin/rq/stats.json/<token>/`, once RQ_API_TOKEN is set). No other route, and no query string the app reads,
carries a secret: API tokens come in the Authorization header only (accounts.api_auth).

`masked` writes MASK in place of each such segment (SECRET_SEGMENT), `SecretMaskingLogger` applies it to every atom
of gunicorn's access log (the request line, path, query, referer, the Location of a redirect: CommonMiddleware's
added slash repeats the token there) and to the error log's arguments (gunicorn logs "Error handling request GET
/..." when the app raises), and `HideSecrets` to the app's own log lines (Django logs "Internal Server Error:
/accounts/reset/..." when the link fails on a database outage) and to their tracebacks, on every handler
settings.LOGGING makes (runserver's too), at every level, where it also writes MASK for e-mail addresses (RQ logs a
job's arguments). Importable without Django's settings: gunicorn's master loads it first.
"""

from __future__ import annotations

import logging
import re
from typing import Any
from urllib.parse import quote, unquote

from gunicorn import glogging

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
# Access-log atoms of request and response headers, and their WSGI environ names, that hold credentials: the default
# format shows none of them, a custom `access_log_format` could.
SECRET_HEADER_ATOMS = frozenset({
    "{authorization}i", "{proxy-authorization}i", "{cookie}i", "{set-cookie}o",
    "{http_authorization}e", "{http_proxy_authorization}e", "{http_cookie}e",
})


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


class SecretMaskingLogger(glogging.Logger):
    """gunicorn's logger (`logger_class` in config.serving) without the secrets of `masked` or SECRET_HEADER_ATOMS."""

    def atoms(self, resp, req, environ, request_time) -> dict[str, Any]:  # noqa: ANN001 - gunicorn's signature
        atoms = super().atoms(resp, req, environ, request_time)
        return {name: MASK if name.lower() in SECRET_HEADER_ATOMS else masked(value) for name, value in atoms.items()}

    def error(self, msg, *args, **kwargs) -> None:  # noqa: ANN001 - logging's signature
        super().error(msg, *map(masked, args), **kwargs)

    def exception(self, msg, *args, **kwargs) -> None:  # noqa: ANN001 - logging's signature
        super().exception(msg, *map(masked, args), **kwargs)

    def setup(self, cfg) -> None:  # noqa: ANN001 - gunicorn's signature
        """gunicorn's error log writes the traceback of an exception that escapes the app (a streamed response that
        fails half-way) through handlers of its own, which settings.LOGGING does not reach: they get HideSecrets."""
        super().setup(cfg)
        for handler in self.error_log.handlers:
            handler.addFilter(HideSecrets())


class HideSecrets(logging.Filter):
    """On every handler of settings.LOGGING, and gunicorn's error log: a record whose message, traceback or stack holds
    a secret segment or an e-mail address is written masked, at any level.

    A traceback repeats what its exception says ("Key (email)=(...) already exists", a URL that failed): it is
    formatted here, as the handlers' formatters would (the standard library's and Django's ServerFormatter, which
    format none of their own), and written masked; a formatter then uses that text as it is (logging.Formatter.format
    reads `exc_text` when it is set). A formatter that formats `exc_info` itself (a JSON formatter's) would not."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed call: the handler reports it, as without this filter
            return True
        hidden = _hidden(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        if record.exc_info and not record.exc_text:
            try:
                record.exc_text = _TRACEBACKS.formatException(record.exc_info)
            except Exception:  # noqa: BLE001 - not an exception's triple: the handler reports it, as without this
                return True
        if record.exc_text:
            record.exc_text = _hidden(record.exc_text)
        if record.stack_info:
            record.stack_info = _hidden(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()


def _hidden(text: str) -> str:
    """`text` masked (`masked`) a line at a time, so that a traceback keeps its lines (`masked` writes a control
    character encoded, a newline among them), and each e-mail address in it written MASK."""
    hidden = "\n".join(map(masked, text.split("\n")))
    return EMAIL_ADDRESS.sub(MASK, hidden) if "@" in hidden else hidden
