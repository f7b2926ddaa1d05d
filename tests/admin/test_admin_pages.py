"""Every admin list and change page renders for trust-and-safety staff within a fixed number of queries."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.urls import reverse

STORY_APPS = ("factcheck", "moderation", "audit")
# The same bound holds at both sizes: a page's queries do not grow with its rows.
# The post page is the busiest change page. Its records, media included, are tables of one query each, its timeline
# reads trust and safety sending it to the fact-checkers, and its flags are counted once for the flags table and the
# timeline (factcheck.selectors.counted_flags_by_source, kept for the page). Measured: a rated, removed, appealed post
# (test_admin_usability's removed_post) 25, and a post removed on the reports desk 25, each reading whom the
# removal's notice reached (moderation.owner_notices); a post not removed reads instead whether a lift or override
# of its rating's effect can be taken back. The most, 27: reported for violence and misinformation, sent to the
# fact-checkers by staff, rated, and a suggested copy of a rated post, whose audit log's link to that post is one
# more (test_admin_usability's test_the_busiest_post_page_that_is_not_removed_stays_within_the_bound, a case this
# test's populations, read one newest row a model, never build).
MAX_QUERIES = 27


def story_models():
    return sorted(
        (model for model in admin.site._registry if model._meta.app_label in STORY_APPS),
        key=lambda model: model._meta.label,
    )


def test_every_model_of_both_sides_and_the_audit_log_is_in_the_admin():
    labels = {model._meta.label for model in story_models()}
    assert labels >= {
        "factcheck.Organisation", "factcheck.Page", "factcheck.Post", "factcheck.Flag", "factcheck.Claim",
        "factcheck.Rating", "factcheck.Match", "moderation.EnforcementPolicy", "moderation.RepeatOffenderPolicy",
        "moderation.Action",
        "moderation.Strike", "moderation.PageStanding", "moderation.RatingDecision", "moderation.PostDistribution",
        "moderation.DistributionChange", "moderation.Appeal", "moderation.AppealEvent", "moderation.Notification",
        "audit.AuditEvent",
    }


# 20 rows show an N+1 already (a query a row passes MAX_QUERIES); 60 posts give the busiest lists (flags: 120, audit
# events) more rows than one admin page (core.admin_base's list_per_page, 50), so paging is read too. 200 posts
# proved nothing more and cost a minute of the suite.
@pytest.mark.parametrize("size", [20, 60])
def test_every_list_and_change_page_renders_for_staff_in_a_fixed_number_of_queries(
    size, populate, staff_client, django_assert_max_num_queries
):
    populate(size)
    for model in story_models():
        opts = model._meta
        changelist = reverse(f"admin:{opts.app_label}_{opts.model_name}_changelist")
        with django_assert_max_num_queries(MAX_QUERIES):
            response = staff_client.get(changelist)
        assert response.status_code == 200, changelist
        obj = model._default_manager.order_by("-pk").first()
        assert obj is not None, f"no {opts.label} rows were built"
        change = reverse(f"admin:{opts.app_label}_{opts.model_name}_change", args=[obj.pk])
        # Measured as a running process serves it: Django's content-type cache (one query, once per process)
        # is warm then, whichever tests ran before this one.
        staff_client.get(change)
        with django_assert_max_num_queries(MAX_QUERIES):
            response = staff_client.get(change)
        assert response.status_code == 200, change
