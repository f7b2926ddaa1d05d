"""Importing posts from files: `manage.py import_posts PATH --format csv|jsonl|claimreview|liar`.

One module per format reads its file and yields, per record, where it is (its line, or its item
for ClaimReview) and either a valid input or the reason it is refused (factcheck.importing.records).
The runner (factcheck.importing.runner) checks the whole file first, then writes the records in
batches through the same domain functions as the API: factcheck.ingest.ingest_flags for the
flags and factcheck.ratings.record_rating for the ratings of ClaimReview and LIAR records.
"""
