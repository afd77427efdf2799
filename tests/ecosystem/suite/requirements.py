"""What the adaptive dialect supports, for SQLAlchemy's compliance suite."""

from __future__ import annotations

from sqlalchemy.testing import exclusions
from sqlalchemy.testing.requirements import SuiteRequirements


class Requirements(SuiteRequirements):
    @property
    def returning(self) -> exclusions.compound:
        return exclusions.open()
