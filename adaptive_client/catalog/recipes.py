"""Recipes: values to onion ciphertexts and back, combining encodings and schemes.

The primitives (``schemes``) and encodings know nothing of onions; this module stacks
them: an Eq onion at RND stores ``RND(DET(encode(v)))``, an Ord onion at RND stores
``RND(OPE(encode_ord(v)))``, and so on.  Decryption reads the layer tag of each stored
value, so it is right whatever layer the client's cached metadata believes the column
is at.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from ..errors import CiphertextError, EncodingError, UnsupportedQuery
from ..schemes import native
from ..schemes.rnd import seal_each
from ..stats import STATS
from ..values.encoding_base import NATIVE_BYTES, compiled_form
from ..values.interval_encoding import intervals_as_written
from ..values.session import time_zone
from ..values.wire import SumValue, WordTokens
from . import containment
from .metadata import ColumnMeta, OnionColumn
from .onions import Onion

# Exact onions (the value as written, RND alone) are stored and read here (ddl asks)
EXACT_ONIONS = True


def _rnd_alone(enc: Any, oc: OnionColumn) -> Callable[[Any], bytes]:
    """The encoder of an onion with RND alone: a Single onion's canonical bytes, an
    Exact onion's value as written."""
    return enc.to_exact_bytes if oc.onion is Onion.EXACT else enc.to_bytes


def encrypt(col: ColumnMeta, oc: OnionColumn, value: Any, layer: str | None = None) -> Any:
    """The stored form of a (coerced, non-NULL) plaintext in ``oc`` at ``layer``."""
    layer = layer or oc.layer
    enc = col.encoding
    inner = oc.innermost
    if layer == "PLAIN":
        return value
    if inner == "DET":
        STATS.count("DET")
        ct: bytes = _memo(oc, "DET", enc.to_bytes(value), oc.det.encrypt)
    elif inner == "OPE":
        STATS.count("OPE")
        ct = _memo(oc, "OPE", enc.to_ope(value), oc.ope.encrypt)
    elif inner == "ASHE":
        STATS.count("ASHE")
        return SumValue(oc.ashe.encrypt(enc.to_hom(value)))
    elif inner == "HOM":
        STATS.count("HOM")
        return Decimal(oc.hom.encrypt(enc.to_hom(value)))
    elif inner == "SEARCH":
        STATS.count("SEARCH")
        tokens = oc.search.tokens(str(value))
        return _search_rnd(oc, [tokens])[0] if layer == "RND" else WordTokens(tokens)
    elif inner == "TRIGRAM":
        STATS.count("SEARCH")
        grams = oc.trigram.tokens(str(value))
        return _search_rnd(oc, [grams])[0] if layer == "RND" else WordTokens(grams)
    elif inner == "CONTAIN":
        STATS.count("SEARCH")
        held = oc.contain.tokens(containment.features(enc, value))
        return _search_rnd(oc, [held])[0] if layer == "RND" else WordTokens(held)
    elif inner == "RND":  # Single or Exact onion at RND: no inner layer
        STATS.count("RND")
        return oc.rnd.encrypt(_rnd_alone(enc, oc)(value))
    else:  # pragma: no cover - stacks are validated when loaded
        raise EncodingError(f"no recipe for layer {inner}")
    if layer == "RND":
        STATS.count("RND")
        return oc.rnd.encrypt(ct)
    return ct


