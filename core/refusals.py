"""Refusals: a rule said no. Each is a domain exception named for what it refuses, with a code.

Domain modules raise them; the API maps them to an HTTP status in one table
(config/api.py, `REFUSAL_STATUS`) and answers `{"error": {"code", "message", "details"}}`;
browser views show the message as it is. The code is stable (clients switch on it), the
message is written for the person who tried.
"""

from __future__ import annotations

from typing import Any


class Refusal(Exception):
    code = "refused"

    def __init__(self, message: str, *, code: str | None = None, details: Any = None) -> None:
        super().__init__(message)
        self.message = message
        self.details = details
        if code is not None:
            self.code = code
