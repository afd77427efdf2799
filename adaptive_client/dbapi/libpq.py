"""The libpq functions the compiled row opener reads a server result with.

A large result of ciphertexts is opened by the compiled layer straight from libpq's
``PGresult`` (native/rnd/src/open.rs ``RowOpener.open_result``): no Python ``bytes`` is
made for a stored value, which was as much of a row's cost as its decryption.  It reads
the result through ``PQgetvalue``, ``PQgetlength`` and ``PQgetisnull`` of the very libpq
that made it -- psycopg's: the copy its binary wheel bundles, or the system's for its C
implementation --, found among the libraries the process has loaded (never loaded
again: another copy's functions on this copy's result would be undefined).  Where it
cannot be found (psycopg's pure-Python implementation, a system without
``/proc/self/maps``), :func:`result_functions` is None and results are loaded by psycopg.
"""

from __future__ import annotations

import ctypes
import functools
import os
from pathlib import Path

import psycopg


@functools.cache
def result_functions() -> tuple[int, int, int] | None:
    """(PQgetvalue, PQgetlength, PQgetisnull): their addresses in psycopg's libpq."""
    path = _loaded_libpq(psycopg.pq.__impl__)
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        found = tuple(
            ctypes.cast(getattr(lib, name), ctypes.c_void_p).value
            for name in ("PQgetvalue", "PQgetlength", "PQgetisnull")
        )
    except (OSError, AttributeError):
        return None
    if not all(found):
        return None
    return found[0] or 0, found[1] or 0, found[2] or 0


def _loaded_libpq(impl: str) -> str | None:
    """The path of the one libpq psycopg's ``impl`` runs on, among those loaded."""
    if impl not in ("binary", "c"):
        return None
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        return None
    paths = {
        line.split(None, 5)[5].strip()
        for line in maps.splitlines()
        if line.count(" ") >= 5 and "/libpq" in line
    }
    if impl == "binary":
        # (the wheel's own copy, in the directory beside its package)
        paths = {p for p in paths if "psycopg_binary" in p}
    else:
        paths = {p for p in paths if Path(p).name.startswith("libpq.so")}
    return next(iter(paths)) if len(paths) == 1 else None