def encrypt_many(
    col: ColumnMeta, oc: OnionColumn, values: list[Any], layer: str | None = None
) -> list[Any]:
    """:func:`encrypt` of many (coerced, non-NULL) values: the same stored forms, with one
    batched call per layer (OPE walks its tree once for all, RND draws all IVs at once)."""
    layer = layer or oc.layer
    n = len(values)
    if layer == "PLAIN" or not n:
        return list(values)
    enc = col.encoding
    inner = oc.innermost
    if inner == "DET":
        STATS.count("DET", n=n)
        cts = _memo_many(oc, "DET", [enc.to_bytes(v) for v in values], oc.det.encrypt_many)
    elif inner == "OPE":
        STATS.count("OPE", n=n)
        cts = _memo_many(oc, "OPE", [enc.to_ope(v) for v in values], oc.ope.encrypt_many)
    elif inner == "ASHE":
        STATS.count("ASHE", n=n)
        return [SumValue(s) for s in oc.ashe.encrypt_many([enc.to_hom(v) for v in values])]
    elif inner == "HOM":
        STATS.count("HOM", n=n)
        return [Decimal(oc.hom.encrypt(enc.to_hom(v))) for v in values]
    elif inner == "SEARCH":
        STATS.count("SEARCH", n=n)
        tokens = oc.search.tokens
        if layer == "RND":
            return _search_rnd(oc, [tokens(str(v)) for v in values])
        return [WordTokens(tokens(str(v))) for v in values]
    elif inner == "TRIGRAM":
        STATS.count("SEARCH", n=n)
        grams = [oc.trigram.tokens(str(v)) for v in values]
        return _search_rnd(oc, grams) if layer == "RND" else [WordTokens(g) for g in grams]
    elif inner == "CONTAIN":
        STATS.count("SEARCH", n=n)
        tokenize, features = oc.contain.tokens, containment.features
        held = [tokenize(features(enc, v)) for v in values]
        return _search_rnd(oc, held) if layer == "RND" else [WordTokens(t) for t in held]
    elif inner == "RND":
        STATS.count("RND", n=n)
        encode = _rnd_alone(enc, oc)
        return oc.rnd.encrypt_many([encode(v) for v in values])
    else:  # pragma: no cover - stacks are validated when loaded
        raise EncodingError(f"no recipe for layer {inner}")
    if layer == "RND":
        STATS.count("RND", n=n)
        return oc.rnd.encrypt_many(cts)
    return cts


class RowSealer:
    """The stored values of one row's onions (a single-row INSERT): what :func:`encrypt`
    makes for each (column, onion), from each column's coerced value, in one call.

    Each value is coerced once by the caller for all its onions; the innermost layers
    are dispatched on codes resolved when the statement is compiled (the layer itself is
    read on each call: a peel may move it); DET and OPE are memoized as in
    :func:`encrypt`; every RND layer of the row is sealed in one batch, each under its own
    onion's key and a fresh nonce of its own (one read from the CSPRNG for the row); the
    statistics are counted once per scheme instead of once per value."""

    __slots__ = ("_slots", "_width")

    def __init__(self, slots: Sequence[tuple[int, ColumnMeta, OnionColumn]]) -> None:
        """``slots``: per stored column of the row, in order, the index of its plain
        column in the values the call receives, the column and the onion."""
        self._width = len(slots)
        # per slot: (value index, column, onion, kind, encoder, memo, encrypt function,
        # the onion's RND scheme if it has that layer)
        self._slots: list[tuple[int, ColumnMeta, OnionColumn, int, Any, Any, Any, Any]] = []
        for ci, col, oc in slots:
            inner, enc = oc.innermost, col.encoding
            rnd = oc.rnd if "RND" in oc.stack else None
            entry: tuple[int, ColumnMeta, OnionColumn, int, Any, Any, Any, Any]
            if inner == "DET":
                memo = oc.memo.setdefault("DET", {})  # (cleared in place when full)
                entry = (ci, col, oc, _DET, enc.to_bytes, memo, oc.det.encrypt, rnd)
            elif inner == "OPE":
                memo = oc.memo.setdefault("OPE", {})
                entry = (ci, col, oc, _OPE, enc.to_ope, memo, oc.ope.encrypt, rnd)
            elif inner == "SEARCH":
                entry = (ci, col, oc, _SEARCH, str, None, oc.search.tokens, rnd)
            elif inner == "RND":  # a Single or Exact onion: the value under RND alone
                entry = (ci, col, oc, _SINGLE, _rnd_alone(enc, oc), None, None, rnd)
            else:
                entry = (ci, col, oc, _OTHER, None, None, None, rnd)
            self._slots.append(entry)

    def __call__(self, values: Sequence[Any]) -> list[Any]:
        return self.fill(values, [None] * self._width)

    def fill(
        self, values: Sequence[Any], out: list[Any], only: Sequence[int] | None = None
    ) -> list[Any]:
        """``out`` with the stored values of the slots ``only`` (all: None) made from
        ``values``, each column's coerced value (by the slots' value indexes)."""
        det = ope = search = 0
        # the slots whose inner value gets its onion's RND layer, their schemes and values
        wrap: list[int] = []
        rnds: list[Any] = []
        inners: list[bytes] = []
        entries = self._slots
        for slot in range(self._width) if only is None else only:
            ci, col, oc, kind, encode, memo, fn, rnd = entries[slot]
            v = values[ci]
            if v is None:
                continue
            layer = oc.layer
            if layer == "PLAIN":
                out[slot] = v
                continue
            if kind <= _OPE:  # DET or OPE: memoized
                if kind == _DET:
                    det += 1
                else:
                    ope += 1
                x = encode(v)
                ct = memo.get(x)
                if ct is None:
                    if len(memo) >= _MEMO_LIMIT:
                        memo.clear()
                    ct = memo[x] = fn(x)
            elif kind == _SEARCH and layer == "RND":
                search += 1
                ct = b"".join(fn(encode(v)))
            elif kind == _SINGLE:
                ct = encode(v)  # (its layer is RND: sealed with the row's other RND layers)
            else:  # HOM, trigrams, a Search onion peeled: as encrypt()
                out[slot] = encrypt(col, oc, v)
                continue
            if layer == "RND":
                wrap.append(slot)
                rnds.append(rnd)
                inners.append(ct)
            else:
                out[slot] = ct
        if wrap:
            slots = self._slots
            for j, ct in zip(wrap, seal_each(rnds, inners), strict=True):
                out[j] = WordTokens([ct]) if slots[j][3] == _SEARCH else ct
        if det or ope or search or wrap:
            STATS.encrypted_row(det, ope, search, len(wrap))
        return out


