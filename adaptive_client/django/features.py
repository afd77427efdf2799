"""What Django may ask of an encrypted database: the PostgreSQL backend's features, less
what the client refuses."""

from __future__ import annotations

from django.db.backends.postgresql import features as pg_features
from django.utils.functional import cached_property

from . import expected_failures


class DatabaseFeatures(pg_features.DatabaseFeatures):
    # COMMENT ON would put the application's words in the clear next to the ciphertexts
    supports_comments = False
    supports_comments_inline = False
    # the client creates databases by CREATE DATABASE and initialises them: a clone made
    # from a template is a copy of the sealed catalog, key and all
    can_clone_databases = True
    # foreign keys are checked at once: the client declares no DEFERRABLE constraint
    can_defer_constraint_checks = False
    supports_deferrable_unique_constraints = False
    # statements and parameters are sent apart, but the client inlines what the server
    # must see as one value (Django's server-side binding flags are about psycopg's
    # prepared statements)
    uses_server_side_binding = False
    # bulk_update's CASE WHEN pk = %s THEN %s ... END takes its type from the column it
    # is assigned to (the client encrypts each value for it); a CAST around the CASE
    # would ask the client engine to cast untyped parameters
    requires_casted_case_in_updates = False
    # GROUP BY every selected column, not only the primary key: PostgreSQL infers that
    # the other columns depend on it; over ciphertexts the client groups by what the
    # statement names
    allows_group_by_selected_pks = False
    # GeneratedField(db_persist=True): the client computes the column on every write
    supports_stored_generated_columns = True

    # Django's own test suite: what the backend does not pass, by name, with the reason
    # (expected_failures.py); Django's runner marks them when it runs its suite
    @cached_property
    def django_test_expected_failures(self) -> set[str]:
        found: set[str] = set(super().django_test_expected_failures)
        for tests in expected_failures.EXPECTED.values():
            found.update(tests)
        return found

    @cached_property
    def django_test_skips(self) -> dict[str, set[str]]:
        skips: dict[str, set[str]] = dict(super().django_test_skips)
        for reason, tests in expected_failures.SKIPPED.items():
            skips.setdefault(reason, set()).update(tests)
        return skips
