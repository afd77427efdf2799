"""The compiled binder (``compile/plan.py CompiledBinder``) makes a statement's DET and
OPE comparands -- what ``WHERE key = %s`` compares an Eq onion with, and a range bound
an Ord onion -- as the Python path's builders make them, or leaves them to those
builders.

Parameters drawn by hypothesis from every Python type an application passes (see
``test_sealer.VALUES``: ints beyond a column's range, bools, floats with NaN, Decimals,
strings with NUL, trailing spaces and beyond a column's length, dates) are bound for
columns of every type whose comparands a builder keeps (integers, numerics, text,
``varchar(n)``, ``char(n)``), their Eq onion at RND and at DET and their Ord onion at RND
and at OPE (a range's bound), by both paths: either both raise the same error, or both
give the same parameters -- the DET or OPE ciphertext, never sealed under RND, or the
comparand that matches nothing.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sealer import EXAMPLES, _column, drawn_row
from test_sealer import TYPES as SEALED_TYPES

from adaptive_client.catalog.metadata import ColumnMeta
from adaptive_client.catalog.onions import Cap, Onion
from adaptive_client.compile.comparands import NO_MATCH, comparand_builder
from adaptive_client.compile.constants import PositionalParam
from adaptive_client.compile.plan import CompiledBinder, ParamBuilder
from adaptive_client.compile.scope import ColumnRef
from adaptive_client.stats import PROCESS, Stats, bind

pytest.importorskip("adaptive_client.adaptive_rnd_native")

# the types whose comparands a builder keeps (compile/comparands.py): numbers and text
TYPES = [t for t in SEALED_TYPES if not t.startswith(("boolean", "date", "timestamp"))]


def _builders(cols: list[ColumnMeta]) -> list[ParamBuilder]:
    """Each column's comparand builder: equality with an Eq onion (at DET), a range
    bound of an Ord onion (at OPE)."""
    out = []
    for i, col in enumerate(cols):
        oc = col.onions[Onion.EQ]  # (test_sealer's columns keep any onion there)
        cap, layer = (Cap.EQ, "DET") if oc.innermost == "DET" else (Cap.ORD, "OPE")
        ref = ColumnRef("t", None, col)  # type: ignore[arg-type]
        out.append(comparand_builder(ref, oc, cap, layer, PositionalParam(i)))
    return out


def _outcome(fn: Any) -> Any:
    try:
        return fn()
    except Exception as exc:  # (compared by class and message)
        return exc


@pytest.mark.parametrize("stack", ["eq-rnd", "eq-det", "ord-rnd", "ord-ope"])
@settings(max_examples=EXAMPLES, deadline=None)
@given(data=st.data())
def test_comparands_made_as_the_builders_make_them(stack: str, data: st.DataObject) -> None:
    kinds, cols, params = drawn_row(data, stack, TYPES)
    builders = _builders(cols)
    binder = CompiledBinder.of(builders)
    if not isinstance(binder, CompiledBinder):
        taken = {"smallint", "integer", "bigint"}
        if stack.startswith("eq"):
            taken |= {"text", "varchar(6)", "char(5)"}
        assert not taken & set(kinds)
        return  # (every comparand its builder's: numerics, an Ord onion's text)
    want = _outcome(lambda: [b(params) for b in builders])
    got = _outcome(lambda: binder(params))
    if isinstance(want, Exception):
        assert type(got) is type(want) and str(got) == str(want), (params, got, want)
        return
    assert got == want, (params, got, want)
    for ct in got:
        if ct is not None and ct != NO_MATCH and stack.startswith("eq"):
            assert ct[0] == 2  # (the DET layer's tag: never sealed under RND)


def test_a_key_lookup_is_bound_in_one_call_and_counted() -> None:
    """Integer and text keys leave nothing to the builders; each comparand made is
    counted as one DET encryption, as the builders count theirs."""
    cols = [_column("a", "integer", "eq-rnd"), _column("b", "varchar(20)", "eq-det")]
    builders = _builders(cols)
    binder = CompiledBinder.of(builders)
    assert isinstance(binder, CompiledBinder)
    sealed, left, counts = binder._sealer.seal((7, "owner"), bytes(24))
    assert left == [] and counts == (2, 0, 0)
    ordered = _column("o", "integer", "ord-rnd")
    (bound_builder,) = _builders([ordered])
    ord_binder = CompiledBinder.of([bound_builder])
    assert isinstance(ord_binder, CompiledBinder)
    assert ord_binder._sealer.seal((7,), bytes(12))[1:] == ([], (0, 1, 0))
    assert ord_binder((7,)) == [bound_builder((7,))]
    stats = Stats()
    bind(stats)
    try:
        bound = binder([7, "owner"])
        assert stats.encryptions["DET"] == 2
        assert bound == [b([7, "owner"]) for b in builders] == list(sealed)
        assert stats.encryptions["DET"] == 4
        # NULL is no encryption; a string over the column's length is its builder's,
        # which encrypts it (it equals no stored value)
        assert binder((None, "x" * 30))[0] is None
        assert stats.encryptions["DET"] == 5
    finally:
        bind(PROCESS)


def test_too_few_parameters_raise_as_the_builders_raise() -> None:
    cols = [_column("a", "integer", "eq-det"), _column("b", "integer", "eq-det")]
    builders = _builders(cols)
    binder = CompiledBinder.of(builders)
    assert isinstance(binder, CompiledBinder)
    want = _outcome(lambda: [b((1,)) for b in builders])
    got = _outcome(lambda: binder((1,)))
    assert isinstance(want, Exception)
    assert type(got) is type(want) and str(got) == str(want)