_DET, _OPE, _SEARCH, _SINGLE, _OTHER = range(5)  # RowSealer's kinds of innermost layer


def _search_rnd(oc: OnionColumn, token_sets: list[list[bytes]]) -> list[Any]:
    """A token onion (Search, Substr, Contain) at RND: each value's (sorted, 16-byte)
    tokens concatenated and encrypted as one RND value, stored as a one-element array.
    Nothing repeats across rows; the length (13 + 16 bytes per token) reveals how many
    distinct tokens the value has (words, trigrams, features).  The peel splits the
    decrypted value back into its tokens (sql/udf/30_peel_layer.sql)."""
    STATS.count("RND", n=len(token_sets))
    sealed = oc.rnd.encrypt_many([b"".join(t) for t in token_sets])
    return [WordTokens([s]) for s in sealed]


_MEMO_LIMIT = 100_000
_rnd_native = native.load("adaptive_rnd_native")  # (its RowOpener: row_opener())
# whether the current connection opens values with the compiled layer (connect(native=))
COMPILED: ContextVar[bool] = ContextVar("COMPILED", default=True)


def _memo_many(oc: OnionColumn, layer: str, plains: list[Any], many: Any) -> list[bytes]:
    """:func:`_memo` for a batch: the values not memoized yet are encrypted in one call."""
    cache = oc.memo.setdefault(layer, {})
    missing = list(dict.fromkeys(x for x in plains if x not in cache))
    if not missing:
        return [cache[x] for x in plains]
    fresh = dict(zip(missing, many(missing), strict=True))
    out = [fresh[x] if x in fresh else cache[x] for x in plains]
    if len(cache) + len(fresh) > _MEMO_LIMIT:
        cache.clear()
    if len(fresh) <= _MEMO_LIMIT:
        cache.update(fresh)
    return out


def _memo(oc: OnionColumn, layer: str, plain: Any, fn: Any) -> bytes:
    """Deterministic layers are memoized per onion column (bounded)."""
    cache = oc.memo.setdefault(layer, {})
    ct = cache.get(plain)
    if ct is None:
        if len(cache) >= _MEMO_LIMIT:
            cache.clear()
        ct = cache[plain] = fn(plain)
    return ct


# Plaintexts kept per onion column, by stored value: every layer decrypts
# deterministically, so a stored value read again (an unchanged row: names, prices,
# flags, read by key over and over) is the same plaintext.  Only immutable values are
# kept (an application may change a list it was given); bounded, emptied when full.
_OPENED_LIMIT = 8192
_KEPT_TYPES = frozenset({int, str, bytes, Decimal, float, bool, date, datetime, time, timedelta})


def decrypt(col: ColumnMeta, oc: OnionColumn, stored: Any) -> Any:
    """Plaintext of a stored value (self-describing: the value's tag says its layer)."""
    if stored is None:
        return None
    inner = oc.stack[-1]  # (oc.innermost, without the property call)
    if inner == "PLAIN":
        return stored
    if inner == "HOM":
        STATS.count("HOM", decrypt=True)
        return col.encoding.from_hom_sum(oc.hom.decrypt(int(stored)))
    if inner == "ASHE":
        STATS.count("ASHE", decrypt=True)
        return col.encoding.from_hom(oc.ashe.decrypt(list(stored)))
    data = stored if type(stored) is bytes else bytes(stored)
    opened = oc.opened
    value = opened.get(data)
    if value is not None:
        # (counted as decrypted: the statistics count what statements need, as the
        # memoized encryptions are counted)
        STATS.decrypted(inner, inner != "RND" and data[0] == 1)
        if type(value) is datetime and value.tzinfo is not None:
            # a timestamptz is shown in the session's zone, which may have changed
            zone = time_zone()
            return value if value.tzinfo is zone else value.astimezone(zone)
        return value
    value = _decrypt(col, oc, inner, data)
    # (an interval's Exact onion reads as a timedelta or, for COPY ... TO, as the
    # fields it was written with: not kept, each read decodes it as asked)
    if type(value) in _KEPT_TYPES and not (oc.onion is Onion.EXACT and type(value) is timedelta):
        if len(opened) >= _OPENED_LIMIT:
            opened.clear()
        opened[data] = value
    return value


