"""Settings of the example shop.  The database comes from the environment: with
``SHOP_MASTER_KEY_FILE`` set it is an encrypted one through ``adaptive_client.django``,
without it plain PostgreSQL through Django's own backend; nothing else differs."""

import os

SECRET_KEY = os.environ.get("SHOP_SECRET_KEY", "example-only-not-secret")
DEBUG = True
ALLOWED_HOSTS = ["*"]
USE_TZ = True
TIME_ZONE = "UTC"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
ROOT_URLCONF = "project.urls"

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "shop",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ]
        },
    }
]
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]

_key_file = os.environ.get("SHOP_MASTER_KEY_FILE")
DATABASES = {
    "default": {
        "ENGINE": "adaptive_client.django" if _key_file else "django.db.backends.postgresql",
        "NAME": os.environ.get("SHOP_DB_NAME", "shop"),
        "HOST": os.environ.get("SHOP_DB_HOST", ""),
        "PORT": os.environ.get("SHOP_DB_PORT", ""),
        "USER": os.environ.get("SHOP_DB_USER", ""),
        "PASSWORD": os.environ.get("SHOP_DB_PASSWORD", ""),
        "OPTIONS": {"key_file": _key_file} if _key_file else {},
    }
}
