"""Settings of the example project, read from the environment.

``DATABASE_URL`` is Django's own database (``postgresql://user@host:port/name``;
``sqlite:///path`` to try it without a server). ``AGENT_SMITH_SESSIONS`` is
where the agent keeps conversations: a SQLite file, or a ``postgresql://``
URL (default: ``conversations.db`` beside this project). ``DJANGO_SECRET_KEY``
signs the session cookies; without it a key is made once in ``.secret_key``.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path
from urllib.parse import unquote, urlsplit

BASE_DIR = Path(__file__).resolve().parent.parent


def database(url: str) -> dict[str, str]:
    """Django's DATABASES entry for a ``postgresql://`` or ``sqlite:///`` URL."""
    parts = urlsplit(url)
    if parts.scheme == "sqlite":
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": unquote(parts.path[1:])}
    if parts.scheme not in ("postgresql", "postgres"):
        raise ValueError(f"DATABASE_URL must be postgresql:// or sqlite:///, not {url!r}")
    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": unquote(parts.path.lstrip("/")),
        "USER": unquote(parts.username or ""),
        "PASSWORD": unquote(parts.password or ""),
        "HOST": parts.hostname or "",
        "PORT": str(parts.port or ""),
    }


def secret_key(path: Path) -> str:
    """A key made once and kept in ``path``, so every worker process signs alike."""
    if not path.exists():
        made = path.with_name(f"{path.name}.{os.getpid()}")
        made.write_text(secrets.token_hex(32))
        try:
            os.link(made, path)  # whole or not at all: the first process's key wins
        except FileExistsError:
            pass
        finally:
            made.unlink()
    return path.read_text()


SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or secret_key(BASE_DIR / ".secret_key")
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost", "testserver"]
ROOT_URLCONF = "agentsite.urls"
WSGI_APPLICATION = "agentsite.wsgi.application"
DATABASES = {
    "default": database(os.environ.get("DATABASE_URL", "postgresql://127.0.0.1/agentsite"))
}
INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "agentsite",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
LOGIN_URL = "/login/"
LOGIN_REDIRECT_URL = "/"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USE_TZ = True
TIME_ZONE = "UTC"

AGENT_SMITH_SESSIONS = os.environ.get("AGENT_SMITH_SESSIONS") or str(BASE_DIR / "conversations.db")
LLAMA_SERVER_URL = os.environ.get("LLAMA_SERVER_URL", "http://127.0.0.1:8080")
