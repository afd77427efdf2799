"""Text order under a collation: what the Ord onion of a text column encrypts.

PostgreSQL orders text by the collation of the column (the database's default unless the
column says ``COLLATE "..."``): byte order for ``C`` / ``POSIX``; for an ICU collation the
order of ICU's collator for its locale; for a libc collation that of ``strcoll`` in its
locale.  A *deterministic* collation (the only kind a database default can be) breaks the
ties of strings the collator finds equal by their bytes, so that only equal strings
compare equal.

The client reproduces that order with a **collation key**: the collator's sort key (ICU's
``getSortKey``; libc's ``strxfrm_l``, whose byte order is ``strcoll``'s), a zero byte,
then the string's UTF-8 bytes.  Sort keys hold no zero byte, so comparing two collation
keys bytewise compares the sort keys first and the bytes on a tie -- exactly PostgreSQL's
order.  The Ord onion encrypts an 8-byte prefix of that key (``encodings``); the client
finishes what the prefix cannot decide with the whole key.

A collation is recorded per column in the sealed metadata (:class:`Collation`: provider,
locale, the collator's version) when the table is created.  The order is reproduced only
where the client's collator is the server's: same provider and locale, same version
(ICU's collator version, which changes with ICU's collation data; glibc's version for
libc locales, as PostgreSQL records them).  Anything else -- a version mismatch, a locale
the client machine does not have, a nondeterministic collation, an unknown provider --
raises :class:`CollationUnavailable` rather than order differently.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import importlib
import os
import threading
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from .errors import CollationUnavailable

BYTEWISE_LOCALES = ("C", "POSIX")


@dataclass(frozen=True)
class Collation:
    """A column's collation as recorded in the sealed metadata.

    ``provider`` is ``c`` (byte order: the C and POSIX locales), ``icu`` or ``libc``;
    ``locale`` the ICU locale or the libc ``LC_COLLATE``; ``version`` the collator's version
    when the column was created (PostgreSQL's ``collversion``).
    """

    provider: str
    locale: str
    version: str | None = None
    # the SQL name a column's COLLATE gave it (None: the database's default); it names
    # the collation of a column stored in the clear, and does not change the order
    name: str | None = field(default=None, compare=False)

    @property
    def bytewise(self) -> bool:
        return self.provider == "c"

    def describe(self) -> str:
        if self.bytewise:
            return "C (byte order)"
        version = f", version {self.version}" if self.version else ""
        return f"{self.provider} {self.locale!r}{version}"

    def to_json(self) -> dict[str, Any]:
        out = {"provider": self.provider, "locale": self.locale, "version": self.version}
        return {**out, "name": self.name} if self.name is not None else out

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Collation:
        return cls(d["provider"], d["locale"], d.get("version"), d.get("name"))

    def clause(self) -> str:
        """`` COLLATE "name"`` for a plain text column stored with this collation ('' for
        the database's default)."""
        if self.name is None:
            return ""
        return ' COLLATE "' + self.name.replace('"', '""') + '"'



C_COLLATION = Collation("c", "C")


def _from_catalog(provider: str, collate: str | None, icu_locale: str | None,
                  version: str | None) -> Collation:  # fmt: skip
    """A collation from pg_database / pg_collation's provider code and locale columns."""
    if provider == "i":
        return Collation("icu", icu_locale or "", version)
    if provider == "c":
        if collate in BYTEWISE_LOCALES:
            return C_COLLATION
        return Collation("libc", collate or "", version)
    return Collation(f"unknown:{provider}", collate or icu_locale or "", version)


def database_collation(conn: psycopg.Connection[Any]) -> Collation:
    """The database's default collation, with the version its server orders by now."""
    row = conn.execute(
        "SELECT datlocprovider, datcollate, daticulocale, "
        "pg_database_collation_actual_version(oid) "
        "FROM pg_database WHERE datname = current_database()"
    ).fetchone()
    assert row is not None
    return _from_catalog(row[0], row[1], row[2], row[3])


def named_collation(conn: psycopg.Connection[Any], name: str) -> Collation:
    """The collation ``COLLATE "name"`` names, as PostgreSQL resolves it (an unknown name
    raises PostgreSQL's UndefinedObject; a nondeterministic one is refused: its equality
    is not the bytes', which the Eq onion decides)."""
    if name.lower() == "default":
        return database_collation(conn)
    row = conn.execute(
        "SELECT c.collprovider, c.collcollate, c.colliculocale, c.collisdeterministic, "
        "pg_collation_actual_version(c.oid) "
        "FROM pg_collation c WHERE c.oid = to_regcollation(quote_ident(%s))",
        (name,),
    ).fetchone()
    if row is None:
        raise pg_errors.UndefinedObject(f'collation "{name}" for encoding "UTF8" does not exist')
    provider, collate, icu_locale, deterministic, version = row
    if provider == "d":
        return database_collation(conn)
    if not deterministic:
        raise CollationUnavailable(
            f'collation "{name}" is nondeterministic: equal strings are not equal bytes, '
            "which encrypted equality and order cannot follow",
            "nondeterministic collation",
        )
    return replace(_from_catalog(provider, collate, icu_locale, version), name=name)


def server_version(conn: psycopg.Connection[Any], collation: Collation) -> str | None:
    """The version of ``collation``'s collator on the server now (None: the server has no
    collation of that provider and locale)."""
    default = database_collation(conn)
    if (default.provider, default.locale) == (collation.provider, collation.locale):
        return default.version
    if collation.provider == "icu":
        where, arg = "collprovider = 'i' AND colliculocale = %s", collation.locale
    elif collation.provider == "libc":
        where, arg = "collprovider = 'c' AND collcollate = %s", collation.locale
    else:
        return None
    row = conn.execute(
        f"SELECT pg_collation_actual_version(oid) FROM pg_collation WHERE {where} LIMIT 1",
        (arg,),
    ).fetchone()
    return None if row is None else row[0]


# The database's default collation, for what a statement compiled on the client orders
# without any column to say (text constants: PostgreSQL gives them the default collation).
# Set by the connection around a compilation: a function, so it is read only when needed.
DATABASE_COLLATION: ContextVar[Callable[[], Collation] | None] = ContextVar(
    "DATABASE_COLLATION", default=None
)


# -- the client's collators ------------------------------------------------------------------

SortKey = Callable[[str], bytes]


def _version_string(fields: list[int]) -> str:
    """ICU's u_versionToString: trailing zero fields dropped, at least major.minor."""
    n = 4
    while n > 2 and fields[n - 1] == 0:
        n -= 1
    return ".".join(str(f) for f in fields[:n])


def _icu() -> Any:
    try:
        return importlib.import_module("icu")
    except ImportError:
        raise CollationUnavailable(
            "ICU collations need PyICU on the client (pip install pyicu)", "ICU collation"
        ) from None


@lru_cache(maxsize=64)
def icu_collator_version(locale: str) -> str:
    """The collator version of ``locale`` in the ICU library PyICU uses (the number
    PostgreSQL records as an ICU collation's version).  PyICU does not expose it: it is
    read through ICU's C API, from the library the binding is linked against."""
    icu = _icu()
    binding = importlib.import_module("icu._icu_")
    lib = ctypes.CDLL(binding.__file__)
    major = str(icu.ICU_VERSION).split(".")[0]

    def fn(name: str) -> Any:
        for symbol in (f"{name}_{major}", name):
            try:
                return getattr(lib, symbol)
            except AttributeError:
                continue
        raise CollationUnavailable(f"the client's ICU library has no {name}", "ICU collation")

    ucol_open, ucol_version, ucol_close = fn("ucol_open"), fn("ucol_getVersion"), fn("ucol_close")
    ucol_open.restype = ctypes.c_void_p
    ucol_open.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_int)]
    ucol_version.argtypes = [ctypes.c_void_p, ctypes.c_ubyte * 4]
    ucol_close.argtypes = [ctypes.c_void_p]
    status = ctypes.c_int(0)
    collator = ucol_open(locale.encode(), ctypes.byref(status))
    if not collator or status.value > 0:
        raise CollationUnavailable(f"ICU cannot open a collator for {locale!r}", "ICU collation")
    try:
        info = (ctypes.c_ubyte * 4)()
        ucol_version(collator, info)
        return _version_string(list(info))
    finally:
        ucol_close(collator)


