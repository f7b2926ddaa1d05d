"""A linked copy whose post was edited: the platform's later flag sends its text as it reads now.

A copy edited into another text (a debunked claim turned birthday wish kept the claim's False label, its demotion
and its page's strike) leaves its claim: the decision side takes it off (`copies_edited`,
moderation.unlinking.release_edited_copies) as a fact-checker's unlinking does, its pair rejected with EDITED as its
reason, and it waits in the queue for a fact-check of its own. Only a text that no longer even resembles the claim
counts: its new text is below the suggestion threshold of the claim as it was rated, and holds less than that share
of the claim's words (a retelling confirmed by a fact-checker, method `semantic`, of its own stored text too). A
copy whose edit a guard would hold (a sign, a number, a word added: "<3", "Share with 10 friends", "This is TRUE!")
still makes the claim, and stays linked, as does the claim inside a paragraph: releasing it, any page could shed a
label by appending a character or a comment. A copy linked by its picture (method `media`) stays: its claim is in
the picture. A flag that sends no text says nothing of the text.

Edited back to the claim, the post is not linked again (a rating decides a post once: moderation's
RatingDecision): it waits in the queue, flagged, until a fact-checker rates it.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from factcheck.matching.candidates import rows
from factcheck.matching.similarity import features, judge
from factcheck.models import LINKED_STATES, Match, MatchMethod, Post
from factcheck.normalise import digest, normalise_text

# The reason of a pair whose copy an edit took off its claim (its post pages show it to every organisation).
EDITED = "the post was edited and no longer makes the claim it was matched to"


@dataclass(frozen=True)
class Edit:
    """A linked copy's text as a flag sends it now, with its URL's key as now stored."""

    text: str
    url_key: str


def edited_away(edits: dict[int, Edit]) -> list[int]:
    """Of these linked copies (post id: its edit, not yet stored), those that no longer make their claim, in id
    order."""
    sent = {pk: edit for pk, edit in edits.items() if edit.text.strip()}
    if not sent:
        return []
    methods = dict(Match.objects.filter(post_id__in=list(sent), state__in=LINKED_STATES)
                   .values_list("post_id", "method"))
    by_words = [pk for pk in sent if methods.get(pk) != MatchMethod.MEDIA]
    stored = {pk: (text, claim) for pk, text, claim in
              Post.objects.filter(id__in=by_words).values_list("id", "text", "duplicate_of_id")}
    claims = {row.id: row.features for row in rows({claim for _, claim in stored.values()})}
    gone = []
    for pk, (before, claim_id) in sorted(stored.items()):
        now = _features(sent[pk].text, sent[pk].url_key)
        if claim_id not in claims or _resembles(now, claims[claim_id]):
            continue
        # A retelling a fact-checker confirmed (`semantic`) shares few words with its claim as written: it is off
        # only if it no longer resembles its own text either.
        if methods.get(pk) != MatchMethod.SEMANTIC or _judged(now, _features(before)) is None:
            gone.append(pk)
    return gone


def _resembles(post, claim) -> bool:
    """Whether the post's text still makes the claim: the judge's score at the suggestion threshold, or most of the
    claim's words still in it (a paragraph added around the claim dilutes the score, not the claim: 35 words added
    to a claim of 19 took it under the threshold, and its label with it)."""
    if _judged(post, claim) is not None:
        return True
    return bool(claim.grams) and len(post.grams & claim.grams) / len(claim.grams) >= settings.FACTDESK_MATCH_SUGGEST


def _judged(post, claim):
    """The judge's answer on the two texts at the suggestion threshold, or None below it."""
    return judge(post, claim, auto=settings.FACTDESK_MATCH_AUTO, suggest=settings.FACTDESK_MATCH_SUGGEST)


def _features(text: str, url_key: str = ""):
    normalised = normalise_text(text)
    return features(text=text, normalised_text=normalised, url_key=url_key, text_key=digest(normalised))
