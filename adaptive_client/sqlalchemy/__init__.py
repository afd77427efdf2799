"""SQLAlchemy dialects for adaptive_client.

``create_engine("postgresql+adaptive://user@host/db?master_key_file=/path/to/key")``
(sync) and ``create_async_engine("postgresql+adaptive_async://...")`` (asyncio): the
psycopg dialect's SQL, run through the client; reflection from the sealed catalog.
Registered as SQLAlchemy dialects by the package's entry points; importing this module
registers them too (for a checkout that is not installed).
"""

from __future__ import annotations

from sqlalchemy.dialects import registry

registry.register("postgresql.adaptive", "adaptive_client.sqlalchemy.base", "AdaptiveDialect")
registry.register(
    "postgresql.adaptive_async", "adaptive_client.sqlalchemy.asyncio", "AdaptiveAsyncDialect"
)

__all__: list[str] = []
