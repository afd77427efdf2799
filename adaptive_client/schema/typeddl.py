"""CREATE/ALTER/DROP of enum types and domains, through the client (see usertypes.py).

The statements touch only the sealed catalog (the type's own row in
``adaptive.tables``) and, for a domain's constraints, the server constraints of the
columns declared with it: nothing of an enum reaches the server.  They run in the DDL's
transaction like any DDL, so a failure (or the application's ROLLBACK) leaves the
catalog as it was.  The statements sqlglot does not parse (ALTER TYPE, CREATE / ALTER /
DROP DOMAIN) are read here, narrowly, with PostgreSQL's syntax errors (42601).  What a
column declared with a type takes from it, as statements compile, is domains.py's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import psycopg
from psycopg import errors as pg_errors
from psycopg import sql
from sqlglot import exp
from sqlglot.dialects.postgres import Postgres
from sqlglot.tokens import Token, TokenType

from ..adapt.onion_storage import bump_epoch, fresh_name
from ..catalog import checks
from ..catalog.domains import (
    check_condition,
    column_domain,
    default_value,
    domain_checks,
    pg_error,
    udt_name,
)
from ..catalog.metadata import Catalog, ColumnMeta, TableMeta
from ..catalog.usertypes import (
    FIRST,
    MAX_LABEL_BYTES,
    STEP,
    EnumPositionsExhausted,
    TypeMeta,
    position_between,
)
from ..errors import ConfigError, UnsupportedQuery
from ..syntax.names import folded
from ..syntax.sqltext import syntax_error
from ..values.encodings import FOREIGN_TYPE_NAMES, SqlType, parse_sql_type
from .alter import drop_column
from .server_commands import check_role

# -- reading the statements ---------------------------------------------------------------


class _Tokens:
    """A cursor over a statement's tokens."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.toks = Postgres().tokenize(text)
        self.i = 0

    def peek(self, k: int = 0) -> Token | None:
        return self.toks[self.i + k] if self.i + k < len(self.toks) else None

    def kind(self) -> TokenType | None:
        t = self.peek()
        return None if t is None else t.token_type

    def word(self, k: int = 0) -> str:
        """The next token as an unquoted keyword, upper case ('' if none or quoted)."""
        t = self.peek(k)
        if t is None or t.token_type in (TokenType.STRING, TokenType.IDENTIFIER):
            return ""
        return t.text.upper()

    def error(self) -> pg_errors.SyntaxError:
        t = self.peek()
        if t is None:
            return syntax_error("syntax error at end of input", len(self.text) + 1)
        return syntax_error(f'syntax error at or near "{t.text}"', t.start + 1)

    def accept(self, *words: str) -> bool:
        if all(self.word(k) == w for k, w in enumerate(words)):
            self.i += len(words)
            return True
        return False

    def expect(self, *words: str) -> None:
        for w in words:
            if self.word() != w:
                raise self.error()
            self.i += 1

    def name(self) -> str:
        nxt = self.peek(1)
        if self.word() == "PUBLIC" and nxt is not None and nxt.token_type == TokenType.DOT:
            self.i += 2  # (the schema the client's objects live in: the name unqualified)
        t = self.peek()
        if (
            t is None
            or t.token_type in (TokenType.STRING, TokenType.NUMBER)
            or not (t.token_type == TokenType.IDENTIFIER or t.text.replace("_", "a").isalnum())
        ):
            raise self.error()
        self.i += 1
        return folded(t.text, t.token_type == TokenType.IDENTIFIER)  # (syntax/names.py)

    def string(self) -> str:
        t = self.peek()
        if t is None or t.token_type != TokenType.STRING:
            raise self.error()
        self.i += 1
        return t.text

    def end(self) -> None:
        if self.kind() not in (None, TokenType.SEMICOLON):
            raise self.error()

    def span(self, stop: Callable[[], bool]) -> str:
        """The text from here to where ``stop()`` holds at parenthesis depth 0."""
        start, depth, first = self.peek(), 0, self.i
        if start is None:
            raise self.error()
        last = start
        while self.peek() is not None:
            t = self.peek()
            assert t is not None
            if depth == 0 and (stop() or t.token_type == TokenType.SEMICOLON):
                break
            if t.token_type == TokenType.L_PAREN:
                depth += 1
            elif t.token_type == TokenType.R_PAREN:
                depth -= 1
            last = t
            self.i += 1
        if self.i == first:
            raise self.error()
        return self.text[start.start : last.end + 1]

    def parenthesized(self) -> str:
        """The text inside ``( ... )``."""
        if self.kind() != TokenType.L_PAREN:
            raise self.error()
        self.i += 1
        inner = self.span(lambda: self.kind() == TokenType.R_PAREN)
        if self.peek() is None:
            raise self.error()
        self.i += 1
        return inner


