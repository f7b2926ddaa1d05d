"""A refusal names what an organisation covers in words people read ("French in France"), not codes."""

from __future__ import annotations

import pytest

from factcheck.coverage import describe_coverage
from tests.factories import OrganisationFactory


@pytest.mark.parametrize(("languages", "countries", "words"), [
    (["fr"], ["FR"], "French in France"),
    (["nl", "fr"], ["BE", "FR", "LU"], "Dutch or French in Belgium, France or Luxembourg"),
    ([], ["DE"], "all languages in Germany"),
    (["de"], [], "German in all countries"),
    ([], [], "all languages in all countries"),
])
def test_coverage_is_described_by_names(languages, countries, words):
    assert describe_coverage(OrganisationFactory.build(languages=languages, countries=countries)) == words