def _icu_sort_key(collation: Collation) -> SortKey:
    icu = _icu()
    version = icu_collator_version(collation.locale)
    if collation.version is not None and version != collation.version:
        raise CollationUnavailable(
            f"ICU collation {collation.locale!r}: the column's order is that of collator "
            f"version {collation.version}, this client's ICU {icu.ICU_VERSION} has version "
            f"{version}; install the server's ICU version on the client",
            "ICU collator version mismatch",
        )
    # PostgreSQL opens the collator with the locale string as recorded, as this does
    collator = icu.Collator.createInstance(icu.Locale(collation.locale))
    lock = threading.Lock()  # one collator, used by any thread of the process

    def key(s: str) -> bytes:
        with lock:
            k: bytes = collator.getSortKey(s)
        return k.rstrip(b"\0")

    return key


_LC_COLLATE_MASK = 1 << 3  # glibc: LC_COLLATE is category 3


def glibc_version() -> str | None:
    """The C library's version as PostgreSQL records a libc collation's ("2.36"), or None
    where the C library is not glibc."""
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")
    except (ValueError, OSError):
        return None
    if not text or not text.startswith("glibc "):
        return None
    return text.split()[1]


def _libc_sort_key(collation: Collation) -> SortKey:
    version = glibc_version()
    if version is None:
        raise CollationUnavailable(
            f"libc collation {collation.locale!r}: reproducing it needs glibc on the client",
            "libc collation",
        )
    if collation.version is not None and version != collation.version:
        raise CollationUnavailable(
            f"libc collation {collation.locale!r}: the column's order is that of glibc "
            f"{collation.version}, this client has glibc {version}",
            "libc collation version mismatch",
        )
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    libc.newlocale.restype = ctypes.c_void_p
    libc.newlocale.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
    # a locale object of its own: the process's locale is left as it is
    loc = libc.newlocale(_LC_COLLATE_MASK, collation.locale.encode(), None)
    if not loc:
        raise CollationUnavailable(
            f"libc collation {collation.locale!r}: the locale is not installed on the client "
            "(on Debian: the locales package, locale-gen)",
            "libc locale missing",
        )
    strxfrm = libc.strxfrm_l
    strxfrm.restype = ctypes.c_size_t
    strxfrm.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_void_p]

    def key(s: str) -> bytes:
        src = s.encode("utf-8")
        size = 4 * len(src) + 32
        while True:
            buf = ctypes.create_string_buffer(size)
            n = strxfrm(buf, src, size, loc)
            if n < size:
                return buf.raw[:n]
            size = n + 1

    return key


