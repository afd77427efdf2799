"""Write ``cases/<type>.txt`` from a PostgreSQL 15 source tree's regression tests.

    python tests/conformance/extract.py /path/to/postgresql-15

Reads ``src/test/regress/sql/<file>.sql`` for each type of :data:`SOURCES` and keeps
the string literals the file feeds to that type's input function: typed literals
(``date '...'``, ``'...'::date``, ``CAST('...' AS date)``, ``'{1,2}'::int[]`` for an
array of the type, ``'red'::rainbow`` for an enum type or a domain the file creates,
``B'0101'`` for bit, read by ``bit_in`` as ``b0101``), the values of an
``INSERT INTO t VALUES (...)`` into a column of that type (the column types read from
the file's ``CREATE TABLE``), and the comparands of a column of that type
(``WHERE f1 < '...'``, ``BETWEEN '...' AND '...'``), which are marked ``probe``.  For
text, the untyped literals of text.sql and strings.sql are kept too (each is read by
``textin``); for numeric, the unquoted constants with a point or an exponent (the
parser hands them to ``numeric_in``).

Each case file holds the literals only, one JSON string a line, de-duplicated, in the
order first met; ``probe`` before one marks a comparand.  The conformance test reads
these files and needs neither the network nor the source tree; this script is run
again only to refresh them.
"""

from __future__ import annotations

import json
import re
import sys
from collections import ChainMap
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

# the regression files read (test_setup.sql creates and fills the tables int2.sql,
# int4.sql, ... query); every file's typed literals count for their type, wherever found
# (among the types of its generation: FILES feed EARLIER_TYPES)
FILES = (
    "test_setup", "date", "time", "timestamp", "timestamptz", "numeric", "float4", "float8",
    "int2", "int4", "int8", "boolean", "uuid", "strings", "text", "varchar", "char",
)  # fmt: skip
# the files of the types added later (horology: more date/time literals, kept here for
# timetz and interval only)
LATER_FILES = (
    "interval", "timetz", "horology", "json", "jsonb", "inet", "macaddr", "macaddr8", "bit",
    "money", "arrays", "enum", "domain",
)  # fmt: skip
# the types whose case files are written (the others' literals are dropped): those the
# earlier files feed, and those the later ones feed (an array's case type is its
# element's with ``_array``: int4_array holds arrays of int2, int4 or int8)
EARLIER_TYPES = (
    "date", "time", "timestamp", "timestamptz", "numeric", "float4", "float8", "int2",
    "int4", "int8", "boolean", "uuid", "bytea", "text", "varchar", "char",
)  # fmt: skip
LATER_TYPES = (
    "interval", "timetz", "json", "jsonb", "inet", "cidr", "macaddr", "macaddr8", "bit",
    "money", "int4_array", "text_array", "numeric_array", "date_array", "enum", "domain",
)  # fmt: skip
CASE_TYPES = (*EARLIER_TYPES, *LATER_TYPES)
# arrays no regression file writes (none writes a date[]): each literal of the element's
# case file as a one-element array (array_in hands it to the element's input function)
COMPOSED_ARRAYS = {"date_array": "date"}
# an array's element case type -> the case type of the array
ARRAY_CASES = {
    "int2": "int4_array", "int4": "int4_array", "int8": "int4_array",
    "text": "text_array", "varchar": "text_array", "char": "text_array",
    "numeric": "numeric_array", "float4": "numeric_array", "float8": "numeric_array",
    "date": "date_array",
}  # fmt: skip
# files whose untyped literals are all text values (each is read by textin)
UNTYPED_TEXT = ("text", "strings")

