"""INSERT: each value coerced to its column's type and encrypted for every onion of the
column (the defaults, sequences and precomputed columns drawn by the client), in one
server statement; ON CONFLICT over the keys' ciphertexts; INSERT ... SELECT through the
client.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, cast

from psycopg import errors as pg_errors
from sqlglot import exp

from ..catalog import defaults, precomputed, recipes, sequences
from ..catalog.compiled_sealing import row_sealers
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn
from ..catalog.tablespec import key_column, null_tests
from ..errors import UnsupportedQuery
from ..syntax.names import shown
from ..syntax.sqltext import syntax_error
from .compiler import Compiler, server_sql
from .constants import PositionalParam, null_value
from .generated import computation_of, computed_columns
from .plan import Compiled, ParamBuilder, Params
from .scope import Scope, unsupported
from .writes import (
    ComputedValue,
    check_assignment,
    computing,
    encrypting,
    engine_value,
    is_default,
    returning,
)

# compiles a statement nested in another (the SELECT of INSERT ... SELECT)
CompileSource = Callable[[Catalog, exp.Expression], Compiled]


def _target(c: Compiler, node: exp.Expression) -> tuple[Any, list[str] | None, str]:
    """The INSERT's table, its column list (None: all) and the name it goes by."""
    cols = None
    if isinstance(node, exp.Schema):
        cols = [i.name.lower() for i in node.expressions]
        node = node.this
        for i, name in enumerate(cols):
            if name in cols[:i]:
                raise pg_errors.DuplicateColumn(f'column "{shown(name)}" specified more than once')
    if not isinstance(node, exp.Table):
        raise unsupported(node, "INSERT target")
    meta = c.catalog.table(node.name)
    return meta, cols, (node.alias or meta.name).lower()