@lru_cache(maxsize=64)
def _sort_key(collation: Collation) -> SortKey:
    if collation.bytewise:
        return lambda s: b""
    if collation.provider == "icu":
        return _icu_sort_key(collation)
    if collation.provider == "libc":
        return _libc_sort_key(collation)
    raise CollationUnavailable(
        f"collation {collation.describe()}: unknown provider", "unknown collation provider"
    )


def sort_key_function(collation: Collation) -> SortKey:
    """The collator's sort key for ``collation`` on this client, or CollationUnavailable."""
    return _sort_key(collation)


def collation_key(collation: Collation, text: str) -> bytes:
    """The string's position in PostgreSQL's order under ``collation``, as bytes to compare:
    the sort key, a zero byte, then the UTF-8 bytes (deterministic collations break ties
    on the bytes).  Under C the key is the bytes themselves."""
    raw = text.encode("utf-8")
    if collation.bytewise:
        return raw
    return _sort_key(collation)(text) + b"\0" + raw


def check_available(collation: Collation) -> None:
    """Raise CollationUnavailable now if this client cannot reproduce ``collation``."""
    if not collation.bytewise:
        _sort_key(collation)


__all__ = [
    "C_COLLATION",
    "DATABASE_COLLATION",
    "Collation",
    "check_available",
    "collation_key",
    "database_collation",
    "named_collation",
    "server_version",
    "sort_key_function",
]


def column_collation(
    conn: psycopg.Connection[Any], type_name: str, named: str | None
) -> Collation | None:
    """The collation a new column of type ``type_name`` orders by: ``COLLATE "named"``,
    else the database's default; None for types without one.  A collation this client
    cannot reproduce is recorded all the same (the server's version, the one PostgreSQL
    would order with): clients that can reproduce it order by it, the others refuse."""
    if type_name not in ("text", "varchar", "char"):
        if named is not None:
            raise pg_errors.DatatypeMismatch(f"collations are not supported by type {type_name}")
        return None
    return named_collation(conn, named) if named is not None else database_collation(conn)
