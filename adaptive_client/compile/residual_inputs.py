"""The statement split execution reads, rewritten first into forms its later steps
evaluate exactly (compile/residual.py's ``_bound``): a regular expression that is a
plain string as the LIKE of it, ``age(x)`` as ``age(CURRENT_DATE, x)``, ``EXISTS
(SELECT * ...)`` as ``EXISTS (SELECT 1 ...)``."""

from __future__ import annotations

from sqlglot import exp

from ..engine.regexes import portable_regex
from .constants import regex_runs


def literal_regexes(stmt: exp.Expression) -> exp.Expression:
    """``x ~ 'abc'`` / ``x ~* '^abc$'``: a regular expression that is a plain string
    (optionally anchored) is the LIKE / ILIKE of that string, which the client evaluates
    exactly; other regular expressions stay refused."""

    def swap(node: exp.Expression) -> exp.Expression:
        if not isinstance(node, exp.RegexpLike | exp.RegexpILike):
            return node
        pattern = node.expression
        if not (isinstance(pattern, exp.Literal) and pattern.is_string):
            return node
        runs = regex_runs(str(pattern.this))
        if not runs:
            if isinstance(node, exp.RegexpLike) and portable_regex(str(pattern.this)):
                node.meta["portable"] = True  # the client engine matches it (transforms.py)
            return node
        body, at_start, at_end = runs[0]
        escaped = body.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        like = ("" if at_start else "%") + escaped + ("" if at_end else "%")
        kind = exp.Like if isinstance(node, exp.RegexpLike) else exp.ILike
        swapped = kind(this=node.this.copy(), expression=exp.Literal.string(like))
        swapped.meta["operator"] = "~" if isinstance(node, exp.RegexpLike) else "~*"
        return swapped

    return stmt.transform(swap)


def age_of_today(stmt: exp.Expression) -> tuple[exp.Expression, bool]:
    """``age(x)``: PostgreSQL's ``age(CURRENT_DATE::timestamp, x)`` (the server's date,
    read as clock.py reads it); whether there was one."""
    found = False

    def swap(node: exp.Expression) -> exp.Expression:
        nonlocal found
        if (
            isinstance(node, exp.Anonymous)
            and node.name.lower() == "age"
            and len(node.expressions) == 1
        ):
            found = True
            today = exp.Cast(this=exp.CurrentDate(), to=exp.DataType.build("TIMESTAMP"))
            return exp.Anonymous(this="age", expressions=[today, node.expressions[0]])
        return node

    return stmt.transform(swap), found


def exists_select_one(stmt: exp.Expression) -> exp.Expression:
    """``EXISTS (SELECT * ...)`` as ``EXISTS (SELECT 1 ...)``: the same, and the star
    would otherwise count as a use of every column (each fetched)."""
    stmt = stmt.copy()
    for node in stmt.find_all(exp.Exists):
        sub = node.this
        if isinstance(sub, exp.Select) and all(isinstance(e, exp.Star) for e in sub.expressions):
            sub.set("expressions", [exp.Literal.number(1)])
    return stmt


__all__ = ["age_of_today", "exists_select_one", "literal_regexes"]
