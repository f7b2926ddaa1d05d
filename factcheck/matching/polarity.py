"""The polarity guard's reading of a text (factcheck.matching.similarity): the words, parts of words and signs that turn
a claim round, in the languages posts come in, and `polarity_of`, what of them a text says, counted. A copy whose
polarity differs from its claim's says the opposite, or debunks it, and is suggested for a person to confirm, never
linked automatically."""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from factcheck.normalise import normalise_text


def _normalised_words(words: str) -> frozenset[str]:
    """The words as the normalised text spells them (factcheck.normalise: no accents or vowel signs, lower case)."""
    return frozenset(normalise_text(words).split())


# Words that turn a claim round, matched on the normalised text (lower case, no accents, "isn't" as "isn t").
# A negation missed here lets a copy that says the opposite take the claim's rating automatically (an Arabic
# "لا يقتل" under "يقتل" did, with its label and a strike on its page), so each language fact-checkers work in
# needs its own.
NEGATIONS = _normalised_words(
    "no not never none nobody nothing neither nor nowhere without cannot cant dont doesnt didnt isnt arent "
    "wasnt werent wont wouldnt shouldnt couldnt hasnt havent hadnt aint "
    # French, Spanish, Portuguese, Italian, German, Dutch, Polish
    "ne pas jamais aucun aucune rien sans nunca jamas ningun ninguna ninguno nada sin tampoco nao nenhum "
    "nenhuma sem non mai nessun nessuno niente senza nicht kein keine keinen keinem keiner nie niemals nichts "
    "ohne niet geen nooit niets zonder "
    # Scandinavian, Finnish and Estonian, Romanian, Czech and Slovak, Hungarian, Greek. Not a word that is a common
    # word in another language these posts come in ("nu" is "now" in Dutch and Swedish, "tak" "yes" in Polish): a
    # copy that adds it ("Deel dit nu!") would be held back as negated. "ei" is, though "egg" in Dutch: it is the
    # "not" of every Finnish and Estonian sentence ("Rokote ei aiheuta autismia" took the rating of "Rokote
    # aiheuttaa autismia"), and a copy adding an egg is rarer than one saying the opposite.
    "inte ej aldrig inga ikke ikkje aldri uden ei eivät ilman koskaan niciodată fără "
    "nikdy bez není nem soha nincs nélkül δεν μην όχι ποτέ χωρίς "
    # Russian, Ukrainian, Bulgarian, Serbian
    "не нет ни никогда ничего никто без ні немає ніколи нічого ніхто няма никад нема "
    # Turkish, Indonesian and Malay, Vietnamese (not its words that lose their accents into names: "chưa", "chẳng")
    "değil yok hiç asla hayır tidak bukan belum tanpa jangan tiada không đừng "
    # Arabic, Persian, Urdu, Hebrew
    "لا لم لن ليس ليست ليسوا لست لسنا بدون أبدا مش نه نیست نیستند هرگز نہیں بغیر "
    "לא אין אינו אינה אינם אינן בלי מעולם "
    # Hindi, Bengali, Tamil: whole words only (without its vowel sign "ने", the commonest Hindi particle, reads "न")
    "नहीं मत बिना না নয় নেই ছাড়া இல்லை அல்ல "
    # Korean's "not" as a word of its own ("안 맞았다"): inside words "안" begins "안녕" and "안전" (NEGATION_PARTS)
    "안"
)
# Negations written inside words, in scripts without spaces between words (Chinese, Japanese, Thai) or inside a
# verb (Korean): counted as they occur in the text as written (NFC, lower case: its marks kept, for without them
# Thai "ไม่" (not) is "ไม้" (wood) and "อย่า" (don't) begins "อยาก" (want)). Not the characters that begin common
# words: "非常" (very), "未来" (future), "特别" (special), nor Japanese "ず", which unmarked is the "す" of "です".
NEGATION_PARTS = ("不", "没", "沒", "無", "无", "ない", "ません", "ไม่", "ปราศจาก", "อย่า", "않", "못", "없")
# The contracted "n't": "isn t", "can t" and the like leave a stem before a lone "t".
CONTRACTED = frozenset(
    "isn aren wasn weren don doesn didn hasn haven hadn won wouldn shouldn couldn can ain mustn needn".split()
)
# One negation however it is spelt: "does not", "doesn't" and "doesnt" all count as one "not".
NOT_FORMS = frozenset("not cannot cant dont doesnt didnt isnt arent wasnt werent wont wouldnt shouldnt couldnt "
                      "hasnt havent hadnt aint".split())
