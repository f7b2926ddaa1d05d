"""Trust-and-safety's view of the decision side, and the decision side of a post's admin page.

Everything here changes only through domain functions (moderation.policy for policy rows,
moderation.staff_actions and moderation.appeals for decisions), so apart from the two policy
models every admin is read-only. One module per responsibility:

- `policy`: the enforcement policy and the repeat-offender numbers, the two models staff edit;
- `records`: actions, strikes, standings, decisions, distributions, the feed, notifications and
  statement submissions;
- `appeals`: appeals and their state changes;
- `reports`: the posts reported for harm (decided on the reports desk, `/staff/reports/`);
- `page_story`: factcheck's PageAdmin re-registered with the page's standing, strikes and posts;
- `post_story`: factcheck's PostAdmin re-registered with the post's whole story, because factcheck
  never imports moderation.
"""

from moderation.admin import appeals, page_story, policy, post_story, records, reports  # noqa: F401  (each registers its admins)
