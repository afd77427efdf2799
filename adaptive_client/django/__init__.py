"""The Django database backend for adaptive_client.

    DATABASES = {
        "default": {
            "ENGINE": "adaptive_client.django",
            "NAME": "app", "HOST": "db.example", "USER": "app",
            "OPTIONS": {"key_file": "/etc/app/master.key"},
        }
    }

Django's PostgreSQL backend (psycopg 3) over an adaptive connection: the ORM's SQL is
the SQL Django sends to PostgreSQL, rewritten by the client like any application's.
``OPTIONS`` takes, besides libpq's parameters: ``key_file`` (a path to the master key,
hex) or ``master_key`` (hex, bytes or a :class:`~adaptive_client.MasterKey`; without
either, ``ADAPTIVE_MASTER_KEY``), ``config`` (an onion_config TOML path or dict) and
``peel`` (server / client / off).  Introspection (migrations' constraint lookups, the test
runner's flush, ``inspectdb``) reads the sealed catalog, in the application's names and
declared types; what the client refuses is switched off in the features
(:mod:`adaptive_client.django.features`).  The database must be initialised for the
client (``adaptive-db init``); a test database Django creates is initialised by the
backend.
"""
