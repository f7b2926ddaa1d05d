"""A post's topic (PRODUCT.md: `topic` on the flag's post, optional): sent by the platform or an
import, shown by the API, and a filter of the queue and of claim-next."""

from __future__ import annotations

import pytest

from factcheck.models import Post
from tests.api.helpers import flag_payload, post_json
from tests.conftest import bearer_client
from tests.factcheck.importers.helpers import import_posts
from tests.factcheck.test_queue_views import rendered_post_ids
from tests.factories import FlagFactory, PlatformUserFactory, PostFactory


@pytest.mark.django_db
def test_the_platform_sends_a_topic_and_reads_it_back():
    client = bearer_client(PlatformUserFactory())
    flag = flag_payload(post={"topic": "  Public   HEALTH "})
    assert post_json(client, "/api/v1/flags", flag).status_code == 201
    post = Post.objects.get(external_id=flag["post"]["external_id"])
    assert post.topic == "public health"
    assert client.get(f"/api/v1/posts/{post.external_id}").json()["topic"] == "public health"
    for absent in (None, ""):
        other = flag_payload(post={"topic": absent})
        assert post_json(client, "/api/v1/flags", other).status_code == 201
        assert Post.objects.get(external_id=other["post"]["external_id"]).topic == ""


@pytest.mark.django_db
def test_an_over_long_topic_is_refused_and_nothing_is_stored():
    client = bearer_client(PlatformUserFactory())
    response = post_json(client, "/api/v1/flags", flag_payload(post={"topic": "x" * 101}))
    assert response.status_code == 422
    assert response.json()["error"]["details"]["errors"][0]["field"] == "post.topic"
    assert not Post.objects.exists()


def test_the_queue_and_claim_next_filter_by_topic(login, factchecker):
    health = PostFactory(topic="health", priority=10)
    elections = PostFactory(topic="elections", priority=20)
    for post in (health, elections):
        FlagFactory(post=post)
    client = login(factchecker)
    assert rendered_post_ids(client.get("/queue/", {"topic": "Health"})) == [health.pk]
    assert rendered_post_ids(client.get("/queue/")) == [elections.pk, health.pk]
    response = client.post("/queue/claim-next/", {"topic": "health"})
    assert response.status_code == 302 and response["Location"] == f"/queue/posts/{health.pk}/"


@pytest.mark.django_db
def test_a_csv_row_may_carry_a_topic(tmp_path):
    path = tmp_path / "topics.csv"
    path.write_text(
        "source,external_id,posted_at,page_external_id,page_name,topic\n"
        "user_report,t1,2026-03-01T08:00:00Z,pg,Page,Elections\n"
    )
    assert import_posts(path, "csv")[0] == "imported 1, already present 0, rejected 0"
    assert Post.objects.get(external_id="t1").topic == "elections"
