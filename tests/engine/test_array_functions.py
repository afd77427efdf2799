"""The engine's array functions and operators against PostgreSQL: each case evaluated by
the server and by the registered Python function over the same literals (results with
their bounds, NULLs, three-valued logic, SQLSTATEs and messages), on a C and an ICU
database; drawn arrays for containment, overlap and membership."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.engine import array_functions
from adaptive_client.values.encodings import encoding_for

from .conftest import OMIT, Judge, Lit, lit

IA, TA, NA = "integer[]", "text[]", "numeric[]"


def i(n: int | None) -> Lit:
    return lit(None if n is None else str(n), "integer")


def t(s: str | None) -> Lit:
    return lit(s, "text")


def n(s: str | None) -> Lit:
    return lit(s, "numeric")


INTS = ["{}", "{1,2,3}", "{1,NULL,3}", "{{1,2},{3,4}}", "[0:2]={5,6,7}", "{NULL}",
        "[-2:-1]={8,9}", "{{{1},{2}},{{3},{4}}}", "[2:3][0:1]={{1,2},{3,4}}", "{3,1,3,3}"]  # fmt: skip
TEXTS = ['{a,"b c",NULL,""}', "{}", '{"NULL",null,x}', "{{a,b},{c,d}}", "{é,e,E}"]
NUMS = ["{1.0,1,1.50,NULL}", "{2.00}", "{}", "{NaN,1}"]

CASES: list[tuple[str, tuple[Lit, ...]]] = [
    *[
        (f, (lit(a, IA), i(d)))
        for f in ("array_length", "array_lower", "array_upper")
        for a in INTS
        for d in (0, 1, 2, 3, -1)
    ],
    *[
        (f, (lit(a, IA),))
        for f in ("array_ndims", "array_dims", "cardinality", "unnest")
        for a in INTS
    ],
    *[(f, (lit(a, TA),)) for f in ("cardinality", "unnest", "array_dims") for a in TEXTS],
    ("array_length", (lit(None, IA), i(1))),
    ("cardinality", (lit(None, IA),)),
    # append, prepend, cat, ||
    *[("array_append", (lit(a, IA), i(x))) for a in [*INTS, None] for x in (9, None)],
    *[("array_prepend", (i(x), lit(a, IA))) for a in [*INTS, None] for x in (9, None)],
    *[
        (f, (lit(a, IA), lit(b, IA)))
        for f in ("array_cat", "||")
        for a in [*INTS, None]
        for b in [
            "{}",
            "{7,8}",
            "{{7,8}}",
            "{{7,8},{9,10}}",
            "[0:1]={7,8}",
            "{{{7}}}",
            "{{7},{8}}",
            "{NULL}",
            None,
            "[5:6][0:1]={{7,8},{9,10}}",
        ]
    ],
    *[("||", (lit(a, IA), i(x))) for a in INTS[:5] for x in (9, None)],
    *[("||", (i(x), lit(a, IA))) for a in INTS[:5] for x in (9, None)],
    ("||", (lit("{a}", TA), lit("{b,NULL}", TA))),
    # remove, replace, position(s)
    *[("array_remove", (lit(a, IA), i(x))) for a in [*INTS, None] for x in (1, 3, 9, None)],
    *[("array_remove", (lit(a, NA), n(x))) for a in NUMS for x in ("1", "1.5", None, "NaN")],
    *[
        ("array_replace", (lit(a, IA), i(x), i(y)))
        for a in [*INTS, None]
        for x in (1, 3, None)
        for y in (0, None)
    ],
    *[("array_position", (lit(a, IA), i(x))) for a in [*INTS, None] for x in (1, 3, 6, 9, None)],
    *[
        ("array_position", (lit(a, IA), i(x), i(s)))
        for a in ("{3,1,3,3}", "[0:2]={5,6,7}", "{}")
        for x in (3, 7)
        for s in (-5, 0, 1, 2, 3, 5, None)
    ],
    *[("array_positions", (lit(a, IA), i(x))) for a in [*INTS, None] for x in (3, 9, None)],
    *[("array_position", (lit(a, NA), n(x))) for a in NUMS for x in ("1", "1.500", None, "NaN")],
    *[("array_position", (lit(a, TA), t(x))) for a in TEXTS for x in ("a", "e", "", None, "NULL")],
    # array_to_string, string_to_array
    *[
        ("array_to_string", (lit(a, ty), t(d), *extra))
        for a, ty in [
            *((x, IA) for x in INTS),
            *((x, TA) for x in TEXTS),
            *((x, NA) for x in NUMS),
            ("{t,f,NULL}", "boolean[]"),
        ]
        for d in (",", "", None)
        for extra in ((), (t("*"),), (t(None),))
    ],
    *[
        ("string_to_array", (t(s), t(d), *extra))
        for s in ("a,b,,c", "", "abc", None, "a, b,NULL", "xx")
        for d in (",", "", None, ", ", "x", "xx")
        for extra in ((), (t("NULL"),), (t(""),), (t(None),))
    ],
    # containment, overlap
    *[
        (op, (lit(a, IA), lit(b, IA)))
        for op in ("@>", "<@", "&&")
        for a in [
            "{}",
            "{1,2,3}",
            "{1,NULL,3}",
            "{{1,2},{3,4}}",
            "[0:2]={5,6,7}",
            "{NULL}",
            "{3,3}",
        ]
        for b in ["{}", "{1}", "{3,1}", "{NULL}", "{1,NULL}", "{{1},{3}}", "{5}", "{1,1,1,1}"]
    ],
    *[
        (op, (lit(a, NA), lit(b, NA)))
        for op in ("@>", "<@", "&&")
        for a in NUMS
        for b in ("{1}", "{1.500}", "{NaN}", "{}")
    ],
    *[
        (op, (lit(a, TA), lit(b, TA)))
        for op in ("@>", "&&")
        for a in TEXTS
        for b in ("{a}", "{E}", '{""}', "{NULL}")
    ],
    # = ANY and its kin
    *[
        (op, (i(x), lit(a, IA)))
        for op in ("= ANY", "<> ALL", "= ALL", "<> ANY")
        for a in ["{}", "{1,2,3}", "{1,NULL,3}", "{{1,2},{3,4}}", "{NULL}", "{3,3}", None]
        for x in (1, 3, 9, None)
    ],
    *[("= ANY", (n(x), lit(a, NA))) for a in NUMS for x in ("1", "1.5", "NaN", None)],
    # subscripts and slices
    *[
        ("[]", (lit(a, IA), *map(i, subs)))
        for a in INTS
        for subs in ((1,), (0,), (2,), (3,), (-1,), (1, 1), (2, 2), (3, 1), (1, 1, 1), (None,))
    ],
    *[
        ("[:]", (lit(a, IA), *bounds))
        for a in INTS
        for bounds in (
            (i(1), i(2)),
            (i(0), i(1)),
            (i(2), i(9)),
            (OMIT, i(2)),
            (i(2), OMIT),
            (OMIT, OMIT),
            (i(3), i(2)),
            (i(1), i(1), i(2), i(2)),
            (OMIT, OMIT, i(2), OMIT),
            (i(1), i(2), i(1), i(1), i(1), i(1)),
            (i(None), i(2)),
        )
    ],
]


# facts of PostgreSQL's own regression suite (arrays.sql), as cases
FA = "double precision[]"
REGRESSION: list[tuple[str, tuple[Lit, ...]]] = [
    ("array_cat", (lit("{1,2}", IA), lit("{{3,4},{5,6}}", IA))),
    ("array_cat", (lit("{{3,4},{5,6}}", IA), lit("{1,2}", IA))),
    ("||", (lit("{{{hello,world}}}", TA), lit("{{{happy,birthday}}}", TA))),
    ("||", (lit("{{1,2},{3,4}}", IA), lit("{5,6}", IA))),
    ("[]", (lit("[0:1]={1.1,2.2}", FA), i(0))),
    (
        "[:]",
        (
            lit("{{{aaa,aab},{aba,abb},{aca,acb}},{{baa,bab},{bba,bbb},{bca,bcb}}}", TA),
            i(1),
            i(2),
            i(2),
            i(3),
            OMIT,
            i(1),
        ),
    ),
    ("unnest", (lit("{1,2,3,4.5}", FA),)),
    ("unnest", (lit("{1,2,3,4.5}", NA),)),
    ("unnest", (lit("{1,2,3,NULL,4,NULL,NULL,5,6}", TA),)),
    ("array_remove", (lit("{1,2,2,3}", IA), i(2))),
    ("array_remove", (lit("{1,NULL,NULL,3}", IA), i(None))),
    ("array_remove", (lit("{A,CC,D,C,RR}", TA), t("RR"))),
    ("array_remove", (lit("{X,X,X}", TA), t("X"))),
    ("array_replace", (lit("{1,2,5,4}", IA), i(5), i(None))),
    ("array_replace", (lit("{1,2,NULL,4,NULL}", IA), i(None), i(5))),
    ("array_replace", (lit("{A,B,DD,B}", TA), t("B"), t("CC"))),
    ("array_replace", (lit("{AB,NULL,CDE}", TA), t(None), t("12"))),
    *[
        ("string_to_array", (t(x), t(d), *extra))
        for x, d, extra in [
            ("1|2|3|", "|", ()),
            ("1||2|3||", "||", ()),
            ("1|2|3", "", ()),
            ("1|2|3", None, ()),
            ("abc", "", (t("abc"),)),
            ("abc", ",", (t("abc"),)),
            ("1,2,3,4,,6", ",", (t(""),)),
            ("1,2,3,4,*,6", ",", (t("*"),)),
        ]
    ],
    ("array_to_string", (lit("{1,2,3,4,NULL,6}", IA), t(","), t("*"))),
    ("array_to_string", (lit("{1,2,3,4,NULL,6}", IA), t(None))),
    ("cardinality", (lit("[2:4]={5,6,7}", IA),)),
    ("cardinality", (lit("{{1,2},{3,4},{5,6}}", IA),)),
    ("= ALL", (i(33), lit("{33,NULL,33}", IA))),
    ("= ALL", (i(None), lit("{}", IA))),
    ("array_append", (lit("{42}", IA), i(6))),
    ("array_prepend", (i(6), lit("{42}", IA))),
    # elements equal as their type's = says
    *[
        (op, (lit(x, "double precision"), lit("{NaN,1,-0,Infinity}", FA)))
        for op in ("= ANY", "<> ALL")
        for x in ("NaN", "0", "-0", "1", "Infinity", "-Infinity")
    ],
    ("@>", (lit("{NaN,0}", FA), lit("{-0,NaN}", FA))),
    ("array_position", (lit("{1,-0,0}", FA), lit("0", "double precision"))),
    ("array_remove", (lit("{1,-0,0}", FA), lit("0", "double precision"))),
    ("= ANY", (lit("ab ", "char(3)"), lit("{ab,abc}", "char(3)[]"))),
    ("= ANY", (lit("ab", "varchar(3)"), lit('{"ab ",ab}', "varchar(3)[]"))),
    ("array_positions", (lit('{"ab ",ab,AB}', "text[]"), t("ab"))),
    ("= ANY", (lit("1.0", "numeric"), lit("{1.00,2}", NA))),
    ("&&", (lit("{2020-01-01,NULL}", "date[]"), lit("{2020-01-01}", "date[]"))),
    ("array_to_string", (lit("{2020-01-01 10:00:00.5,NULL}", "timestamp[]"), t("|"), t("?"))),
    ("array_to_string", (lit("{1.5,NaN,-Infinity}", FA), t("|"))),
    ("unnest", (lit("{{t,f},{NULL,t}}", "boolean[]"),)),
]
CASES += REGRESSION


def _id(case: tuple[str, tuple[Lit, ...]]) -> str:
    name, args = case
    return f"{name}({', '.join(str(a.text) for a in args)})"[:90]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_array_case(judge: Judge, case: tuple[str, tuple[Lit, ...]]) -> None:
    judge.check(case[0], *case[1])


# --- drawn arrays -------------------------------------------------------------------------

ELEMENTS = st.one_of(st.none(), st.integers(-3, 3))
ARRAYS = st.one_of(
    st.lists(ELEMENTS, max_size=5),
    st.integers(1, 3).flatmap(
        lambda w: st.lists(st.lists(ELEMENTS, min_size=w, max_size=w), max_size=3)
    ),
)


def _literal(a: list[Any]) -> str:
    def one(x: Any) -> str:
        if isinstance(x, list):
            return "{" + ",".join(one(y) for y in x) + "}"
        return "NULL" if x is None else str(x)

    return one(a) if a and a != [[]] else "{}"


_BATCH_SQL = """
SELECT a @> b, a <@ b, a && b, x = ANY(a), x <> ALL(a), array_position(b, x)
FROM (VALUES {rows}) AS v(k, a, b, x) ORDER BY k"""


@settings(max_examples=30)
@given(
    st.lists(st.tuples(ARRAYS, st.lists(ELEMENTS, max_size=4), ELEMENTS), min_size=1, max_size=25)
)
def test_drawn_arrays(judge: Judge, triples: list[tuple[list[Any], list[Any], int | None]]) -> None:
    enc = encoding_for(IA)
    cases = [(_literal(a), _literal(b), x) for a, b, x in triples]
    rows = ", ".join(
        f"({k}, {lit(a, IA).sql()}, {lit(b, IA).sql()}, {i(x).sql()})"
        for k, (a, b, x) in enumerate(cases)
    )
    expected = judge.conn.execute(_BATCH_SQL.format(rows=rows)).fetchall()
    got = []
    for a, b, x in cases:
        va, vb = enc.coerce(a), enc.coerce(b)
        got.append((
            array_functions.contains(enc, va, vb),
            array_functions.contained(enc, va, vb),
            array_functions.overlap(enc, va, vb),
            array_functions.eq_any(enc, x, va),
            array_functions.ne_all(enc, x, va),
            array_functions.array_position(enc, vb, x),
        ))  # fmt: skip
    assert got == expected
