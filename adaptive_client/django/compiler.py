"""The PostgreSQL backend's SQL compilers, except that a bulk insert is the multi-row
``INSERT ... VALUES`` of Django's other backends: the PostgreSQL backend's ``INSERT ...
SELECT * FROM UNNEST(%s::type[], ...)`` sends each column's values as one array
parameter, and the client encrypts values, not arrays of them, for their onions."""

from __future__ import annotations

from django.db.backends.postgresql.compiler import SQLCompiler
from django.db.models.sql.compiler import (
    SQLAggregateCompiler,
    SQLDeleteCompiler,
    SQLInsertCompiler,
    SQLUpdateCompiler,
)

__all__ = [
    "SQLAggregateCompiler",
    "SQLCompiler",
    "SQLDeleteCompiler",
    "SQLInsertCompiler",
    "SQLUpdateCompiler",
]