# SQL type names (lower case, words joined by one space) -> the type of the cases;
# names mapped to None are types of other suites (their literals are not kept here)
TYPE_NAMES: dict[str, str | None] = {
    "date": "date",
    "time": "time",
    "time without time zone": "time",
    "time with time zone": "timetz",
    "timetz": "timetz",
    "timestamp": "timestamp",
    "timestamp without time zone": "timestamp",
    "timestamptz": "timestamptz",
    "timestamp with time zone": "timestamptz",
    "numeric": "numeric",
    "decimal": "numeric",
    "float4": "float4",
    "real": "float4",
    "float8": "float8",
    "double precision": "float8",
    "float": "float8",
    "int2": "int2",
    "smallint": "int2",
    "int4": "int4",
    "int": "int4",
    "integer": "int4",
    "int8": "int8",
    "bigint": "int8",
    "bool": "boolean",
    "boolean": "boolean",
    "uuid": "uuid",
    "bytea": "bytea",
    "text": "text",
    "varchar": "varchar",
    "character varying": "varchar",
    "char": "char",
    "character": "char",
    "bpchar": "char",
    "interval": "interval",
    "name": None,
    "json": "json",
    "jsonb": "jsonb",
    "inet": "inet",
    "cidr": "cidr",
    "macaddr": "macaddr",
    "macaddr8": "macaddr8",
    "bit": "bit",
    "bit varying": "bit",
    "varbit": "bit",
    "money": "money",
}
# the enum types and domains the file being read creates (``CREATE TYPE x AS ENUM``:
# ``enum``; ``CREATE DOMAIN x [AS] base``: ``domain``, or ``enum`` over an enum), looked
# up with the built-in names
_NAMES: ChainMap[str, str | None] = ChainMap({}, TYPE_NAMES)
_MAX_WORDS = max(len(n.split()) for n in TYPE_NAMES)
_COMPARISONS = {"=", "<", ">", "<=", ">=", "<>", "!="}
_CONSTRAINT_WORDS = {
    "primary", "default", "not", "null", "references", "unique", "check", "collate",
    "constraint", "generated",
}  # fmt: skip


@dataclass
class Token:
    kind: str  # "str", "word", "qword" (a quoted identifier), "num", "op", "punct"
    text: str  # the value of a string, the lower-cased word, the operator


_TOKEN_RE = re.compile(
    r"""(?P<space>\s+)
    |(?P<comment>--[^\n]*)
    |(?P<estr>[eE]'(?:[^'\\]|\\.|'')*')
    |(?P<ustr>[uU]&'(?:[^']|'')*')
    |(?P<bstr>[bBxXnN]'(?:[^']|'')*')
    |(?P<str>'(?:[^']|'')*')
    |(?P<dollar>\$(?P<tag>[A-Za-z_]*)\$)
    |(?P<qword>"(?:[^"]|"")*")
    |(?P<word>[A-Za-z_][A-Za-z0-9_$]*)
    |(?P<num>[0-9]+(?:\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\.[0-9]+)
    |(?P<param>\$[0-9]+|:'?[A-Za-z_][A-Za-z0-9_]*'?)
    |(?P<op>::|[-+*/<>=~!@#%^&|`?]+)
    |(?P<punct>.)""",
    re.VERBOSE | re.DOTALL,
)
_E_ESCAPE = re.compile(
    r"\\(?:(?P<oct>[0-7]{1,3})|x(?P<hex>[0-9A-Fa-f]{1,2})|u(?P<u4>[0-9A-Fa-f]{4})"
    r"|U(?P<u8>[0-9A-Fa-f]{8})|(?P<badu>[uU])|(?P<other>.))",
    re.DOTALL,
)
_SIMPLE_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


def _e_string(body: str) -> str | None:
    """An E'...' string's value (None: one PostgreSQL refuses, e.g. a bad \\u)."""

    def one(m: re.Match[str]) -> str:
        if m["oct"]:
            return chr(int(m["oct"], 8) & 0xFF)
        if m["hex"]:
            return chr(int(m["hex"], 16))
        if m["badu"]:
            raise ValueError(m.group())  # a \u without its digits: PostgreSQL refuses it
        code = m["u4"] or m["u8"]
        if code:
            c = int(code, 16)
            if 0xD800 <= c < 0xE000 or c > 0x10FFFF or c == 0:
                raise ValueError(code)
            return chr(c)
        return _SIMPLE_ESCAPES.get(m["other"], m["other"])

    try:
        text = _E_ESCAPE.sub(one, body.replace("''", "'"))
    except ValueError:
        return None
    return None if "\0" in text else text


