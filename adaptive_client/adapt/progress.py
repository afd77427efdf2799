"""Progress of an adaptation, reported through logging once it has taken a second.

An onion build or a precomputed column's fill on a large table takes minutes (every row
read, decrypted, computed, encrypted and written again); a DBA watching a first query
should see what it is doing.  :class:`Progress` logs each step of one adaptation -- the
table, what is built, the rows done -- at INFO on the ``adaptive_client.adapt`` logger,
from the first step that finds a second gone, and the end with its duration; quicker
adaptations log nothing above DEBUG.  Only plain names the application gave appear (the
logs are the client's, never the server's).
"""

from __future__ import annotations

import logging
import time

logger = logging.getLogger("adaptive_client.adapt")

REPORT_AFTER_S = 1.0


class Progress:
    """One adaptation's steps: ``what`` (e.g. ``lineitem: build of 3 onions``)."""

    def __init__(self, what: str, rows: int | None = None) -> None:
        self.what = what
        self.rows = rows
        self.started = time.monotonic()
        logger.debug("%s: started", what)

    def step(self, done: str, rows: int | None = None) -> None:
        """``done``: the step just finished (``read and decrypted``), over ``rows``."""
        if rows is not None:
            self.rows = rows
        elapsed = time.monotonic() - self.started
        level = logging.INFO if elapsed >= REPORT_AFTER_S else logging.DEBUG
        of = f" ({self.rows} rows)" if self.rows is not None else ""
        logger.log(level, "%s: %s%s, %.1f s", self.what, done, of, elapsed)

    def end(self) -> None:
        self.step("done")


__all__ = ["REPORT_AFTER_S", "Progress"]
