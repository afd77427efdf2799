"""A connection behind a connection pooler (PgBouncer, a hosted service's pooler).

A pooler in ``transaction`` mode lends the client a server session for one transaction
at a time: consecutive transactions of one connection -- and every statement in
autocommit mode -- may run on different backends, and a backend serves other clients in
between.  Whatever a session keeps beyond its transaction is then lost or lands on
someone else's: prepared statements, settings, session advisory locks, ``LISTEN``,
cursors ``WITH HOLD``.  In ``session`` mode the client keeps one backend until it
disconnects, and the pooler only resets it between clients: the client behaves as on a
direct connection.

How the client knows (:func:`told` and :meth:`Told.settle`):

* **told**: ``connect(..., pool_mode="transaction" | "session" | "none")``, or the same
  option in the connection string (``pool_mode=transaction`` among the key/value
  pairs, or ``?pool_mode=transaction`` in a URI), which the client removes before libpq
  reads the string (libpq refuses options it does not know).  ``prepare=False`` turns
  the prepared statements off alone; ``prepare=True`` keeps them behind a transaction
  pooler that supports protocol-level prepared statements (PgBouncer 1.21 with
  ``max_prepared_statements``).
* **detected**: otherwise the client compares the process id the server announced at
  connection time (the BackendKeyData message, libpq's ``PQbackendPID``) with
  ``pg_backend_pid()``.  A direct connection announces its backend's; a pooler
  announces a key of its own (the key its clients' cancel requests carry, which it maps
  to whatever backend they run on), so the two differ.  The pool mode itself is not
  visible from a client session (PgBouncer shows it only on its admin console), so a
  detected pooler is taken to be a transaction pooler, whose rules hold under either
  mode; ``pool_mode=session`` says otherwise.

What the client does behind a transaction pooler (:class:`Pooling`):

* no prepared statements (psycopg's ``prepare_threshold=None``, on the application's,
  the control and the compaction sessions), so the direct path (``direct.py``) is off;
* no ``SET jit = off`` at connect (a session setting: it would stay on a backend other
  clients use, and be missing on the next);
* the catalog is checked for other clients' peels and DDL by reading its epoch before
  each transaction, instead of ``LISTEN`` (``notifications.py``);
* tables an adaptation rewrote are analyzed, not compacted (``VACUUM FULL`` needs a
  session advisory lock and a session ``lock_timeout``: ``compaction.py``);
* statements that ask for session state a transaction pooler cannot keep are refused
  with :class:`~adaptive_client.errors.PoolerUnsupported` (SQLSTATE 0A000) before they
  are sent (:func:`check_session_command`, :func:`check_server_call`,
  :func:`check_cursor`): a session-level ``SET``/``RESET`` of anything but the
  parameters PgBouncer carries from backend to backend itself (``client_encoding``,
  ``DateStyle``, ``TimeZone``, ``standard_conforming_strings``, ``application_name``),
  ``SET ROLE``/``SESSION AUTHORIZATION``/``SESSION CHARACTERISTICS``, ``LISTEN``, session
  advisory locks, ``set_config(..., false)``, cursors ``WITH HOLD``.  ``SET LOCAL``,
  ``SET TRANSACTION``, ``SET CONSTRAINTS``, ``pg_advisory_xact_lock``,
  ``set_config(..., true)`` and ``NOTIFY`` hold for their transaction and pass.
"""

from __future__ import annotations

import re
from collections.abc import MutableMapping
from dataclasses import dataclass
from typing import Any, Final
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import psycopg
from sqlglot import exp

from ..adapt.compaction import behind_pooler
from ..errors import ConfigError, PoolerUnsupported
from ..syntax.sqltext import leading_words

OPTION: Final = "pool_mode"
TRANSACTION: Final = "transaction"
SESSION: Final = "session"
NONE: Final = "none"
POOL_MODES: Final = (TRANSACTION, SESSION, NONE)