def tokens(sql: str) -> Iterator[Token]:
    """The tokens of a regression script (psql meta-commands and COPY data skipped)."""
    lines, kept, in_copy = sql.split("\n"), [], False
    for line in lines:
        if in_copy:
            in_copy = line.strip() != "\\."
            continue
        if line.lstrip().startswith("\\"):
            kept.append("")
            continue
        if re.match(r"\s*copy\b.*\bfrom\s+stdin", line, re.IGNORECASE):
            in_copy = True
        kept.append(line)
    text = "\n".join(kept)
    pos = 0
    while pos < len(text):
        if text.startswith("/*", pos):  # (comments nest)
            depth, pos = 1, pos + 2
            while depth and pos < len(text):
                if text.startswith("/*", pos):
                    depth, pos = depth + 1, pos + 2
                elif text.startswith("*/", pos):
                    depth, pos = depth - 1, pos + 2
                else:
                    pos += 1
            continue
        m = _TOKEN_RE.match(text, pos)
        assert m is not None
        pos = m.end()
        kind = m.lastgroup
        if kind == "tag":
            kind = "dollar"
        value = m.group()
        if kind in ("space", "comment", "param"):
            continue
        if kind == "dollar":  # a dollar-quoted body: skipped
            end = text.find(value, pos)
            pos = len(text) if end < 0 else end + len(value)
            yield Token("punct", "$body$")
        elif kind == "str":
            yield Token("str", value[1:-1].replace("''", "'"))
        elif kind == "estr":
            decoded = _e_string(value[2:-1])
            yield Token("str" if decoded is not None else "other", decoded or "")
        elif kind == "bstr" and value[0] in "bBxX":  # a bit-string constant: bit_in's text
            yield Token("bits", value[0].lower() + value[2:-1])
        elif kind in ("ustr", "bstr"):
            yield Token("other", value)
        elif kind == "word":
            yield Token("word", value.lower())
        else:
            yield Token(kind or "punct", value)


def statements(sql: str) -> Iterator[list[Token]]:
    current: list[Token] = []
    for t in tokens(sql):
        if t.kind == "punct" and t.text == ";":
            if current:
                yield current
            current = []
        else:
            current.append(t)
    if current:
        yield current


def _type_at(toks: list[Token], i: int) -> tuple[str | None, int] | None:
    """The SQL type name starting at ``toks[i]`` (a typmod and ``[]`` looked past):
    (its case type or None, the index after it); None if no type name starts there."""
    for n in range(_MAX_WORDS, 0, -1):
        words: list[str] = []
        j = i
        while j < len(toks) and len(words) < n:
            t = toks[j]
            if t.kind == "word":
                words.append(t.text)
                j += 1
            elif t.kind == "punct" and t.text == "(" and words:
                close = next((k for k in range(j, len(toks)) if toks[k].text == ")"), len(toks) - 1)
                j = close + 1
            else:
                break
        name = " ".join(words)
        if len(words) == n and name in _NAMES:
            if j < len(toks) and toks[j].text == "(":  # a typmod after the last word
                j = next((k for k in range(j, len(toks)) if toks[k].text == ")"), j) + 1
            if j < len(toks) and toks[j].text == "[":  # an array (of any dimensions)
                while j < len(toks) and toks[j].text == "[":
                    j = next((k for k in range(j, len(toks)) if toks[k].text == "]"), j) + 1
                return ARRAY_CASES.get(_NAMES[name] or ""), j
            return _NAMES[name], j
    return None


def _type_words(toks: list[Token], i: int) -> list[Token]:
    """The words of the type name that ends at ``toks[i - 1]`` (none: no type name)."""
    for n in range(_MAX_WORDS, 0, -1):
        words = toks[i - n : i] if i - n >= 0 else []
        if (
            words
            and all(t.kind == "word" for t in words)
            and (" ".join(t.text for t in words) in _NAMES)
        ):
            return words
    return []


def _type_before(toks: list[Token], i: int) -> tuple[bool, str | None]:
    """Whether ``toks[:i]`` ends with a type name (``date '...'``), and its case type."""
    for n in range(_MAX_WORDS, 0, -1):
        if i - n < 0:
            continue
        words = toks[i - n : i]
        if all(t.kind == "word" for t in words):
            name = " ".join(t.text for t in words)
            if name in _NAMES:
                before = toks[i - n - 1] if i - n - 1 >= 0 else None
                # "AT TIME ZONE 'x'" and "x::text 'y'" are not typed literals
                if before is not None and before.text in ("at", "::"):
                    return False, None
                return True, _NAMES[name]
    return False, None


@dataclass
class Tables:
    """Column types of the tables a file creates: table -> [(column, case type)]."""

    columns: dict[str, list[tuple[str, str | None]]] = field(default_factory=dict)

    def learn(self, stmt: list[Token]) -> None:
        words = [t.text for t in stmt[:6] if t.kind == "word"]
        if not words or words[0] != "create" or "table" not in words[:4]:
            return
        k = next(i for i, t in enumerate(stmt) if t.text == "table") + 1
        while k < len(stmt) and stmt[k].text in ("if", "not", "exists"):
            k += 1
        if k + 1 >= len(stmt) or stmt[k + 1].text != "(":
            return
        name, depth = stmt[k].text, 0
        cols: list[list[Token]] = []
        item: list[Token] = []
        for t in stmt[k + 2 :]:
            if t.text == "(":
                depth += 1
            elif t.text == ")":
                if depth == 0:
                    break
                depth -= 1
            if depth == 0 and t.text == ",":
                cols.append(item)
                item = []
            else:
                item.append(t)
        cols.append(item)
        typed = []
        for col in cols:
            if len(col) >= 2 and col[0].kind == "word" and col[0].text not in _CONSTRAINT_WORDS:
                found = _type_at(col, 1)
                typed.append((col[0].text, found[0] if found else None))
        self.columns[name] = typed

    def column_type(self, table: str | None, column: str) -> str | None:
        for name, cols in self.columns.items():
            if table is None or name == table:
                for c, t in cols:
                    if c == column:
                        return t
        return None


