"""The designer: an onion configuration proposed from the statements a workload runs.

``adaptive-db advise --schema schema.sql --log statements.jsonl`` reads the application's
tables (its CREATE TABLE statements) and a statement log (see
:mod:`adaptive_client.dbapi.statement_log`), and proposes, in the configuration's own TOML:

* per column, the onions its uses need -- Eq for equality, IN, grouping, DISTINCT and
  joins; Ord for ranges, ORDER BY, MIN/MAX and ``LIKE 'prefix%'``; Sum for SUM/AVG of
  the column -- and Eq alone (the client decrypts it) for a column only read.  No Eq
  where another onion serves: an exact Ord onion decides equality and decrypts, an ASHE
  Sum onion decrypts (keys, columns equated with others and text keep Eq);
* per table, precomputed onions (:mod:`adaptive_client.catalog.precomputed`) for what the server
  cannot evaluate over any single column's onion: an aggregated expression
  (``sum(l_extendedprice * (1 - l_discount))``: Sum), a grouped expression
  (``extract(year from o_orderdate)``: Eq), an expression compared with a constant or
  ordered by (Ord), a predicate the server cannot evaluate (``o_comment NOT LIKE
  '%special%requests%'``: a boolean with an Eq onion);
* join groups for columns of one table compared with each other (``l_commitdate <
  l_receiptdate``): their Ord onions then share a key.

This is CryptDB's training mode and MONOMI's designer in spirit, without their cost
model: it proposes what the server needs to run each statement as far as it can; the
user pastes the output and edits it (every entry says which statements asked for it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from typing import cast

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError
from sqlglot.optimizer.qualify import qualify
from sqlglot.optimizer.scope import Scope, traverse_scope

from ..catalog.metadata import ColumnMeta
from ..catalog.precomputed import canonical, compile_expression, strip_parens
from ..catalog.tablespec import TableSpec, parse_table
from ..compile.fold import fold_constants
from ..errors import AdaptiveError, ConfigError
from ..values.encodings import SqlType, encoding_for

_NUMERIC_TYPES = {"smallint", "integer", "bigint", "numeric"}
_BOOLEAN = (exp.Not, exp.Like, exp.And, exp.Or, exp.EQ, exp.NEQ, exp.LT, exp.LTE, exp.GT, exp.GTE)


@dataclass
class Proposal:
    """What the statements ask of one schema."""

    onions: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    used_by: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    # (table, canonical expression) -> onions, the expression's type, statements
    precomputed: dict[tuple[str, str], set[str]] = field(default_factory=lambda: defaultdict(set))
    precomputed_type: dict[tuple[str, str], str] = field(default_factory=dict)
    precomputed_by: dict[tuple[str, str], set[str]] = field(
        default_factory=lambda: defaultdict(set)
    )
    sums: bool = True  # propose Sum onions at all
    compared: list[tuple[str, str, str]] = field(default_factory=list)  # table, a, b
    # columns equated with another column (a join, a semi-join): their Eq onions must
    # share a key with the other side's, which only Eq onions do
    joined: set[tuple[str, str]] = field(default_factory=set)
    unread: list[tuple[str, str]] = field(default_factory=list)  # statement, why


def read_schema(text: str) -> dict[str, TableSpec]:
    """The tables of an application's DDL (other statements are skipped)."""
    tables: dict[str, TableSpec] = {}
    try:
        statements = sqlglot.parse(text, read="postgres")
    except SqlglotError as exc:
        raise ConfigError(f"cannot parse the schema: {exc}") from None
    for stmt in statements:
        if isinstance(stmt, exp.Create) and (stmt.kind or "").upper() == "TABLE":
            spec = parse_table(stmt)
            tables[spec.name] = spec
    if not tables:
        raise ConfigError("the schema has no CREATE TABLE statement")
    return tables


def advise(tables: dict[str, TableSpec], statements: Iterable[str], sums: bool = True) -> Proposal:
    """``sums``: propose Sum onions (Paillier: about 7 ms to encrypt a value, 0.4 ms per
    row summed on the server) -- False leaves every sum to the client."""
    proposal = Proposal(sums=sums)
    schema = {
        name: {c: _glot_type(t) for c, t in spec.types.items()} for name, spec in tables.items()
    }
    for n, text in enumerate(statements, 1):
        label = f"#{n}"
        try:
            tree = sqlglot.parse_one(_literal_placeholders(text), read="postgres")
            tree = qualify(
                tree,
                schema=cast(dict[str, object], schema),
                dialect="postgres",
                quote_identifiers=False,
                identify=False,
            )
            tree = fold_constants(cast(exp.Expression, tree))
        except (SqlglotError, AdaptiveError) as exc:
            proposal.unread.append((text, str(exc).splitlines()[0]))
            continue
        _statement(tables, tree, label, proposal)
    return proposal


