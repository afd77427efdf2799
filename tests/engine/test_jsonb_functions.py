"""The engine's jsonb functions and operators against PostgreSQL: each case evaluated by
the server and by the registered Python function over the same literals (results,
NULLs, SQLSTATEs and messages), on a C and an ICU database; hypothesis-drawn documents
for containment, existence, concatenation and extraction."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adaptive_client.engine import jsonb_build, jsonb_functions
from adaptive_client.values import jsonb_paths, jsonb_tree
from adaptive_client.values.encodings import encoding_for
from adaptive_client.values.json_encoding import escape_json

from .conftest import Judge, Lit, lit

TA = "text[]"


def t(s: str | None) -> Lit:
    return lit(s, "text")


def i(n: int | None) -> Lit:
    return lit(None if n is None else str(n), "integer")


DOC = '{"a": {"b": [1, 2.0, {"c": "x"}]}, "d": null, "e": "s", "n": 1.50, "f": [[1, 2], 3]}'
ARR = '[1, "a", null, true, [2, "b"], {"k": "v"}, 1.0, "a"]'

# (name, args): each evaluated by the server and the client
CASES: list[tuple[str, tuple[Lit, ...]]] = [
    # -> and ->>
    *[
        (op, (lit(d), t(k)))
        for op in ("->", "->>")
        for d in (DOC, ARR, '"a"', "1", "null", "{}")
        for k in ("a", "d", "e", "n", "f", "zz", "", "0")
    ],
    *[
        (op, (lit(d), i(n)))
        for op in ("->", "->>")
        for d in (ARR, DOC, '"a"', "1", "[]", "null")
        for n in (0, 1, 2, 4, 5, 7, 8, -1, -2, -8, -9, 100, -100)
    ],
    ("->", (lit(None), t("a"))),
    ("->", (lit(DOC), t(None))),
    ("->>", (lit('{"a": "x\\ny\\u0001"}'), t("a"))),
    ("->>", (lit('{"a": "\\"q\\""}'), t("a"))),
    # #> and #>>
    *[
        (op, (lit(d), lit(p, TA)))
        for op in ("#>", "#>>")
        for d in (DOC, ARR, '"x"', "3", "null")
        for p in (
            "{}",
            "{a}",
            "{a,b}",
            "{a,b,0}",
            "{a,b,2,c}",
            "{a,b,-1,c}",
            "{a,b,-3}",
            "{a,b,-4}",
            "{a,b,x}",
            '{a,b," 1"}',
            "{a,b,+1}",
            "{a,b,1.0}",
            "{f,0,1}",
            "{f,1,0}",
            "{4,0}",
            "{4,1}",
            "{5,k}",
            "{0}",
            "{-1}",
            "{a,NULL}",
            "{NULL}",
            "{{a,b},{c,d}}",
            "{a,b,99999999999}",
            "{d}",
            "{d,x}",
        )
    ],
    # ? ?| ?&
    *[
        ("?", (lit(d), t(k)))
        for d in (DOC, ARR, '"a"', '"b"', "1", "null", '["x", ["a"]]', "{}")
        for k in ("a", "b", "d", "x", "1", "k", "")
    ],
    *[
        (op, (lit(d), lit(ks, TA)))
        for op in ("?|", "?&")
        for d in (DOC, ARR, '"a"', "[]")
        for ks in ("{}", "{a}", "{a,d}", "{a,zz}", "{zz,yy}", "{a,NULL}", "{NULL}", "{{a,d},{e,n}}")
    ],
    # @> <@
    *[
        (op, (lit(x), lit(y)))
        for op in ("@>", "<@")
        for x, y in [
            ('{"a": 1, "b": 2}', '{"a": 1}'),
            ('{"a": 1}', '{"a": 1, "b": 2}'),
            ('{"a": 1.0}', '{"a": 1}'),
            ('{"a": "1"}', '{"a": 1}'),
            ('{"a": [1, 2]}', '{"a": [2]}'),
            ('{"a": [1, 2]}', '{"a": 2}'),
            ('{"a": {"b": 1}}', '{"a": {}}'),
            ('{"a": {}}', '{"a": []}'),
            ("[1, 2, 3]", "[3, 1]"),
            ("[1, 2, 3]", "[1, 1, 1]"),
            ("[1, 2, 3]", "1"),
            ("1", "[1]"),
            ("1", "1"),
            ("1", "1.00"),
            ('"a"', '"a"'),
            ('"a"', '["a"]'),
            ('["a"]', '"a"'),
            ("[[1, 2]]", "[1]"),
            ("[[1, 2]]", "[[1]]"),
            ("[[1, 2], 3]", "[[2], 3]"),
            ('[{"a": 1}]', "[{}]"),
            ('[{"a": 1}]', "[[]]"),
            ("[[]]", "[{}]"),
            ("[]", "[]"),
            ("{}", "{}"),
            ("[]", "{}"),
            ("{}", "[]"),
            ("[null]", "[null]"),
            ("null", "null"),
            ("[true, false]", "[false]"),
            ("[1]", "[true]"),
            ('{"a": null}', '{"a": null}'),
            ('{"a": [1, [2, 3]]}', '{"a": [[3]]}'),
            ('[1, "1"]', '["1"]'),
            ('["é"]', '["e"]'),
            ('{"a": [{"b": 1, "c": 2}]}', '{"a": [{"c": 2}]}'),
            ("[1, 2]", "[]"),
            ('"a"', "[]"),
            ("[]", "[[]]"),
            ("[[[1]]]", "[[1]]"),
            ('{"a": 1}', "1"),
            ("[0]", "[-0]"),
        ]
    ],
    # ||
    *[
        ("||", (lit(x), lit(y)))
        for x in ('{"a": 1, "b": 2}', "[1, 2]", "3", '"s"', "null", "[]", "{}")
        for y in ('{"b": 3, "c": [4]}', "[5]", "6", "[]", "{}", "null", "[[7]]")
    ],
    # - text, - text[], - integer
    *[("-", (lit(d), t(k))) for d in (DOC, ARR, '"a"', "1", "[]", "{}") for k in ("a", "d", "zz")],
    *[
        ("-", (lit(d), lit(ks, TA)))
        for d in (DOC, ARR, '"a"', "[]", "{}")
        for ks in ("{a,d}", "{}", "{NULL,e}", "{{a,d},{e,n}}")
    ],
    *[
        ("-", (lit(d), i(n)))
        for d in (ARR, DOC, "[]", "{}", '"a"', "5")
        for n in (0, 1, 7, 8, -1, -8, -9)
    ],
    # #-
    *[
        ("#-", (lit(d), lit(p, TA)))
        for d in (DOC, ARR, '"a"', "{}", "[]", "null")
        for p in (
            "{}",
            "{a}",
            "{a,b}",
            "{a,b,0}",
            "{a,b,-1}",
            "{a,b,9}",
            "{a,b,x}",
            "{0}",
            "{-1}",
            "{4,1}",
            "{5,k}",
            "{a,NULL}",
            "{NULL}",
            "{{a,b}}",
            "{{a},{b}}",
            "{x,y,z}",
        )
    ],
    # functions of one document
    *[
        (f, (lit(d),))
        for f in (
            "jsonb_typeof",
            "jsonb_array_length",
            "jsonb_object_keys",
            "jsonb_array_elements",
            "jsonb_array_elements_text",
            "jsonb_each",
            "jsonb_each_text",
            "jsonb_strip_nulls",
            "jsonb_pretty",
        )
        for d in (
            DOC,
            ARR,
            '"a"',
            "1.50",
            "null",
            "true",
            "[]",
            "{}",
            '{"a": {"b": null, "c": [null, {"d": null}]}, "e": null}',
            '[[], {}, [[]], {"a": []}]',
            '{"a": "\\u00e9\\t"}',
            "[null]",
        )
    ],
    ("jsonb_typeof", (lit(None),)),
    ("jsonb_exists", (lit(DOC), t("a"))),
    ("jsonb_exists", (lit(ARR), t("k"))),
    ("jsonb_extract_path", (lit(DOC), t("a"), t("b"), t("1"))),
    ("jsonb_extract_path", (lit(DOC), t("a"), t(None))),
    ("jsonb_extract_path_text", (lit(DOC), t("a"), t("b"), t("2"), t("c"))),
    ("jsonb_extract_path_text", (lit(DOC), t("e"))),
    # jsonb_set, jsonb_insert
    *[
        (f, (lit(d), lit(p, TA), lit(v), *extra))
        for f in ("jsonb_set", "jsonb_insert")
        for d in (DOC, ARR, '"a"', "{}", "[]", "null")
        for p in (
            "{}",
            "{a}",
            "{zz}",
            "{a,b}",
            "{a,b,1}",
            "{a,b,-1}",
            "{a,b,-9}",
            "{a,b,9}",
            "{a,b,x}",
            "{a,zz}",
            "{a,zz,yy}",
            "{0}",
            "{-1}",
            "{99}",
            "{-99}",
            "{4,0}",
            "{5,k}",
            "{5,new}",
            "{a,NULL}",
            "{NULL}",
            "{{a,b}}",
            "{d,x}",
            "{e,0}",
        )
        for v in ('{"new": 1.0}',)
        for extra in ((), (lit("false", "boolean"),), (lit("true", "boolean"),))
    ],
    ("jsonb_set", (lit(DOC), lit("{a}", TA), lit(None))),
    # key order, nested paths, json input
    ("||", (lit('{"aa": 1, "b": 2, "é": 3}'), lit('{"c": 1, "ab": 0, "": null}'))),
    ("jsonb_set", (lit('{"a": [[1, 2], [3]]}'), lit("{a,1,0}", TA), lit("9"))),
    ("jsonb_set", (lit('{"a": [[1, 2], [3]]}'), lit("{a,-1,-5}", TA), lit("9"))),
    ("jsonb_set", (lit('{"a": [[1, 2], [3]]}'), lit("{a,0,5}", TA), lit("[9]"))),
    ("jsonb_set", (lit(DOC), lit("{a,b,2,c}", TA), lit('"y"'))),
    ("jsonb_set", (lit(DOC), lit("{a,b,2,zz}", TA), lit('"y"'))),
    (
        "jsonb_insert",
        (lit('{"a": [[1, 2], [3]]}'), lit("{a,0,1}", TA), lit("9"), lit("true", "boolean")),
    ),
    ("jsonb_insert", (lit('{"a": [[1, 2], [3]]}'), lit("{a,-1,-1}", TA), lit("9"))),
    ("to_jsonb", (lit('{"b": 1, "a": 2, "a": 3.10, "c": [1e2]}', "json"),)),
    (
        "jsonb_build_object",
        (t("bb"), i(1), t("a"), i(2), t("é"), i(3), t("ccc"), i(4), t("ab"), i(5)),
    ),
    (
        "jsonb_build_object",
        (lit("2020-01-02", "date"), i(1), lit("2020-01-02 03:04:05", "timestamp"), i(2)),
    ),
    ("jsonb_build_object", (lit("true", "boolean"), i(1), lit("1.50", "numeric"), i(2))),
    ("#>", (lit('{"a": {"": {"b": 1}}}'), lit('{a,"",b}', TA))),
    ("?", (lit('{"": 1}'), t(""))),
    (
        "@>",
        (lit('{"a": {"b": {"c": [1, {"d": 2}]}}, "e": 1}'), lit('{"a": {"b": {"c": [{"d": 2}]}}}')),
    ),
    (
        "@>",
        (
            lit('{"a": {"b": {"c": [1, {"d": 2}]}}, "e": 1}'),
            lit('{"a": {"b": {"c": [{"d": 2.0}, 1.00]}}}'),
        ),
    ),
    (
        "@>",
        (lit('{"a": {"b": {"c": [1, {"d": 2}]}}, "e": 1}'), lit('{"a": {"b": {"c": {"d": 2}}}}')),
    ),
    # building
    ("jsonb_build_object", ()),
    ("jsonb_build_object", (t("a"), i(1), t("b"), lit("1.50", "numeric"), t("c"), t(None))),
    ("jsonb_build_object", (t("a"), i(1), t("a"), i(2))),
    ("jsonb_build_object", (i(1), i(2), lit("true", "boolean"), lit("2.0", "numeric"))),
    ("jsonb_build_object", (lit("1.0", "numeric"), t("x"))),
    ("jsonb_build_object", (t("a"),)),
    ("jsonb_build_object", (t("a"), i(1), t("b"))),
    ("jsonb_build_object", (t(None), i(1))),
    ("jsonb_build_object", (t("a"), i(1), t(None), i(2))),
    ("jsonb_build_object", (lit("{1,2}", "integer[]"), i(1))),
    ("jsonb_build_object", (lit("{}", "jsonb"), i(1))),
    ("jsonb_build_object", (t("j"), lit(ARR), t("arr"), lit("{{1,NULL},{3,4}}", "integer[]"))),
    ("jsonb_build_array", ()),
    (
        "jsonb_build_array",
        (
            t("a"),
            i(1),
            lit("1.50", "numeric"),
            t(None),
            lit("false", "boolean"),
            lit(DOC),
            lit('{a,"b c",NULL}', TA),
            lit("{}", "integer[]"),
        ),
    ),
    *[
        ("to_jsonb", (lit(v, ty),))
        for v, ty in [
            ('a"b\\c\n', "text"),
            ("", "text"),
            ("42", "integer"),
            ("-7", "bigint"),
            ("1.50", "numeric"),
            ("NaN", "numeric"),
            ("1e3", "numeric"),
            ("-0.0", "numeric"),
            ("true", "boolean"),
            (DOC, "jsonb"),
            ("{1,2,NULL}", "integer[]"),
            ("{{a,b},{c,d}}", TA),
            ("{}", TA),
            ("[0:1]={5,6}", "integer[]"),
            ("2020-02-29", "date"),
            ("2020-02-29 10:11:12.5", "timestamp"),
            ("2020-02-29 10:11:12+05:30", "timestamptz"),
            ("2020-02-29 10:11:12", "timestamp"),
            ("1.5", "double precision"),
            ("1e100", "double precision"),
            ("Infinity", "double precision"),
            (None, "text"),
            ("infinity", "date"),
            ("0044-03-15 BC", "date"),
            ("12345-01-01", "date"),
            ("-infinity", "timestamp"),
            ("0044-03-15 10:00:00.25 BC", "timestamp"),
            ("0044-03-15 10:00 BC", "timestamptz"),
            ("12345-03-15 10:00+05:30", "timestamptz"),
            ("infinity", "timestamptz"),
            ("Infinity", "numeric"),
            ("-Infinity", "numeric"),
            ("NaN", "double precision"),
            ("-0", "double precision"),
            ("1e-7", "double precision"),
            ("123456789012345678", "double precision"),
        ]
    ],
]


# facts of PostgreSQL's own regression suite (jsonb.sql), as cases
NESTED = '{"n":null, "a":1, "b":[1,2], "c":{"1":2}, "d":{"1":[2,3]}}'
ABC = '{"a":1,"b":[0,1,2],"c":{"d":4}}'
A012 = '{"a": [0,1,2]}'
REGRESSION: list[tuple[str, tuple[Lit, ...]]] = [
    ("@>", (lit('{"a":"b", "b":1, "c":null}'), lit('{"a":"b", "c":null}'))),
    ("@>", (lit('{"a":"b", "b":1, "c":null}'), lit('{"a":"b", "g":null}'))),
    ("@>", (lit("[1,2]"), lit("[1,2,2]"))),
    ("@>", (lit("[[1,2]]"), lit("[[1,2,2]]"))),
    ("<@", (lit("[[1,2,2]]"), lit("[[1,2]]"))),
    ("@>", (lit('["9", ["7", "3"], ["1"]]'), lit('["9", ["7", "3"], ["1"]]'))),
    ("@>", (lit('{ "name": "Bob", "tags": [ "enim", "qui"]}'), lit('{"tags":["qu"]}'))),
    ("jsonb_contains", (lit('{"a":"b", "b":1, "c":null}'), lit('{"a":"c"}'))),
    ("jsonb_contained", (lit('{"a":"b"}'), lit('{"a":"b", "b":1, "c":null}'))),
    ("jsonb_exists_any", (lit('{"a":null, "b":"qq"}'), lit("{c,a}", TA))),
    ("jsonb_exists_all", (lit('{"a":null, "b":"qq"}'), lit("{a,a,b,b,b}", TA))),
    ("?", (lit('{"a":"null", "b":"qq"}'), t("a"))),
    ("->", (lit(NESTED), t("d"))),
    ("->", (lit('["a","b","c",[1,2],null]'), i(-5))),
    ("->", (lit('["a","b","c",[1,2],null]'), i(-6))),
    ("#>", (lit('[0,1,2,[3,4],{"5":"five"}]'), lit("{4,5}", TA))),
    ("#>", (lit('{"a":"b","c":[1,2,3]}'), lit("{c,-4}", TA))),
    ("#>>", (lit('[{"b": "c"}, {"b": null}]'), lit("{1,b}", TA))),
    ("jsonb_strip_nulls", (lit('{"a": {"b": null, "c": null}, "d": {} }'),)),
    ("jsonb_strip_nulls", (lit('[1,{"a":1,"b":null,"c":2},3]'),)),
    (
        "jsonb_pretty",
        (
            lit(
                '{"a": "test", "b": [1, 2, 3], "c": "test3", "d":{"dd": "test4", "dd2":{"ddd": "test5"}}}'
            ),
        ),
    ),
    ("jsonb_pretty", (lit('[{"f1":1,"f2":null},2,null,[[{"x":true},6,7],8],3]'),)),
    (
        "jsonb_concat",
        (lit('{"d": "test", "a": [1, 2]}'), lit('{"g": "test2", "c": {"c1":1, "c2":2}}')),
    ),
    ("||", (lit('{"aa":1 , "b":2, "cq":3}'), lit('{"cq":"l", "b":"g", "fg":false}'))),
    ("||", (lit('"b"'), lit('"a"'))),
    ("||", (lit('"a"'), lit('{"a":1}'))),
    ("-", (lit('["a","b","c"]'), i(-4))),
    ("-", (lit('{"a":1 , "b":2, "c":3}'), lit("{c,b}", TA))),
    ("jsonb_set", (lit(NESTED), lit("{d,NULL,0}", TA), lit("[1,2,3]"))),
    ("jsonb_set", (lit(NESTED), lit("{b,-1}", TA), lit('{"f": "test"}'))),
    ("jsonb_set", (lit(NESTED), lit("{d,1,0}", TA), lit('{"1": 2}'))),
    ("jsonb_set", (lit("[]"), lit("{1}", TA), lit('"b"'), lit("false", "boolean"))),
    (
        "jsonb_set",
        (
            lit('[{"f1":1,"f2":null},2,null,3]'),
            lit("{0}", TA),
            lit("[2,3,4]"),
            lit("false", "boolean"),
        ),
    ),
    ("jsonb_set", (lit(ABC), lit("{b,-33}", TA), lit('{"foo":123}'))),
    ("jsonb_set", (lit(ABC), lit("{b,33}", TA), lit('{"foo":123}'))),
    (
        "jsonb_set",
        (lit('{"a":1,"b":[4,5,[0,1,2],6,7],"c":{"d":4}}'), lit("{b,2,33}", TA), lit('{"foo":123}')),
    ),
    ("jsonb_set", (lit(ABC), lit("{x,-33}", TA), lit('{"foo":123}'))),
    ("jsonb_set", (lit("[]"), lit("{-99}", TA), lit('{"foo":123}'))),
    ("jsonb_set", (lit('{"a": [1, 2, 3]}'), lit("{a, non_integer}", TA), lit('"new_value"'))),
    ("jsonb_set", (lit('{"a": {"b": [1, 2, 3]}}'), lit("{a, b, NULL}", TA), lit('"new_value"'))),
    ("jsonb_delete_path", (lit(NESTED), lit("{d,1,0}", TA))),
    ("#-", (lit(NESTED), lit("{b,-1e}", TA))),
    *[
        ("jsonb_insert", (lit(d), lit(p, TA), lit('"new_value"'), *extra))
        for d, p in [
            (A012, "{a, 1}"),
            (A012, "{a, 0}"),
            (A012, "{a, 2}"),
            (A012, "{a, -1}"),
            ("[]", "{1}"),
            ('{"a": []}', "{a, 1}"),
            (A012, "{a, 10}"),
            (A012, "{a, -10}"),
            ('{"a": {"b": "value"}}', "{a, c}"),
            ('{"a": {"b": "value"}}', "{a, b}"),
            ('{"a": {"b": {"c": [0, 1, "test1", "test2"]}}}', "{a, b, c, 2}"),
        ]
        for extra in ((), (lit("true", "boolean"),))
    ],
]
CASES += REGRESSION


def _id(case: tuple[str, tuple[Lit, ...]]) -> str:
    name, args = case
    return f"{name}({', '.join(str(a.text) for a in args)})"[:90]


@pytest.mark.parametrize("case", CASES, ids=[_id(c) for c in CASES])
def test_jsonb_case(judge: Judge, case: tuple[str, tuple[Lit, ...]]) -> None:
    judge.check(case[0], *case[1])


AGG_COLUMNS: list[tuple[list[str | None], ...]] = [
    ([],),
    (["1", "a", None, "1.50"],),
]


def test_jsonb_agg(judge: Judge) -> None:
    judge.check_aggregate("jsonb_agg", "text", [])
    judge.check_aggregate("jsonb_agg", "text", ["a", None, 'b"c'])
    judge.check_aggregate("jsonb_agg", "numeric", ["1.50", None, "2"])
    judge.check_aggregate("jsonb_agg", "jsonb", [DOC, None, "1.0", ARR])
    judge.check_aggregate("jsonb_agg", "integer[]", ["{1,2}", None, "{}"])


def test_jsonb_object_agg(judge: Judge) -> None:
    judge.check_aggregate("jsonb_object_agg", "text", [], [])
    judge.check_aggregate("jsonb_object_agg", "text", ["b", "a", "b"], ["1", None, "3"])
    judge.check_aggregate("jsonb_object_agg", "text", ["a", None], ["1", "2"])
    judge.check_aggregate("jsonb_object_agg", "jsonb", ['"k"', "1.0"], [DOC, None])


# --- drawn documents ----------------------------------------------------------------------

KEYS = st.sampled_from(["a", "b", "c", "aa", "é", "1", ""])
NUMBERS = st.sampled_from(["0", "1", "1.0", "-1", "2.50", "1e2", "0.001"])
SCALARS = st.one_of(
    st.none(), st.booleans(), NUMBERS.map(lambda s: ("num", s)), KEYS.map(lambda s: ("str", s))
)


def _render(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, tuple):
        return v[1] if v[0] == "num" else escape_json(v[1])
    if isinstance(v, list):
        return "[" + ", ".join(_render(x) for x in v) + "]"
    return "{" + ", ".join(f"{escape_json(k)}: {_render(x)}" for k, x in v.items()) + "}"


DOCS = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(KEYS, inner, max_size=4)),
    max_leaves=10,
).map(_render)

_BATCH_SQL = """
SELECT a @> b, a <@ b, a ? k, (a || b)::text, (a -> k)::text, a ->> k, (a -> 0)::text,
       (a #> ARRAY[k, '0'])::text,
       CASE WHEN jsonb_typeof(a) IN ('object', 'array') THEN (a - k)::text END,
       CASE WHEN {settable} THEN (a #- ARRAY[k, '-1'])::text END,
       CASE WHEN {settable} THEN jsonb_set(a, ARRAY[k], b)::text END,
       CASE WHEN jsonb_typeof(a) = 'array' THEN jsonb_array_length(a) END
FROM (VALUES {rows}) AS v(n, a, b, k) ORDER BY n"""
# (a path step into an array must be an integer: jsonb_set and #- refuse a key there)
_SETTABLE = "(jsonb_typeof(a) = 'object' OR (jsonb_typeof(a) = 'array' AND k ~ '^[0-9]+$'))"


@settings(max_examples=40)
@given(st.lists(st.tuples(DOCS, DOCS, KEYS), min_size=1, max_size=25))
def test_drawn_documents(judge: Judge, triples: list[tuple[str, str, str]]) -> None:
    enc = encoding_for("jsonb")
    rows = ", ".join(
        f"({n}, {lit(a).sql()}, {lit(b).sql()}, {t(k).sql()})"
        for n, (a, b, k) in enumerate(triples)
    )
    expected = judge.conn.execute(_BATCH_SQL.format(rows=rows, settable=_SETTABLE)).fetchall()
    got = []
    for a, b, k in triples:
        x, y = enc.coerce(a), enc.coerce(b)
        kind = jsonb_functions.jsonb_typeof(enc, x)
        container = kind in ("object", "array")
        settable = kind == "object" or (kind == "array" and k.isascii() and k.isdigit())
        got.append((
            jsonb_functions.contains(enc, x, y),
            jsonb_functions.contained(enc, x, y),
            jsonb_functions.exists(enc, x, k),
            jsonb_build.concat(enc, x, y).text,
            _t(jsonb_paths.object_field(enc, x, k)),
            jsonb_paths.object_field_text(enc, x, k),
            _t(jsonb_paths.array_element(enc, x, 0)),
            _t(jsonb_paths.extract_path(enc, x, [k, "0"])),
            _t(jsonb_build.delete_key(enc, x, k)) if container else None,
            _t(jsonb_build.delete_path(enc, x, [k, "-1"])) if settable else None,
            _t(jsonb_build.jsonb_set(enc, x, [k], y)) if settable else None,
            jsonb_functions.jsonb_array_length(enc, x) if kind == "array" else None,
        ))  # fmt: skip
    assert got == expected


def _t(v: Any) -> str | None:
    return None if v is None else v.text


def test_numbers_print_as_numeric() -> None:
    assert jsonb_tree.number_text(Decimal("-0")) == "0"
    assert jsonb_tree.number_text(Decimal("0.0000001")) == "0.0000001"


# --- documents nested deeper than Python's recursion ------------------------------------

DEEP_ARRAY = "[" * 5000 + '1, {"a": null}' + "]" * 5000
DEEP_OBJECT = '{"a": ' * 3000 + '[1, {"b": null}]' + "}" * 3000
DEEP_PATH = "{" + ",".join(["a"] * 3000) + ",1}"


@pytest.mark.parametrize(
    "case",
    [
        ("@>", (lit(DEEP_ARRAY), lit(DEEP_ARRAY))),
        ("@>", (lit(DEEP_OBJECT), lit(DEEP_OBJECT))),
        ("<@", (lit(DEEP_OBJECT), lit('{"a": {"a": {}}}'))),
        ("||", (lit(DEEP_ARRAY), lit(DEEP_ARRAY))),
        ("->", (lit(DEEP_ARRAY), i(0))),
        ("->", (lit(DEEP_OBJECT), t("a"))),
        ("#>", (lit(DEEP_OBJECT), lit(DEEP_PATH, TA))),
        ("#-", (lit(DEEP_OBJECT), lit(DEEP_PATH, TA))),
        ("jsonb_set", (lit(DEEP_OBJECT), lit(DEEP_PATH, TA), lit(DEEP_ARRAY))),
        ("jsonb_insert", (lit(DEEP_OBJECT), lit(DEEP_PATH, TA), lit("2"), lit("true", "boolean"))),
        ("jsonb_strip_nulls", (lit(DEEP_OBJECT),)),
        ("jsonb_pretty", (lit(DEEP_OBJECT),)),
        ("jsonb_pretty", (lit(DEEP_ARRAY),)),
        ("jsonb_array_elements", (lit(DEEP_ARRAY),)),
    ],
    ids=lambda c: c[0],
)
def test_deep_documents(judge: Judge, case: tuple[str, tuple[Lit, ...]]) -> None:
    judge.check(case[0], *case[1])
