"""Settings of the bench process: the app's own settings plus a URLconf with a trivial view.

Only the bench process uses these; the RQ workers it starts run on config.settings.
"""

from config.settings import *  # noqa: F403

ROOT_URLCONF = "bench.urls"
# Keep the summary readable: the app logs at INFO, the bench only wants warnings.
LOGGING["root"]["level"] = "WARNING"  # noqa: F405