def compile_insert(c: Compiler, stmt: exp.Insert, compile_source: CompileSource) -> Compiled:
    """``compile_source``: compiles the SELECT of an INSERT ... SELECT, a statement of its own."""
    for key in ("overwrite", "partition", "where"):
        if stmt.args.get(key):
            raise unsupported(stmt, f"INSERT ... {key.upper()}")
    meta, cols, alias = _target(c, stmt.this)
    c.tables.append(meta)
    scope = Scope()
    server_alias = scope.add(alias, meta)
    # without a column list, the values fill the table's leading columns (as many as
    # there are values), the rest take their defaults
    named = bool(cols)
    cols = cols or list(meta.columns)
    if not named:
        cols = cols[: _source_width(stmt.expression, len(cols))]
    precomputed.refuse_written(meta, cols)
    for name in cols:
        meta.column(name)
    values = stmt.expression
    if values is None and stmt.args.get("default"):  # INSERT ... DEFAULT VALUES
        cols, values = [], exp.Values(expressions=[exp.Tuple(expressions=[])])
    if isinstance(values, exp.Values) and _reads_rows(values):
        # VALUES rows with a subquery read the tables: the rows as a SELECT of them
        stmt = stmt.copy()
        stmt.set("expression", _as_select(values))
        values = stmt.expression
    if isinstance(values, exp.Select | exp.SetOperation | exp.Subquery):
        return _insert_select(c, stmt, meta, cols, compile_source)
    if not isinstance(values, exp.Values):
        raise unsupported(stmt, "INSERT source")
    storage: list[tuple[ColumnMeta, OnionColumn]] = [
        (col, oc) for col in meta.stored_columns for oc in col.onions.values()
    ]
    rows: list[exp.Tuple] = []
    row_values: list[dict[str, ParamBuilder]] = []  # per row, every column's value
    widths = {len(_row_items(tup)) for tup in values.expressions}
    if len(widths) > 1:
        raise syntax_error("VALUES lists must all be the same length", None)
    overriding = stmt.meta.get("overriding")  # OVERRIDING SYSTEM | USER VALUE (sqltext)
    for tup in values.expressions:
        exprs = _row_items(tup)
        if len(exprs) != len(cols):
            raise syntax_error(
                "INSERT has more expressions than target columns"
                if len(exprs) > len(cols)
                else "INSERT has more target columns than expressions",
                None,
            )
        given: dict[str, ParamBuilder | None] = {}
        for name, e in zip(cols, exprs, strict=True):
            check_assignment(meta.column(name), e, update=False)
            identity = meta.column(name).identity
            if (isinstance(e, exp.Var) and e.name.upper() == "DEFAULT") or (
                identity is not None and overriding == "user"
            ):  # (OVERRIDING USER VALUE: an identity column's value is its sequence's)
                given[name] = None
                continue
            if identity == "always" and overriding != "system":
                raise pg_errors.GeneratedAlways(
                    f'cannot insert a non-DEFAULT value into column "{name}"'
                )
            v = c.value_of(e)
            if v is None:
                v = _drawn_from_sequence(c.catalog, e)
            if v is None:
                v = engine_value(c, e)
            if v is None:
                raise unsupported(e, "non-constant value in INSERT")
            given[name] = v
        effective = {
            col.name: given.get(col.name) or defaults.builder(col)
            for col in meta.columns.values()
            if col.generated is None
        }
        for col in computed_columns(meta):
            effective[col.name] = computing(c.catalog, meta, col, effective)
        row_values.append(effective)
        # (the VALUES parameters are made by plan.bulk: these builders, one per onion, are
        # their placeholders, and what Compiled.bind would call without it)
        rows.append(
            exp.Tuple(
                expressions=[
                    c.param(encrypting(col, oc, effective[col.name])) for col, oc in storage
                ]
            )
        )
    target = exp.Schema(
        this=exp.Table(
            this=exp.to_identifier(meta.anon, quoted=True),
            alias=exp.TableAlias(this=exp.to_identifier(server_alias)),
        ),
        expressions=[exp.to_identifier(oc.anon, quoted=True) for _, oc in storage],
    )
    out = exp.Insert(this=target, expression=exp.Values(expressions=rows))
    plan = Compiled(kind="insert", statement_type="INSERT")
    # The VALUES parameters, made before ON CONFLICT's and RETURNING's, all at once and
    # column by column: the given values are bound (coerced, checked) before the defaults
    # are drawn, so that a value PostgreSQL rejects costs no sequence number, as on the
    # server.
    # (the computed columns last: computed from the others' values)
    ordered = sorted(
        (col for col in meta.columns.values() if col.generated is None),
        key=lambda col: col.name not in cols,
    )
    ordered += computed_columns(meta)
    if len(rows) > 1:
        plan.bulk = _bulk_encrypting(ordered, storage, row_values)
    else:
        plan.bulk = _row_encrypting(ordered, storage, row_values[0])
    plan.bulk_size = len(rows) * len(storage)
    returning(c, stmt, out, plan, scope)  # (RETURNING cannot name EXCLUDED)
    if stmt.args.get("conflict") is not None:
        out.set("conflict", _on_conflict(c, scope, meta, stmt.args["conflict"]))
    plan.sql = server_sql(out)
    plan.params = c.params
    return plan


def _drawn_from_sequence(catalog: Catalog, e: exp.Expression) -> ParamBuilder | None:
    """``nextval('name')`` as a value: drawn by the client, as a serial column's."""
    name = defaults.sequence_named(e)
    if name is None:
        return None
    plain, anon = sequences.named(catalog, name)
    if anon is None:
        return None
    return defaults.sequence_builder(plain, anon)


def _row_items(row: exp.Expression) -> list[exp.Expression]:
    """The values of one VALUES row."""
    return row.expressions if isinstance(row, exp.Tuple) else [row]


def _reads_rows(values: exp.Values) -> bool:
    """A VALUES list with a subquery among its values and no DEFAULT (a SELECT of its
    rows is the same rows: PostgreSQL evaluates each row's values once, before any is
    inserted)."""
    items = [e for row in values.expressions for e in _row_items(row)]
    return any(e.find(exp.Subquery, exp.Select) for e in items) and not any(
        is_default(e) for e in items
    )


def _as_select(values: exp.Values) -> exp.Expression:
    """The rows of ``values`` as a SELECT of each, in order (UNION ALL)."""
    selects = [
        exp.Select(expressions=[e.copy() for e in _row_items(row)]) for row in values.expressions
    ]
    out: exp.Expression = selects[0]
    for select in selects[1:]:
        out = exp.Union(this=out, expression=select, distinct=False)
    return out


