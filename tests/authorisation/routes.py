"""The authorisation matrix's row type: what each caller gets from one URL pattern, per method, and how
to fill the pattern in; `route()` writes one. tests/authorisation/table.py and table_admin.py use it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.authorisation.world import World


@dataclass(frozen=True)
class Route:
    """What each caller gets from one URL pattern, per method, and how to fill the pattern in.

    `shadowed` says an earlier pattern answers all of this one's URLs; the test proves it.
    `args` maps each path parameter to a world attribute path ("rated_post.pk") or a callable of
    the world; `url` replaces the built URL for regex patterns; `data` is the request body by
    method (form fields for pages, JSON for the API).
    """

    methods: dict[str, dict[str, Any]]
    args: dict[str, str | Callable[[World], Any]] = field(default_factory=dict)
    url: str = ""
    data: dict[str, dict[str, Any]] = field(default_factory=dict)
    # Unreachable: an earlier pattern (with a row of its own) answers every URL of this one.
    shadowed: bool = False


def route(
    *, args: dict[str, str | Callable[[World], Any]] | None = None, url: str = "",
    data: dict[str, dict[str, Any]] | None = None, shadowed: bool = False, **methods: dict[str, Any],
) -> Route:
    """A row per method: route(GET=row(...), POST=row(...), args={...})."""
    return Route(methods=methods, args=args or {}, url=url, data=data or {}, shadowed=shadowed)