def row_opener(cells: Sequence[tuple[ColumnMeta, OnionColumn, int] | None]) -> Any | None:
    """The compiled opener of a result's rows (native/rnd/src/open.rs ``RowOpener``):
    per output, the (column, onion, position) it decrypts, or None for an output
    computed otherwise; None where no output has a compiled opener."""
    if _rnd_native is None:
        return None
    openers = [None if c is None else c[1].opener(compiled_form(c[0].encoding)) for c in cells]
    if not any(openers):
        return None
    return _rnd_native.RowOpener(openers, [0 if c is None else c[2] for c in cells])


def _decrypt(col: ColumnMeta, oc: OnionColumn, inner: str, data: bytes) -> Any:
    if not data:
        raise CiphertextError("empty ciphertext")
    enc = col.encoding
    if inner != "OPE" and _rnd_native is not None and COMPILED.get():
        # (the compiled opener, where the onion has one and decides the value: the same
        # value, a few times faster; what it hands back goes the way below)
        form = compiled_form(enc)
        opener = oc.opener(form)
        if opener is not None:
            values, redo, outer = opener.open([data])
            if not redo:
                STATS.decrypted(inner, outer > 0)
                return enc.from_bytes(values[0]) if form[0] == NATIVE_BYTES else values[0]
    if inner == "RND":  # Single or Exact RND
        STATS.decrypted("RND", False)
        decode = enc.from_exact_bytes if oc.onion is Onion.EXACT else enc.from_bytes
        return decode(oc.rnd.decrypt(data))
    outer = data[0] == 1
    if outer:
        data = oc.rnd.decrypt(data)
    if inner == "DET":
        STATS.decrypted("DET", outer)
        return enc.from_bytes(oc.det.decrypt(data))
    if inner == "OPE":
        STATS.decrypted("OPE", outer)
        return enc.from_ope(oc.ope.decrypt(data))
    if outer:
        STATS.count("RND", decrypt=True)
    raise CiphertextError(f"cannot decrypt from a {inner} onion")


def decrypt_stored_many(col: ColumnMeta, oc: OnionColumn, stored: list[Any]) -> list[Any]:
    """The values of a stored column in the forms the column holds them -- what
    ``coerce`` gave when they were written and the encoders take -- for a build that
    encrypts them into another onion.  :func:`decrypt_many`, with an interval's Exact
    onion read as the fields it was written with (not the timedelta an application is
    handed, which folds months into days).  Not coerced again: a stored value is already
    in its column's domain, and coercing it anew need not give it back (a float4 read
    as a float rounds again; a timestamp(2) rounded past the last instant PostgreSQL
    accepts as input is one it stores)."""
    with intervals_as_written():
        return decrypt_many(col, oc, stored)


def decrypt_many(col: ColumnMeta, oc: OnionColumn, stored: list[Any]) -> list[Any]:
    """:func:`decrypt` of a whole result column: the same plaintexts, with one batched call
    per layer (RND's CTR, DET's short values through AES in one call, OPE's tree walked
    once) instead of a chain of calls per value."""
    inner = oc.innermost
    # a column without NULLs (the usual case) skips the bookkeeping of their positions
    at: list[int] | None = (
        None if None not in stored else [i for i, v in enumerate(stored) if v is not None]
    )
    present = stored if at is None else [stored[i] for i in at]
    if inner == "ASHE":  # the pads of the whole column in one AES call
        STATS.count("ASHE", decrypt=True, n=len(present))
        from_hom = col.encoding.from_hom
        return _placed(at, len(stored), [from_hom(m) for m in oc.ashe.decrypt_many(present)])
    if inner not in ("DET", "OPE"):  # PLAIN, HOM, Single RND: nothing to batch
        return [decrypt(col, oc, v) for v in stored]
    data = list(map(bytes, present))  # (bytes of bytes is the object itself)
    if b"" in data:
        raise CiphertextError("empty ciphertext")
    outer = [j for j, d in enumerate(data) if d[0] == 1]
    if outer:
        STATS.count("RND", decrypt=True, n=len(outer))
        for j, d in zip(outer, oc.rnd.decrypt_many([data[j] for j in outer]), strict=True):
            data[j] = d
    enc = col.encoding
    STATS.count(inner, decrypt=True, n=len(data))
    # equal DET or OPE ciphertexts are equal values (both schemes are deterministic):
    # each distinct one is decrypted and decoded once (a fetched column often repeats
    # values: flags, dates, quantities, prices)
    decode: Callable[[Any], Any] = enc.from_bytes if inner == "DET" else enc.from_ope
    decrypt_all: Callable[[list[bytes]], Sequence[Any]] = (
        oc.det.decrypt_many if inner == "DET" else oc.ope.decrypt_many
    )
    distinct = list(dict.fromkeys(data))
    if len(distinct) < len(data):
        values = dict(zip(distinct, [decode(p) for p in decrypt_all(distinct)], strict=True))
        plain = [values[d] for d in data]
    else:
        plain = [decode(p) for p in decrypt_all(data)]
    return _placed(at, len(stored), plain)


