"""How people read dates and multipliers, one way across the app's pages, notices, messages and admin.

Dates: "2 Jun 2027"; moments: "2 Jun 2027, 14:05 UTC" (as config/formats writes them in templates).
Feed multipliers: "×0.2" (no trailing zeros), and as a share: "shown 80% less".
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from decimal import Decimal


def day(value: date | datetime) -> str:
    if isinstance(value, datetime):
        value = value.astimezone(UTC)
    return f"{value.day} {value:%b %Y}"


def moment(value: datetime) -> str:
    value = value.astimezone(UTC)
    return f"{value.day} {value:%b %Y, %H:%M} UTC"


def times(multiplier: Decimal | float | str) -> str:
    """A feed multiplier as a factor: 0.2000 -> "×0.2", 1 -> "×1"."""
    number = Decimal(str(multiplier)).normalize()
    return f"×{number:f}"


def less(multiplier: Decimal | float | str) -> str:
    """A feed multiplier as what it does: 0.2 -> "shown 80% less"; 1 -> "shown as usual"; 0 -> "not shown"."""
    percent = (Decimal(1) - Decimal(str(multiplier))) * 100
    if percent <= 0:
        return "shown as usual"
    if percent >= 100:
        return "not shown"
    return f"shown {percent.normalize():f}% less"