@dataclass
class Found:
    """What one file feeds each type: the literals, in order, and which are probes."""

    literals: dict[str, dict[str, bool]] = field(default_factory=dict)

    def add(self, case_type: str | None, value: str, probe: bool = False) -> None:
        if case_type is None:
            return
        seen = self.literals.setdefault(case_type, {})
        seen[value] = seen.get(value, False) or probe


def _from_table(stmt: list[Token]) -> str | None:
    for i, t in enumerate(stmt[:-1]):
        if t.kind == "word" and t.text in ("from", "update", "into") and stmt[i + 1].kind == "word":
            return stmt[i + 1].text
    return None


def _insert_columns(stmt: list[Token], tables: Tables) -> list[str | None]:
    """The case types of the columns an ``INSERT INTO t [(cols)] VALUES`` fills."""
    if len(stmt) < 4 or stmt[0].text != "insert" or stmt[1].text != "into":
        return []
    cols = tables.columns.get(stmt[2].text, [])
    types = dict(cols)
    if stmt[3].text == "(":
        close = next(j for j in range(3, len(stmt)) if stmt[j].text == ")")
        return [types.get(t.text) for t in stmt[4:close] if t.kind == "word"]
    return [t for _, t in cols]


def _values_targets(
    stmt: list[Token], typed: dict[int, str | None], columns: list[str | None]
) -> dict[int, str | None]:
    """Index of each untyped literal alone in a ``VALUES`` row -> its column's case
    type: that of the INSERT's column (``columns``), else that of a typed literal in the
    same position of another row (PostgreSQL resolves a VALUES column to one type)."""
    out: dict[int, str | None] = {}
    for k, t in enumerate(stmt):
        if t.text != "values":
            continue
        position_type: dict[int, str | None] = dict(enumerate(columns))
        alone: list[tuple[int, int]] = []
        depth, position = 0, 0
        for j in range(k + 1, len(stmt)):
            u = stmt[j]
            if u.text == "(":
                depth += 1
                if depth == 1:
                    position = 0
            elif u.text == ")":
                depth -= 1
                if depth < 0:
                    break
            elif u.text == "," and depth == 1:
                position += 1
            elif depth == 0 and u.text != ",":
                break  # the end of the VALUES list
            elif u.kind == "str" and depth == 1:
                if j in typed:
                    position_type.setdefault(position, typed[j])
                elif stmt[j - 1].text in ("(", ",") and stmt[j + 1].text in (")", ","):
                    alone.append((j, position))
        for j, position in alone:
            if position in position_type:
                out[j] = position_type[position]
    return out


def _column_before(stmt: list[Token], i: int) -> str | None:
    """The column name left of the comparison whose right operand starts at ``stmt[i]``
    (a literal or the type name before it)."""
    j = i - 1
    if stmt[j].text == "and" and j >= 3 and stmt[j - 2].text == "between":
        j -= 2
    if (stmt[j].kind == "op" and stmt[j].text in _COMPARISONS) or stmt[j].text == "between":
        left = stmt[j - 1] if j >= 1 else None
        if left is not None and left.kind == "word":
            return left.text
    return None


def _typed_literals(stmt: list[Token]) -> dict[int, str | None]:
    """Index of each typed literal (``date '...'``, ``'...'::date``, ``CAST('...' AS
    date)``) -> its case type (None: a type of another suite)."""
    out: dict[int, str | None] = {}
    for i, t in enumerate(stmt):
        if t.kind != "str":
            continue
        typed, case_type = _type_before(stmt, i)
        after = None
        if i + 2 < len(stmt) and stmt[i + 1].text == "::":
            after = i + 2
        elif i >= 2 and stmt[i - 1].text == "(" and stmt[i - 2].text == "cast":
            after = i + 2 if i + 2 < len(stmt) and stmt[i + 1].text == "as" else None
        if not typed and after is not None:
            at = _type_at(stmt, after)
            typed, case_type = at is not None, at[0] if at else None
        if typed:
            out[i] = case_type
    return out


