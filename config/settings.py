"""Factdesk settings: everything that differs between machines comes from the environment.

Without DATABASE_URL a SQLite file under var/ is used; without REDIS_URL jobs run in-process
right after the transaction commits (see core/jobs.py).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_int, env_list, env_log_level, env_rate, env_seconds, env_share, env_site_url

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("FACTDESK_VAR_DIR", BASE_DIR / "var"))


DEBUG = env_bool("DEBUG", False)
SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if env_bool("FACTDESK_REQUIRE_SECRET_KEY", False):
        raise ImproperlyConfigured("SECRET_KEY must be set (FACTDESK_REQUIRE_SECRET_KEY is on).")
    # No key given (a laptop, the demo, the test suite): one random key per installation, kept in
    # var/ so sessions survive restarts. Never a constant that anyone could read in this repository.
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    _key_file = VAR_DIR / "secret_key"
    if not _key_file.exists():
        import secrets

        _key_file.write_text(secrets.token_urlsafe(50))
        _key_file.chmod(0o600)
    SECRET_KEY = _key_file.read_text().strip()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "config.admin_site.FactdeskAdminConfig",  # django.contrib.admin with Factdesk's index
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django_rq",
    "pgtrigger",
    "axes",
    "csp",
    "ninja",  # its vendored Swagger UI for /api/docs (no CDN)
    "accounts",
    "audit",
    "factcheck",
    "moderation",
    "webhooks",
    "reports",
]

MIDDLEWARE = [
    # First: an oversized API request is refused before anything else spends work on it, and a
    # chunked body is readable before anything reads it (core/request_limits.py).
    "core.request_limits.ApiRequestLimitsMiddleware",
    "core.request_limits.ChunkedBodyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "accounts.middleware.UserTimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Last, as django-axes asks: it turns a locked-out login into the lockout page.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                # The counts in the main navigation (what waits for each role): moderation.workday.
                "moderation.context_processors.work",
            ],
        },
    },
]

DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    # Health checks: a connection the server dropped (a database restart) is replaced at the start of the
    # next request instead of failing it.
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    except ValueError as _error:  # its text never repeats the URL, which holds the password
        raise ImproperlyConfigured(f"DATABASE_URL is not a database URL: {_error}") from _error
    # Without a name Django starts, then fails every request that reads ("Please supply the NAME"); SQLite's
    # `sqlite://` is a database in memory, a new empty one for each connection. A PostgreSQL service names its own.
    if DATABASES["default"]["NAME"] in ("", ":memory:") and "service" not in DATABASES["default"].get("OPTIONS", {}):
        raise ImproperlyConfigured(
            "DATABASE_URL names no database: put its name after the host and port "
            "(postgres://user:password@host:5432/factdesk; sqlite:////path/to/factdesk.sqlite3)."
        )
    if "postgresql" in DATABASES["default"]["ENGINE"]:
        # A database host that takes the connection and never answers holds a request (/healthz included) for
        # DATABASE_CONNECT_TIMEOUT seconds, where libpq has no limit of its own (2 min 10 s seen); the URL's own wins.
        DATABASES["default"].setdefault("OPTIONS", {}).setdefault(
            "connect_timeout", env_int("DATABASE_CONNECT_TIMEOUT", 5, minimum=1))
    # Read replicas, comma-separated: replica_0, replica_1, ... Only reads inside core.replicas' scope (the
    # dashboard, the stats API, the portal's list, the exports) go to one, and never one lagging more than
    # FACTDESK_REPLICA_MAX_LAG seconds (docs/operations.md).
    for _number, _url in enumerate(env_list("DATABASE_REPLICA_URL", "")):
        try:
            _replica = dj_database_url.parse(_url, conn_max_age=60, conn_health_checks=True)
        except (ValueError, dj_database_url.UnknownSchemeError) as _error:
            raise ImproperlyConfigured(f"DATABASE_REPLICA_URL: entry {_number + 1} is not a database URL.") from _error
        if "postgresql" not in _replica["ENGINE"] or "postgresql" not in DATABASES["default"]["ENGINE"]:
            raise ImproperlyConfigured("DATABASE_REPLICA_URL needs PostgreSQL, for the replicas and DATABASE_URL.")
        if not _replica.get("NAME"):
            raise ImproperlyConfigured(f"DATABASE_REPLICA_URL: entry {_number + 1} names no database.")
        # A replica that does not answer costs a request 2 s at most to connect (libpq's least), then it is skipped;
        # a host that stops acknowledging under a kept connection is given up after about 5 s (tcp_user_timeout,
        # keepalives) instead of the kernel's quarter of an hour (docs/operations.md, "Read replicas").
        _options = _replica.setdefault("OPTIONS", {})
        for _option, _value in (("connect_timeout", 2), ("tcp_user_timeout", 5000), ("keepalives", 1),
                                ("keepalives_idle", 5), ("keepalives_interval", 2), ("keepalives_count", 2)):
            _options.setdefault(_option, _value)
        # The test suite runs without replicas: run it with DATABASE_REPLICA_URL unset (`make test` does).
        _replica["TEST"] = {"MIRROR": "default"}
        DATABASES[f"replica_{_number}"] = _replica
    if len(DATABASES) > 1:
        DATABASE_ROUTERS = ["core.replicas.ReplicaRouter"]
        # A browser that has just written reads the primary for FACTDESK_REPLICA_MAX_LAG seconds (core.replicas).
        MIDDLEWARE.insert(MIDDLEWARE.index("axes.middleware.AxesMiddleware"), "core.replicas.RecentWriteMiddleware")
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": VAR_DIR / "factdesk.sqlite3",
            # Jobs run in-process after commit; a short busy timeout keeps concurrent
            # requests of the one-machine demo from failing on SQLite's writer lock.
            "OPTIONS": {"timeout": 20, "transaction_mode": "IMMEDIATE"},
        }
    }
# SQLite has no INCLUDE columns: there the queue's coverage indexes (factcheck 0031, 0032) are their keys alone.
SILENCED_SYSTEM_CHECKS = ["models.W040"]
# A replica further behind than this many seconds is skipped: its reads go to the primary (core.replicas).
FACTDESK_REPLICA_MAX_LAG = env_seconds("FACTDESK_REPLICA_MAX_LAG", 30.0, zero=True)
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_USER_MODEL = "accounts.User"
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator", "OPTIONS": {"min_length": 12}},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# django-axes checks each login (the site's and the admin's) before Django's own backend does.
# accounts.backends.ModelBackend is Django's, reading the user's organisation (factcheck.Membership) with the user.
AUTHENTICATION_BACKENDS = ["axes.backends.AxesStandaloneBackend", "accounts.backends.ModelBackend"]
AUTH_USER_SELECT_RELATED = ["membership__organisation"]
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "factcheck:home"
LOGOUT_REDIRECT_URL = "accounts:login"

LANGUAGE_CODE = "en"
# Dates read one way everywhere: "30 Nov 2026, 01:09 UTC" (config/formats/en/formats.py).
FORMAT_MODULE_PATH = ["config.formats"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# The demo's pictures, drawn by `seed_demo` (factcheck.demo_media), are served as /static/demo-media/.
DEMO_MEDIA_DIR = VAR_DIR / "demo-media"
STATICFILES_DIRS = [BASE_DIR / "static", ("demo-media", DEMO_MEDIA_DIR)]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise expects it before collectstatic has run
DEMO_MEDIA_DIR.mkdir(parents=True, exist_ok=True)  # a static directory must exist (staticfiles.W004)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

# Sessions live in the database only: signing in and every page keep working while Redis is down
# (a cache in front of them could serve a session that was ended during an outage).
SESSION_ENGINE = "django.contrib.sessions.backends.db"
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
BEHIND_PROXY = env_bool("BEHIND_PROXY", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if BEHIND_PROXY else None
# Behind the TLS proxy: plain HTTP is redirected, and browsers are told to use HTTPS for a year.
SECURE_SSL_REDIRECT = BEHIND_PROXY
SECURE_HSTS_SECONDS = 31_536_000 if BEHIND_PROXY else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = BEHIND_PROXY
# Preloading commits the whole domain to HTTPS for good; on by default behind the proxy, off with SECURE_HSTS_PRELOAD=0.
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", BEHIND_PROXY)
SECURE_REFERRER_POLICY = "same-origin"
# /healthz answers load balancers over plain HTTP inside the network.
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]

# Content Security Policy (django-csp): nothing from elsewhere, and no inline script anywhere.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        # Swagger UI and the admin set a few style attributes; no script can run from them.
        "style-src": ["'self'", "'unsafe-inline'"],
        # Posts' images, from the platform's media hosts only (FACTDESK_MEDIA_HOSTS, set below).
        "img-src": ["'self'", "data:"],
        "font-src": ["'self'"],
        "connect-src": ["'self'"],
        "frame-ancestors": ["'none'"],
        "form-action": ["'self'"],
        "base-uri": ["'self'"],
        "object-src": ["'none'"],
    }
}

# Login lockout (django-axes): 5 failures for one username from one address lock that pair out
# for an hour; staff can unlock from the admin (audited). Attempts are kept in the database.
AXES_FAILURE_LIMIT = 5
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_COOLOFF_TIME = 1  # hours
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "accounts/locked_out.html"
AXES_CLIENT_IP_CALLABLE = "accounts.security.client_ip"
AXES_HANDLER = "axes.handlers.database.AxesDatabaseHandler"
AXES_VERBOSE = False
AXES_ENABLE_ADMIN = False  # accounts.admin has its own: unlocking needs a reason and is audited
# axes' record of each sign-in (AccessLog; and of each failure, were AXES_ENABLE_ACCESS_FAILURE_LOG on) is kept this
# many days; a daily job deletes older ones, and expired sessions (accounts.sign_in_records).
FACTDESK_SIGN_IN_LOG_DAYS = env_int("FACTDESK_SIGN_IN_LOG_DAYS", 90, minimum=1)
# The admin's log of staff's changes (django_admin_log: "Recent actions", each row's "History", with staff's
# free-text messages) is kept this many days, then deleted by the same daily job; the audit log keeps every staff
# decision for good.
FACTDESK_ADMIN_LOG_DAYS = env_int("FACTDESK_ADMIN_LOG_DAYS", 180, minimum=1)
# The client's address, for the lockout and the API's limit on failed tokens (accounts.security.client_ip):
# with N trusted proxies in front (each appending to X-Forwarded-For), the entry the farthest of them wrote;
# with 0 (the default), the connection's own address. A client's own X-Forwarded-For entries never count.
# Behind the proxy (BEHIND_PROXY) one is in front unless said otherwise: with 0 there every client would have
# the proxy's address, and one client's wrong passwords would lock everyone out.
FACTDESK_TRUSTED_PROXIES = env_int("FACTDESK_TRUSTED_PROXIES", 1 if BEHIND_PROXY else 0, minimum=0)
# Failed API authentications (unknown, expired or revoked tokens) from one address: past this, every API
# request from it is a 429 until the window has passed (accounts.api_auth).
API_AUTH_FAILURE_LIMIT = env_rate("API_AUTH_FAILURE_LIMIT", "20/m")

# The API refuses larger bodies with 413 itself; Django's own limit sits just above it.
API_MAX_BODY_BYTES = env_int("API_MAX_BODY_BYTES", 5 * 1024 * 1024, minimum=1)
DATA_UPLOAD_MAX_MEMORY_SIZE = API_MAX_BODY_BYTES + 1024
API_RATE_LIMIT = env_rate("API_RATE_LIMIT", "6000/m")
# Under /api/: a longer URL (path and query) is refused with a JSON 414, larger or more headers
# with a JSON 431. gunicorn's own limits (bin/run) sit above these, so these are what clients see.
API_MAX_URL_BYTES = env_int("API_MAX_URL_BYTES", 8000, minimum=1)
API_MAX_HEADER_BYTES = env_int("API_MAX_HEADER_BYTES", 16 * 1024, minimum=1)
API_MAX_HEADER_FIELDS = env_int("API_MAX_HEADER_FIELDS", 100, minimum=1)

# Jobs: RQ on Redis when REDIS_URL is set, otherwise in-process after commit.
REDIS_URL = os.environ.get("REDIS_URL", "")
# Queues by urgency, each job's queue written once in core.jobs.JOBS; every worker takes them in this
# order (`manage.py jobworker`, core.jobs.QUEUES): decisions, notices, webhook deliveries, bulk work
# (matching, refreshes), and django-rq's `default`, where no Factdesk job goes.
_REDIS_FOR_RQ = REDIS_URL or "redis://127.0.0.1:6379/0"
RQ_QUEUES = {
    "decisions": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 300},
    "notices": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 300},
    "webhooks": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 600},
    "copies": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 600},
    "bulk": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 600},
    "default": {"URL": _REDIS_FOR_RQ, "DEFAULT_TIMEOUT": 300},
}
# core.jobs already waits for the commit (for RQ and in-process alike), so RQ enqueues at once.
# Jobs run inside the worker process (core.worker: a fork per job cost ~200 ms of a ~15 ms decision).
RQ = {"COMMIT_MODE": "auto", "WORKER_CLASS": "core.worker.FactdeskWorker"}
# An idle worker's heartbeat comes every FACTDESK_WORKER_TTL - 15 s (RQ's idle wait, 1 s at the least), and /healthz
# counts only workers heard from within FACTDESK_WORKER_TTL (config/health.py): a dead worker shows within a minute.
# At 0 RQ would take its own 420 s, so /healthz would count no worker for minutes: refused.
FACTDESK_WORKER_TTL = env_int("FACTDESK_WORKER_TTL", 60, minimum=1)
# django-rq's pages are mounted once, at /admin/rq/ behind config/rq_admin.py's guard (the admin index links
# them); not a second time inside the admin (/admin/django_rq/dashboard/), where they would be unguarded.
RQ_SHOW_ADMIN_LINK = False
FACTDESK_JOBS_IN_PROCESS = not REDIS_URL
# A job that finally failed (its retries spent) is kept in Redis this many days, for /admin/rq/, then expires
# (core.jobs.failed_job_ttl): RQ would keep each one's result for good.
FACTDESK_FAILED_JOB_DAYS = env_int("FACTDESK_FAILED_JOB_DAYS", 30, minimum=1)
# The API's rate limits count in the cache: shared by every process through Redis when there is one,
# and in each process's memory while Redis is down (core.resilience.FallbackCache).
CACHES = {
    "default": (
        {
            "BACKEND": "core.resilience.FallbackCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "factdesk",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 0.5},
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}

# Notification e-mails: printed to the console by default (make run); sent over SMTP once
# EMAIL_HOST is set, unless EMAIL_BACKEND names another backend explicitly.
EMAIL_HOST = os.environ.get("EMAIL_HOST") or "localhost"
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1, maximum=65535)
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
# A stuck SMTP server fails the job (RQ retries it) instead of holding a worker until its timeout.
EMAIL_TIMEOUT = env_int("EMAIL_TIMEOUT", 30, minimum=1)
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND") or (
    "django.core.mail.backends.smtp.EmailBackend"
    if os.environ.get("EMAIL_HOST")
    else "django.core.mail.backends.console.EmailBackend"
)
# Django's file backend (EMAIL_BACKEND=django.core.mail.backends.filebased.EmailBackend) writes each e-mail here.
EMAIL_FILE_PATH = os.environ.get("EMAIL_FILE_PATH") or str(VAR_DIR / "mail")
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "factdesk@localhost")
# Password reset links (/accounts/password-reset/, sent with the backend above) work for an hour, until a password is
# saved with them (the pages and the e-mail say so); requests are limited per address and per client
# (accounts.password_reset).
PASSWORD_RESET_TIMEOUT = 3600
# An invitation to set a first password (e-mailed when staff or add_user make an account with an address and no
# password) works this many days, with a token of its own kind (accounts.tokens): it lands unannounced, and an
# hour-long link had mostly run out before a new colleague opened it. The e-mail says until when.
FACTDESK_INVITATION_DAYS = env_int("FACTDESK_INVITATION_DAYS", 7, minimum=1)

# Review rules.
FACTDESK_CLAIM_LEASE_MINUTES = env_int("FACTDESK_CLAIM_LEASE_MINUTES", 30, minimum=1)
# A rating draft nobody typed into for this many days is deleted by a daily job (factcheck.drafts): long past a
# lapsed claim or a night's break, and a draft on a post someone else rated since does not stay for good.
FACTDESK_RATING_DRAFT_DAYS = env_int("FACTDESK_RATING_DRAFT_DAYS", 30, minimum=1)
# Notifications (the portal's and /notifications/ lists, read or not) are deleted this many days after they were made
# by a daily job (moderation.notice_delivery): twice the 6 months within which a decision's notice may be appealed,
# so a notice is there as long as its decision can be appealed and half a year after. The decision's own record
# (statement of reasons, appeal deadline, the appeal's history) is kept for good and shown from there, not from this.
FACTDESK_NOTIFICATION_DAYS = env_int("FACTDESK_NOTIFICATION_DAYS", 365, minimum=1)
# A sent notice e-mail's row (who was sent which e-mail, when) is deleted this many days after it was sent: it is only
# needed while a failed send may be retried; its notifications keep when they were e-mailed.
FACTDESK_NOTICE_EMAIL_DAYS = env_int("FACTDESK_NOTICE_EMAIL_DAYS", 30, minimum=1)
FACTDESK_FLAG_SOURCE_WEIGHTS = {"user_report": 1.0, "classifier": 2.0, "partner": 3.0, "trusted_flagger": 5.0}
# A rating whose decision job has not run after this long is re-driven by the reconciler.
FACTDESK_RECONCILE_AFTER_SECONDS = env_int("FACTDESK_RECONCILE_AFTER_SECONDS", 30, minimum=1)

# Near-duplicates (factcheck.matching): a copy scoring at least AUTO inherits its claim's rating; one
# between SUGGEST and AUTO is offered to a fact-checker. Chosen by measurement: bench/REPORT.md.
# Off: posts are stored without signatures and matched by nobody (a bulk backfill, say); back on,
# the reconciler signs and matches what arrived meanwhile.
FACTDESK_MATCHING = env_bool("FACTDESK_MATCHING", True)
FACTDESK_MATCH_AUTO = env_share("FACTDESK_MATCH_AUTO", "0.65")
FACTDESK_MATCH_SUGGEST = env_share("FACTDESK_MATCH_SUGGEST", "0.4")
if FACTDESK_MATCH_SUGGEST > FACTDESK_MATCH_AUTO:
    raise ImproperlyConfigured(
        f"FACTDESK_MATCH_SUGGEST ({FACTDESK_MATCH_SUGGEST}) must not be above "
        f"FACTDESK_MATCH_AUTO ({FACTDESK_MATCH_AUTO})."
    )
# Media (PRODUCT.md, "Media: images and video"): the hosts the platform serves posts' images from, the only ones
# the pages load images from (the CSP's img-src names them, https only); and how many of PDQ's 256 bits two
# images may differ by and still match (31, HMA's). The index finds every pair within it up to 47
# (factcheck.models_media: 16 chunks, each probed with its neighbours of up to distance // 16 bits).
FACTDESK_MEDIA_HOSTS = [host.lower() for host in env_list("FACTDESK_MEDIA_HOSTS", "")]
for _host in FACTDESK_MEDIA_HOSTS:
    # A host name of two labels or more (a wildcard stands for one label in front of at least two), and a port.
    _label = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
    if not re.fullmatch(rf"(?:\*\.)?{_label}(?:\.{_label})+(?::(?:[1-9]\d{{0,4}}))?", _host):
        raise ImproperlyConfigured(
            f"FACTDESK_MEDIA_HOSTS must list host names (media.example.com, *.cdn.example.com), not {_host!r}."
        )
FACTDESK_MEDIA_MATCH_DISTANCE = env_int("FACTDESK_MEDIA_MATCH_DISTANCE", 31, minimum=0, maximum=47)
# Same claim, other words, other languages (factcheck.semantic, factcheck.matching.semantic): each post's text
# gets a multilingual sentence embedding after its ingest commits, and a post whose embedding is at least
# FACTDESK_SEMANTIC_SUGGEST (cosine) from a claim's is suggested as its copy, never matched automatically.
# The threshold was chosen by measurement on the labelled pairs of bench/semantic_pairs.tsv:
# docs/performance.md, "Semantic matching". Off: no embeddings are made; back on, the reconciler makes them.
FACTDESK_SEMANTIC = env_bool("FACTDESK_SEMANTIC", True)
FACTDESK_SEMANTIC_SUGGEST = env_share("FACTDESK_SEMANTIC_SUGGEST", "0.7")
# ISO 3166 codes of EU and EEA countries only (the Transparency Database takes no others; checked
# by moderation.checks when the project starts).
FACTDESK_TERRITORIAL_SCOPE = [code.upper() for code in env_list(
    "FACTDESK_TERRITORIAL_SCOPE",
    "AT,BE,BG,CY,CZ,DE,DK,EE,ES,FI,FR,GR,HR,HU,IE,IT,LT,LU,LV,MT,NL,PL,PT,RO,SE,SI,SK,IS,LI,NO",
)]
# The DSA Transparency Database API token (`manage.py submit_statements` sends it as Bearer).
FACTDESK_DSA_TOKEN = os.environ.get("FACTDESK_DSA_TOKEN", "")
# Where the public site is reached: absolute links in ClaimReview (`/claims/{id}/`), e-mails and exports are
# built from it (core.public_site, which drops a trailing slash), never from a request's Host header.
FACTDESK_PUBLIC_URL = env_site_url("FACTDESK_PUBLIC_URL", "http://127.0.0.1:8000")
# Webhooks: endpoints on loopback, private or link-local addresses, and plain http://, are refused
# unless this is on (tests, receivers inside an on-premise network). Checked at registration and at
# every delivery.
FACTDESK_WEBHOOKS_ALLOW_PRIVATE = env_bool("FACTDESK_WEBHOOKS_ALLOW_PRIVATE", False)
# Seconds a receiver has to answer a delivery (connect, send, answer); then it is retried.
FACTDESK_WEBHOOK_TIMEOUT = env_seconds("FACTDESK_WEBHOOK_TIMEOUT", 5.0, maximum=60)
# Attempts in flight to one endpoint at once: due retries of a failing endpoint (different posts; one
# post's deliveries always go one at a time, in order) are POSTed this many together (webhooks.delivery).
FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY = env_int("FACTDESK_WEBHOOK_ENDPOINT_CONCURRENCY", 4, minimum=1, maximum=32)
# Days webhook events, deliveries and attempts are kept; then their month goes whole, once none of it is
# pending (webhooks.retention; PostgreSQL only, SQLite keeps everything).
FACTDESK_WEBHOOK_RETENTION_DAYS = env_int("FACTDESK_WEBHOOK_RETENTION_DAYS", 30, minimum=1)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    # A reset link's token in a log line ("Internal Server Error: /accounts/reset/...") and an e-mail address (RQ's
    # line of a job given one) are written masked, by every handler: each one has the filter (config.log_masking).
    "filters": {"secrets": {"()": "config.log_masking.HideSecrets"}},
    "formatters": {"django.server": {"()": "django.utils.log.ServerFormatter", "format": "[{server_time}] {message}",
                                     "style": "{"}},
    "handlers": {
        "console": {"class": "logging.StreamHandler", "filters": ["secrets"]},
        # runserver's line of each request, as Django's default writes it, but masked: it held the whole reset link.
        "django.server": {"class": "logging.StreamHandler", "formatter": "django.server", "filters": ["secrets"]},
    },
    "root": {"handlers": ["console"], "level": env_log_level("LOG_LEVEL", "INFO")},
    "loggers": {
        # Django's default handlers go (no handlers: its records reach the root's console): with DEBUG on, its own
        # console handler wrote every django.* line a second time, unmasked; its mail_admins handler sends nothing,
        # ADMINS being empty. At DEBUG off, what is written is unchanged.
        "django": {"handlers": []},
        "django.server": {"handlers": ["django.server"], "level": "INFO", "propagate": False},
        # Never SQL, whatever LOG_LEVEL says: its parameters are flags' reasons, addresses, token hashes.
        "django.db.backends": {"level": "WARNING"},
    },
}

# The page's CSP lets images come from the platform's media hosts, over https only.
CONTENT_SECURITY_POLICY["DIRECTIVES"]["img-src"] += [f"https://{host}" for host in FACTDESK_MEDIA_HOSTS]
