"""Browser UI of the decision side. `/appeals/`: the page owners' portal; `/queue/appeals/` and
`/staff/appeals/`: where fact-checkers and trust-and-safety staff decide appeals; `/staff/reports/`: where
staff decide reports of harm."""

from django.urls import path

from moderation import (
    views_appeals,
    views_claims,
    views_notifications,
    views_portal,
    views_reports,
    views_unlink,
    views_withdraw,
)
from moderation.views_appeals import FACTCHECK_DESK, STAFF_DESK
from moderation.views_reports import REPORTS_DESK

app_name = "moderation"
urlpatterns = [
    # Public: a published rating and its ClaimReview, for anyone.
    path("claims/<int:rating_id>/", views_claims.claim, name="claim"),
    path("appeals/", views_portal.portal, name="portal"),
    path("appeals/export/", views_portal.export_my_data, name="portal_export"),
    path("appeals/notifications/read/", views_portal.mark_notifications_read, name="portal_notifications_read"),
    path("appeals/posts/<int:post_id>/", views_portal.post_detail, name="portal_post"),
    path("appeals/<int:appeal_id>/withdraw/", views_portal.withdraw, name="portal_withdraw"),
    # Deciding appeals: disputes and corrections by the rating's organisation, removals by staff.
    path("queue/appeals/", views_appeals.appeal_queue, {"desk": FACTCHECK_DESK}, name="factchecker_appeals"),
    path("queue/appeals/<int:appeal_id>/", views_appeals.appeal_detail, {"desk": FACTCHECK_DESK},
         name="factchecker_appeal"),
    path("queue/appeals/<int:appeal_id>/review/", views_appeals.take_into_review, {"desk": FACTCHECK_DESK},
         name="factchecker_appeal_review"),
    path("staff/appeals/", views_appeals.appeal_queue, {"desk": STAFF_DESK}, name="staff_appeals"),
    path("staff/appeals/<int:appeal_id>/", views_appeals.appeal_detail, {"desk": STAFF_DESK}, name="staff_appeal"),
    path("staff/appeals/<int:appeal_id>/review/", views_appeals.take_into_review, {"desk": STAFF_DESK},
         name="staff_appeal_review"),
    # A fact-checker takes back a copy's confirmation, from the copy's post page (the review side's page).
    path("queue/posts/<int:post_id>/unlink/", views_unlink.unlink_copy_view, name="unlink_copy"),
    # Its organisation withdraws a post's rating, from the post page ("Withdraw this rating" beside "Change rating").
    path("queue/posts/<int:post_id>/ratings/<int:rating_id>/withdraw/", views_withdraw.withdraw_rating_view,
         name="withdraw_rating"),
    # What fact-checkers and staff are told (an appeal filed against their decisions), and what waits for them.
    path("notifications/", views_notifications.notifications, name="notifications"),
    path("notifications/read/", views_notifications.mark_notifications_read, name="notifications_read"),
    # Deciding reports of harm: trust-and-safety staff.
    path("staff/reports/", views_reports.report_queue, {"desk": REPORTS_DESK}, name="staff_reports"),
    path("staff/reports/<int:post_id>/", views_reports.report_detail, {"desk": REPORTS_DESK}, name="staff_report"),
    path("staff/reports/<int:post_id>/claim/", views_reports.claim, {"desk": REPORTS_DESK},
         name="staff_report_claim"),
    path("staff/reports/<int:post_id>/release/", views_reports.release, {"desk": REPORTS_DESK},
         name="staff_report_release"),
    path("staff/reports/<int:post_id>/reopen/", views_reports.reopen, {"desk": REPORTS_DESK},
         name="staff_report_reopen"),
]
