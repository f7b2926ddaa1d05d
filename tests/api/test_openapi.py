"""GET /api/openapi.json describes the whole API: every endpoint the URLconf serves under /api/v1/,
with request and response schemas, every error response, and only references that resolve."""

from __future__ import annotations

import re
from typing import Any

import pytest
from django.urls import URLPattern, get_resolver

DOCUMENT_ROUTES = {"openapi-json", "openapi-view", "api-root", "unknown-route"}
METHODS = {"get", "post", "put", "patch", "delete"}


def served_api_paths() -> set[str]:
    """The operations' paths as the URLconf serves them, in OpenAPI's `{param}` spelling."""
    api = next(p for p in get_resolver().url_patterns if getattr(p, "namespace", None) == "api")
    paths = set()
    for pattern in api.url_patterns:
        assert isinstance(pattern, URLPattern)
        if pattern.name in DOCUMENT_ROUTES:
            continue
        route = re.sub(r"<(?:\w+:)?(\w+)>", r"{\1}", str(pattern.pattern))
        paths.add("/api/" + route)
    return paths


def refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        found = [node["$ref"]] if "$ref" in node else []
        return found + [r for value in node.values() for r in refs(value)]
    if isinstance(node, list):
        return [r for value in node for r in refs(value)]
    return []


@pytest.fixture
def document(client) -> dict[str, Any]:
    response = client.get("/api/openapi.json")
    assert response.status_code == 200
    return response.json()


@pytest.mark.django_db
def test_the_document_has_every_endpoint_the_urlconf_serves(document):
    assert document["openapi"].startswith("3.")
    assert set(document["paths"]) == served_api_paths()
    for path in ("/api/v1/flags", "/api/v1/posts/{external_id}/claimreview", "/api/v1/decisions"):
        assert path in document["paths"]


@pytest.mark.django_db
def test_every_operation_has_schemas_auth_and_each_error_response(document):
    assert document["components"]["securitySchemes"] == {"TokenAuth": {"type": "http", "scheme": "bearer"}}
    error_ref = {"$ref": "#/components/schemas/ErrorOut"}
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            assert method in METHODS
            where = f"{method.upper()} {path}"
            assert operation.get("summary") and operation.get("description"), where
            assert operation["security"] == [{"TokenAuth": []}], where
            responses = operation["responses"]
            successes = [code for code in responses if code.startswith("2")]
            assert successes, where
            for code in successes:
                if code == "204":  # No Content: nothing to describe
                    assert "content" not in responses[code], where
                    continue
                assert responses[code]["content"]["application/json"]["schema"], where
            # What every operation can answer, whatever it is.
            assert {"401", "414", "429", "431"} <= set(responses), where
            for code, response in responses.items():
                if code.startswith("4"):
                    assert response["content"]["application/json"]["schema"] == error_ref, (where, code)
            for name in re.findall(r"{(\w+)}", path):
                assert any(p["name"] == name and p["in"] == "path" for p in operation["parameters"]), (where, name)
            if method in ("post", "put", "patch"):
                # A JSON body, or raw bytes (an image to hash: application/octet-stream, format binary).
                content = operation["requestBody"]["content"]
                assert content.get("application/json", content.get("application/octet-stream"))["schema"], where
                assert "413" in responses and "400" in responses, where


@pytest.mark.django_db
def test_every_reference_resolves(document):
    schemas = document["components"]["schemas"]
    for ref in refs(document):
        assert ref.startswith("#/components/schemas/")
        assert ref.rsplit("/", 1)[1] in schemas, ref


@pytest.mark.django_db
def test_the_constraints_the_server_enforces_are_documented(document):
    schemas = document["components"]["schemas"]
    rating = schemas["RatingIn"]["properties"]
    assert rating["verdict"]["enum"] == ["false", "altered", "partly_false", "missing_context", "satire", "true",
                                         "not_eligible"]
    assert rating["rationale"]["maxLength"] == 5000 and rating["sources"]["minItems"] == 1
    post = schemas["PostIn"]["properties"]
    assert post["text"]["maxLength"] == 63_206 and "pattern" in post["language"]
    assert schemas["FlagBatchIn"]["properties"]["flags"]["maxItems"] == 1000
    review = schemas["ClaimReviewOut"]["properties"]
    assert review["@context"]["const"] == "https://schema.org"
    assert set(schemas["RatingLd"]["properties"]["alternateName"]["enum"]) == {
        "False", "Altered", "Partly false", "Missing context", "Satire", "True"
    }
    feed = document["paths"]["/api/v1/decisions"]["get"]["parameters"]
    limit = next(p for p in feed if p["name"] == "limit")
    assert (limit["schema"]["minimum"], limit["schema"]["maximum"]) == (1, 1000)