def _learn_type(stmt: list[Token]) -> None:
    """Learn the enum type or domain a ``CREATE TYPE x AS ENUM`` or ``CREATE DOMAIN x
    [AS] base`` creates (a domain over a type of no case file, or over an array: None)."""
    words = [t.text for t in stmt[:5]]
    if words[:1] != ["create"] or len(stmt) < 4:
        return
    if words[1] == "type" and words[3:5] == ["as", "enum"]:
        _NAMES.maps[0][words[2]] = "enum"
    elif words[1] == "domain":
        at = _type_at(stmt, 4 if words[3] == "as" else 3)
        base = at[0] if at else None
        _NAMES.maps[0][words[2]] = (
            base
            if base in ("enum", "domain", None)
            else (None if base.endswith("_array") else "domain")
        )


def scan(sql: str, tables: Tables, untyped_text: bool) -> Found:
    found = Found()
    for stmt in statements(sql):
        tables.learn(stmt)
        _learn_type(stmt)
        typed = _typed_literals(stmt)
        in_values = _values_targets(stmt, typed, _insert_columns(stmt, tables))
        table = _from_table(stmt)
        for i, t in enumerate(stmt):
            if t.kind == "num" and re.search(r"[.eE]", t.text):
                found.add("numeric", t.text)  # an unquoted constant: numeric_in reads it
            if t.kind == "bits":
                found.add("bit", t.text)
            if t.kind != "str":
                continue
            start = i - len(_type_words(stmt, i)) if i in typed else i
            column = _column_before(stmt, start)
            column_type = tables.column_type(table, column) if column else None
            if i in typed:
                found.add(typed[i], t.text, probe=typed[i] is not None and typed[i] == column_type)
            elif i in in_values:
                found.add(in_values[i], t.text)
            elif column_type is not None:
                found.add(column_type, t.text, probe=True)
            elif untyped_text:
                found.add("text", t.text)
    return found


def array_of(value: str) -> str:
    """The one-element array literal of ``value`` (double-quoted, ``\\`` and ``"``
    escaped, as array_in reads it)."""
    return '{"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"}'


def case_file(case_type: str, files: list[str], literals: dict[str, bool]) -> str:
    names = ", ".join(f"{f}.sql" for f in files)
    element = COMPOSED_ARRAYS.get(case_type)
    lines = [
        f"# {case_type}: the literals PostgreSQL 15's regression tests feed to its input",
        f"# function (src/test/regress/sql: {names}), one JSON string a line;",
        "# 'probe' marks a comparand (= < >).  Written by tests/conformance/extract.py.",
    ]
    if element:
        lines[0] = f"# {case_type}: the literals of the {element} case file, each as a"
        lines[1] = (
            f"# one-element {element}[] (src/test/regress/sql: {names}), one JSON string a line;"
        )
    for value, probe in literals.items():
        lines.append(("probe " if probe else "") + json.dumps(value, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def main(source_tree: str) -> None:
    regress = Path(source_tree) / "src" / "test" / "regress" / "sql"
    setup = Tables()
    scan((regress / "test_setup.sql").read_text(), setup, False)
    found: dict[str, dict[str, bool]] = {t: {} for t in CASE_TYPES}
    sources: dict[str, list[str]] = {t: [] for t in CASE_TYPES}
    for name in (*FILES, *LATER_FILES):
        feeds = LATER_TYPES if name in LATER_FILES else EARLIER_TYPES
        tables = Tables(dict(setup.columns))
        _NAMES.maps[0].clear()
        sql = (regress / f"{name}.sql").read_text()
        for case_type, literals in scan(sql, tables, name in UNTYPED_TEXT).literals.items():
            if case_type not in feeds or not literals:
                continue
            sources[case_type].append(name)
            for value, probe in literals.items():
                seen = found[case_type]
                seen[value] = seen.get(value, False) or probe
    for array, element in COMPOSED_ARRAYS.items():
        found[array] = {array_of(value): False for value in found[element]}
        sources[array] = sources[element]
    out = Path(__file__).parent / "cases"
    out.mkdir(exist_ok=True)
    for case_type, literals in found.items():
        (out / f"{case_type}.txt").write_text(case_file(case_type, sources[case_type], literals))
        print(
            f"{case_type}: {len(literals)} literals, {sum(literals.values())} probes, "
            f"from {', '.join(sources[case_type])}"
        )


if __name__ == "__main__":
    main(sys.argv[1])
