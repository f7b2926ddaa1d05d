"""Job entry points of the figures: thin and idempotent (a day's rows are replaced whole)."""

from reports import rollup


def roll_up_figures() -> int:
    """Keep the dashboard's roll-up current: today, recent days not yet final, a few missing ones."""
    return rollup.roll_up_recent()
