"""Compilation: a pure function of (statement, catalog snapshot, session settings) to a plan
and its needs.  Never peels, builds or re-keys."""
