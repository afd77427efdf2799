"""What postgresql+adaptive:// supports, for SQLAlchemy's compliance suite.

Each requirement closed here skips the suite's tests of a feature the encrypted database
does not have, with the reason; what it has is left open and must pass.  The tests of
open features that still cannot pass are listed, with why, in conftest.py.
"""

from __future__ import annotations

import sqlalchemy
from sqlalchemy.testing import exclusions
from sqlalchemy.testing.requirements import SuiteRequirements

_NO_SCHEMAS = "the encrypted database has one schema: tables live in the sealed catalog"
_NO_TEMP = "temporary tables and views are not kept in the sealed catalog"
_NO_COMMENTS = "COMMENT ON would store plaintext next to the ciphertexts"
_NO_TYPE = "the column type has no encoding in the client (encodings.py)"


def _closed(reason: str) -> exclusions.compound:
    return exclusions.skip_if(lambda config: True, reason)


class Requirements(SuiteRequirements):
    # -- what the client has --------------------------------------------------------------
    @property
    def returning(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def insert_executemany_returning(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def insert_returning(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def update_returning(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def delete_returning(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def server_side_cursors(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def foreign_key_constraint_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def unique_constraint_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def index_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def primary_key_constraint_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def table_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def ctes(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def autoincrement_insert(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def datetime_microseconds(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def precision_numerics_general(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def views(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def view_reflection(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def supports_distinct_on(self) -> exclusions.compound:
        return exclusions.open()

    # the types with an encoding (encodings.py) beyond the suite's defaults
    @property
    def uuid_data_type(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def time(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def time_microseconds(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def datetime_timezone(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def binary_comparisons(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def binary_literals(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def sequences(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def time_timezone(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def json_type(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def json_deserializer_binary(self) -> exclusions.compound:
        return exclusions.open()  # (psycopg's loaders pass the bytes, as here)

    @property
    def array_type(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def enums(self) -> exclusions.compound:
        return exclusions.open()

    # -- what it does not ---------------------------------------------------------------------
    @property
    def schemas(self) -> exclusions.compound:
        return _closed(_NO_SCHEMAS)

    @property
    def cross_schema_fk_reflection(self) -> exclusions.compound:
        return _closed(_NO_SCHEMAS)

    @property
    def implicit_default_schema(self) -> exclusions.compound:
        return _closed(_NO_SCHEMAS)

    @property
    def schema_create_delete(self) -> exclusions.compound:
        return _closed(_NO_SCHEMAS)

    @property
    def temp_table_reflection(self) -> exclusions.compound:
        return _closed(_NO_TEMP)

    @property
    def temp_table_names(self) -> exclusions.compound:
        return _closed(_NO_TEMP)

    @property
    def temporary_tables(self) -> exclusions.compound:
        return _closed(_NO_TEMP)

    @property
    def temporary_views(self) -> exclusions.compound:
        return _closed(_NO_TEMP)

    @property
    def comment_reflection(self) -> exclusions.compound:
        return _closed(_NO_COMMENTS)

    @property
    def constraint_comment_reflection(self) -> exclusions.compound:
        return _closed(_NO_COMMENTS)

    @property
    def comment_reflection_full_unicode(self) -> exclusions.compound:
        return _closed(_NO_COMMENTS)

    @property
    def check_constraint_reflection(self) -> exclusions.compound:
        return _closed(
            "CHECK constraints are reflected as the catalog records them, not as pg_get_constraintdef prints them"
        )

    @property
    def index_ddl_if_exists(self) -> exclusions.compound:
        return _closed("CREATE INDEX IF NOT EXISTS is not supported by the client's DDL")

    @property
    def table_ddl_if_exists(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def materialized_views(self) -> exclusions.compound:
        return _closed("materialized views would store their rows outside the onions")

    @property
    def computed_columns(self) -> exclusions.compound:
        # (stored generated columns, which the client computes on every write; under
        # SQLAlchemy 2.1 the PostgreSQL dialect warns, as an error here, on the suite's
        # Computed() without persisted= for a server before PostgreSQL 18 -- with psycopg
        # alike)
        if tuple(int(p) for p in sqlalchemy.__version__.split(".")[:2]) >= (2, 1):
            return _closed("SQLAlchemy 2.1 warns on Computed() without persisted= before PG 18")
        return exclusions.open()

    @property
    def computed_columns_stored(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def computed_columns_default_persisted(self) -> exclusions.compound:
        return exclusions.open()  # (PostgreSQL's generated columns are stored)

    @property
    def computed_columns_reflect_persisted(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def identity_columns_standard(self) -> exclusions.compound:
        return exclusions.open()

    @property
    def two_phase_transactions(self) -> exclusions.compound:
        return _closed("prepared transactions span the client's two sessions")
