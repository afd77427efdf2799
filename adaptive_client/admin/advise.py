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

The analysis is compile/design.py's, shared with the online design (a statement's
first run builds what it asks for).  This is CryptDB's training mode and MONOMI's
designer in spirit, without their cost model: it proposes what the server needs to run
each statement as far as it can; the user pastes the output and edits it (every entry
says which statements asked for it).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

import sqlglot
from sqlglot import exp
from sqlglot.errors import SqlglotError

from ..catalog.tablespec import TableSpec, parse_table
from ..compile.design import Proposal, propose
from ..errors import ConfigError
from ..values.encodings import encoding_for


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
    """What ``statements`` ask of ``tables`` (compile/design.py's analysis).  ``sums``:
    propose Sum onions at all -- False leaves every sum to the client."""
    return propose({name: spec.types for name, spec in tables.items()}, statements, sums)


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