_CONSTRAINT_WORDS = ("DEFAULT", "NOT", "NULL", "CHECK", "CONSTRAINT", "COLLATE")


@dataclass
class DomainSpec:
    name: str
    base: str
    default: str | None = None
    not_null: bool | None = None
    checks: list[tuple[str | None, str]] = field(default_factory=list)


def _domain_constraints(toks: _Tokens, spec: DomainSpec) -> None:
    while toks.peek() is not None and toks.word() != ";":
        cname = toks.name() if toks.accept("CONSTRAINT") else None
        if toks.accept("NOT", "NULL"):
            value: bool | None = True
        elif toks.accept("NULL"):
            value = False
        elif toks.accept("CHECK"):
            spec.checks.append((cname, toks.parenthesized()))
            continue
        elif cname is None and toks.accept("DEFAULT"):
            if spec.default is not None:
                raise pg_error(pg_errors.SyntaxError, "multiple default expressions")
            spec.default = toks.span(lambda: toks.word() in _CONSTRAINT_WORDS)
            continue
        elif toks.word() == "COLLATE":
            raise UnsupportedQuery("CREATE DOMAIN ... COLLATE", "CREATE DOMAIN COLLATE")
        else:
            raise toks.error()
        if spec.not_null is not None and spec.not_null != value:
            raise pg_error(pg_errors.SyntaxError, "conflicting NULL/NOT NULL constraints")
        spec.not_null = value


def is_type_statement(stmt: exp.Expression) -> bool:
    """Whether ``stmt`` is DDL of an enum type or a domain (this module's)."""
    kind = str(stmt.args.get("kind") or "").upper()
    if isinstance(stmt, exp.Create | exp.Drop) and kind in ("TYPE", "DOMAIN"):
        return True
    if isinstance(stmt, exp.Command):
        head = (
            f"{stmt.this} {str(stmt.expression or '').split(None, 1)[0] if stmt.expression else ''}"
        )
        return head.upper() in ("ALTER TYPE", "CREATE DOMAIN", "ALTER DOMAIN", "DROP DOMAIN")
    return False


def statement(
    conn: psycopg.Connection[Any], catalog: Catalog, stmt: exp.Expression
) -> Callable[[], None]:
    """The type DDL ``stmt`` as a function to run in the DDL's transaction (the
    statement is read first: a syntax error is raised before anything runs)."""
    kind = str(stmt.args.get("kind") or "").upper()
    if isinstance(stmt, exp.Create) and kind == "TYPE":
        name, labels = _enum_definition(stmt)
        return lambda: create_enum(conn, catalog, name, labels)
    if isinstance(stmt, exp.Drop):
        names = [t.name if t.this.quoted else t.name.lower() for t in stmt.args.get("tables") or []]
        exists, cascade = bool(stmt.args.get("exists")), bool(stmt.args.get("cascade"))
        return lambda: drop_types(conn, catalog, names, exists, cascade, domain=False)
    assert isinstance(stmt, exp.Command)
    toks = _Tokens(f"{stmt.this} {stmt.expression}")
    verb = toks.word()
    toks.i += 2
    if verb == "CREATE":
        spec = DomainSpec(toks.name(), "")
        toks.accept("AS")
        spec.base = toks.span(lambda: toks.word() in _CONSTRAINT_WORDS)
        _domain_constraints(toks, spec)
        return lambda: create_domain(conn, catalog, spec)
    if verb == "DROP":
        exists = toks.accept("IF", "EXISTS")
        names = [toks.name()]
        while toks.kind() == TokenType.COMMA:
            toks.i += 1
            names.append(toks.name())
        cascade = toks.accept("CASCADE")
        if not cascade:
            toks.accept("RESTRICT")
        toks.end()
        return lambda: drop_types(conn, catalog, names, exists, cascade, domain=True)
    name = toks.name()
    if "DOMAIN" in str(stmt.expression).split(None, 1)[0].upper():
        return _alter_domain(conn, catalog, name, toks)
    return _alter_type(conn, catalog, name, toks)


