"""Statements of reasons (EU DSA Art. 17) and the EU Transparency Database, in one place.

- `reasons`: writing a statement when an action is taken (the plain-language text the owner reads
  and the same facts in the Transparency Database's format), and its how-to-appeal sentences;
- `transparency`: the Transparency Database's rules as data, the check against them, and the one
  conversion of a stored statement on its way out (API, export, submission);
- `export`: the selection of stored statements and the export files (`manage.py export_statements`);
- `submission`: sending them to the database's API and recording its answers
  (`manage.py submit_statements`).

The rows are moderation.models.StatementOfReasons (stored by the pipeline with each restricting
action, append-only) and moderation.models.submissions.
"""