def _literal_placeholders(text: str) -> str:
    """The rewrite's placeholders (``%(u0)s``) as NULL: the designer reads shapes, not values."""
    return re.sub(r"%\(\w+\)s", "NULL", text)


def _glot_type(t: SqlType) -> str:
    return t.sql()


def _statement(
    tables: dict[str, TableSpec], tree: exp.Expression, label: str, proposal: Proposal
) -> None:
    for scope in traverse_scope(tree):
        _scope(tables, scope, label, proposal)


def _scope(tables: dict[str, TableSpec], scope: Scope, label: str, proposal: Proposal) -> None:
    sources = {
        alias: src.name.lower()
        for alias, src in scope.sources.items()
        if isinstance(src, exp.Table) and src.name.lower() in tables
    }
    if not sources:
        return
    select = cast(exp.Expression, scope.expression)

    def own(node: exp.Expression) -> str | None:
        """The one table all of ``node``'s columns read, in this scope (or None)."""
        cols = list(node.find_all(exp.Column))
        found = {sources.get(c.table) for c in cols}
        if not cols or len(found) != 1 or None in found:
            return None
        if any(_in_subquery(c, select) for c in cols):
            return None
        return found.pop()

    def column(node: exp.Expression, sources: dict[str, str] = sources) -> tuple[str, str] | None:
        node = strip_parens(node) if isinstance(node, exp.Paren) else node
        if isinstance(node, exp.Column) and node.table in sources:
            return sources[node.table], node.name.lower()
        return None

    def need(node: exp.Expression, onion: str) -> None:
        col = column(node)
        if col is not None:
            if onion != "Sum" or proposal.sums:
                proposal.onions[col].add(onion)
            proposal.used_by[col].add(label)
            return
        if onion == "Sum" and not proposal.sums:
            return
        table = own(node)
        if table is not None and not isinstance(node, exp.Literal):
            _precompute(tables[table], node, onion, label, proposal)

    for node in _own_nodes(select):
        if isinstance(node, exp.Column) and node.table in sources:
            key = (sources[node.table], node.name.lower())
            proposal.onions[key]
            proposal.used_by[key].add(label)
        elif isinstance(node, exp.EQ | exp.NEQ | exp.In):
            need(node.this, "Eq")
            if isinstance(node, exp.EQ | exp.NEQ):
                need(node.expression, "Eq")
                sides = [strip_parens(e) for e in (node.this, node.expression)]
                if all(isinstance(e, exp.Column) for e in sides):
                    proposal.joined.update(c for c in map(column, sides) if c is not None)
            elif node.args.get("query") is not None:
                operand = column(node.this)
                if operand is not None:
                    proposal.joined.add(operand)
        elif isinstance(node, exp.LT | exp.LTE | exp.GT | exp.GTE | exp.Between):
            others = [node.expression] if not isinstance(node, exp.Between) else []
            need(node.this, "Ord")
            for other in others:
                need(other, "Ord")
            left, right = column(node.this), column(others[0]) if others else None
            if left and right and left[0] == right[0] and left[1] != right[1]:
                proposal.compared.append((left[0], left[1], right[1]))
        elif isinstance(node, exp.Sum | exp.Avg):
            need(node.this, "Sum")
        elif isinstance(node, exp.Min | exp.Max | exp.Ordered):
            need(node.this, "Ord")
        elif isinstance(node, exp.Like | exp.ILike):
            _like(node, column, own, tables, label, proposal)
        elif isinstance(node, exp.Count) and isinstance(node.this, exp.Distinct):
            for e in node.this.expressions:
                need(e, "Eq")
    group = select.args.get("group")
    for e in group.expressions if group is not None else []:
        need(e, "Eq")
    distinct = select.args.get("distinct")
    if distinct is not None:
        for e in select.expressions:
            need(cast(exp.Expression, e.unalias()), "Eq")


