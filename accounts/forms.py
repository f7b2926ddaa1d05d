"""The signed-in person's own settings."""

from __future__ import annotations

import zoneinfo
from functools import lru_cache

from django import forms


@lru_cache(maxsize=1)
def time_zone_choices() -> list[tuple[str, str]]:
    """Every IANA zone this machine knows, UTC first, then by name ("Europe/Paris")."""
    names = sorted(name for name in zoneinfo.available_timezones() if "/" in name and not name.startswith("Etc/"))
    return [("UTC", "UTC"), *((name, name.replace("_", " ")) for name in names)]


class ProfileForm(forms.Form):
    time_zone = forms.ChoiceField(
        label="Time zone", choices=time_zone_choices,
        help_text="Claims, ratings and timelines show their times in this zone.",
    )

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("label_suffix", "")
        super().__init__(*args, **kwargs)
