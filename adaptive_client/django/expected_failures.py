"""Django's own test suite through this backend: the tests it does not pass, by name,
with the reason (tests/ecosystem/django_suite.py runs the suite's named app modules here
and on Django's PostgreSQL backend, the baseline, which passes all of them).

Each reason is what the client refuses or computes differently, in its own words: what
cannot be evaluated over ciphertexts (or would put plaintext on the server), and the
client's gaps ("client gap:", "client engine:" -- SQL the client engine does not finish
yet).  ``EXPECTED`` run as expected failures: one that passes counts as a failure of the
run (an unexpected success), so the list stays exact.  ``SKIPPED`` name test classes whose
fixtures (``setUpTestData``) the client refuses: none of their tests can run.
"""

from __future__ import annotations

EXPECTED: dict[str, tuple[str, ...]] = {}

SKIPPED: dict[str, tuple[str, ...]] = {}
