"""Reading a ?page= number, or an id, from a query string, for pages that page without counting."""

# Beyond this no one pages by hand; it also keeps OFFSET within what the database accepts.
MAX_PAGE = 10_000
# More digits than any id or page number (a bigint has 19): longer input is not a number we use, and
# int() of more than 4,300 digits raises ValueError (Python's limit against slow conversions).
MAX_DIGITS = 18


def plain_number(raw: str | None) -> int | None:
    """The number typed, if plain (ASCII digits only, at most MAX_DIGITS of them), else None."""
    if not raw or len(raw) > MAX_DIGITS or not raw.isascii() or not raw.isdigit():
        return None
    return int(raw)


def page_number(raw: str | None) -> int:
    """1 for anything that is not a plain positive number; capped at MAX_PAGE."""
    number = plain_number(raw)
    return 1 if number is None else min(max(number, 1), MAX_PAGE)
