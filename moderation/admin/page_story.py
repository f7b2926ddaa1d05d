"""The decision side of a page's admin page: factcheck's PageAdmin re-registered with the page's standing, its
strikes, its posts and the marking of it as a politician's, because factcheck never imports moderation.

Staff deciding about a page (a repeat offender's appeal, marking a politician) read its record here; the page
had shown its owners, id, name and mark alone.
"""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib import admin
from django.urls import reverse
from django.utils.html import format_html

from core.admin_base import html_table, share, when
from factcheck.admin import PageAdmin
from factcheck.models import Page
from moderation.admin.records import action_effect
from moderation.models import PageStanding, RepeatOffenderPolicy, Strike

STRIKES_SHOWN = 20


class PageStoryAdmin(PageAdmin):
    readonly_fields = (*PageAdmin.readonly_fields, "standing_now", "strikes", "its_posts", "marking_history")

    @admin.display(description="standing")
    def standing_now(self, page: Page) -> str:
        standing = PageStanding.objects.filter(page=page).first()
        policy = RepeatOffenderPolicy.current()
        strikes = standing.active_strikes if standing else 0
        counted = (f"{strikes} active strike{'s' if strikes != 1 else ''} of the {policy.strike_threshold} that "
                   f"make a repeat offender in {policy.window_days} days")
        if standing is None or not standing.is_repeat_offender:
            return f"Not a repeat offender: {counted}."
        return (f"Repeat offender since {when(standing.since)}: {counted}; every post {share(standing.page_multiplier)}"
                " on top of its own, monetisation suspended.")

    @admin.display(description=f"strikes (the newest {STRIKES_SHOWN})")
    def strikes(self, page: Page):
        rows = Strike.objects.filter(page=page).select_related("action__post").order_by("-created_at")[:STRIKES_SHOWN]
        return html_table(("given", "kind", "for", "state"), [
            (when(strike.created_at), strike.get_kind_display(),
             format_html('{} on <a href="{}">post {}</a>', action_effect(strike.action),
                         reverse("admin:moderation_action_change", args=[strike.action_id]),
                         strike.action.post.external_id),
             f"ended {when(strike.ended_at)}" if strike.ended_at else "active")
            for strike in rows
        ])

    @admin.display(description="posts")
    def its_posts(self, page: Page):
        url = f"{reverse('admin:factcheck_post_changelist')}?{urlencode({'page__id__exact': page.pk})}"
        return format_html('<a href="{}">The page\'s posts</a>', url)

    @admin.display(description="marked or unmarked as a politician's")
    def marking_history(self, page: Page):
        url = f"{reverse('admin:audit_auditevent_changelist')}?{urlencode({'q': f'factcheck.page#{page.pk}'})}"
        return format_html('<a href="{}">Every change to the page, with who made it and why</a>', url)


admin.site.unregister(Page)
admin.site.register(Page, PageStoryAdmin)
