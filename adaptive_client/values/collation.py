"""Text order under a collation: what the Ord onion of a text column encrypts.

PostgreSQL orders text by the collation of the column (the database's default unless the
column says ``COLLATE "..."``): byte order for ``C`` / ``POSIX``; for an ICU collation the
order of ICU's collator for its locale; for a libc collation that of ``strcoll`` in its
locale.  A *deterministic* collation (the only kind a database default can be) breaks the
ties of strings the collator finds equal by their bytes, so that only equal strings
compare equal.

The client reproduces that order with the collator's **sort key** (ICU's ``getSortKey``;
libc's ``strxfrm_l``): the Ord onion encrypts the first 8 bytes of its *primary weights*
(the letters, without case or accents: the key up to its first level separator), which
are weakly monotone in the collation's order, so the server orders by the collation up
to ties; the client finishes the order exactly.  Under ICU it compares **collation keys**
-- the whole sort key, a zero byte, the UTF-8 bytes (sort keys hold no zero byte, so the
bytewise order of collation keys is PostgreSQL's: the collator's, ties broken by the
bytes).  Under libc it compares with ``strcoll_l`` itself, then the bytes, as PostgreSQL
does: glibc's ``strxfrm`` disagrees with ``strcoll`` on some strings with combining
marks, so a libc collation key (for the split execution's engine, which needs bytes) is
refused for them (primary weights, checked against ``strcoll`` on such strings, agree).

Case mapping (``lower``, ``upper``, ``ILIKE``) evaluated on the client follows the
database's ctype the same way (:class:`CaseMapping`): ASCII under C, ICU's full mapping
for an ICU database, libc's ``towlower_l`` / ``towupper_l`` otherwise.

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
import functools
import importlib
import os
import threading
import unicodedata
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

import psycopg
from psycopg import errors as pg_errors

from ..errors import CollationUnavailable

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
    if provider == "b":  # PostgreSQL 17's builtin provider: C, C.UTF-8, PG_UNICODE_FAST
        return C_COLLATION  # all order by code point, which is UTF-8's byte order
    return Collation(f"unknown:{provider}", collate or icu_locale or "", version)


def _locale_column(conn: psycopg.Connection[Any], table: str) -> str:
    """The ICU / builtin locale column of pg_database or pg_collation: ``datlocale`` /
    ``colllocale`` from PostgreSQL 17 on, ``daticulocale`` / ``colliculocale`` before."""
    prefix = "dat" if table == "pg_database" else "coll"
    return f"{prefix}locale" if conn.info.server_version >= 170000 else f"{prefix}iculocale"


def database_collation(conn: psycopg.Connection[Any]) -> Collation:
    """The database's default collation, with the version its server orders by now."""
    if conn.info.server_version < 150000:  # libc only, no recorded versions
        row = conn.execute(
            "SELECT datcollate FROM pg_database WHERE datname = current_database()"
        ).fetchone()
        assert row is not None
        return _from_catalog("c", row[0], None, None)
    row = conn.execute(
        f"SELECT datlocprovider, datcollate, {_locale_column(conn, 'pg_database')}, "
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
    locale = _locale_column(conn, "pg_collation") if conn.info.server_version >= 150000 else "NULL"
    row = conn.execute(
        f"SELECT c.collprovider, c.collcollate, {locale}, c.collisdeterministic, "
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
        column = _locale_column(conn, "pg_collation")
        where, arg = f"collprovider = 'i' AND {column} = %s", collation.locale
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
# Set around a compilation from its Settings (compile/settings.py): a function, so it is
# read only when needed.
DATABASE_COLLATION: ContextVar[Callable[[], Collation] | None] = ContextVar(
    "DATABASE_COLLATION", default=None
)


# Resolves ``COLLATE "name"`` in a query to a collation: set from the Settings around a
# compilation (without it, only "C" and "POSIX" are known).
COLLATION_NAMED: ContextVar[Callable[[str], Collation] | None] = ContextVar(
    "COLLATION_NAMED", default=None
)


# -- the client's collators ------------------------------------------------------------------

SortKey = Callable[[str], bytes]


def _version_string(fields: list[int]) -> str:
    """ICU's u_versionToString: trailing zero fields dropped, at least major.minor."""
    n = 4
    while n > 2 and fields[n - 1] == 0:
        n -= 1
    return ".".join(str(f) for f in fields[:n])


ICU_INSTALL_HINT = "pip install 'adaptive-client[icu]'"


def _icu() -> Any:
    try:
        return importlib.import_module("icu")
    except ImportError:
        raise CollationUnavailable(
            f"ICU collations need PyICU on the client ({ICU_INSTALL_HINT})", "ICU collation"
        ) from None


def require_collator(conn: psycopg.Connection[Any]) -> Collation:
    """The database's default collation, once this client is known to have what
    reproduces it: raises CollationUnavailable at connect, with the install hint, for an
    ICU database when PyICU (the ``icu`` extra) is not installed.  ``C`` / ``POSIX`` and
    builtin databases need nothing; libc locales are read through the C library itself
    (a locale missing on the client is reported when text is first ordered by it)."""
    collation = database_collation(conn)
    if collation.provider == "icu":
        try:
            importlib.import_module("icu")
        except ImportError:
            raise CollationUnavailable(
                f"the database orders text by the ICU collation {collation.locale!r}: "
                f"reproducing it needs PyICU on the client ({ICU_INSTALL_HINT})",
                "ICU collation",
            ) from None
    return collation


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


class _Libc:
    """A libc locale's collation on this client: ``strcoll_l`` (PostgreSQL's comparison)
    and ``strxfrm_l`` (its sort keys), in a locale object of its own -- the process's
    locale is left as it is."""

    def __init__(self, collation: Collation) -> None:
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
        self._locale = libc.newlocale(_LC_COLLATE_MASK, collation.locale.encode(), None)
        if not self._locale:
            raise CollationUnavailable(
                f"libc collation {collation.locale!r}: the locale is not installed on the "
                "client (on Debian: the locales package, locale-gen)",
                "libc locale missing",
            )
        self._strxfrm = libc.strxfrm_l
        self._strxfrm.restype = ctypes.c_size_t
        self._strxfrm.argtypes = [
            ctypes.c_char_p,
            ctypes.c_char_p,
            ctypes.c_size_t,
            ctypes.c_void_p,
        ]
        self._strcoll = libc.strcoll_l
        self._strcoll.restype = ctypes.c_int
        self._strcoll.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p]

    def sort_key(self, s: str) -> bytes:
        src = s.encode("utf-8")
        size = 4 * len(src) + 32
        while True:
            buf = ctypes.create_string_buffer(size)
            n = self._strxfrm(buf, src, size, self._locale)
            if n < size:
                return buf.raw[:n]
            size = n + 1

    def compare(self, a: bytes, b: bytes) -> int:
        """strcoll, then the bytes: PostgreSQL's comparison under a deterministic libc
        collation."""
        c = int(self._strcoll(a, b, self._locale))
        if c == 0:
            return (a > b) - (a < b)
        return c


@functools.total_ordering
class _StrcollKey:
    """A string ordered by strcoll_l (then its bytes), as PostgreSQL compares it under a
    libc collation -- exactly, where glibc's sort keys (strxfrm) sometimes disagree with
    strcoll (strings with combining marks)."""

    __slots__ = ("_libc", "raw")

    def __init__(self, libc: _Libc, raw: bytes) -> None:
        self._libc, self.raw = libc, raw

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _StrcollKey) and self.raw == other.raw

    def __hash__(self) -> int:
        return hash(self.raw)

    def __lt__(self, other: _StrcollKey) -> bool:
        return self._libc.compare(self.raw, other.raw) < 0

    def sort_bytes(self) -> bytes:
        """The string's position as bytes to compare (glibc's sort key, a zero byte,
        the UTF-8 bytes), as :func:`collation_key` makes it: exact but for strings with
        combining marks, refused (CollationUnavailable)."""
        text = self.raw.decode("utf-8", "surrogatepass")
        if _combining(text):
            raise CollationUnavailable(
                "libc collation: a string with combining marks has no sort key that "
                "orders it as strcoll does, in a client-evaluated query",
                "libc collation and combining marks",
            )
        return self._libc.sort_key(text) + b"\0" + self.raw


