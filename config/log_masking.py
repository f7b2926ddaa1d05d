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
from typing import Any

from gunicorn import glogging

from core.secret_text import MASK, hidden, masked

# Access-log atoms of request and response headers, and their WSGI environ names, that hold credentials: the default
# format shows none of them, a custom `access_log_format` could.
SECRET_HEADER_ATOMS = frozenset({
    "{authorization}i", "{proxy-authorization}i", "{cookie}i", "{set-cookie}o",
    "{http_authorization}e", "{http_proxy_authorization}e", "{http_cookie}e",
})


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
        shown = hidden(message)
        if shown != message:
            record.msg, record.args = shown, None
        if record.exc_info and not record.exc_text:
            try:
                record.exc_text = _TRACEBACKS.formatException(record.exc_info)
            except Exception:  # noqa: BLE001 - not an exception's triple: the handler reports it, as without this
                return True
        if record.exc_text:
            record.exc_text = hidden(record.exc_text)
        if record.stack_info:
            record.stack_info = hidden(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()
