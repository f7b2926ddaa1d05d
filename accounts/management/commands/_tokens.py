"""What the token commands share: finding the user by name, and showing a moment the same way."""

from __future__ import annotations

from datetime import datetime

from django.core.management.base import CommandError

from accounts.models import User


def user_named(username: str) -> User:
    try:
        return User.objects.get(username=username)
    except User.DoesNotExist as exc:
        raise CommandError(f"There is no user named {username!r}.") from exc


def moment(value: datetime | None, *, empty: str = "-") -> str:
    return f"{value:%Y-%m-%d %H:%M} UTC" if value is not None else empty
