"""Contact details in free text: e-mail addresses and telephone numbers, found (`find_contact_details`, for the
messages that refuse them where people type) and replaced (`without_contact_details`, where text stored before
the refusal is shown or exported).

What people write around them is full of figures that are not telephone numbers, and none of these is one:
years and date ranges ("2019-2020", "01.02.2024"), amounts ("1 000 000 euros", "1,000,000", "1.000.000",
"5 million"), percentages, times ("10.30-11.45"), ISBNs, IBANs, post ids, URLs. A number is a telephone number in
one of the shapes the world writes them in:

- international, with "+" or "00" and 8 to 15 digits: +44 7700 900123, +33 (0)6 12 34 56 78, 0049 171 1234567;
- national, with its trunk "0" and 9 to 12 digits: 06 12 34 56 78, 06.12.34.56.78, 020 7946 0958, 07700900123,
  0171/1234567, (030) 1234 5678;
- North America's ten digits, 3-3-4: (555) 123-4567, 555 123 4567, 1-800-555-0199;
- Spain's 9 digits, 3-2-2-2: 612 34 56 78.

Linear time in the text (the statement of reasons once cleaned with a quadratic pattern: issue 28, finding 11):
one scan finds the runs of digits and separators, each starting only where a run starts, and a run is then judged
by its digits and groups. URLs, IBANs and e-mail addresses are stepped over by the same scan, so digits inside them
are never taken for a telephone number.
"""

from __future__ import annotations

import re
from typing import NamedTuple

EMAIL_REMOVED = "[e-mail address removed]"
PHONE_REMOVED = "[phone number removed]"
EMAIL_KIND, PHONE_KIND = "e-mail address", "phone number"