# Words whose opposite is the opposite claim: a copy that swaps one for the other is another claim.
POLAR_WORDS = frozenset(
    "true false real fake hoax myth debunked untrue lie lies wrong correct proven unproven "
    "increase increased increases decrease decreased decreases rise rises rose fall falls fell "
    "up down more less higher lower safe unsafe dangerous legal illegal won lost win lose wins loses "
    "before after all always everyone support supports oppose opposes approve approved reject rejected "
    "pro anti yes cause causes caused prevent prevents prevented ineffective unconstitutional unlikely unable "
    "inaccurate incorrect unfounded fail fails failed deny denies denied refuse refuses refused hardly barely "
    "cut cuts raise raised raises refuted refutes disproved disproven misleading rumour rumor rumours rumors "
    "debunk debunks satire satirical parody scam stop fact factcheck "
    # What a post that debunks a claim says around it ("Viral posts wrongly claim that ...", "It is nonsense that
    # ..."): words only added, which no other guard reads, and the debunking took the claim's False rating.
    "wrongly falsely nonsense conspiracy baseless bogus misinformation disinformation".split()
) | _normalised_words(
    # The same few words in the other languages of the demo and of fact-checkers' common work
    "faux fausse vrai vraie intox falsch wahr lüge fake falso falsa verdadero verdadera verdad mentira bulo "
    "vero bugia verdadeiro ложь правда фейк неправда كاذب كذب مزيف شائعة صحيح خطأ حقيقي שקר אמת מזויף झूठ सच "
    "फर्जी faussement fälschlicherweise fälschlich unwahr falsamente erróneamente"
)
# Signs that say which way a claim goes, which the normalised text drops as punctuation: "risk > 1%" / "risk < 1%",
# "❌ Drinking hot water cures it" / "✅ Drinking hot water cures it". Counted with the polar words.
SIGNS = {"<": "<", "≤": "<", ">": ">", "≥": ">", "✅": "yes", "✔": "yes", "☑": "yes", "❌": "no", "✖": "no",
         "🚫": "no", "⛔": "no"}
SIGN = re.compile(f"[{''.join(SIGNS)}]")
# A comparison sign compares only before a number ("> 1%"): not an arrow ("->", "=>") nor markup ("<b>").
COMPARISON = re.compile(r"(?<![-=<>])[<>≤≥]\s?[0-9]")


def polarity_of(tokens: list[str], *, text: str = "") -> tuple[tuple[str, int], ...]:
    """The negations (each spelling of "not" as one) and polar words of a normalised text's tokens, and the negations
    written inside words (NEGATION_PARTS) of the `text` they come from, counted."""
    found = []
    skip = False
    # Not strict: for an empty text the padded list is [""], one longer than tokens.
    for token, after in zip(tokens, [*tokens[1:], ""], strict=False):
        if skip:
            skip = False
        elif token in CONTRACTED and after == "t":
            found.append("not")
            skip = True
        elif token in NOT_FORMS:
            found.append("not")
        elif token in NEGATIONS or token in POLAR_WORDS:
            found.append(token)
    if text and not text.isascii():
        written = unicodedata.normalize("NFC", text).casefold()
        found += [part for part in NEGATION_PARTS for _ in range(written.count(part))]
    found += [SIGNS[m[0]] for m in SIGN.finditer(text) if m[0] not in "<>≤≥" or COMPARISON.match(text, m.start())]
    return tuple(sorted(Counter(found).items()))
