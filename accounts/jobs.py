"""Job entry points of accounts: thin, safe to run twice (a second run sends one more working link)."""

from accounts import password_reset


def send_reset_link(email: str) -> int:
    """E-mail a password-reset link to the account with this address, if one may have it (on `notices`)."""
    return password_reset.send_reset_link(email=email)
