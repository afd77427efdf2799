"""The parts of a session a DDL statement runs with, passed as one value.

CREATE TABLE, ALTER TABLE and the dispatch of DDL (ddl.py) all need the same four: the
server connection the statement's transaction runs on, the sealed catalog it changes,
the onion configuration new columns follow, and the session's runtime (its sequence
blocks, restarted when a sequence is made or reset).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg

from ..catalog.config import Config
from ..catalog.defaults import Runtime
from ..catalog.metadata import Catalog


@dataclass(frozen=True)
class DdlContext:
    """One session's connection, catalog, configuration and runtime, as DDL uses them."""

    conn: psycopg.Connection[Any]
    catalog: Catalog
    config: Config
    runtime: Runtime


__all__ = ["DdlContext"]
