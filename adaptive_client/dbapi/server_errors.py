"""Errors the server raises, told in the application's names.

A unique, foreign-key or not-null violation on the encrypted database names anonymized
tables, onion columns and constraints, and its DETAIL quotes ciphertexts ("Key
(c_1ce7…_eq)=(\\x02…) already exists").  The application expects PostgreSQL's plain
report: the same psycopg class (``UniqueViolation``), its table, column and constraint
names in ``diag``, a message it can show.  :func:`translate` rebuilds the error with
the plain names and without the ciphertexts, which have no place in an application's
logs.  A key's values the DETAIL quotes are decrypted with the column's keys (the
server compared deterministic ciphertexts, which the client decrypts as it decrypts a
result) and printed as PostgreSQL prints them: ``Key (email)=(ann@example.org) already
exists.``  A failing row (a NOT NULL or CHECK violation) is left out: its values are
every onion of the row, at layers some of which only the server's copy holds.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

import psycopg
from psycopg import pq

from ..catalog import domains
from ..catalog.metadata import Catalog, ColumnMeta, OnionColumn
from ..catalog.recipes import decrypt
from ..errors import AdaptiveError
from ..syntax.names import shown

_ANON = re.compile(r"\b[tcis]_[0-9a-f]{8,}(?:_[0-9a-z]+)?\b")
_FIELDS = pq.DiagnosticField


def _onions(catalog: Catalog) -> dict[str, tuple[ColumnMeta, OnionColumn]]:
    """Anonymized onion-column names -> their column and onion."""
    return {
        oc.anon: (col, oc)
        for table in catalog.tables.values()
        for col in table.columns.values()
        for oc in col.onions.values()
    }


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
    for table in getattr(catalog, "tables", {}).values():
        for index in table.indexes:  # (CREATE INDEX: the server's are <anon>_<n>)
            if anon.rsplit("_", 1)[0] == index.anon:
                return index.name
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
        plain_constraint = getattr(exc, "plain_constraint", None) or constraint_name(
            control, catalog, constraint
        )
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
    domain = domains.domain_report(catalog, diag.sqlstate or "", constraint, diag.column_name)
    if domain is not None:  # (PostgreSQL's report of a domain's violation names the type)
        primary, column = domain, None
    detail = _detail(diag.message_detail, names, catalog)
    info: dict[int, bytes | None] = {}
    for fld, value in (
        (_FIELDS.SEVERITY, diag.severity),
        (_FIELDS.SEVERITY_NONLOCALIZED, diag.severity_nonlocalized),
        (_FIELDS.SQLSTATE, diag.sqlstate),
        (_FIELDS.MESSAGE_PRIMARY, primary),
        (_FIELDS.MESSAGE_DETAIL, detail),
        (_FIELDS.MESSAGE_HINT, plain(diag.message_hint)),
        (_FIELDS.SCHEMA_NAME, diag.schema_name),
        (_FIELDS.TABLE_NAME, None if domain else plain(diag.table_name)),
        (_FIELDS.COLUMN_NAME, column),
        (_FIELDS.CONSTRAINT_NAME, plain_constraint or plain(constraint)),
    ):
        if value is not None:
            info[fld] = shown(value).encode()
    message = primary if detail is None else f"{primary}\nDETAIL:  {detail}"
    return type(exc)(shown(message), info=info)


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


def _detail(detail: str | None, names: dict[str, str], catalog: Catalog) -> str | None:
    """PostgreSQL's DETAIL in plain names: ``Key (email)=(…)`` with the key's values
    decrypted (left out where one cannot be), a failing row not shown."""
    if detail is None:
        return None
    key = re.match(r"Key \(([^)]*)\)=\((.*)\) (.*)$", detail, re.S)
    if key:
        anons = [c.strip() for c in key.group(1).split(",")]
        cols = ", ".join(names.get(c, c) for c in anons)
        rest = _ANON.sub(lambda m: names.get(m.group(0), m.group(0)), key.group(3))
        values = _key_values(anons, key.group(2), catalog)
        if values is None:
            return f"Key ({cols}) {rest}"
        return f"Key ({cols})=({values}) {rest}"
    if detail.startswith("Failing row contains"):
        return None
    return _ANON.sub(lambda m: names.get(m.group(0), m.group(0)), detail)


def _key_values(anons: list[str], quoted: str, catalog: Catalog) -> str | None:
    """The plaintexts of a key's values as the DETAIL quotes them (``\\x…`` bytea, one
    per column), in PostgreSQL's output form; None where any is not one the client
    can decrypt."""
    texts = quoted.split(", ")  # (bytea's hex output has no comma or space)
    onions = _onions(catalog)
    if len(texts) != len(anons) or not all(a in onions for a in anons):
        return None
    out = []
    for anon, text in zip(anons, texts, strict=True):
        if text == "null":
            out.append("null")
            continue
        if not text.startswith("\\x"):
            return None
        col, oc = onions[anon]
        try:
            value = decrypt(col, oc, bytes.fromhex(text[2:]))
        except (ValueError, AdaptiveError):
            return None
        out.append(_pg_text(value))
    return ", ".join(out)


def _pg_text(value: Any) -> str:
    """``value`` as PostgreSQL's output functions print it (DateStyle ISO)."""
    if isinstance(value, bool):
        return "t" if value else "f"
    if isinstance(value, float):
        if value != value:
            return "NaN"
        if value in (float("inf"), float("-inf")):
            return "Infinity" if value > 0 else "-Infinity"
        return repr(value)
    if isinstance(value, dt.datetime):
        return value.isoformat(sep=" ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value)


__all__ = ["constraint_name", "translate"]