def _source_width(source: exp.Expression | None, columns: int) -> int:
    """How many columns an INSERT without a column list fills: its VALUES rows' or
    SELECT's width (one past the table's columns where there are too many, for the
    error), all of them for DEFAULT VALUES or a source not known here."""
    if isinstance(source, exp.Values) and source.expressions:
        return min(max(len(_row_items(r)) for r in source.expressions), columns + 1)
    while isinstance(source, exp.Subquery):
        source = source.this
    if isinstance(source, exp.Select) and not any(
        isinstance(e, exp.Star) or (isinstance(e, exp.Column) and e.is_star)
        for e in source.expressions
    ):
        return min(len(source.expressions), columns + 1)
    return columns


def _insert_select(
    c: Compiler, stmt: exp.Insert, meta: Any, cols: list[str], compile_source: CompileSource
) -> Compiled:
    """INSERT ... SELECT through the client: the source rows are read decrypted (the
    server cannot move values between columns under different keys), then inserted,
    encrypted for the target's onions, in the same transaction."""
    source_node = stmt.expression
    while isinstance(source_node, exp.Subquery):
        source_node = source_node.this
    rest = stmt.copy()
    rest.set("expression", None)
    if rest.find(exp.Placeholder) is not None:
        raise unsupported(stmt, "parameters outside the SELECT of INSERT ... SELECT")
    source = compile_source(c.catalog, source_node)
    if len(source.outputs) != len(cols):
        raise syntax_error(
            "INSERT has more expressions than target columns"
            if len(source.outputs) > len(cols)
            else "INSERT has more target columns than expressions",
            None,
        )
    row = exp.Tuple(expressions=[exp.Placeholder(this=f"u{i}") for i in range(len(cols))])
    target_stmt = stmt.copy()
    target_stmt.set(
        "this",
        exp.Schema(
            this=stmt.this.this if isinstance(stmt.this, exp.Schema) else stmt.this,
            expressions=[exp.to_identifier(n) for n in cols],
        ),
    )
    target_stmt.set("expression", exp.Values(expressions=[row]))
    target_c = Compiler(c.catalog)
    target = compile_insert(target_c, target_stmt, compile_source)
    target.needs = target_c.needs
    target.tables = target_c.tables
    c.needs += source.needs + target.needs
    c.joins += source.joins
    c.tables += source.tables
    plan = Compiled(kind="insert", statement_type="INSERT")
    plan.insert_select = (source, target)
    plan.text_orders = source.text_orders  # the rows chosen by ORDER BY ... LIMIT
    plan.outputs, plan.returns_rows = target.outputs, target.returns_rows
    return plan


def _row_encrypting(
    columns: list[ColumnMeta],
    storage: list[tuple[ColumnMeta, OnionColumn]],
    effective: dict[str, ParamBuilder],
) -> Callable[[Params], list[Any]]:
    """The VALUES parameters of a single-row INSERT at once, in the statement's order: each
    column's value read (a plain %s by index), coerced once for all its onions, in the
    order of ``columns`` (given values before defaults); then every onion's stored value
    in one call (:class:`recipes.RowSealer`)."""
    position = {col.name: i for i, col in enumerate(columns)}
    getters = [
        (b.index if isinstance(b, PositionalParam) else -1, b, col.encoding.coerce)
        for col in columns
        for b in (effective[col.name],)
    ]
    needed = 1 + max((i for i, _, _ in getters), default=-1)
    # every value a plain %s or NULL: the compiled layer seals the row from the parameters
    sealer, compiled = row_sealers(
        [
            (None if i < 0 else i, position[col.name], col, oc)
            for col, oc in storage
            for i, _, _ in (getters[position[col.name]],)
        ],
        compiled=all(i >= 0 or build is null_value for i, build, _ in getters),
    )

    def bind(p: Params) -> list[Any]:
        kind = type(p)
        if (
            compiled is not None
            and (kind is tuple or kind is list)
            and len(p) >= needed
            and recipes.COMPILED.get()
        ):
            return compiled(p)  # type: ignore[arg-type]
        by_index = (kind is tuple or kind is list or not isinstance(p, Mapping | str | bytes)) and (
            len(p) >= needed
        )  # else the builders raise the typed error
        seq = cast(Sequence[Any], p)
        values: list[Any] = []
        for i, build, coerce in getters:
            if isinstance(build, ComputedValue):
                x = build.from_values({n: values[position[n]] for n in build.computation.inputs})
            else:
                x = seq[i] if by_index and i >= 0 else build(p)
            values.append(None if x is None else coerce(x))
        return sealer(values)

    return bind


