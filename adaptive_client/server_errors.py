"""Errors the server raises, told in the application's names.

A unique, foreign-key or not-null violation on the encrypted database names anonymized
tables, onion columns and constraints, and its DETAIL quotes ciphertexts ("Key
(c_1ce7…_eq)=(\\x02…) already exists").  The application expects PostgreSQL's plain
report: the same psycopg class (``UniqueViolation``), its table, column and constraint
names in ``diag``, a message it can show.  :func:`translate` rebuilds the error with
the plain names and without the ciphertexts, which have no place in an application's
logs.  A value the DETAIL would quote is left out: the client cannot tell which of the
statement's values the server compared.
"""

from __future__ import annotations

import re
from typing import Any

import psycopg
from psycopg import pq

from .metadata import Catalog

_ANON = re.compile(r"\b[tcis]_[0-9a-f]{8,}(?:_[0-9a-z]+)?\b")
_FIELDS = pq.DiagnosticField


def _names(catalog: Catalog) -> dict[str, str]:
    """Anonymized table and onion-column names -> plain names."""
    out: dict[str, str] = {}
    for table in catalog.tables.values():
        out[table.anon] = table.name
        for col in table.columns.values():
            for oc in col.onions.values():
                out[oc.anon] = col.name
            if col.sequence_anon and col.sequence:
                out[col.sequence_anon] = col.sequence
    return out


def constraint_name(
    control: psycopg.Connection[Any], catalog: Catalog, anon: str | None
) -> str | None:
    """The plain name of a constraint or index the server named: the one the application
    gave it, else PostgreSQL's default (``author_pkey``, ``author_email_key``,
    ``post_author_id_fkey``), from its columns' plain names."""
    if not anon:
        return None
    named = getattr(catalog, "constraint_names", {}).get(anon)
    if named:
        return str(named)
    row = control.execute(
        "SELECT c.contype::text, t.relname::text, "
        "ARRAY(SELECT a.attname::text FROM unnest(c.conkey) WITH ORDINALITY k(n, i) "
        "JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = k.n ORDER BY k.i) "
        "FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid WHERE c.conname = %s "
        "UNION ALL SELECT CASE WHEN i.indisunique THEN 'u' ELSE 'i' END, t.relname::text, "
        "ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o) "
        "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) "
        "FROM pg_index i JOIN pg_class x ON x.oid = i.indexrelid "
        "JOIN pg_class t ON t.oid = i.indrelid WHERE x.relname = %s LIMIT 1",
        (anon, anon),
    ).fetchone()
    if row is None:
        return None
    kind, table_anon, cols = row
    names = _names(catalog)
    table = names.get(table_anon, table_anon)
    plain = [names.get(c, c) for c in cols]
    if kind == "p":
        return f"{table}_pkey"
    suffix = {"u": "key", "f": "fkey", "c": "check", "i": "idx"}.get(kind, "key")
    return f"{table}_{'_'.join(plain)}_{suffix}"


def translate(
    exc: psycopg.Error, catalog: Catalog, control: psycopg.Connection[Any]
) -> psycopg.Error:
    """``exc`` again, of the same class, in plain names and without ciphertexts; ``exc``
    itself where its report names nothing of the encrypted database's."""
    diag = exc.diag
    if not _names_encrypted(diag):
        return exc
    names = _names(catalog)
    constraint = diag.constraint_name
    try:
        plain_constraint = constraint_name(control, catalog, constraint)
    except psycopg.Error:
        plain_constraint = None

    def plain(text: str | None) -> str | None:
        if text is None:
            return None
        if constraint and plain_constraint:
            text = text.replace(constraint, plain_constraint)
        return _ANON.sub(lambda m: names.get(m.group(0), m.group(0)), text)

    primary = plain(diag.message_primary) or str(exc).strip()
    column = plain(diag.column_name)
    detail = _detail(diag.message_detail, names)
    info: dict[int, bytes | None] = {}
    for fld, value in (
        (_FIELDS.SEVERITY, diag.severity),
        (_FIELDS.SEVERITY_NONLOCALIZED, diag.severity_nonlocalized),
        (_FIELDS.SQLSTATE, diag.sqlstate),
        (_FIELDS.MESSAGE_PRIMARY, primary),
        (_FIELDS.MESSAGE_DETAIL, detail),
        (_FIELDS.MESSAGE_HINT, plain(diag.message_hint)),
        (_FIELDS.SCHEMA_NAME, diag.schema_name),
        (_FIELDS.TABLE_NAME, plain(diag.table_name)),
        (_FIELDS.COLUMN_NAME, column),
        (_FIELDS.CONSTRAINT_NAME, plain_constraint or plain(constraint)),
    ):
        if value is not None:
            info[fld] = value.encode()
    message = primary if detail is None else f"{primary}\nDETAIL:  {detail}"
    return type(exc)(message, info=info)


def _names_encrypted(diag: psycopg.errors.Diagnostic) -> bool:
    """Whether a report could name an anonymized table, column or constraint, or quote a
    stored row.  Most do not (a serialization failure, a deadlock, a division by zero):
    they go to the application as the server made them, without the lookups, which under
    contention cost a retried transaction a measurable part of its time."""
    if (diag.sqlstate or "").startswith("40"):
        return False  # (transaction rollback: PostgreSQL's reports name no relation)
    if diag.constraint_name:
        return True
    detail = diag.message_detail
    if detail and detail.startswith("Failing row contains"):
        return True
    return any(
        text and _ANON.search(text)
        for text in (
            diag.message_primary,
            detail,
            diag.message_hint,
            diag.table_name,
            diag.column_name,
        )
    )


def _detail(detail: str | None, names: dict[str, str]) -> str | None:
    """PostgreSQL's DETAIL without the ciphertexts it quotes: ``Key (email)=(…)`` keeps
    the columns, a failing row is not shown."""
    if detail is None:
        return None
    key = re.match(r"Key \(([^)]*)\)=\(.*\) (.*)$", detail, re.S)
    if key:
        cols = ", ".join(names.get(c.strip(), c.strip()) for c in key.group(1).split(","))
        rest = _ANON.sub(lambda m: names.get(m.group(0), m.group(0)), key.group(2))
        return f"Key ({cols}) {rest}"
    if detail.startswith("Failing row contains"):
        return None
    return _ANON.sub(lambda m: names.get(m.group(0), m.group(0)), detail)


__all__ = ["constraint_name", "translate"]
