"""Hypothesis strategies for the split execution's constructs over the shop schema of
tests/client/read_queries.py: expressions (functions, CASE, COALESCE, arithmetic,
extract), predicates (comparisons of expressions, LIKE/ILIKE patterns, NULL tests, IN
and EXISTS subqueries), and statement shapes (rows in a total order, GROUP BY
expressions with aggregates and HAVING, window functions, set operations, CTEs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

# table: (key, {column: kind}); kinds: int, num (numeric), text, ts (timestamp)
TABLES: dict[str, tuple[str, dict[str, str]]] = {
    "product": ("sku", {"sku": "int", "title": "text", "category": "text", "price": "num",
                        "weight": "int"}),
    "orders": ("id", {"id": "int", "customer_id": "int", "placed": "ts", "status": "text",
                      "note": "text"}),
    "customer": ("id", {"id": "int", "name": "text", "email": "text", "region": "text",
                        "credit": "num"}),
}  # fmt: skip
PATTERNS = ["%a%", "%mug%", "T%", "%e", "_e%", "%\\_%", "%É%", "%", "a%", "%o_"]
WORDS = ["a", "Mug", "tea", "", "é", "Zoë", "ann lee", "gift"]


@dataclass
class SplitQuery:
    sql: str
    ordered: bool


@st.composite
def split_queries(draw: Any) -> SplitQuery:
    name = draw(st.sampled_from(sorted(TABLES)))
    key, cols = TABLES[name]

    def column(kind: str) -> str | None:
        names = [c for c, k in cols.items() if k == kind]
        return draw(st.sampled_from(names)) if names else None

    def num(depth: int = 0) -> str:
        choices = ["col", "lit"] + (
            ["arith", "abs", "case", "coalesce", "length", "extract", "rounding"]
            if depth < 2
            else []
        )
        kind = draw(st.sampled_from(choices))
        if kind == "col":
            return column(draw(st.sampled_from(["int", "num"]))) or key
        if kind == "lit":
            return draw(st.sampled_from(["0", "1", "7", "-3", "2.5", "100"]))
        if kind == "arith":
            op = draw(st.sampled_from(["+", "-", "*", "/", "%"]))
            right = draw(st.sampled_from(["2", "3", "7", "0.5"])) if op in "/%" else num(depth + 1)
            if op == "/" and right == "0.5":
                right = "2"
            left = num(depth + 1)
            return f"({left} {op} {right})"
        if kind == "rounding":
            fn = draw(st.sampled_from(["round", "ceil", "floor", "sign"]))
            return f"{fn}({num(depth + 1)})"
        if kind == "abs":
            return f"abs({num(depth + 1)})"
        if kind == "case":
            return f"CASE WHEN {pred(depth + 1)} THEN {num(depth + 1)} ELSE {num(depth + 1)} END"
        if kind == "coalesce":
            return f"coalesce({num(depth + 1)}, {num(depth + 1)})"
        if kind == "extract" and column("ts"):
            field = draw(
                st.sampled_from(["year", "month", "day", "hour", "dow", "epoch", "second"])
            )
            return f"extract({field} FROM {column('ts')})"
        return f"length({text(depth + 1)})"

    def text(depth: int = 0) -> str:
        choices = ["col", "col", "lit"] + (
            ["lower", "upper", "substr", "concat", "coalesce", "case", "left", "reverse", "varchar"]
            if depth < 2
            else []
        )
        kind = draw(st.sampled_from(choices))
        if kind == "col":
            return column("text") or "'x'"
        if kind == "lit":
            return "'" + draw(st.sampled_from(WORDS)).replace("'", "''") + "'"
        if kind in ("lower", "upper", "reverse"):
            return f"{kind}({text(depth + 1)})"
        if kind == "varchar":
            return f"({text(depth + 1)})::varchar({draw(st.integers(1, 4))})"
        if kind == "substr":
            return (
                f"substr({text(depth + 1)}, {draw(st.integers(-1, 4))}, {draw(st.integers(0, 5))})"
            )
        if kind == "concat":
            return f"({text(depth + 1)} || {text(depth + 1)})"
        if kind == "coalesce":
            return f"coalesce({text(depth + 1)}, {text(depth + 1)})"
        if kind == "left":
            return f"left({text(depth + 1)}, {draw(st.integers(0, 4))})"
        return f"CASE WHEN {pred(depth + 1)} THEN {text(depth + 1)} ELSE {text(depth + 1)} END"

    def pred(depth: int = 0) -> str:
        choices = ["numcmp", "textcmp", "like", "null", "clock"] + (
            ["not", "and", "or", "in", "exists", "quantified"] if depth < 2 else []
        )
        kind = draw(st.sampled_from(choices))
        if kind == "numcmp":
            op = draw(st.sampled_from(["=", "<>", "<", "<=", ">", ">="]))
            return f"{num(depth + 1)} {op} {num(depth + 1)}"
        if kind == "textcmp":
            op = draw(st.sampled_from(["=", "<>", "<", ">="]))
            return f"{text(depth + 1)} {op} {text(depth + 1)}"
        if kind == "like":
            op = draw(st.sampled_from(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"]))
            return f"{text(depth + 1)} {op} '{draw(st.sampled_from(PATTERNS))}'"
        if kind == "null":
            return (
                f"{draw(st.sampled_from(list(cols)))} IS {draw(st.sampled_from(['', 'NOT ']))}NULL"
            )
        if kind == "clock" and column("ts"):
            op = draw(st.sampled_from(["<", ">="]))
            span = draw(st.sampled_from(["1 day", "2 years", "30 years"]))
            return f"{column('ts')} {op} now() - interval '{span}'"
        if kind == "quantified":
            op = draw(st.sampled_from(["=", "<>", "<", ">="]))
            which = draw(st.sampled_from(["ANY", "ALL"]))
            sub = draw(
                st.sampled_from(["qty FROM item WHERE qty > 5", "qty FROM item WHERE sku < 0"])
            )
            return f"{num(depth + 1)} {op} {which} (SELECT {sub})"
        if kind == "not":
            return f"NOT ({pred(depth + 1)})"
        if kind in ("and", "or"):
            return f"({pred(depth + 1)}) {kind.upper()} ({pred(depth + 1)})"
        if kind == "in" and name != "orders":
            inner = draw(st.sampled_from(["status = 'paid'", "note IS NULL", "id % 3 = 0"]))
            col = "id" if name == "customer" else "sku"
            src = "customer_id FROM orders" if name == "customer" else "sku FROM item"
            where = inner if name == "customer" else "qty > 3"
            return f"{col} {draw(st.sampled_from(['IN', 'NOT IN']))} (SELECT {src} WHERE {where})"
        neg = draw(st.sampled_from(["", "NOT "]))
        if name == "orders":
            return f"{neg}EXISTS (SELECT 1 FROM item i WHERE i.order_id = orders.id AND i.qty > 2)"
        if name == "customer":
            return f"{neg}EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = customer.id)"
        return f"{neg}EXISTS (SELECT 1 FROM item i WHERE i.sku = product.sku)"

    where = f" WHERE {pred()}" if draw(st.booleans()) else ""
    shape = draw(st.sampled_from(["rows", "rows", "group", "window", "setop", "cte"]))
    if shape == "group":
        group = draw(st.sampled_from([text(1), num(2)]))
        aggs = ["count(*)", f"count(DISTINCT {text(2)})", f"min({text(2)})", f"max({num(2)})"]
        aggs.append(f"sum({column('int') or key})")
        chosen = draw(st.lists(st.sampled_from(aggs), min_size=1, max_size=3))
        having = f" HAVING count(*) > {draw(st.integers(0, 3))}" if draw(st.booleans()) else ""
        return SplitQuery(
            f"SELECT {group} AS g, {', '.join(chosen)} FROM {name}{where} GROUP BY 1{having}",
            False,
        )
    if shape == "window":
        fn = draw(st.sampled_from(["row_number()", "rank()", "dense_rank()", f"lag({key})"]))
        part = f"PARTITION BY {text(2)} " if draw(st.booleans()) else ""
        return SplitQuery(
            f"SELECT {key}, {fn} OVER ({part}ORDER BY {key}) FROM {name}{where} ORDER BY {key}",
            True,
        )
    if shape == "setop":
        op = draw(st.sampled_from(["UNION", "UNION ALL", "INTERSECT", "EXCEPT", "EXCEPT ALL"]))
        return SplitQuery(
            f"SELECT {text(1)} FROM {name}{where} {op} SELECT {text(1)} FROM {name}", False
        )
    kinds = ["num", "text", "pred"]
    items = draw(st.lists(st.sampled_from(kinds), min_size=1, max_size=3))
    exprs = [num() if i == "num" else text() if i == "text" else f"({pred(1)})" for i in items]
    outputs = ", ".join(f"{e} AS c{i}" for i, e in enumerate(exprs))
    body = f"SELECT {key}, {outputs} FROM {name}{where}"
    if shape == "cte":
        return SplitQuery(f"WITH t AS ({body}) SELECT * FROM t ORDER BY {key} DESC", True)
    limit = f" LIMIT {draw(st.integers(0, 20))}" if draw(st.booleans()) else ""
    return SplitQuery(f"{body} ORDER BY {key}{limit}", True)