def _enum_definition(stmt: exp.Create) -> tuple[str, list[str]]:
    target = stmt.this
    name = target.name if target.this.quoted else target.name.lower()
    body = stmt.args.get("expression")
    if not isinstance(body, exp.DataType) or not body.is_type(exp.DataType.Type.ENUM):
        raise UnsupportedQuery("CREATE TYPE other than AS ENUM", "CREATE TYPE")
    labels = []
    for e in body.expressions:
        if not isinstance(e, exp.Literal) or not e.is_string:
            raise syntax_error(f'syntax error at or near "{e.sql("postgres")}"', None)
        labels.append(e.this)
    return name, labels


# -- enums -------------------------------------------------------------------------------


def _check_label(label: str) -> None:
    if len(label.encode()) > MAX_LABEL_BYTES:
        raise pg_error(
            pg_errors.InvalidName,
            f'invalid enum label "{label}"',
            f"Labels must be {MAX_LABEL_BYTES} bytes or less.",
        )


def _taken_name(catalog: Catalog, name: str) -> None:
    """PostgreSQL's 42710 where a type (or a table's row type) has the name already."""
    if catalog.user_type(name) is not None or catalog.has_relation(name):
        raise pg_error(pg_errors.DuplicateObject, f'type "{name}" already exists')


def _new_type(conn: psycopg.Connection[Any], catalog: Catalog, meta: TypeMeta) -> None:
    catalog.write_table(conn, meta, new=True)
    catalog.types[meta.anon] = meta
    bump_epoch(conn)


def _anon(catalog: Catalog, name: str) -> str:
    taken = set(catalog.by_anon) | {v.anon for v in catalog.views.values()} | set(catalog.types)
    taken |= {q.anon for q in catalog.sequences.values()}
    return fresh_name(taken, lambda *p: catalog.root.anonymize("udt", *p), name)


def create_enum(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, labels: list[str]
) -> None:
    _taken_name(catalog, name)
    for label in labels:
        _check_label(label)
    seen: set[str] = set()
    for label in labels:
        if label in seen:
            raise pg_error(
                pg_errors.UniqueViolation,
                'duplicate key value violates unique constraint "pg_enum_typid_label_index"',
            )
        seen.add(label)
    positions = [(label, FIRST + i * STEP) for i, label in enumerate(labels)]
    _new_type(conn, catalog, TypeMeta(name, _anon(catalog, name), "enum", positions))


def _existing(catalog: Catalog, name: str) -> TypeMeta:
    meta = catalog.user_type(name)
    if meta is None:
        raise pg_error(pg_errors.UndefinedObject, f'type "{name}" does not exist')
    return meta


def _rewrite_type(conn: psycopg.Connection[Any], catalog: Catalog, meta: TypeMeta) -> None:
    catalog.write_table(conn, meta, new=False)
    catalog.bind_types()
    bump_epoch(conn)


def _not_label(label: str) -> psycopg.Error:
    return pg_error(pg_errors.InvalidParameterValue, f'"{label}" is not an existing enum label')


