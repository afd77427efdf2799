"""Test databases: created as Django's PostgreSQL backend creates them (through psycopg
on the maintenance database), then initialised for the client -- the metadata schema and
the stored procedures the rewritten statements call (:func:`install`).  A clone (the
parallel test runner's) is a copy of an initialised database, with its sealed catalog."""

from __future__ import annotations

from typing import Any

import psycopg
from django.db.backends.postgresql import base as pg_base
from django.db.backends.postgresql import creation as pg_creation

from ..catalog.install import install

#: connection parameters of Django's PostgreSQL backend that are psycopg options of its own
_DJANGO_ONLY = ("context", "cursor_factory", "prepare_threshold")


class DatabaseCreation(pg_creation.DatabaseCreation):
    def _create_test_db(self, verbosity: int, autoclobber: bool, keepdb: bool = False) -> str:
        name: str = super()._create_test_db(verbosity, autoclobber, keepdb)
        settings = {**self.connection.plain_settings(), "NAME": name}
        params: dict[str, Any] = pg_base.DatabaseWrapper(settings).get_connection_params()
        for key in _DJANGO_ONLY:
            params.pop(key, None)
        with psycopg.connect(**params) as conn:
            install(conn)
        return name
