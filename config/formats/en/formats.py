"""How dates read wherever Django formats them (the admin's change pages, `{{ value }}` in templates):
one way across the app, "30 Nov 2026, 01:09 UTC", as core.admin_base.when writes them in the admin's
own columns. The zone is the reader's (accounts.middleware activates their profile's time zone)."""

DATETIME_FORMAT = "j M Y, H:i T"
SHORT_DATETIME_FORMAT = "j M Y, H:i T"
DATE_FORMAT = "j M Y"
SHORT_DATE_FORMAT = "j M Y"
TIME_FORMAT = "H:i"