# the parameters PgBouncer itself sets again on whichever backend a client's transaction
# runs on (its "varcache"), by the names SET spells them with
CARRIED: Final = frozenset(
    {"client_encoding", "datestyle", "timezone", "standard_conforming_strings",
     "application_name"}
)  # fmt: skip
# SET forms whose first words name a carried parameter
_SET_SYNONYMS: Final = {("TIME", "ZONE"): "timezone", ("NAMES",): "client_encoding"}
# SET forms (their second word) that last one transaction
_TRANSACTION_SCOPED: Final = frozenset({"LOCAL", "TRANSACTION", "CONSTRAINTS"})
# the parameter a SET or RESET names (for the message: dotted, quoted)
_SET_NAME = re.compile(
    r'(?is)\A\s*(?:SET\s+(?:SESSION\s+)?|RESET\s+)((?:"[^"]*"|[\w$]+)(?:\.(?:"[^"]*"|[\w$]+))*)'
)

# server functions whose effect outlives the transaction they run in
_SESSION_LOCKS: Final = frozenset(
    {"pg_advisory_lock", "pg_advisory_lock_shared", "pg_try_advisory_lock",
     "pg_try_advisory_lock_shared", "pg_advisory_unlock", "pg_advisory_unlock_shared",
     "pg_advisory_unlock_all"}
)  # fmt: skip


@dataclass(frozen=True)
class Pooling:
    """What stands between the client and the server: ``mode`` is ``transaction``,
    ``session`` or ``none`` (a direct connection); ``detected``: the client found the
    pooler itself rather than being told; ``prepare``: whether prepared statements are
    used."""

    mode: str
    detected: bool
    prepare: bool

    @property
    def transaction(self) -> bool:
        """Whether consecutive transactions may run on different backends."""
        return self.mode == TRANSACTION


@dataclass(frozen=True)
class Told:
    """What the application said: the pool mode (None: to be detected) and whether to
    prepare statements (None: as the mode implies)."""

    mode: str | None
    prepare: bool | None

    def settle(self, control: psycopg.Connection[Any]) -> Pooling:
        """The pooling of a connection opened as told, ``control`` one of its sessions
        (asked, where the mode was not told, whether a pooler answered it)."""
        detected = False
        mode = self.mode
        if mode is None:
            detected = behind_pooler(control)
            mode = TRANSACTION if detected else NONE
        prepare = self.prepare if self.prepare is not None else mode != TRANSACTION
        return Pooling(mode, detected, prepare)


def told(conninfo: str, kwargs: MutableMapping[str, Any]) -> tuple[str, Told]:
    """The connection string without the client's ``pool_mode`` option, and what the
    string and the keywords (``pool_mode``, ``prepare``: taken out of ``kwargs``) say."""
    conninfo, in_string = strip_option(conninfo)
    mode = kwargs.pop(OPTION, None)
    prepare = kwargs.pop("prepare", None)
    if mode is None:
        mode = in_string
    if mode is not None:
        mode = str(mode).lower()
        if mode not in POOL_MODES:
            raise ConfigError(f"{OPTION} must be one of {POOL_MODES}, not {mode!r}")
    if isinstance(prepare, str):  # (a URL's query option)
        prepare = prepare.lower() not in ("false", "0", "off", "no")
    return conninfo, Told(mode, prepare)


# -- the connection string ---------------------------------------------------------------

# one ``key = value`` pair of a libpq key/value string: the value bare (backslash
# escapes) or single-quoted (backslash escapes)
_PAIR = re.compile(r"\s*(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|(?:[^\s'\\]|\\.)*)\s*", re.S)
_URI = re.compile(r"(?i)\Apostgres(?:ql)?://")