def _owner(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, toks: _Tokens
) -> Callable[[], None] | None:
    """``OWNER TO role``: the type has no server object (its definition is in the sealed
    catalog), so the type and the role are checked, as PostgreSQL checks them."""
    if not toks.accept("OWNER", "TO"):
        return None
    role = toks.peek()
    if role is None:
        raise toks.error()
    toks.i += 1
    toks.end()
    written = f'"{role.text}"' if role.token_type == TokenType.IDENTIFIER else role.text

    def run() -> None:
        _existing(catalog, name)
        check_role(conn, written)

    return run


def _alter_type(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, toks: _Tokens
) -> Callable[[], None]:
    owner = _owner(conn, catalog, name, toks)
    if owner is not None:
        return owner
    if toks.accept("RENAME", "TO"):
        new = toks.name()
        toks.end()
        return lambda: _rename_type(conn, catalog, name, new)
    if toks.accept("RENAME", "VALUE"):
        old = toks.string()
        toks.expect("TO")
        new = toks.string()
        toks.end()
        return lambda: rename_value(conn, catalog, name, old, new)
    if toks.accept("ADD", "VALUE"):
        if_not_exists = toks.accept("IF", "NOT", "EXISTS")
        label = toks.string()
        where: tuple[str, str] | None = None
        if toks.word() in ("BEFORE", "AFTER"):
            side = toks.word()
            toks.i += 1
            where = (side, toks.string())
        toks.end()
        new_label = NewLabel(label, where, if_not_exists)
        return lambda: add_value(conn, catalog, name, new_label)
    raise UnsupportedQuery("ALTER TYPE other than ADD VALUE, RENAME VALUE, RENAME TO", "ALTER TYPE")


def _enum(catalog: Catalog, name: str) -> TypeMeta:
    meta = _existing(catalog, name)
    if meta.kind != "enum":
        raise pg_error(pg_errors.WrongObjectType, f'"{name}" is not an enum')
    return meta


@dataclass(frozen=True)
class NewLabel:
    """ALTER TYPE ... ADD VALUE [IF NOT EXISTS] 'label' [BEFORE | AFTER 'other']."""

    label: str
    where: tuple[str, str] | None  # ("BEFORE" or "AFTER", the other label)
    if_not_exists: bool


def add_value(conn: psycopg.Connection[Any], catalog: Catalog, name: str, new: NewLabel) -> None:
    label, where = new.label, new.where
    meta = _enum(catalog, name)
    _check_label(label)
    ordered = meta.ordered()
    labels = [x for x, _ in ordered]
    if label in labels:
        if new.if_not_exists:
            return  # (PostgreSQL: a notice, nothing done)
        raise pg_error(pg_errors.DuplicateObject, f'enum label "{label}" already exists')
    if where is None:
        at = len(ordered)
    else:
        if where[1] not in labels:
            raise _not_label(where[1])
        at = labels.index(where[1]) + (1 if where[0] == "AFTER" else 0)
    below = ordered[at - 1][1] if at > 0 else None
    above = ordered[at][1] if at < len(ordered) else None
    position = position_between(below, above)
    if position is None:
        raise EnumPositionsExhausted(
            f'no room left for enum label "{label}" {where[0] if where else "after"} '
            f'"{where[1] if where else labels[-1]}" in type {meta.name}: its order would '
            "need the stored values re-encrypted"
        )
    meta.labels.append((label, position))
    # (PostgreSQL 15 refuses it even in an enum created by the same transaction)
    catalog.fresh_labels.setdefault(meta.anon, set()).add(label)
    _rewrite_type(conn, catalog, meta)


def rename_value(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, old: str, new: str
) -> None:
    meta = _enum(catalog, name)
    labels = [x for x, _ in meta.labels]
    if old not in labels:
        raise _not_label(old)
    if new in labels:
        raise pg_error(pg_errors.DuplicateObject, f'enum label "{new}" already exists')
    _check_label(new)
    meta.labels = [(new if x == old else x, p) for x, p in meta.labels]
    fresh = catalog.fresh_labels.get(meta.anon)
    if fresh and old in fresh:
        fresh.discard(old)
        fresh.add(new)
    _rewrite_type(conn, catalog, meta)


