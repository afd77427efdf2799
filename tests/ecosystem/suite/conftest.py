"""SQLAlchemy's test plugin, set up for the adaptive dialect (this directory is its own
pytest root; the project's test run starts it in a subprocess)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

import adaptive_client.sqlalchemy  # noqa: F401  (registers the dialects)

pytest.register_assert_rewrite("sqlalchemy.testing.assertions")

from sqlalchemy.testing.plugin.pytestplugin import *  # noqa: E402,F403