@lru_cache(maxsize=64)
def _libc(collation: Collation) -> _Libc:
    return _Libc(collation)


@lru_cache(maxsize=64)
def _sort_key(collation: Collation) -> SortKey:
    if collation.bytewise:
        return lambda s: b""
    if collation.provider == "icu":
        return _icu_sort_key(collation)
    if collation.provider == "libc":
        return _libc(collation).sort_key
    raise CollationUnavailable(
        f"collation {collation.describe()}: unknown provider", "unknown collation provider"
    )


def sort_key_function(collation: Collation) -> SortKey:
    """The collator's sort key for ``collation`` on this client, or CollationUnavailable."""
    return _sort_key(collation)


def _combining(text: str) -> bool:
    return any(unicodedata.category(ch).startswith("M") for ch in text)


def collation_key(collation: Collation, text: str) -> bytes:
    """The string's position in PostgreSQL's order under ``collation``, as bytes to compare:
    the sort key, a zero byte, then the UTF-8 bytes (deterministic collations break ties
    on the bytes).  Under C the key is the bytes themselves.

    glibc's sort keys follow strcoll (PostgreSQL's comparison) except, at times, for
    strings with combining marks: for those under a libc collation no such key exists,
    and CollationUnavailable is raised (:func:`order_key` compares them exactly)."""
    raw = text.encode("utf-8")
    if collation.bytewise:
        return raw
    if collation.provider == "libc" and _combining(text):
        raise CollationUnavailable(
            f"libc collation {collation.locale!r}: a string with combining marks has no "
            "sort key that orders it as strcoll does; it is ordered only by the client's "
            "final sort (ORDER BY, min, max), not in a client-evaluated query",
            "libc collation and combining marks",
        )
    return _sort_key(collation)(text) + b"\0" + raw