def _rename_type(conn: psycopg.Connection[Any], catalog: Catalog, name: str, new: str) -> None:
    meta = _existing(catalog, name)
    _taken_name(catalog, new)
    meta.name = new
    _rewrite_type(conn, catalog, meta)


# -- dropping ------------------------------------------------------------------------------


def _dependents(
    catalog: Catalog, anon: str
) -> tuple[list[tuple[TableMeta, ColumnMeta]], list[TypeMeta]]:
    """The columns and domains that depend on type ``anon`` (transitively)."""
    domains: list[TypeMeta] = []
    todo = [anon]
    while todo:
        a = todo.pop()
        for t in catalog.types.values():
            if t.base_udt == a and t not in domains:
                domains.append(t)
                todo.append(t.anon)
    anons = {anon} | {d.anon for d in domains}
    cols = [
        (table, col)
        for table in catalog.tables.values()
        for col in table.columns.values()
        if col.udt in anons
    ]
    return cols, domains


def drop_types(
    conn: psycopg.Connection[Any],
    catalog: Catalog,
    names: list[str],
    exists: bool,
    cascade: bool,
    domain: bool,
) -> None:
    metas: list[TypeMeta] = []
    for name in names:
        meta = catalog.user_type(name)
        if meta is None:
            if exists:
                continue
            raise pg_error(pg_errors.UndefinedObject, f'type "{name}" does not exist')
        if domain and meta.kind != "domain":
            raise pg_error(pg_errors.WrongObjectType, f'"{name}" is not a domain')
        metas.append(meta)
    for meta in metas:
        if meta.anon not in catalog.types:
            continue  # (dropped with another one already)
        cols, domains = _dependents(catalog, meta.anon)
        if (cols or domains) and not cascade:
            lines = [f"type {d.name} depends on type {_base_name(catalog, d)}" for d in domains]
            lines = [
                f"column {c.name} of table {t.name} depends on type {udt_name(catalog, c)}"
                for t, c in cols
            ] + lines
            raise pg_error(
                pg_errors.DependentObjectsStillExist,
                f"cannot drop type {meta.name} because other objects depend on it",
                "\n".join(lines),
                "Use DROP ... CASCADE to drop the dependent objects too.",
            )
        for table, col in cols:
            action = exp.Drop(kind="COLUMN", tables=[exp.to_identifier(col.name)], cascade=True)
            drop_column(conn, catalog, table, action)
            catalog.write_table(conn, table, new=False)
        for d in [*domains, meta]:
            catalog.delete_table(conn, d)
            catalog.types.pop(d.anon, None)
    if metas:
        bump_epoch(conn)


def _base_name(catalog: Catalog, meta: TypeMeta) -> str:
    t = catalog.types.get(meta.base_udt or "")
    return t.name if t else str(meta.base)


# -- domains -------------------------------------------------------------------------------


def _base_type(catalog: Catalog, text: str) -> tuple[str | None, str | None, SqlType]:
    """A domain's base type: (built-in type text, user type anon, resolved type)."""
    words = " ".join(text.split())
    user = catalog.user_type(words.strip('"') if words.startswith('"') else words)
    if user is not None:
        return None, user.anon, catalog.resolve_type(user.anon)
    if words.lower() in FOREIGN_TYPE_NAMES:
        raise pg_error(pg_errors.UndefinedObject, f'type "{words.lower()}" does not exist')
    try:
        t = parse_sql_type(words)
    except ConfigError:
        if words.replace("_", "a").isalnum():
            raise pg_error(
                pg_errors.UndefinedObject, f'type "{words.lower()}" does not exist'
            ) from None
        raise UnsupportedQuery(f"domain over type {words}", "CREATE DOMAIN") from None
    return t.sql(), None, t