def _bulk_encrypting(
    columns: list[ColumnMeta],
    storage: list[tuple[ColumnMeta, OnionColumn]],
    row_values: list[dict[str, ParamBuilder]],
) -> Callable[[Params], list[Any]]:
    """The VALUES parameters of a multi-row INSERT at once, in the statement's order: each
    column's values coerced once, each onion's ciphertexts made by one batched call (one
    call per layer per onion instead of one dispatch per value)."""
    width = len(storage)
    # Columns whose every row is a plain %s: their values are read by index once the
    # parameter count is checked (the usual batch: INSERT ... VALUES (%s, ...), ...).
    indexes: dict[str, list[int]] = {}
    for col in columns:
        builders = [row[col.name] for row in row_values]
        if all(isinstance(b, PositionalParam) for b in builders):
            indexes[col.name] = [b.index for b in builders]  # type: ignore[attr-defined]
    needed = 1 + max((i for idx in indexes.values() for i in idx), default=-1)

    def bind(p: Params) -> list[Any]:
        by_index = (
            not isinstance(p, Mapping | str | bytes) and len(p) >= needed
        )  # else the builders raise the typed error
        coerced: dict[str, list[Any]] = {}
        for col in columns:
            name, coerce = col.name, col.encoding.coerce
            idx = indexes.get(name) if by_index else None
            if idx is not None:
                seq = cast(Sequence[Any], p)
                coerced[name] = [None if (x := seq[i]) is None else coerce(x) for i in idx]
            elif isinstance(row_values[0][name], ComputedValue):
                coerced[name] = [
                    None if (x := _computed(row[name], coerced, r)) is None else coerce(x)
                    for r, row in enumerate(row_values)
                ]
            else:
                coerced[name] = [
                    None if (x := row[name](p)) is None else coerce(x) for row in row_values
                ]
        out: list[Any] = [None] * (width * len(row_values))
        for j, (col, oc) in enumerate(storage):
            values = coerced[col.name]
            present = [i for i, x in enumerate(values) if x is not None]
            cts = recipes.encrypt_many(col, oc, [values[i] for i in present])
            for i, ct in zip(present, cts, strict=True):
                out[i * width + j] = ct
        return out

    return bind


def _generated_sets(c: Compiler, meta: Any, node: exp.OnConflict) -> list[exp.Expression]:
    """DO UPDATE's writes of the generated columns its assignments change: each one's
    from EXCLUDED where every column it reads is assigned from EXCLUDED (the proposed
    row's value, computed from those very values); refused otherwise."""
    from_excluded, assigned = set(), set()
    for a in node.expressions:
        name = a.this.name.lower()
        assigned.add(name)
        src = a.expression
        if (
            isinstance(src, exp.Column)
            and (src.table or "").lower() == "excluded"
            and src.name.lower() == name
        ):
            from_excluded.add(name)
    sets: list[exp.Expression] = []
    for col in meta.columns.values():
        if col.generated is None or col.name in assigned:
            continue
        inputs = set(computation_of(c.catalog, meta, col).inputs)
        if not inputs & assigned:
            continue
        if not inputs <= from_excluded:
            raise unsupported(node, "ON CONFLICT DO UPDATE of a column a generated column reads")
        sets += [
            exp.EQ(
                this=exp.column(oc.anon, quoted=True),
                expression=exp.column(oc.anon, table="excluded", quoted=True),
            )
            for oc in col.onions.values()
        ]
    return sets


def _computed(value: ParamBuilder, coerced: dict[str, list[Any]], r: int) -> Any:
    """A computed column's value in row ``r`` of a multi-row INSERT, from the row's
    values of the columns it reads (coerced already)."""
    assert isinstance(value, ComputedValue)
    return value.from_values({n: coerced[n][r] for n in value.computation.inputs})