# A match starts only where a run of local-part characters starts (the lookbehind). Without it, every position of a
# long run was tried and scanned to the run's end, which is quadratic: 20,000 characters without an "@" took 1.9 s,
# a 100,000-character reason about 50 s (issue 28, finding 11). It finds the same addresses: the leftmost match
# always starts at such a run's start.
EMAIL = re.compile(r"(?<![\w.+-])[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
EMAIL_CHARACTERS = frozenset(".+-@_")  # with str.isalnum(), what \w and the pattern's classes take

_SPACE = r"[ \u00a0\u202f]"  # a space, a no-break space, a narrow no-break space (French writes 06 12 34 56 78)
# Between two groups of digits: a space, a hyphen or full stop (spaced or not), or a slash (not spaced: "a / b"
# separates two numbers).
_SEP = rf"(?:{_SPACE}?[-.]{_SPACE}?|/|{_SPACE})"
_AREA = r"\(\+?\d{1,5}\)"  # (030), (0), (555), (+44)
# A separator is never empty between two groups of digits, so the groups of a run split one way only: the scan never
# backtracks into a run.
_RUN = rf"(?:\+{_SPACE}?)?(?:{_AREA}|\d+)(?:{_SEP}?{_AREA}|{_SEP}\d+|(?<=\))\d+)*"
# Not inside a word, an address, a path, an amount or a decimal figure ("1.0612345678", "$555 123 4567").
_NOT_AFTER = r"(?<![\w/+\-@$€£])(?<!\d[.,])"
_URL = r"(?:https?://|www\.)\S+"
_IBAN = rf"\b[A-Z]{{2}}\d{{2}}(?:{_SPACE}?[A-Z0-9]{{4}}){{2,7}}(?:{_SPACE}?[A-Z0-9]{{1,3}})?\b"
_SCAN = re.compile(rf"(?P<skip>{_URL}|{_IBAN}|{EMAIL.pattern})|{_NOT_AFTER}(?P<run>{_RUN})")
_DIGITS = re.compile(r"\d+")
_YEAR = re.compile(r"(?:19|20)\d\d")
_DATE_SEPARATORS = frozenset("./-")
_FIGURE_SEPARATORS = frozenset({" ", ".", "\u00a0", "\u202f"})
MIN_DIGITS = 8  # the fewest of any shape below ("+20 000 jobs" is a figure)


class ContactDetail(NamedTuple):
    kind: str  # EMAIL_KIND or PHONE_KIND
    text: str
    start: int
    end: int


def find_contact_details(text: str) -> list[ContactDetail]:
    """The e-mail addresses and telephone numbers in `text`, in their order."""
    found = [ContactDetail(EMAIL_KIND, m[0], m.start(), m.end()) for m in EMAIL.finditer(text)]
    for match in _SCAN.finditer(text):
        run = match["run"]
        if run is not None:
            start = match.start("run")
            if run.startswith("(") and ")" not in run[1:]:  # "(06 12 34 56 78": the bracket is the sentence's
                run, start = run[1:], start + 1
            if is_phone_number(run, after=text[match.end() : match.end() + 2]):
                found.append(ContactDetail(PHONE_KIND, run, start, match.end()))
    return sorted(found, key=lambda detail: detail.start)


def without_contact_details(text: str) -> str:
    """`text` with each e-mail address and telephone number replaced by "[e-mail address removed]" or "[phone number
    removed]"."""
    parts, at = [], 0
    for detail in find_contact_details(text):
        parts += [text[at : detail.start], EMAIL_REMOVED if detail.kind == EMAIL_KIND else PHONE_REMOVED]
        at = detail.end
    return "".join(parts) + text[at:] if parts else text


def is_phone_number(run: str, *, after: str = "") -> bool:
    """Whether a run of digits and separators (the scan's) is written as a telephone number; `after`: the two
    characters that follow it."""
    if after[:1].isalnum() or after[:1] in ("%", "@") or (after[:1] in ".," and after[1:2].isdigit()):
        return False  # part of a word, a percentage, an address or a longer figure
    groups = _DIGITS.findall(run)
    if sum(map(len, groups)) < MIN_DIGITS:
        return False
    separators = [s.strip("() \u00a0\u202f") or s[:1] for s in _DIGITS.split(run)[1:-1]]
    digits = "".join(groups)
    if _is_date(groups, separators) or _is_times(groups, separators):
        return False
    if separators.count("/") > 1 or sum(bool(_YEAR.fullmatch(group)) for group in groups) > 1:
        return False  # dates and years side by side: "02/04/20 02/05/20", "06 2020 2021"
    lengths = tuple(len(group) for group in groups)
    plus = run.lstrip("(").startswith("+")
    if plus or (digits.startswith("00") and digits[2:3] not in ("", "0")):
        national = digits if plus else digits[2:]
        # "+10 000 000" is a figure with a sign; a number of 11 digits or more grouped so is a telephone number.
        return 8 <= len(national) <= 15 and not (_is_amount(lengths, separators) and len(national) <= 10)
    if _is_amount(lengths, separators):
        return False
    if digits[:1] == "0" and digits[1:2] != "0" and lengths[0] >= 2:
        # The trunk 0 belongs to the area code: "0-19-852663-6" (an ISBN) has none. Nine digits only in three groups
        # or more ("02 123 45 67", Brussels): "01810-0001" (a ZIP+4 code), "04-3456789" (a US tax id) and "021000021"
        # (a bank's routing number) are not telephone numbers.
        return 10 <= len(digits) <= 12 or (len(digits) == 9 and len(groups) >= 3)
    if lengths in ((3, 3, 4), (1, 3, 3, 4)) and (lengths[0] == 3 or digits[0] == "1"):
        return digits[-10] not in "01"  # North America: an area code never starts with 0 or 1
    return lengths == (3, 2, 2, 2) and digits[0] in "6789"


def _is_date(groups: list[str], separators: list[str]) -> bool:
    """Starts as a date: 01.02.2024, 1/2/2024, 2024-01-15 (and a time or a range may follow)."""
    if len(groups) < 3 or separators[0] != separators[1] or separators[0] not in _DATE_SEPARATORS:
        return False
    lengths = [len(group) for group in groups[:3]]
    return (lengths[0] <= 2 and lengths[1] <= 2 and lengths[2] == 4) or (lengths[0] == 4 and max(lengths[1:]) <= 2)


def _is_times(groups: list[str], separators: list[str]) -> bool:
    """Times and their ranges: 08.30-10.00-12.00 (hours and minutes joined by a full stop, times by a hyphen)."""
    if len(groups) < 4 or len(groups) % 2:
        return False
    pairs = zip(groups[::2], groups[1::2], strict=True)
    return (all(len(minutes) == 2 and int(hours) <= 23 and int(minutes) <= 59 for hours, minutes in pairs)
            and all(s == "." for s in separators[::2]) and all(s == "-" for s in separators[1::2]))


def _is_amount(lengths: tuple[int, ...], separators: list[str]) -> bool:
    """Thousands grouped by one separator: 1 000 000, 1.000.000, 12 345."""
    return (len(lengths) >= 2 and lengths[0] <= 3 and all(n == 3 for n in lengths[1:])
            and len(set(separators)) == 1 and separators[0] in _FIGURE_SEPARATORS)
