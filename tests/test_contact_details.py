"""Contact details in free text (core.contact_details): the telephone numbers of the world's common formats and the
e-mail addresses are found, and nothing that claims, rationales and reasons are full of is taken for one (a privacy
audit found the French, German and international numbers below going out to the EU Transparency Database, and an
IBAN's digits taken for a number). In linear time: a quadratic pattern once took a worker down (issue 28, finding
11)."""

from __future__ import annotations

import time

import pytest

from core.contact_details import find_contact_details, without_contact_details

PHONE_NUMBERS = [
    # France: mobile and landline, spaced, dotted, hyphenated, unspaced, with no-break spaces
    "06 12 34 56 78", "06.12.34.56.78", "06-12-34-56-78", "0612345678", "01 23 45 67 89",
    "06\u00a012\u00a034\u00a056\u00a078", "06\u202f12\u202f34\u202f56\u202f78",
    # Germany, the Netherlands, Belgium, Italy, Spain
    "0171/1234567", "(030) 1234 5678", "030 12345678", "06-12345678", "0470 12 34 56", "02 123 45 67",
    "06 1234 5678", "612 34 56 78",
    # International, with + or 00
    "0049 171 1234567", "0044 20 7946 0958", "+44 7700 900123", "+33 1 23 45 67 89", "+33 (0)6 12 34 56 78",
    "+49 (0)30 1234 5678", "(+44) 20 7946 0958", "+1 (555) 123-4567", "+7 495 123-45-67", "+81 3-1234-5678",
    "+55 11 91234-5678", "+358 401 234 567", "+39 347 123 4567",
    # The United Kingdom
    "07700900123", "07700 900123", "020 7946 0958",
    # North America
    "555 123 4567", "(555) 123-4567", "555-123-4567", "555.123.4567", "1-800-555-0199",
]


@pytest.mark.parametrize("number", PHONE_NUMBERS)
def test_a_telephone_number_is_found_whole(number):
    for text in (f"Call {number} today.", f"Jane Roe ({number})", f"Tel: {number}", f"Tel:{number}"):
        assert [(d.kind, d.text) for d in find_contact_details(text)] == [("phone number", number)], text


NOT_CONTACT_DETAILS = [
    # Years, date ranges, dates and times
    "between 1914 and 1918", "2019-2020", "2019 - 2020", "1990–2000", "2019 2020 2021", "in 2019/20",
    "01.02.2024", "01/02/2024", "2024-01-15", "01.01.2020-31.12.2020", "from 01/2020 to 12/2021",
    "on 01.02.2024 10:30", "2024-01-15 08:30", "10:30", "14h30", "10.30-11.45", "08.30-10.00-12.00",
    # Amounts and percentages
    "1 000 000 euros", "1,000,000", "1.000.000", "5 million", "100 000 000 views", "12 345 678 901",
    "€1 234 567 890", "+20 000 jobs", "+10 000 000 in a year", "+1 000 000 000", "12.5%", "45 %", "+5%",
    "600 calories", "0.5 mg", "3.14159265358", "0.12345678",
    # IBANs
    "FR76 3000 6000 0112 3456 7890 189", "NL91 ABNA 0417 1643 00", "DE89370400440532013000",
    "GB29 NWBK 6016 1331 9268 19", "IBAN: DE89 3704 0044 0532 0130 00",
    # Post ids, URLs, other identifiers
    "post 1234567890123", "post-0612345678", "fb_123_4567890123", "https://social.example/posts/0612345678",
    "www.example.com/0612345678", "example.com/0612345678", "ISBN 978-3-16-148410-0", "ISBN 0-19-852663-6",
    "statement 2635.json", "version 10.0.19045.2965", "1 85 05 78 006 084 36",
    # Codes and dates a rationale may quote that start with a 0 (a review found them refused as telephone numbers)
    "Andover, MA 01810-0001", "EIN 04-3456789", "case 05-1234567", "routing number 021000021",
    "02/04/20 02/05/20", "06 2020 2021", "09 30 2021 2022",
]


@pytest.mark.parametrize("text", NOT_CONTACT_DETAILS)
def test_figures_dates_amounts_ibans_and_ids_are_not_contact_details(text):
    assert find_contact_details(f"The post says {text}, which is wrong.") == []


@pytest.mark.parametrize("address", ["jane.roe@example.com", "jane.doe+x@mail.example.co.uk", "j_roe-1@example.org"])
def test_an_email_address_is_found_whole(address):
    assert [(d.kind, d.text) for d in find_contact_details(f"Write to {address}.")] == [("e-mail address", address)]


def test_each_detail_is_replaced_by_what_it_was_and_the_rest_is_kept():
    reason = ("Posted the home address of Jane Roe (who reported it herself: jane.roe@example.com, 06 12 34 56 78) "
              "in 2024, seen 1 000 000 times; IBAN FR76 3000 6000 0112 3456 7890 189.")
    assert without_contact_details(reason) == (
        "Posted the home address of Jane Roe (who reported it herself: [e-mail address removed], [phone number "
        "removed]) in 2024, seen 1 000 000 times; IBAN FR76 3000 6000 0112 3456 7890 189.")


@pytest.mark.parametrize("unit", ["1", "1 ", "1.", "1-", "1/", "+1", "(1", "(1)", "(12345", "a.", "a@", "x@y.",
                                  "AB12 3456 ", "http", "06 12 34 56 78 ", " "])
def test_a_long_adversarial_text_is_scanned_in_linear_time(unit):
    # 100,000 characters: linear, about 0.2 s at worst; a pattern that tried each start to the run's end would
    # take minutes (as the e-mail pattern did: 1.9 s for 20,000 characters, 50 s for 100,000).
    text = unit * (100_000 // len(unit))
    started = time.perf_counter()
    without_contact_details(text)
    assert time.perf_counter() - started < 3
