"""Install the metadata schema and stored procedures into a database (idempotent).

The scripts live at the top of the repository (``sql/``), the database's side of the
project; a wheel carries them inside the package (``adaptive_client/sql``, found with
:mod:`importlib.resources`), a checkout or an editable install reads them where they are:
``metadata_schema.sql`` first, then every ``udf/*.sql`` in name order, all in one
transaction: a failure leaves the database as it was.  Every script uses ``IF NOT EXISTS``
or ``CREATE OR REPLACE``, so installing again (e.g. after an upgrade) is safe.

Two kinds of UDFs:

* plain SQL, which any role owning the database may create: the Paillier product behind
  ``SUM``/``AVG`` (``adaptive.hom_sum``) and the ``MIN``/``MAX`` aggregates over OPE
  ciphertexts (``adaptive.min``/``adaptive.max``) -- rewritten queries call these;
* the ``adaptive.ore`` type of Ord onions at ORE, its operators and B-tree operator class
  (``udf/26_ore.sql``): a base type and an operator class take a superuser; elsewhere
  the script is skipped (its comparison functions are plain PL/pgSQL, but a column
  needs the type to be ordered by them) and Ord onions stay at OPE;
* PL/Python (``plpython3u``, untrusted: only a superuser may create such functions): the
  server-side peel ``adaptive.peel_layer`` and its per-row ``adaptive.rnd_decrypt``.  Only
  the ``server`` peel mode calls them; no rewritten query does.

On hosted PostgreSQL the database owner is not a superuser and ``plpython3u`` is refused.
The installation then skips the PL/Python scripts, installs everything else, and records
``client`` as the database's default peel mode (``adaptive.settings``), which
:func:`adaptive_client.connect` picks up when neither its ``peel`` argument nor the
configuration names a mode.  ``pgcrypto`` (a trusted extension since PostgreSQL 13) is
created where it may be; only the server-side peel uses it.
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any, Protocol

import psycopg
from psycopg import sql

from ..errors import AdaptiveError, ConfigError, PeelModeUnavailable
from .config import PEEL_MODES

#: advisory lock serializing concurrent installs (CREATE EXTENSION / CREATE OR REPLACE race)
_LOCK_SQL = "SELECT pg_advisory_xact_lock(hashtext('adaptive-client install'))"

#: the database's default peel mode, in the clear (the server can see which mode peels)
PEEL_SETTING = "peel"

#: SQLSTATEs meaning "this role may not use / the server does not have PL/Python":
#: insufficient_privilege, undefined_file (no control file: the package is missing),
#: undefined_object (no such language), feature_not_supported
_NO_PLPYTHON = frozenset({"42501", "58P01", "42704", "0A000"})


#: is the server-side peel installed (now, or by a superuser's earlier installation)?
#: The one-column ``peel_layer`` and the PL/Python function that does the work: a restore
#: by a role that may not use PL/Python (pg_restore --no-owner on hosted PostgreSQL)
#: creates ``peel_layer``, a SQL wrapper (function bodies are not checked then), but not
#: the ``peel_layers`` it calls.  (An installation of before the wrapper has
#: ``peel_layer`` itself in PL/Python.)
_PROC = (
    "SELECT 1 FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace "
    "JOIN pg_language l ON l.oid = p.prolang WHERE n.nspname = 'adaptive' AND "
)
_HAS_PEEL_SQL = (
    f"SELECT EXISTS ({_PROC}p.proname = 'peel_layer') AND EXISTS ({_PROC}"
    "p.proname IN ('peel_layers', 'peel_layer') AND l.lanname = 'plpython3u')"
)


class InstallError(AdaptiveError):
    """The metadata schema or the stored procedures cannot be installed."""


class Script(Protocol):
    """A script to run: a packaged resource or, in tests, a path."""

    @property
    def name(self) -> str: ...

    def read_text(self, encoding: str | None = None) -> str: ...


@dataclass
class InstallReport:
    """What :func:`install_database` did."""

    scripts: list[str] = field(default_factory=list)  #: scripts run, in order
    skipped: list[str] = field(default_factory=list)  #: PL/Python scripts not installed
    peel_default: str = "server"  #: the database's recorded default peel mode
    plpython: str | None = None  #: why PL/Python is unavailable (None: it is available)
    pgcrypto: str | None = None  #: why pgcrypto is unavailable (None: it is available)
    server_peel: bool = False  #: is adaptive.peel_layer installed?
    ore: str | None = None  #: why the ORE type is unavailable (None: it is installed)

    def summary(self) -> str:
        """One line for the DBA: what peels will do on this database."""
        ore = (
            ""
            if self.ore is None
            else (f"; the ORE type needs a superuser ({self.ore}): Ord onions stay at OPE")
        )
        if self.plpython is None:
            return f"peel mode: {self.peel_default} (the database's default){ore}"
        if self.server_peel:
            skipped = "the server-side peel functions installed earlier were left as they are"
        else:
            skipped = (
                f"the server-side peel functions ({', '.join(self.skipped) or 'none'}) were skipped"
            )
        who = {
            "client": "clients strip layers themselves",
            "server": "peels run in the database",
            "off": "no layer is peeled",
        }[self.peel_default]
        crypto = "" if self.pgcrypto is None else f"; pgcrypto was refused too ({self.pgcrypto})"
        crypto += ore
        return (
            f"peel mode: {self.peel_default}, recorded as the database's default -- PL/Python "
            f"is not available to this role ({self.plpython}), so {skipped} and {who}{crypto}"
        )


# the repository's sql/, read in a checkout or an editable install
CHECKOUT_SQL = Path(__file__).resolve().parents[2] / "sql"


def sql_dir() -> Traversable:
    """The ``sql`` directory (``metadata_schema.sql`` and ``udf/*.sql``): the package's copy
    in a wheel, else the checkout's top-level ``sql/``."""
    packaged = importlib.resources.files("adaptive_client") / "sql"
    if (packaged / "metadata_schema.sql").is_file():
        return packaged
    if (CHECKOUT_SQL / "metadata_schema.sql").is_file():
        return CHECKOUT_SQL
    raise InstallError(
        "the SQL scripts (sql/metadata_schema.sql) are missing from this installation of "
        "adaptive-client; reinstall it (pip install --force-reinstall adaptive-client)"
    )


def install_files() -> list[Traversable]:
    """The scripts ``install`` runs, in order."""
    root = sql_dir()
    udfs = sorted(
        (f for f in (root / "udf").iterdir() if f.name.endswith(".sql")), key=lambda f: f.name
    )
    return [root / "metadata_schema.sql", *udfs]


def _needs_plpython(text: str) -> bool:
    return re.search(r"\bLANGUAGE\s+plpython3u\b", text, re.IGNORECASE) is not None


def _needs_superuser(text: str) -> bool:
    """A script that makes a base type (``LANGUAGE internal`` functions: 26_ore.sql)."""
    return re.search(r"\bLANGUAGE\s+internal\b", text, re.IGNORECASE) is not None


def _first_line(exc: psycopg.Error) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def _try(conn: psycopg.Connection[Any], statement: str | bytes) -> psycopg.Error | None:
    """Run one statement in a savepoint; the error it raised, if any (rolled back)."""
    try:
        with conn.transaction():
            conn.execute(statement)
    except psycopg.Error as exc:
        return exc
    return None


def install_database(
    conn: psycopg.Connection[Any],
    *,
    peel: str | None = None,
    files: Sequence[Script] | None = None,
) -> InstallReport:
    """Create the extensions, the ``adaptive`` schema and the UDFs, in one transaction.

    Works on a connection in autocommit mode or not; when the connection is already inside
    a transaction, the installation runs in a savepoint and the caller commits.

    PL/Python is used where the role may create it; elsewhere its scripts are skipped and
    the recorded default peel mode is ``client``.  ``peel`` records a default explicitly
    (``server`` fails where PL/Python is unavailable); without it an existing recorded
    default is kept while it still works, else the mode the installation allows.
    """
    if peel is not None and peel not in PEEL_MODES:
        raise ConfigError(f"peel mode must be one of {PEEL_MODES}, not {peel!r}")
    scripts = [(f.name, f.read_text(encoding="utf-8")) for f in (files or install_files())]
    report = InstallReport()
    step = "the extensions"
    try:
        with conn.transaction():
            conn.execute(_LOCK_SQL)
            err = _try(conn, "CREATE EXTENSION IF NOT EXISTS plpython3u")
            if err is not None:
                if err.sqlstate not in _NO_PLPYTHON:
                    raise err
                report.plpython = _first_line(err)
            err = _try(conn, "CREATE EXTENSION IF NOT EXISTS pgcrypto")
            if err is not None:
                if err.sqlstate not in _NO_PLPYTHON:
                    raise err
                report.pgcrypto = _first_line(err)
            for name, text in scripts:
                step = name
                if _needs_plpython(text):
                    if report.plpython is None:
                        # the extension may exist (created by the provider) while this
                        # role, not a superuser, still may not create untrusted functions
                        err = _try(conn, text.encode("utf-8"))
                        if err is None:
                            report.scripts.append(name)
                            continue
                        if err.sqlstate not in _NO_PLPYTHON:
                            raise err
                        report.plpython = _first_line(err)
                    report.skipped.append(name)
                    continue
                if _needs_superuser(text):
                    err = _try(conn, text.encode("utf-8"))
                    if err is None:
                        report.scripts.append(name)
                    elif err.sqlstate in _NO_PLPYTHON:
                        report.ore = _first_line(err)  # (said apart: not a peel function)
                    else:
                        raise err
                    continue
                conn.execute(text.encode("utf-8"))
                report.scripts.append(name)
            step = "the default peel mode"
            report.server_peel = bool(conn.execute(_HAS_PEEL_SQL).fetchone()[0])  # type: ignore[index]
            report.peel_default = _record_peel_default(conn, peel, report.server_peel)
    except AdaptiveError:
        raise
    except psycopg.Error as exc:
        raise InstallError(f"installing {step} failed: {str(exc).strip()}") from exc
    return report


def _record_peel_default(conn: psycopg.Connection[Any], peel: str | None, server_ok: bool) -> str:
    row = conn.execute(
        "SELECT value FROM adaptive.settings WHERE setting = %s", (PEEL_SETTING,)
    ).fetchone()
    current = row[0] if row else None
    if peel == "server" and not server_ok:
        raise ConfigError(
            "peel mode server needs the PL/Python functions, which this role may not create; "
            "use client (or off), or install as a superuser"
        )
    if peel is not None:
        mode = peel
    elif current in PEEL_MODES and (current != "server" or server_ok):
        mode = current
    else:
        mode = "server" if server_ok else "client"
    if mode != current:
        conn.execute(
            sql.SQL(
                "INSERT INTO adaptive.settings (setting, value) VALUES (%s, %s) "
                "ON CONFLICT (setting) DO UPDATE SET value = EXCLUDED.value"
            ),
            (PEEL_SETTING, mode),
        )
    return mode


def install(conn: psycopg.Connection[Any], *, peel: str | None = None) -> list[str]:
    """:func:`install_database`; the names of the scripts run."""
    return install_database(conn, peel=peel).scripts


def resolve_peel_mode(conn: psycopg.Connection[Any], mode: str | None) -> str:
    """The peel mode a client uses on this database: ``mode`` if given, else the recorded
    default (``server`` where none is recorded, as in databases installed before the
    setting existed).  ``server`` needs the PL/Python peel function: without it this
    raises :class:`PeelModeUnavailable` now, rather than at the first peel.  ``conn`` is
    in autocommit mode (a client's control connection)."""
    if mode is not None and mode != "server":
        return mode
    explicit = mode is not None
    has_settings = True
    try:  # one round trip where the settings table exists (every current installation)
        row = conn.execute(
            f"SELECT ({_HAS_PEEL_SQL}), (SELECT value FROM adaptive.settings WHERE setting = %s)",
            (PEEL_SETTING,),
        ).fetchone()
    except psycopg.errors.UndefinedTable:
        if conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            conn.rollback()
        has_settings = False
        row = conn.execute(f"SELECT ({_HAS_PEEL_SQL}), NULL").fetchone()
    has_peel = bool(row and row[0])
    if mode is None:
        recorded = row[1] if row else None
        if recorded is not None and recorded not in PEEL_MODES:
            raise ConfigError(
                f"the database's recorded peel mode {recorded!r} (adaptive.settings) is not "
                f"one of {PEEL_MODES}; set it with adaptive-db init --peel MODE"
            )
        mode = recorded or "server"
    if mode == "server" and not has_peel:
        where = (
            "asked for explicitly"
            if explicit
            else "the database's recorded default"
            if has_settings
            else "the default"
        )
        fix = (
            "use peel='client', or leave the mode unset to use the database's default"
            if explicit
            else "use peel='client', or record it: adaptive-db init --peel client"
        )
        raise PeelModeUnavailable(
            f"peel mode server ({where}) needs the PL/Python function adaptive.peel_layer, "
            "which this database does not have (a role that is not a superuser cannot create "
            f"it, as on hosted PostgreSQL): {fix}"
        )
    return mode