def _like(
    node: exp.Like | exp.ILike,
    column: object,
    own: object,
    tables: dict[str, TableSpec],
    label: str,
    proposal: Proposal,
) -> None:
    pattern = node.expression
    col = column(node.this)  # type: ignore[operator]
    if isinstance(node, exp.Like) and isinstance(pattern, exp.Literal) and col is not None:
        text = pattern.this
        if re.fullmatch(r"[^%_\\]+%", text):  # a prefix: a range over Ord
            proposal.onions[col].add("Ord")
            proposal.used_by[col].add(label)
            return
        # any other pattern: the predicate itself, precomputed, where it is a WHERE
        # conjunct the server would otherwise leave to the client
        parent = node.parent
        whole: exp.Expression = parent if isinstance(parent, exp.Not) else node
        table = own(whole)  # type: ignore[operator]
        if table is not None:
            _precompute(tables[table], whole, "Eq", label, proposal)


def _own_nodes(select: exp.Expression) -> Iterable[exp.Expression]:
    """The nodes of one scope (nested queries are scopes of their own)."""
    stack = list(select.iter_expressions())
    while stack:
        node = stack.pop()
        if isinstance(node, exp.Query | exp.Subquery):
            continue
        yield node
        stack.extend(node.iter_expressions())


def _in_subquery(node: exp.Expression, select: exp.Expression) -> bool:
    parent = node.parent
    while parent is not None and parent is not select:
        if isinstance(parent, exp.Query | exp.Subquery):
            return True
        parent = parent.parent
    return False


def _precompute(
    spec: TableSpec, node: exp.Expression, onion: str, label: str, proposal: Proposal
) -> None:
    """Propose ``node`` (over one table's columns) as a precomputed onion, if the client
    can compute it and its type is known."""
    bare = strip_parens(node).copy()
    for c in bare.find_all(exp.Column):
        c.set("table", None)
    text = canonical(bare)

    columns = {c: ColumnMeta(c, t, True, {}) for c, t in spec.types.items()}
    try:
        compile_expression(text, columns, "advise")
    except ConfigError:
        return
    sql_type = _type_of(bare, spec)
    if sql_type is None:
        return
    if onion == "Sum" and sql_type == "boolean":
        return
    key = (spec.name, text)
    proposal.precomputed[key].add(onion)
    proposal.precomputed_type[key] = sql_type
    proposal.precomputed_by[key].add(label)


def _type_of(node: exp.Expression, spec: TableSpec) -> str | None:
    """The SQL type of an expression the client computes, as PostgreSQL types it: a
    numeric's scale exact (a product's is the sum of its factors', a sum's the larger)."""
    if isinstance(node, _BOOLEAN):
        return "boolean"
    if isinstance(node, exp.Extract):
        return "numeric(9,0)"
    if isinstance(node, exp.Substring):
        return "text"
    shape = _numeric_shape(node, spec)
    if shape is None:
        return None
    digits, scale = shape
    if scale == 0 and digits <= 18:
        return "bigint"
    # the client engine holds numerics of at most 38 digits: a wider bound (a product of
    # three numeric(15,2) has 47) is capped there -- a value past it is refused when
    # written, with its own error, rather than every statement reading the column
    return f"numeric({min(digits, max(38, scale + 1))},{scale})"


def _numeric_shape(node: exp.Expression, spec: TableSpec) -> tuple[int, int] | None:
    """(integer digits + scale, scale) bounds of a numeric expression."""
    if isinstance(node, exp.Paren):
        return _numeric_shape(node.this, spec)
    if isinstance(node, exp.Column):
        t = spec.types.get(node.name.lower())
        if t is None or t.name not in _NUMERIC_TYPES:
            return None
        if t.name == "numeric":
            if t.precision is None:
                return None
            return t.precision, t.scale or 0
        return {"smallint": 5, "integer": 10, "bigint": 19}[t.name], 0
    if isinstance(node, exp.Literal) and not node.is_string:
        d = Decimal(node.this)
        exponent = d.as_tuple().exponent
        scale = -exponent if isinstance(exponent, int) and exponent < 0 else 0
        return max(len(d.as_tuple().digits), scale + 1), scale
    if isinstance(node, exp.Neg):
        return _numeric_shape(node.this, spec)
    if isinstance(node, exp.Add | exp.Sub | exp.Mul):
        a, b = _numeric_shape(node.this, spec), _numeric_shape(node.expression, spec)
        if a is None or b is None:
            return None
        if isinstance(node, exp.Mul):
            return a[0] + b[0], a[1] + b[1]
        scale = max(a[1], b[1])
        return max(a[0] - a[1], b[0] - b[1]) + scale + 1, scale
    return None