def _check_inferable(meta: Any, keys: list[str]) -> None:
    """PostgreSQL's 42P10 for a conflict target no unique key of the table has exactly
    these columns (the server infers the key among those, a partial one by its
    predicate)."""
    uniques = [meta.primary_key, *meta.unique_keys.values()]
    uniques += [ix.columns for ix in meta.indexes if ix.unique]
    if set(keys) not in [set(u) for u in uniques if u]:
        raise pg_errors.InvalidColumnReference(
            "there is no unique or exclusion constraint matching the ON CONFLICT specification"
        )


def _on_conflict(c: Compiler, scope: Scope, meta: Any, node: exp.OnConflict) -> exp.OnConflict:
    """ON CONFLICT over the keys' ciphertexts: the conflict target names the key columns'
    Eq onions (the unique index the server enforces); DO UPDATE SET writes every onion of
    a column, from EXCLUDED's onions or from encrypted constants."""
    out = exp.OnConflict()
    if node.args.get("constraint") is not None:
        name = node.args["constraint"].name.lower()
        anon = next((a for a, n in meta.constraints.items() if n == name), None)
        if anon is None and (name != f"{meta.name}_pkey" or not meta.primary_key):
            raise pg_errors.UndefinedObject(
                f'constraint "{name}" for table "{meta.name}" does not exist'
            )
        if anon is not None:
            out.set("constraint", exp.to_identifier(anon, quoted=True))
            keys = []
        else:
            keys = list(meta.primary_key)
    else:
        keys = []
        for k in node.args.get("conflict_keys") or []:
            col = k.this if isinstance(k, exp.Ordered) else k
            if not isinstance(col, exp.Column | exp.Identifier):
                raise unsupported(node, "ON CONFLICT over an expression")
            keys.append(meta.column(col.name).name)
    if keys and node.args.get("constraint") is None:
        _check_inferable(meta, keys)
    if keys:
        out.set(
            "conflict_keys",
            [exp.to_identifier(key_column(meta, k).anon, quoted=True) for k in keys],
        )
    inferring = node.args.get("index_predicate")
    if inferring is not None:  # (infers a partial unique index: its predicate's form)
        out.set("index_predicate", exp.Where(this=null_tests(meta, inferring.this)))
    action = node.args.get("action")
    verb = action.name.upper() if action is not None else ""
    if verb == "DO NOTHING":
        out.set("action", exp.var("DO NOTHING"))
        return out
    if verb != "DO UPDATE":
        raise unsupported(node, f"ON CONFLICT {verb}")
    if not keys and out.args.get("constraint") is None:
        raise UnsupportedQuery(
            "ON CONFLICT DO UPDATE requires inference specification or constraint name",
            "ON CONFLICT",
        )
    scope.add("excluded", meta, server_alias="excluded")
    sets: list[exp.Expression] = []
    for a in node.expressions:
        if not isinstance(a, exp.EQ) or not isinstance(a.this, exp.Column):
            raise unsupported(a, "ON CONFLICT SET item")
        col = meta.column(a.this.name)
        src = a.expression
        check_assignment(col, src)
        if (
            isinstance(src, exp.Column)
            and (src.table or "").lower() == "excluded"
            and src.name.lower() == col.name
        ):
            for oc in col.onions.values():
                sets.append(
                    exp.EQ(
                        this=exp.column(oc.anon, quoted=True),
                        expression=exp.column(oc.anon, table="excluded", quoted=True),
                    )
                )
            continue
        v = c.value_of(src)
        if v is None and is_default(src):
            v = defaults.builder(col)
        if v is None:
            raise unsupported(a, "ON CONFLICT DO UPDATE SET computed from the rows")
        for oc in col.onions.values():
            sets.append(
                exp.EQ(
                    this=exp.column(oc.anon, quoted=True),
                    expression=c.param(encrypting(col, oc, v)),
                )
            )
    sets += _generated_sets(c, meta, node)
    out.set("action", exp.var("DO UPDATE"))
    out.set("expressions", sets)
    where = node.args.get("where")
    if where is not None:
        out.set("where", exp.Where(this=c.predicate(scope, where.this)))
    return out