def strip_option(conninfo: str) -> tuple[str, str | None]:
    """``conninfo`` without its ``pool_mode`` option, and the option's value (None: not
    there).  The rest of the string is left exactly as written."""
    if _URI.match(conninfo):
        parts = urlsplit(conninfo)
        query = parse_qsl(parts.query, keep_blank_values=True)
        found = [v for k, v in query if k == OPTION]
        if not found:
            return conninfo, None
        rest = urlencode([(k, v) for k, v in query if k != OPTION])
        return urlunsplit(parts._replace(query=rest)), found[-1]
    pos, kept, value = 0, [], None
    while pos < len(conninfo):
        m = _PAIR.match(conninfo, pos)
        if m is None or m.end() == pos:
            return conninfo, None  # (not a key/value string libpq reads: left to libpq)
        if m.group(1) == OPTION:
            raw = m.group(2)
            raw = raw[1:-1] if raw.startswith("'") else raw
            value = re.sub(r"\\(.)", r"\1", raw)
        else:
            kept.append(m.group(0).strip())
        pos = m.end()
    return (" ".join(kept), value) if value is not None else (conninfo, None)


# -- what a transaction pooler cannot give ----------------------------------------------


def _refuse(what: str, instead: str) -> PoolerUnsupported:
    return PoolerUnsupported(
        f"{what} outlives the transaction, and behind a transaction pooler the next "
        f"transaction may run on another server session: {instead}",
        what,
    )


def check_session_command(pooling: Pooling, kind: str, query: str) -> None:
    """Refuse a session command (``set``, ``notify``...) whose effect a transaction
    pooler would lose or leave to another client."""
    if not pooling.transaction:
        return
    words = leading_words(query, 4)
    if kind == "notify" and words[:1] == ["LISTEN"]:
        raise _refuse("LISTEN", "listen on a direct connection or behind a session pooler")
    if kind != "set" or len(words) < 2:
        return
    if words[0] != "RESET" and words[1] in _TRANSACTION_SCOPED:
        return
    rest = words[2:] if words[:2] == ["SET", "SESSION"] else words[1:]
    if rest[:1] in (["ROLE"], ["AUTHORIZATION"], ["CHARACTERISTICS"]):
        raise _refuse(
            f"{words[0]} {'SESSION ' if rest[0] != 'ROLE' else ''}{rest[0]}",
            "set the role or the characteristics in each transaction "
            "(SET LOCAL ROLE, SET TRANSACTION ...) or for the pooler's user",
        )
    name = _SET_SYNONYMS.get(tuple(rest[:2])) or _SET_SYNONYMS.get(tuple(rest[:1]))
    if name is None:
        m = _SET_NAME.match(query)
        name = (m.group(1) if m else rest[0]).replace('"', "").lower()
    if name not in CARRIED:
        raise _refuse(
            f"{words[0]} {name}",
            "use SET LOCAL inside the transaction, or ALTER ROLE ... SET for every session",
        )


def check_server_call(pooling: Pooling, stmt: exp.Expression) -> None:
    """Refuse a call of a server function whose effect outlives its transaction: a
    session advisory lock, ``set_config(name, value, false)``."""
    if not pooling.transaction:
        return
    for call in stmt.find_all(exp.Anonymous):
        name = call.name.lower()
        if name in _SESSION_LOCKS:
            raise _refuse(
                f"{name}()", "take pg_advisory_xact_lock() inside the transaction instead"
            )
        if name == "set_config":
            args = call.expressions
            local = args[2] if len(args) == 3 else None
            setting = args[0].name.lower() if args and isinstance(args[0], exp.Literal) else ""
            if setting not in CARRIED and not (
                isinstance(local, exp.Boolean) and local.this is True
            ):
                raise _refuse(
                    "set_config(..., false)",
                    "set_config(name, value, true) holds for the transaction",
                )


def check_cursor(pooling: Pooling, withhold: bool) -> None:
    """Refuse a server-side cursor ``WITH HOLD`` (it is kept after its transaction)."""
    if pooling.transaction and withhold:
        raise _refuse("a cursor WITH HOLD", "fetch it within its transaction")


__all__ = [
    "CARRIED",
    "OPTION",
    "POOL_MODES",
    "Pooling",
    "Told",
    "behind_pooler",
    "check_cursor",
    "check_server_call",
    "check_session_command",
    "strip_option",
    "told",
]
