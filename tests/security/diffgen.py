"""Hypothesis strategies composing the split execution's constructs into read queries over
the differential schema (tests/client/schema.py's ``emp`` and ``dept``, rows of
tests/client/diff_rows.py): expressions (functions, CASE, COALESCE/NULLIF, arithmetic,
date arithmetic, date_trunc/extract), predicates (expression comparisons, text ranges,
BETWEEN, LIKE/ILIKE, IN lists, IN/EXISTS/scalar subqueries correlated or not), and
statement shapes (rows in a total order with LIMIT/OFFSET, GROUP BY expressions with
aggregates, FILTER and HAVING, window functions with partitions and frames, set
operations, CTEs used twice, derived tables, DISTINCT ON, outer joins).

Every statement is deterministic under PostgreSQL: an outermost ORDER BY ends with a key
(or orders rows whose ties are equal), window orders are total where the function needs
it, string_agg is ordered, and float columns are never summed."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

# kinds: int, num (numeric), float, text, date, ts, bool
TABLES: dict[str, dict[str, str]] = {
    "emp": {"id": "int", "name": "text", "dept": "int", "salary": "num", "bonus": "int",
            "hired": "date", "updated": "ts", "score": "float", "active": "bool",
            "note": "text"},
    "dept": {"id": "int", "dname": "text", "budget": "int", "region": "text"},
}  # fmt: skip
TEXTS = ["'Ann'", "'é'", "''", "'Zürich'", "'M'", "'b'", "'d''Arcy'", "'ann lee'", "'Ωmega'"]
PATTERNS = ["%a%", "A%", "%ee", "_o%", "%\\_%", "%É%", "%", "", "Bo_", "%ö%", "50\\%%", "%s"]
NUMBERS = ["0", "1", "7", "-3", "2.5", "100", "-0.25", "1000"]
DATES = ["date '2000-01-01'", "date '1990-06-15'", "date '2020-02-29'"]
TIMES = [
    "timestamp '2022-06-01 12:00'",
    "timestamp '2021-03-01'",
    "timestamp '2023-01-01 00:00:01'",
]
FIELDS = ["year", "month", "day", "dow", "hour", "quarter"]
UNITS = ["year", "month", "day", "hour"]


class Exprs:
    """Expressions and predicates over one table under one alias."""

    def __init__(self, draw: Any, table: str, alias: str, outer: Exprs | None = None) -> None:
        self.draw, self.table, self.alias, self.outer = draw, table, alias, outer
        self.cols = TABLES[table]

    def pick(self, options: list[str]) -> str:
        return str(self.draw(st.sampled_from(options)))

    def column(self, *kinds: str) -> str | None:
        names = sorted(c for c, k in self.cols.items() if k in kinds)
        return f"{self.alias}.{self.pick(names)}" if names else None

    def num(self, depth: int = 0) -> str:
        deep = ["arith", "abs", "case", "coalesce", "length", "extract", "round", "greatest",
                "nullif", "divide"]  # fmt: skip
        kind = self.pick(["col", "col", "lit"] + (deep if depth < 2 else []))
        if kind == "col":
            return self.column("int", "num") or "1"
        if kind == "lit":
            return self.pick(NUMBERS)
        if kind == "arith":
            op = self.pick(["+", "-", "*"])
            return f"({self.num(depth + 1)} {op} {self.num(depth + 1)})"
        if kind == "divide":
            op = self.pick(["/", "%"])
            left = self.column("int") if op == "%" else self.num(depth + 1)
            return f"({left} {op} {self.pick(['2', '3', '-7'])})"
        if kind == "abs":
            return f"abs({self.num(depth + 1)})"
        if kind == "case":
            return f"CASE WHEN {self.pred(depth + 1)} THEN {self.num(depth + 1)} ELSE {self.num(depth + 1)} END"
        if kind == "coalesce":
            return f"coalesce({self.num(depth + 1)}, {self.pick(NUMBERS)})"
        if kind == "nullif":
            return f"nullif({self.num(depth + 1)}, {self.pick(NUMBERS)})"
        if kind == "greatest":
            fn = self.pick(["greatest", "least"])
            return f"{fn}({self.num(depth + 1)}, {self.num(depth + 1)})"
        if kind == "round":
            return f"round({self.column('num') or self.num(depth + 1)}, {self.pick(['0', '1'])})"
        if kind == "extract" and self.column("date", "ts"):
            return f"extract({self.pick(FIELDS)} FROM {self.column('ts')})"
        return f"length({self.text(depth + 1)})"

    def text(self, depth: int = 0) -> str:
        deep = ["lower", "upper", "substr", "concat", "coalesce", "case", "left", "replace", "trim"]
        kind = self.pick(["col", "col", "lit"] + (deep if depth < 2 else []))
        if kind == "col":
            return self.column("text") or "'x'"
        if kind == "lit":
            return self.pick(TEXTS)
        if kind in ("lower", "upper"):
            return f"{kind}({self.text(depth + 1)})"
        if kind == "substr":
            start, count = self.draw(st.integers(-1, 4)), self.draw(st.integers(0, 5))
            return f"substr({self.text(depth + 1)}, {start}, {count})"
        if kind == "concat":
            return f"({self.text(depth + 1)} || {self.text(depth + 1)})"
        if kind == "coalesce":
            return f"coalesce({self.text(depth + 1)}, {self.text(depth + 1)})"
        if kind == "left":
            return f"left({self.text(depth + 1)}, {self.draw(st.integers(0, 4))})"
        if kind == "replace":
            return f"replace({self.text(depth + 1)}, 'e', 'E')"
        if kind == "trim":
            return f"trim({self.text(depth + 1)})"
        return f"CASE WHEN {self.pred(depth + 1)} THEN {self.text(depth + 1)} ELSE {self.text(depth + 1)} END"

    def when(self) -> tuple[str, str]:
        """A date or timestamp expression and a literal of its type."""
        if self.table != "emp":
            return f"{self.alias}.id", "3"
        kind = self.pick(["date", "date+", "ts", "ts+", "trunc"])
        if kind == "date":
            return f"{self.alias}.hired", self.pick(DATES)
        if kind == "date+":
            sign = self.pick(["+", "-"])
            return f"{self.alias}.hired {sign} {self.draw(st.integers(0, 4000))}", self.pick(DATES)
        if kind == "ts":
            return f"{self.alias}.updated", self.pick(TIMES)
        if kind == "ts+":
            amount = self.pick(["1 day", "90 minutes", "2 months", "1 year"])
            return f"{self.alias}.updated {self.pick(['+', '-'])} interval '{amount}'", self.pick(
                TIMES
            )
        return f"date_trunc('{self.pick(UNITS)}', {self.alias}.updated)", self.pick(TIMES)

    def pred(self, depth: int = 0) -> str:
        deep = ["not", "and", "or", "in", "exists", "scalar"]
        shallow = [
            "numcmp",
            "numcmp",
            "textcmp",
            "between",
            "like",
            "null",
            "when",
            "bool",
            "inlist",
        ]
        kind = self.pick(shallow + (deep if depth < 2 else []))
        if kind == "numcmp":
            op = self.pick(["=", "<>", "<", "<=", ">", ">="])
            return f"{self.num(depth + 1)} {op} {self.num(depth + 1)}"
        if kind == "textcmp":
            op = self.pick(["=", "<>", "<", ">=", "IS DISTINCT FROM"])
            return f"{self.text(depth + 1)} {op} {self.text(depth + 1)}"
        if kind == "between":
            low, high = sorted(self.draw(st.lists(st.sampled_from(TEXTS), min_size=2, max_size=2)))
            if self.draw(st.booleans()):
                return f"{self.text(depth + 1)} BETWEEN {low} AND {high}"
            return f"{self.num(depth + 1)} BETWEEN {self.pick(NUMBERS)} AND {self.pick(NUMBERS)}"
        if kind == "like":
            op = self.pick(["LIKE", "NOT LIKE", "ILIKE", "NOT ILIKE"])
            return f"{self.text(depth + 1)} {op} '{self.pick(PATTERNS)}'"
        if kind == "null":
            col = self.pick(sorted(self.cols))
            return f"{self.alias}.{col} IS {self.pick(['', 'NOT '])}NULL"
        if kind == "when":
            expr, literal = self.when()
            return f"{expr} {self.pick(['<', '>=', '='])} {literal}"
        if kind == "bool":
            col = self.column("bool")
            if col is None:
                return f"{self.alias}.id % 2 = 0"
            return self.pick([col, f"NOT {col}", f"{col} IS NOT TRUE", f"coalesce({col}, false)"])
        if kind == "inlist":
            return f"{self.text(depth + 1)} IN ({self.pick(TEXTS)}, {self.pick(TEXTS)})"
        if kind == "not":
            return f"NOT ({self.pred(depth + 1)})"
        if kind in ("and", "or"):
            return f"({self.pred(depth + 1)}) {kind.upper()} ({self.pred(depth + 1)})"
        return self.subquery_pred(kind)

    def subquery_pred(self, kind: str) -> str:
        """IN, EXISTS or a scalar subquery over the other table or the same one, correlated
        by the department (or not)."""
        inner = Exprs(self.draw, self.pick(["emp", "dept"]), f"s{self.alias}", self)
        key = "dept" if inner.table == "emp" else "id"
        mine = f"{self.alias}.{'dept' if self.table == 'emp' else 'id'}"
        where = inner.pred(2)
        if kind == "in":
            neg = self.pick(["", "NOT "])
            return f"{mine} {neg}IN (SELECT {inner.alias}.{key} FROM {inner.table} {inner.alias} WHERE {where})"
        correlated = f"{inner.alias}.{key} = {mine}"
        if kind == "exists":
            neg = self.pick(["", "NOT "])
            return f"{neg}EXISTS (SELECT 1 FROM {inner.table} {inner.alias} WHERE {correlated} AND {where})"
        agg = self.pick(
            ["count(*)", f"max({inner.num(2)})", f"min({inner.num(2)})", f"sum({inner.alias}.id)"]
        )
        cond = correlated if self.draw(st.booleans()) else where
        return f"{self.num(2)} {self.pick(['<', '>=', '='])} (SELECT {agg} FROM {inner.table} {inner.alias} WHERE {cond})"

    def aggregate(self) -> str:
        kind = self.pick(
            ["count", "countd", "sum", "minmax", "avg", "bool", "string_agg", "filter"]
        )
        if kind == "count":
            return self.pick(["count(*)", f"count({self.text(1)})"])
        if kind == "countd":
            return f"count(DISTINCT {self.pick([self.text(1), self.num(1)])})"
        if kind == "sum":
            return f"sum({self.num(1)})"
        if kind == "minmax":
            return f"{self.pick(['min', 'max'])}({self.pick([self.text(1), self.num(1)])})"
        if kind == "avg":
            return f"avg({self.column('int', 'num')})"
        if kind == "bool":
            return f"{self.pick(['bool_and', 'bool_or'])}({self.pred(1)})"
        if kind == "string_agg":
            value = self.text(1)
            return f"string_agg({value}, ',' ORDER BY {value}, {self.alias}.id)"
        return f"count(*) FILTER (WHERE {self.pred(1)})"


def _order(draw: Any, expr: str) -> str:
    direction = draw(st.sampled_from(["", " DESC"]))
    nulls = draw(st.sampled_from(["", " NULLS FIRST", " NULLS LAST"]))
    return f"{expr}{direction}{nulls}"


@st.composite
def diff_queries(draw: Any) -> str:
    table = draw(st.sampled_from(["emp", "emp", "emp", "dept"]))
    e = Exprs(draw, table, "a")
    where = f" WHERE {e.pred()}" if draw(st.booleans()) else ""
    shapes = ["rows", "rows", "group", "window", "setop", "cte", "derived", "distinct_on",
              "outer", "scalar"]  # fmt: skip
    shape = draw(st.sampled_from(shapes))
    src = f"{table} a"
    if shape == "group":
        group = draw(st.sampled_from([e.text(1), e.num(1), e.when()[0]]))
        aggs = ", ".join(e.aggregate() for _ in range(draw(st.integers(1, 3))))
        having = ""
        if draw(st.booleans()):
            counted = e.pick(["count(*)", f"count(DISTINCT {e.text(1)})", f"sum({e.num(1)})"])
            having = f" HAVING {counted} > {draw(st.integers(0, 3))}"
        order = (
            f" ORDER BY 1{draw(st.sampled_from(['', ' DESC']))} NULLS FIRST"
            if draw(st.booleans())
            else ""
        )
        return f"SELECT {group} AS g, {aggs} FROM {src}{where} GROUP BY 1{having}{order}"
    if shape == "window":
        value = e.num(1)
        by = e.pick([e.text(1), e.num(1), e.when()[0]])
        part = f"PARTITION BY {e.pick([e.text(2), e.num(2)])} " if draw(st.booleans()) else ""
        ranking = draw(st.sampled_from(["rank()", "dense_rank()"]))
        fn = draw(st.sampled_from([
            f"{ranking} OVER ({part}ORDER BY {_order(draw, by)})",
            f"row_number() OVER ({part}ORDER BY {_order(draw, by)}, a.id)",
            f"lag({value}) OVER ({part}ORDER BY {by}, a.id)",
            f"lead({value}, 2) OVER ({part}ORDER BY {by}, a.id)",
            f"sum({value}) OVER ({part}ORDER BY {by}, a.id ROWS BETWEEN 2 PRECEDING AND CURRENT ROW)",
            f"sum({e.column('int')}) OVER ({part}ORDER BY {by}, a.id)",
            f"count(*) OVER ({part.strip()})",
            f"max({value}) OVER ({part}ORDER BY {by}, a.id ROWS UNBOUNDED PRECEDING)",
        ]))  # fmt: skip
        return f"SELECT a.id, {fn} FROM {src}{where} ORDER BY a.id"
    if shape == "setop":
        op = draw(
            st.sampled_from(
                ["UNION", "UNION ALL", "INTERSECT", "INTERSECT ALL", "EXCEPT", "EXCEPT ALL"]
            )
        )
        other = Exprs(draw, draw(st.sampled_from(["emp", "dept"])), "b")
        kind = draw(st.sampled_from(["text", "num"]))
        left = e.text(1) if kind == "text" else e.num(1)
        right = other.text(1) if kind == "text" else other.num(1)
        order = " ORDER BY 1 NULLS FIRST" if draw(st.booleans()) else ""
        return f"SELECT {left} FROM {src}{where} {op} SELECT {right} FROM {other.table} b{order}"
    if shape == "cte":
        body = f"SELECT a.id, {e.num(1)} AS v, {e.text(1)} AS s FROM {src}{where}"
        use = draw(st.sampled_from([
            "SELECT t.id, t.v, t.s FROM t WHERE t.v > (SELECT avg(u.v) FROM t u) ORDER BY t.id",
            "SELECT x.id, y.id FROM t x JOIN t y ON x.s = y.s AND x.id < y.id ORDER BY 1, 2 LIMIT 40",
            "SELECT s, count(*), max(v) FROM t GROUP BY s",
            "SELECT id FROM t WHERE s IN (SELECT s FROM t WHERE v < 0) ORDER BY id",
        ]))  # fmt: skip
        return f"WITH t AS ({body}) {use}"
    if shape == "derived":
        inner = f"SELECT {e.text(1)} AS k, {e.num(1)} AS v FROM {src}{where}"
        return f"SELECT x.k, count(*), sum(x.v) FROM ({inner}) x GROUP BY x.k HAVING count(*) > {draw(st.integers(0, 2))}"
    if shape == "distinct_on":
        key = e.pick([e.text(1), e.num(1)])
        nulls = draw(st.sampled_from(["", " NULLS FIRST"]))
        return f"SELECT DISTINCT ON ({key}) {key}, a.id FROM {src}{where} ORDER BY {key}{nulls}, a.id{draw(st.sampled_from(['', ' DESC']))}"
    if shape == "outer" and table == "emp":
        d = Exprs(draw, "dept", "d")
        on = f" AND {d.pred(1)}" if draw(st.booleans()) else ""
        join = draw(st.sampled_from(["LEFT", "RIGHT", "FULL"]))
        return (
            f"SELECT a.id, d.id, {d.text(1)} FROM emp a {join} JOIN dept d ON d.id = a.dept{on}"
            f"{where} ORDER BY a.id NULLS FIRST, d.id NULLS FIRST"
        )
    if shape == "scalar" and table == "emp":
        inner = Exprs(draw, "emp", "f")
        agg = draw(
            st.sampled_from(["count(*)", f"max({inner.num(1)})", f"sum({inner.alias}.bonus)"])
        )
        return (
            f"SELECT a.id, (SELECT {agg} FROM emp f WHERE f.dept = a.dept AND {inner.pred(1)}) "
            f"FROM {src}{where} ORDER BY a.id"
        )
    makers = [e.num, e.text, lambda: f"({e.pred(1)})", lambda: e.when()[0]]
    items = ", ".join(e.draw(st.sampled_from(makers))() for _ in range(draw(st.integers(1, 3))))
    limit = ""
    if draw(st.booleans()):
        limit = f" LIMIT {draw(st.integers(0, 20))}"
        limit += f" OFFSET {draw(st.integers(0, 30))}" if draw(st.booleans()) else ""
    order = _order(draw, e.pick([e.text(1), e.num(1), e.when()[0]]))
    return f"SELECT a.id, {items} FROM {src}{where} ORDER BY {order}, a.id{limit}"
