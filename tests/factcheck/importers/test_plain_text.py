"""Fields published as HTML (ClaimReview, LIAR) read as plain text: what goes, what stays, and in time linear in
a field's length (an import reads fields of any length)."""

from __future__ import annotations

import time

import pytest

from factcheck.importing.records import plain_text


@pytest.mark.parametrize(("published", "read"), [
    ("<p>Vaccines <b>do not</b> cause autism.</p>", "Vaccines do not cause autism."),
    ("Before<script>alert('x')</script>after<STYLE type=x>p {}</style >end", "Before after end"),
    # An opening nothing closes is text (stored as text, escaped where shown); a later element of the other name
    # still goes, and so does one of the same name opened and closed before it.
    ("a <script b <style>c</style> d", "a <script b d"),
    ("<script>x</script> kept <script and after", "kept <script and after"),
    ("2 < 3 and 5 > 4", "2 4"),
    ("no tag here < at all", "no tag here < at all"),
    ("&lt;not a tag&gt; &amp; more", "<not a tag> & more"),
    (42, "42"),
    (None, ""),
])
def test_html_reads_as_plain_text(published, read):
    assert plain_text(published) == read


@pytest.mark.parametrize("unit", ["<", "<script", "<style ", "<script <style ", "<b"])
def test_a_long_field_of_openings_nothing_closes_is_read_in_linear_time(unit):
    # 1,000,000 characters: under 0.2 s; the patterns before tried each opening to the text's end (6 s at 80,000).
    field = unit * (1_000_000 // len(unit))
    started = time.perf_counter()
    assert plain_text(field) == field.strip()
    assert time.perf_counter() - started < 3
