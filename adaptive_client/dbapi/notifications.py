"""Other clients' peels and DDL, as notifications on the control session.

Every change of the catalog bumps its epoch and notifies ``adaptive_epoch``; a
connection listens on its control session and, between transactions, reads the catalog
again once something arrived (:meth:`EpochListener.arrived`).

Behind a transaction pooler a ``LISTEN`` holds on whichever server session ran it, and
the notifications go there, not to this client (pooling.py): there the connection reads
the epoch itself before each transaction instead (:class:`EpochPoller`), one round trip
that a notification saves.
"""

from __future__ import annotations

from typing import Any

import psycopg

from ..catalog.metadata import Catalog

CHANNEL = "adaptive_epoch"


class EpochListener:
    """Listens for catalog changes on an autocommit session (the control one)."""

    def __init__(self, control: psycopg.Connection[Any]) -> None:
        self.control = control
        self._notified = False
        control.add_notify_handler(self._on_notify)
        control.execute(f"LISTEN {CHANNEL}")

    def _on_notify(self, _: psycopg.Notify) -> None:
        self._notified = True

    def arrived(self) -> bool:
        """Whether a notification arrived since the last call (which consumes it).

        The control session's socket is read without waiting, through libpq: psycopg's
        ``notifies(timeout=0)`` polls the socket through its wait loop, which was about
        a fifth of what the client adds to a point query.  Notifications that arrive
        while the control session runs a query reach the handler through psycopg instead."""
        pgconn = self.control.pgconn
        with self.control.lock:
            pgconn.consume_input()  # never blocks: libpq's socket is non-blocking
            while pgconn.notifies() is not None:
                self._notified = True
        if self._notified:
            self._notified = False
            return True
        return False


class EpochPoller:
    """Reads the catalog's epoch on an autocommit session (the control one) each time it
    is asked, for a session that cannot listen."""

    def __init__(self, control: psycopg.Connection[Any], catalog: Catalog) -> None:
        self.control = control
        self.catalog = catalog

    def arrived(self) -> bool:
        """Whether the catalog's epoch on the server is not the one this client read."""
        row = self.control.execute("SELECT value FROM adaptive.epoch WHERE id = 1").fetchone()
        return row is not None and row[0] != self.catalog.epoch


def watch(
    control: psycopg.Connection[Any], catalog: Catalog, listen: bool
) -> EpochListener | EpochPoller:
    """What tells the connection of ``control`` that other clients changed the catalog:
    notifications where the session can ``listen``, else the epoch read each time."""
    return EpochListener(control) if listen else EpochPoller(control, catalog)


__all__ = ["CHANNEL", "EpochListener", "EpochPoller", "watch"]