def order_key(collation: Collation, text: str) -> Any:
    """A key whose Python order is PostgreSQL's order of strings under ``collation``: the
    collation key, or under a libc collation one that compares with strcoll itself."""
    if collation.provider == "libc":
        return _StrcollKey(_libc(collation), text.encode("utf-8"))
    return collation_key(collation, text)


def primary_prefix(collation: Collation, text: str) -> bytes:
    """The primary weights of the string's sort key (up to the first level separator,
    byte 1, in ICU's and glibc's keys): weakly monotone in the collation's order, so an
    order-preserving encryption of a prefix of them lets the server order, with ties the
    client breaks.  They say nothing of case and accents (the secondary and tertiary
    levels)."""
    return _sort_key(collation)(text).split(b"\1", 1)[0]


# -- case mapping ---------------------------------------------------------------------------

_LC_CTYPE_MASK = 1 << 0  # glibc: LC_CTYPE is category 0
_ASCII_LOWER = {i: i + 32 for i in range(ord("A"), ord("Z") + 1)}
_ASCII_UPPER = {i + 32: i for i in range(ord("A"), ord("Z") + 1)}


@dataclass(frozen=True)
class CaseMapping:
    """How PostgreSQL's ``lower`` / ``upper`` (and ``ILIKE``, which lowers both sides) map
    text of the database's default collation: ``ascii`` under a C/POSIX ctype; ``icu``
    (full, locale-sensitive mapping, ``u_strToLower``) for an ICU database; ``libc``
    (``towlower_l`` / ``towupper_l`` character by character) in the database's ctype."""

    kind: str
    locale: str = ""

    def lower(self, s: str) -> str:
        return self._map(s, upper=False)

    def upper(self, s: str) -> str:
        return self._map(s, upper=True)

    def title(self, s: str) -> str:
        """initcap(): a word's first letter upper case, the others lower case; under
        ICU its titlecasing (``u_strToTitle``, ICU's word breaks), else character by
        character, a word being a run of letters and digits (ASCII ones under C)."""
        if self.kind == "icu":
            icu = _icu()
            return str(icu.UnicodeString(s).toTitle(icu.Locale(self.locale)))
        if self.kind == "libc":
            lower, upper, alnum = _libc_case(self.locale)
        elif self.kind == "ascii":
            lower, upper, alnum = _ascii_lower, _ascii_upper, _ascii_alnum
        else:
            raise CollationUnavailable(
                f"case mapping of {self.kind} {self.locale!r} on the client", "case mapping"
            )
        out, in_word = [], False
        for ch in s:
            mapped = (lower if in_word else upper)(ord(ch))
            out.append(chr(mapped))
            in_word = alnum(mapped)  # (of the character as mapped, as PostgreSQL tests it)
        return "".join(out)

    def _map(self, s: str, upper: bool) -> str:
        if self.kind == "ascii":
            return s.translate(_ASCII_UPPER if upper else _ASCII_LOWER)
        if self.kind == "icu":
            icu = _icu()
            text = icu.UnicodeString(s)
            locale = icu.Locale(self.locale)
            return str(text.toUpper(locale) if upper else text.toLower(locale))
        if self.kind == "libc":
            fn = _libc_case(self.locale)[1 if upper else 0]
            return "".join(chr(fn(ord(ch))) for ch in s)
        raise CollationUnavailable(
            f"case mapping of {self.kind} {self.locale!r} on the client", "case mapping"
        )