def _check_name(meta: TypeMeta, name: str | None) -> str:
    if name is not None:
        if any(c["name"] == name for c in meta.checks):
            raise pg_error(
                pg_errors.DuplicateObject,
                f'constraint "{name}" for domain "{meta.name}" already exists',
            )
        return name
    taken = {c["name"] for c in meta.checks}
    out, n = f"{meta.name}_check", 1
    while out in taken:
        out, n = f"{meta.name}_check{n}", n + 1
    return out


def create_domain(conn: psycopg.Connection[Any], catalog: Catalog, spec: DomainSpec) -> None:
    _taken_name(catalog, spec.name)
    base, base_udt, resolved = _base_type(catalog, spec.base)
    meta = TypeMeta(spec.name, _anon(catalog, spec.name), "domain", base=base, base_udt=base_udt)
    meta.not_null = bool(spec.not_null)
    if spec.default is not None:
        default_value(resolved, spec.default)
        meta.default = spec.default
    for cname, text in spec.checks:
        check_condition(text)
        meta.checks.append({"name": _check_name(meta, cname), "sql": text})
    _new_type(conn, catalog, meta)


def _using(catalog: Catalog, anon: str) -> list[tuple[TableMeta, ColumnMeta]]:
    cols, _ = _dependents(catalog, anon)
    return cols


def _refresh_checks(conn: psycopg.Connection[Any], catalog: Catalog, anon: str) -> None:
    """The server checks of every column declared with domain ``anon`` (or a domain over
    it), rebuilt from the domains' definitions; a row that violates one fails the
    statement as PostgreSQL's ALTER DOMAIN ... ADD CONSTRAINT fails."""
    by_table: dict[str, list[ColumnMeta]] = {}
    for table, col in _using(catalog, anon):
        by_table.setdefault(table.name, []).append(col)
    for tname, cols in by_table.items():
        meta = catalog.table(tname)
        names = {c.name for c in cols}
        old = [c for c in meta.checks if c.get("domain") and checks.columns_of(c["sql"]) <= names]
        for c in old:
            conn.execute(
                sql.SQL("ALTER TABLE {} DROP CONSTRAINT IF EXISTS {}").format(
                    sql.Identifier(meta.anon), sql.Identifier(c["anon"])
                )
            )
            meta.checks.remove(c)
            meta.constraints.pop(c["anon"], None)
        for col in cols:
            assert col.udt is not None
            parts = checks.add_checks(
                meta, domain_checks(catalog, meta.name, col.name, col.udt), lambda p: p
            )
            for part in parts:
                try:
                    conn.execute(
                        sql.SQL("ALTER TABLE {} ADD {}").format(sql.Identifier(meta.anon), part)
                    )
                except pg_errors.CheckViolation:
                    raise pg_error(
                        pg_errors.CheckViolation,
                        f'column "{col.name}" of table "{meta.name}" contains values that '
                        "violate the new constraint",
                    ) from None
        catalog.write_table(conn, meta, new=False)


