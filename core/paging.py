"""Reading a ?page= number from a query string, for pages that page without counting."""

# Beyond this no one pages by hand; it also keeps OFFSET within what the database accepts.
MAX_PAGE = 10_000


def page_number(raw: str | None) -> int:
    """1 for anything that is not a plain positive number; capped at MAX_PAGE."""
    if not raw or not raw.isascii() or not raw.isdigit():
        return 1
    return min(max(int(raw), 1), MAX_PAGE)
