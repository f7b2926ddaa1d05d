"""A linked copy whose post was edited: the platform's later flag sends its text as it reads now, and a copy that no
longer makes its claim no longer carries the claim's rating: the decision side takes it off the claim
(`copies_edited`, moderation.unlinking.release_edited_copies), its pair left for a fact-checker to confirm. A post
edited from a debunked claim to a birthday wish kept the claim's False label, its demotion and its page's strike.

A copy stays linked when its new text is still an automatic match of its claim (the judge's own rule,
factcheck.matching.similarity, against the claim as it was rated), or a light edit of its own text as it was linked
(less than the judge's automatic match: a typo fixed, a hashtag added; so a copy a fact-checker confirmed as a
retelling stays confirmed through a typo). A copy linked by its picture (method `media`) stays: its claim is in the
picture, which a new caption leaves as it was. A flag that sends no text says nothing of the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from factcheck.matching.candidates import rows
from factcheck.matching.similarity import features, judge
from factcheck.models import LINKED_STATES, Match, MatchMethod, Post
from factcheck.normalise import digest, normalise_text


@dataclass(frozen=True)
class Edit:
    """A linked copy's text as a flag sends it now, with its URL's key as now stored, and its claim."""

    text: str
    url_key: str
    claim_id: int


def edited_away(edits: dict[int, Edit]) -> list[int]:
    """Of these linked copies (post id: its edit, not yet stored), those that no longer make their claim, in id
    order."""
    sent = {pk: edit for pk, edit in edits.items() if edit.text.strip()}
    if not sent:
        return []
    by_media = set(Match.objects.filter(post_id__in=list(sent), state__in=LINKED_STATES, method=MatchMethod.MEDIA)
                   .values_list("post_id", flat=True))
    stored = dict(Post.objects.filter(id__in=[pk for pk in sent if pk not in by_media]).values_list("id", "text"))
    claims = {row.id: row.features for row in rows({sent[pk].claim_id for pk in stored})}
    auto = settings.FACTDESK_MATCH_AUTO
    gone = []
    for pk, before in sorted(stored.items()):
        edit = sent[pk]
        claim = claims.get(edit.claim_id)
        still = claim is not None and _automatic(judge(_features(edit.text, edit.url_key), claim, auto=auto,
                                                       suggest=0.0))
        if not still and not _automatic(judge(_features(edit.text), _features(before), auto=auto, suggest=0.0)):
            gone.append(pk)
    return gone


def _automatic(judgement) -> bool:
    return judgement is not None and judgement.automatic


def _features(text: str, url_key: str = ""):
    normalised = normalise_text(text)
    return features(text=text, normalised_text=normalised, url_key=url_key, text_key=digest(normalised))
