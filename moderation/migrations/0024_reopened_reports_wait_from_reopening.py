"""The reports of harm open now after a reopening (their latest kept answer is "reopened") get that answer's time as
their `reopened_at` (factcheck 0039), and their posts' queue rows wait from when their round began: the earliest of
their open reports' reopenings or receipts (moderation.report_queue.refresh_rows counts it so from now on). Reads
only the open reports of harm (a partial index, flag_open_harm_report): moments, whatever the number of flags."""

from django.db import migrations
from django.db.models import Max, Min
from django.db.models.functions import Coalesce

HARM = ("violence", "hate", "harassment", "imminent_harm")


def fill(apps, schema_editor):
    Flag = apps.get_model("factcheck", "Flag")
    ReportAnswer = apps.get_model("moderation", "ReportAnswer")
    ReportedPost = apps.get_model("moderation", "ReportedPost")
    open_reports = Flag.objects.filter(status="open", category__in=HARM)
    latest = (ReportAnswer.objects.filter(flag__in=open_reports).values("flag_id")
              .annotate(last=Max("id")).values_list("last", flat=True))
    reopened = ReportAnswer.objects.filter(id__in=list(latest), outcome="").values_list("flag_id", "answered_at")
    for flag_id, answered_at in reopened:
        Flag.objects.filter(pk=flag_id).update(reopened_at=answered_at)
    rounds = (open_reports.values("post_id").annotate(began=Min(Coalesce("reopened_at", "received_at")))
              .values_list("post_id", "began").order_by())
    for post_id, began in rounds:
        ReportedPost.objects.filter(post_id=post_id).update(opened_at=began)


class Migration(migrations.Migration):

    dependencies = [
        ("factcheck", "0039_flag_reopened_at"),
        ("moderation", "0023_action_restored"),
    ]

    operations = [
        migrations.RunPython(fill, migrations.RunPython.noop, elidable=False),
    ]