def _ascii_lower(c: int) -> int:
    return c + 32 if 65 <= c <= 90 else c


def _ascii_upper(c: int) -> int:
    return c - 32 if 97 <= c <= 122 else c


def _ascii_alnum(c: int) -> bool:
    return 48 <= c <= 57 or 65 <= c <= 90 or 97 <= c <= 122


@lru_cache(maxsize=16)
def _libc_case(
    locale: str,
) -> tuple[Callable[[int], int], Callable[[int], int], Callable[[int], bool]]:
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None)
    libc.newlocale.restype = ctypes.c_void_p
    libc.newlocale.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_void_p]
    loc = libc.newlocale(_LC_CTYPE_MASK, locale.encode(), None)
    if not loc:
        raise CollationUnavailable(
            f"libc ctype {locale!r}: the locale is not installed on the client",
            "libc locale missing",
        )
    fns = []
    for name in ("towlower_l", "towupper_l"):
        fn = getattr(libc, name)
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p]
        fns.append(lambda c, fn=fn: int(fn(c, loc)))
    iswalnum = libc.iswalnum_l
    iswalnum.restype = ctypes.c_int
    iswalnum.argtypes = [ctypes.c_uint32, ctypes.c_void_p]
    return fns[0], fns[1], lambda c: bool(iswalnum(c, loc))


def database_case_mapping(conn: psycopg.Connection[Any]) -> CaseMapping:
    """The case mapping of text of the database's default collation (see CaseMapping)."""
    if conn.info.server_version < 150000:
        row = conn.execute(
            "SELECT 'c', datctype, NULL FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    else:
        row = conn.execute(
            f"SELECT datlocprovider, datctype, {_locale_column(conn, 'pg_database')} "
            "FROM pg_database WHERE datname = current_database()"
        ).fetchone()
    assert row is not None
    provider, ctype, locale = row
    if ctype in BYTEWISE_LOCALES:
        return CaseMapping("ascii")
    if provider == "i":
        return CaseMapping("icu", locale or "")
    if provider == "c":
        if glibc_version() is None:
            return CaseMapping("unavailable", ctype)
        return CaseMapping("libc", ctype)
    return CaseMapping(f"unknown:{provider}", locale or ctype)


# The database's case mapping, for lower / upper / ILIKE evaluated on the client: set by
# the Settings around a compilation, as DATABASE_COLLATION.
DATABASE_CASE_MAPPING: ContextVar[Callable[[], CaseMapping] | None] = ContextVar(
    "DATABASE_CASE_MAPPING", default=None
)


def check_available(collation: Collation) -> None:
    """Raise CollationUnavailable now if this client cannot reproduce ``collation``."""
    if not collation.bytewise:
        _sort_key(collation)


__all__ = [
    "COLLATION_NAMED",
    "C_COLLATION",
    "DATABASE_CASE_MAPPING",
    "DATABASE_COLLATION",
    "CaseMapping",
    "Collation",
    "check_available",
    "collation_key",
    "database_case_mapping",
    "database_collation",
    "named_collation",
    "order_key",
    "primary_prefix",
    "require_collator",
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
    if type_name not in ("text", "varchar", "char", "jsonb"):
        if named is not None:
            raise pg_errors.DatatypeMismatch(f"collations are not supported by type {type_name}")
        return None
    if type_name == "jsonb":  # its strings compare by the database's collation
        if named is not None:
            raise pg_errors.DatatypeMismatch(f"collations are not supported by type {type_name}")
        return database_collation(conn)
    return named_collation(conn, named) if named is not None else database_collation(conn)
