"""The authorisation matrix: every URL pattern the project serves, asked by every kind of caller.

The patterns are walked from the URLconf itself (`get_resolver()`, recursively: the site's pages,
the ninja API under /api/, the admin and django-rq under /admin/), so a new URL is in the matrix
the day it is added. What each caller must get is written once, in `TABLE` (tests/authorisation/table.py),
keyed by the pattern's route string or name; a pattern the table does not classify fails
`test_every_url_pattern_is_classified`.

Callers (the columns of every row, in this order):

    anonymous      nobody signed in, no token
    rater          fact-checker of the organisation that rated the post
    colleague      another fact-checker of that organisation
    other_checker  fact-checker of another organisation
    owner          owner of the post's page
    other_owner    owner of another page
    staff          trust-and-safety staff (not the one who removed the post)
    superuser      a superuser without a role
    platform       the platform's account

Browser pages and the admin are asked with each caller's session; /api/ with each caller's
bearer token. Every request runs in a savepoint that is rolled back, so no cell sees another's
writes: each cell answers for the fixture world as built.
"""


from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from django.conf import settings
from django.contrib import admin
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver, resolve
from django.urls.resolvers import RegexPattern, RoutePattern

from tests.authorisation.cells import ACTORS
from tests.authorisation.table import ADMIN_MODELS, TABLE, Route
from tests.authorisation.world import World, build_world
from tests.savepoints import rolled_back

# --- The URLconf, walked -------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    route: str  # as ResolverMatch.route spells it
    name: str | None  # namespaced
    parts: tuple[Any, ...]  # the pattern objects from the root down
    callback: Callable[..., Any]

    @property
    def key(self) -> str | None:
        """The TABLE key that classifies this pattern: its route string first, else its name."""
        if self.route in TABLE:
            return self.route
        if self.name in TABLE:
            return self.name
        return None


def _join_route(route1: str, route2: str) -> str:
    # As django.urls.resolvers.URLResolver._join_route: a regex part's leading ^ is dropped.
    return route1 + (route2[1:] if route2.startswith("^") else route2)


def walk(patterns=None, *, route: str = "", namespace: str = "", parts: tuple = ()) -> Iterator[Pattern]:
    for p in get_resolver().url_patterns if patterns is None else patterns:
        here = _join_route(route, str(p.pattern))
        if isinstance(p, URLResolver):
            ns = f"{namespace}{p.namespace}:" if p.namespace else namespace
            yield from walk(p.url_patterns, route=here, namespace=ns, parts=(*parts, p.pattern))
        else:
            assert isinstance(p, URLPattern)
            name = f"{namespace}{p.name}" if p.name else None
            yield Pattern(route=here, name=name, parts=(*parts, p.pattern), callback=p.callback)


def all_patterns() -> list[Pattern]:
    return list(walk())


@pytest.fixture
def world(db) -> World:
    if settings.FACTDESK_JOBS_IN_PROCESS:
        pytest.skip("the job pages under /admin/rq/ need REDIS_URL (make test sets it)")

    return build_world()


# --- Asking --------------------------------------------------------------------------------------


def build_url(pattern: Pattern, route: Route, world: World) -> str:
    if route.url:
        return route.url
    url = "/"
    for part in pattern.parts:
        if isinstance(part, RegexPattern):
            raise AssertionError(f"{pattern.route}: a regex pattern needs an explicit `url` in TABLE")
        assert isinstance(part, RoutePattern)

        def value(match: re.Match, part: RoutePattern = part) -> str:
            name = match.group(1)
            assert name in route.args, f"{pattern.route}: TABLE gives no value for <{name}>"
            return str(part.converters[name].to_url(world.pick(route.args[name])))

        url += re.sub(r"<(?:\w+:)?(\w+)>", value, str(part))
    return url


def session_keys(world: World) -> dict[str, str]:
    """Each signed-in caller's session, made once; every cell gets a fresh client carrying it."""
    keys = {}
    for actor, user in world.users.items():
        if user is not None:
            client = Client()
            client.force_login(user)
            keys[actor] = client.cookies[settings.SESSION_COOKIE_NAME].value
    return keys