def _alter_domain(
    conn: psycopg.Connection[Any], catalog: Catalog, name: str, toks: _Tokens
) -> Callable[[], None]:
    def domain() -> TypeMeta:
        meta = _existing(catalog, name)
        if meta.kind != "domain":
            raise pg_error(pg_errors.WrongObjectType, f'"{name}" is not a domain')
        return meta

    owner = _owner(conn, catalog, name, toks)
    if owner is not None:
        return owner

    if toks.accept("ADD"):
        cname = toks.name() if toks.accept("CONSTRAINT") else None
        if toks.accept("NOT", "NULL"):
            raise UnsupportedQuery("ALTER DOMAIN ADD NOT NULL: use SET NOT NULL", "ALTER DOMAIN")
        toks.expect("CHECK")
        text = toks.parenthesized()
        toks.end()

        def add() -> None:
            meta = domain()
            check_condition(text)
            meta.checks.append({"name": _check_name(meta, cname), "sql": text})
            _refresh_checks(conn, catalog, meta.anon)
            _rewrite_type(conn, catalog, meta)

        return add
    if toks.accept("DROP", "CONSTRAINT"):
        exists = toks.accept("IF", "EXISTS")
        cname = toks.name()
        if not toks.accept("CASCADE"):
            toks.accept("RESTRICT")
        toks.end()

        def drop() -> None:
            meta = domain()
            kept = [c for c in meta.checks if c["name"] != cname]
            if len(kept) == len(meta.checks):
                if exists:
                    return
                raise pg_error(
                    pg_errors.UndefinedObject,
                    f'constraint "{cname}" of domain "{meta.name}" does not exist',
                )
            meta.checks = kept
            _refresh_checks(conn, catalog, meta.anon)
            _rewrite_type(conn, catalog, meta)

        return drop
    if toks.accept("SET", "DEFAULT"):
        text = toks.span(lambda: False)
        toks.end()
        return lambda: _set_default(conn, catalog, domain(), text)
    if toks.accept("DROP", "DEFAULT"):
        toks.end()
        return lambda: _set_default(conn, catalog, domain(), None)
    for words, value in ((("SET", "NOT", "NULL"), True), (("DROP", "NOT", "NULL"), False)):
        if toks.accept(*words):
            toks.end()
            return lambda value=value: _set_not_null(conn, catalog, domain(), value)  # type: ignore[misc]
    if toks.accept("RENAME", "TO"):
        new = toks.name()
        toks.end()

        def rename() -> None:
            meta = domain()
            _taken_name(catalog, new)
            meta.name = new
            _rewrite_type(conn, catalog, meta)

        return rename
    raise UnsupportedQuery(f"ALTER DOMAIN {toks.text.split(None, 3)[-1]}", "ALTER DOMAIN")


def _set_default(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TypeMeta, text: str | None
) -> None:
    if text is not None:
        default_value(catalog.resolve_type(meta.anon), text)
    meta.default = text
    by_table: dict[str, TableMeta] = {}
    for table, col in _using(catalog, meta.anon):
        if col.has_default and "default" not in col.from_domain:
            continue  # (the column's own default wins)
        assert col.udt is not None
        own = column_domain(catalog, col.udt)[0]
        col.default = None if own is None else default_value(col.type, own)
        col.from_domain = [f for f in col.from_domain if f != "default"]
        if own is not None:
            col.from_domain.append("default")
        by_table[table.name] = table
    for table in by_table.values():
        catalog.write_table(conn, table, new=False)
    _rewrite_type(conn, catalog, meta)


def _set_not_null(
    conn: psycopg.Connection[Any], catalog: Catalog, meta: TypeMeta, value: bool
) -> None:
    meta.not_null = value
    by_table: dict[str, TableMeta] = {}
    for table, col in _using(catalog, meta.anon):
        assert col.udt is not None
        required = column_domain(catalog, col.udt)[1]
        if required and col.nullable:
            for oc in col.onions.values():
                try:
                    conn.execute(
                        sql.SQL("ALTER TABLE {} ALTER COLUMN {} SET NOT NULL").format(
                            sql.Identifier(table.anon), sql.Identifier(oc.anon)
                        )
                    )
                except pg_errors.NotNullViolation:
                    raise pg_error(
                        pg_errors.NotNullViolation,
                        f'column "{col.name}" of table "{table.name}" contains null values',
                    ) from None
            col.nullable = False
            col.from_domain.append("not_null")
        elif not required and "not_null" in col.from_domain:
            for oc in col.onions.values():
                conn.execute(
                    sql.SQL("ALTER TABLE {} ALTER COLUMN {} DROP NOT NULL").format(
                        sql.Identifier(table.anon), sql.Identifier(oc.anon)
                    )
                )
            col.nullable = True
            col.from_domain.remove("not_null")
        else:
            continue
        by_table[table.name] = table
    for table in by_table.values():
        catalog.write_table(conn, table, new=False)
    _rewrite_type(conn, catalog, meta)


__all__ = ["is_type_statement", "statement"]