def render(tables: dict[str, TableSpec], proposal: Proposal, statements: int) -> str:
    """The proposal as onion-configuration TOML, each entry commented with its users."""
    lines = [
        f"# proposed by adaptive-db advise from {statements} statements"
        + (f" ({len(proposal.unread)} not read)" if proposal.unread else ""),
        "[defaults]",
        "search = false",
        "",
    ]
    groups: dict[tuple[str, str], str] = {}
    for table, a, b in proposal.compared:
        name = groups.get((table, a)) or groups.get((table, b)) or f"{table}_{a}"
        groups[(table, a)] = groups[(table, b)] = name
    for table in sorted(tables):
        spec = tables[table]
        for cname in spec.order:
            key = (table, cname)
            if key not in proposal.used_by:
                continue
            onions = sorted(proposal.onions[key] - {"Eq"}, key=["Ord", "Sum"].index)
            if _needs_eq(tables, key, onions, proposal):
                onions.insert(0, "Eq")
            lines.append(f"[tables.{table}.{cname}]")
            lines.append(
                f"onions = [{', '.join(repr(o).replace(chr(39), chr(34)) for o in onions)}]"
            )
            if key in groups and "Ord" in onions:
                lines.append(f'join_group = "{groups[key]}"')
            lines.append(f"# used by {_labels(proposal.used_by[key])}")
            lines.append("")
    counters: dict[str, int] = defaultdict(int)
    for (table, text), wanted in sorted(proposal.precomputed.items()):
        counters[table] += 1
        lines.append(f"[precomputed.{table}.{_name(text, counters[table])}]")
        lines.append(f"expression = {_toml_string(text)}")
        lines.append(f'type = "{proposal.precomputed_type[(table, text)]}"')
        ordered = sorted(wanted, key=["Eq", "Ord", "Sum"].index)
        lines.append(f"onions = [{', '.join(chr(34) + o + chr(34) for o in ordered)}]")
        lines.append(f"# used by {_labels(proposal.precomputed_by[(table, text)])}")
        lines.append("")
    for text, why in proposal.unread:
        lines.append(f"# not read: {why}: {' '.join(text.split())[:100]}")
    return "\n".join(lines).rstrip() + "\n"


def _needs_eq(
    tables: dict[str, TableSpec], key: tuple[str, str], onions: list[str], proposal: Proposal
) -> bool:
    """Whether a column keeps an Eq onion beside ``onions``.  Not when another onion
    serves what Eq would: an exact Ord onion decides equality and grouping (at OPE, which
    the statements asking for Ord peel to anyway) and decrypts; an ASHE Sum onion
    decrypts (one AES block a value) -- one ciphertext a row fewer.  Kept for keys
    (uniqueness and foreign keys are enforced over DET), for columns equated with another
    column (only Eq onions share a key across columns), for text (its Ord onion orders
    by a prefix: it neither decides equality nor decrypts) and where nothing else
    decrypts."""
    table, name = key
    spec = tables[table]
    keys = set(spec.pk) | {c for _, cols in spec.uniques for c in cols}
    for other in tables.values():
        for fk in other.foreign_keys:
            if other is spec:
                keys.update(fk.columns)
            if fk.ref_table == table:
                keys.update(fk.ref_columns or spec.pk)
    if name in keys or key in proposal.joined:
        return True
    exact_ord = "Ord" in onions and encoding_for(spec.types[name]).ope_exact
    if "Eq" in proposal.onions[key]:
        return not exact_ord
    return not (exact_ord or "Sum" in onions)


def _name(text: str, n: int) -> str:
    words = re.findall(r"[a-z]+", text.lower())
    stem = "_".join(w for w in words if w not in {"not", "like", "from", "for"})[:40].strip("_")
    return f"pc{n}_{stem}" if stem else f"pc{n}"


def _toml_string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _labels(labels: set[str]) -> str:
    ordered = sorted(labels, key=lambda s: int(s[1:]) if s[1:].isdigit() else 0)
    return ", ".join(ordered[:12]) + (f" and {len(ordered) - 12} more" if len(ordered) > 12 else "")