def ask(world: World, actor: str, sessions: dict[str, str], *, api: bool, method: str, url: str, data: Any):
    if api:
        token = world.tokens.get(actor)
        headers = {"Authorization": f"Bearer {token.raw}"} if token else {}
        client = Client(headers=headers, raise_request_exception=False)
    else:
        client = Client(raise_request_exception=False)
        if actor in sessions:
            client.cookies[settings.SESSION_COOKIE_NAME] = sessions[actor]
    kwargs: dict[str, Any] = {}
    if data is not None:
        kwargs = {"data": json.dumps(data), "content_type": "application/json"} if api else {"data": data}
    # Each cell in its own savepoint, rolled back: no cell sees what another wrote.
    with rolled_back():
        response = getattr(client, method.lower())(url, **kwargs)
    return response


def cells() -> Iterator[tuple[Pattern, Route]]:
    for pattern in all_patterns():
        if pattern.key is not None:
            yield pattern, TABLE[pattern.key]


# --- The tests -----------------------------------------------------------------------------------


def test_the_walk_reaches_the_pages_the_api_the_admin_and_the_job_dashboard():
    routes = {p.route for p in all_patterns()}
    for expected in ("queue/", "appeals/", "api/v1/flags", "api/v1/posts/<external_id>", "admin/",
                     "admin/factcheck/post/<path:object_id>/change/", "admin/rq/queues/<int:queue_index>/"):
        assert expected in routes, expected
    # One changelist and one change page per registered model are among them.
    for model in admin.site._registry:
        opts = model._meta
        names = {p.name for p in all_patterns()}
        assert f"admin:{opts.app_label}_{opts.model_name}_changelist" in names
        assert f"admin:{opts.app_label}_{opts.model_name}_change" in names


def test_every_url_pattern_is_classified():
    unclassified = [p for p in all_patterns() if p.key is None]
    listing = "\n".join(f"  {p.route!r}  (name {p.name!r})" for p in unclassified)
    print(f"unclassified URL patterns:\n{listing}" if unclassified else "every URL pattern is classified")
    assert not unclassified, (
        f"{len(unclassified)} URL pattern(s) are not in the authorisation matrix; add each to TABLE in "
        f"tests/authorisation/table.py with what every caller must get:\n{listing}"
    )


def test_every_registered_admin_model_is_in_the_matrix():
    labels = {model._meta.label_lower for model in admin.site._registry if model._meta.managed}
    assert labels == set(ADMIN_MODELS), (
        f"new: {sorted(labels - set(ADMIN_MODELS))}; gone: {sorted(set(ADMIN_MODELS) - labels)}"
    )


def test_the_table_has_no_row_for_a_url_that_is_gone():
    keys = {p.key for p in all_patterns()}
    assert set(TABLE) <= keys, f"rows that classify no pattern: {sorted(set(TABLE) - keys)}"


@pytest.mark.parametrize("actor", ACTORS)
def test_authorisation_matrix(world, actor):
    """Each URL pattern, each method of its row, asked by one caller: every mismatch is listed."""
    sessions = session_keys(world)
    problems, asked = [], 0
    for pattern, route in cells():
        api = pattern.route.startswith("api/")
        url = build_url(pattern, route, world)
        match = resolve(url.split("?")[0])
        if route.shadowed:
            assert match.func is not pattern.callback, f"{pattern.name or pattern.route} is reachable: not shadowed"
            assert match.view_name in TABLE, f"{url} is answered by an unclassified pattern: {match}"
            continue
        assert match.func is pattern.callback, f"{url} resolves to {match}, not to {pattern}"
        for method, expectations in route.methods.items():
            response = ask(world, actor, sessions, api=api, method=method, url=url,
                           data=route.data.get(method))
            asked += 1
            problem = expectations[actor].problem(response, world)
            if problem and getattr(response, "exc_info", None):
                problem += f" raised {response.exc_info[1]!r}"
            if problem:
                problems.append(f"{method} {url}  [{pattern.key}]: {problem}")
    assert asked > 100
    assert not problems, f"{actor}: {len(problems)} of {asked} cells differ:\n" + "\n".join(problems)


def test_a_browser_session_does_not_authenticate_the_api(world):
    """Only the bearer token counts under /api/: a staff session alone is 401, so no CSRF can reach it."""
    client = Client()
    client.force_login(world.users["staff"])
    response = client.get(f"/api/v1/posts/{world.rated_post.external_id}")
    assert response.status_code == 401
    assert json.loads(response.content)["error"]["code"] == "unauthorized"
