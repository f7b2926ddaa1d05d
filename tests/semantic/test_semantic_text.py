"""What of a post's text is embedded and whose language is told (factcheck.semantic.embeddable_text): invisible
format characters and compatibility forms must not make a copy another text."""

from __future__ import annotations

from factcheck import semantic

CLAIM = "Chlorine on the skin kills the virus within minutes, doctors say"


def test_zero_width_characters_and_soft_hyphens_change_nothing():
    hidden = "Chlo\u200brine on the\u200b skin\u200d kills the vi\u00adrus within\u2060 minutes, doctors say"
    assert semantic.embeddable_text(hidden) == CLAIM
    clean, copy = semantic.embed([semantic.embeddable_text(CLAIM), semantic.embeddable_text(hidden)])
    assert semantic.cosine(clean, copy) == 1.0


def test_mathematical_letters_read_as_the_letters_they_are():
    bold = "𝐂𝐡𝐥𝐨𝐫𝐢𝐧𝐞 𝐨𝐧 𝐭𝐡𝐞 𝐬𝐤𝐢𝐧 𝐤𝐢𝐥𝐥𝐬 𝐭𝐡𝐞 𝐯𝐢𝐫𝐮𝐬 𝐰𝐢𝐭𝐡𝐢𝐧 𝐦𝐢𝐧𝐮𝐭𝐞𝐬, 𝐝𝐨𝐜𝐭𝐨𝐫𝐬 𝐬𝐚𝐲"
    assert semantic.embeddable_text(bold) == CLAIM
    assert semantic.detect_language(bold) == "en"


def test_a_language_is_told_only_as_a_two_letter_code(monkeypatch):
    """fastText knows languages without an ISO 639-1 code ("ceb", "nds"): no organisation could cover those."""

    class Detector:
        def __init__(self, code):
            self.code = code

        def detect(self, text, **options):
            return [{"lang": self.code, "score": 0.97}]

    monkeypatch.setattr(semantic, "_detector", lambda: Detector("ceb"))
    assert semantic.detect_language(CLAIM) == ""
    monkeypatch.setattr(semantic, "_detector", lambda: Detector("de"))
    assert semantic.detect_language(CLAIM) == "de"
