"""The authorisation matrix's cells: what one caller must get from one URL (a redirect, a 403 page,
an API error or a status), and a row of them, one per caller in the order of ACTORS.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from tests.authorisation.world import World

ACTORS = ("anonymous", "rater", "colleague", "other_checker", "owner", "other_owner", "staff", "superuser", "platform")


@dataclass(frozen=True)
class Redirect:
    """A 302 whose Location starts with `to` (formatted with the world: "{w.rated_post.pk}")."""

    to: str

    def problem(self, response, world: World) -> str:
        target = self.to.format(w=world)
        location = response.get("Location", "").removeprefix("http://testserver")
        if response.status_code == 302 and location.startswith(target):
            return ""
        return f"expected 302 to {target}…, got {response.status_code} {location}".rstrip()

    def __str__(self) -> str:
        return f"302→{self.to}"


@dataclass(frozen=True)
class Page403:
    """The 403 page of that part of the site, rendered from its own template."""

    template: str

    def problem(self, response, world: World) -> str:
        used = [t.name for t in getattr(response, "templates", None) or []]
        if response.status_code == 403 and self.template in used:
            return ""
        return f"expected 403 from {self.template}, got {response.status_code} ({', '.join(used[:3]) or 'no template'})"

    def __str__(self) -> str:
        return f"403 {self.template}"


@dataclass(frozen=True)
class ApiError:
    """The API's JSON error: {"error": {"code": ...}} with this status."""

    status: int
    code: str

    def problem(self, response, world: World) -> str:
        try:
            code = json.loads(response.content)["error"]["code"]
        except (ValueError, KeyError, TypeError):
            code = None
        if response.status_code == self.status and code == self.code:
            return ""
        return f"expected {self.status} {self.code}, got {response.status_code} {code or response.content[:80]!r}"

    def __str__(self) -> str:
        return f"{self.status} {self.code}"


@dataclass(frozen=True)
class Status:
    """Any one of these statuses (for answers that are not about who asks)."""

    codes: frozenset[int]

    def problem(self, response, world: World) -> str:
        if response.status_code in self.codes:
            return ""
        return f"expected {sorted(self.codes)}, got {response.status_code}"

    def __str__(self) -> str:
        return "/".join(map(str, sorted(self.codes)))


def expect(value: Any):
    if isinstance(value, int):
        return Status(frozenset({value}))
    if isinstance(value, (set, frozenset)):
        return Status(frozenset(value))
    return value


LOGIN = Redirect("/accounts/login/?next=")
ADMIN_LOGIN = Redirect("/admin/login/?next=")
FC_403 = Page403("factcheck/forbidden.html")
PORTAL_403 = Page403("moderation/portal_forbidden.html")
DESK_403 = Page403("moderation/appeal_forbidden.html")
PAGE_403 = Page403("403.html")
UNAUTHORIZED = ApiError(401, "unauthorized")
FORBIDDEN = ApiError(403, "forbidden")
NOT_FOUND = ApiError(404, "not_found")
NOT_ALLOWED = ApiError(405, "method_not_allowed")


def row(*cells: Any) -> dict[str, Any]:
    """One row of the matrix: a cell per caller, in the order of ACTORS."""
    assert len(cells) == len(ACTORS), f"a row has {len(ACTORS)} cells, not {len(cells)}"
    return {actor: expect(cell) for actor, cell in zip(ACTORS, cells, strict=True)}


def every(cell: Any) -> dict[str, Any]:
    return row(*[cell] * len(ACTORS))


def staff_only(staff: Any, superuser: Any, *, gate: Any = ADMIN_LOGIN) -> dict[str, Any]:
    """Admin and job pages: everyone else is sent to the admin's login."""
    return row(gate, gate, gate, gate, gate, gate, staff, superuser, gate)