def _placed(at: list[int] | None, n: int, values: list[Any]) -> list[Any]:
    """``values`` at positions ``at`` of ``n`` (NULL elsewhere); all of them if None."""
    if at is None:
        return values
    out: list[Any] = [None] * n
    for i, v in zip(at, values, strict=True):
        out[i] = v
    return out


def hom_sum(col: ColumnMeta, oc: OnionColumn, stored: Any) -> Any:
    """A SUM computed by the server over the Sum onion, as PostgreSQL would type it."""
    if stored is None:
        return None
    STATS.count("HOM", decrypt=True)
    return col.encoding.from_hom_sum(oc.hom.decrypt(int(stored)))


def ashe_sum(col: ColumnMeta, oc: OnionColumn, hi: Any, lo: Any, count: Any, nonces: Any) -> Any:
    """A SUM the server computed over an ASHE Sum onion: its sums of the two halves,
    the number of values summed and their nonces (NULL when no value was summed)."""
    if not count:
        return None
    STATS.count("ASHE", decrypt=True)
    return col.encoding.from_hom_sum(oc.ashe.decrypt_sum(hi, lo, count, bytes(nonces)))


def ashe_sum_many(
    col: ColumnMeta,
    oc: OnionColumn,
    sums: list[tuple[Any, Any, Any, Any]],
) -> list[Any]:
    """:func:`ashe_sum` of many server rows' ``(hi, lo, count, nonces)``, one AES call
    for all their pads."""
    at = [i for i, s in enumerate(sums) if s[2]]
    out: list[Any] = [None] * len(sums)
    if not at:
        return out
    STATS.count("ASHE", decrypt=True, n=len(at))
    plain = oc.ashe.decrypt_sums(
        [(int(sums[i][0]), int(sums[i][1]), int(sums[i][2]), bytes(sums[i][3])) for i in at]
    )
    for i, m in zip(at, plain, strict=True):
        out[i] = col.encoding.from_hom_sum(m)
    return out


def ope_value(col: ColumnMeta, oc: OnionColumn, stored: Any) -> Any:
    """Decrypt a MIN/MAX computed by the server over an Ord onion."""
    if stored is None:
        return None
    data = bytes(stored)
    if data[0] == 1:
        data = oc.rnd.decrypt(data)
    STATS.count("OPE", decrypt=True)
    return col.encoding.from_ope(oc.ope.decrypt(data))


def word_token(oc: OnionColumn, pattern: Any) -> list[bytes]:
    r"""The token array for ``col ~ '\mword\M'``."""
    text = str(pattern)
    if not (text.startswith("\\m") and text.endswith("\\M")):
        # (a parameter's pattern is known only now: the plan searches the words of the
        # Search onion; another pattern is a refusal, as a constant one is not)
        raise UnsupportedQuery(
            r"a regular expression parameter other than a word search ('\mword\M') over an "
            "encrypted column: write the pattern as a constant",
            "regular expression",
        )
    STATS.count("SEARCH")
    return [oc.search.token(text[2:-2])]


def onion_order(col: ColumnMeta) -> list[OnionColumn]:
    """Onions in the order the client prefers to decrypt from: cheapest first."""
    pref = {
        Onion.EXACT: -1,
        Onion.SINGLE: 0,
        Onion.EQ: 1,
        Onion.ORD: 2,
        Onion.SUM: 3,
        Onion.SEARCH: 4,
        Onion.SUBSTR: 5,
        Onion.CONTAIN: 6,
    }
    return sorted(col.onions.values(), key=lambda oc: pref[oc.onion])
