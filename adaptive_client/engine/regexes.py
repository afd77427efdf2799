"""Regular expressions the client engine (RE2) evaluates as PostgreSQL's ARE does: the
patterns whose matching both engines read alike (:func:`portable_regex`, for ``~``), and
``regexp_replace(text, pattern, replacement [, 'g'])`` of the patterns whose
replacements both engines make alike.

What a match is differs between the engines beyond whether one exists (which is all
``~`` needs, :func:`engine_sql.portable_regex`): PostgreSQL's ARE takes the longest
match at the leftmost position where the RE's first quantifier is greedy (its shortest
where that is lazy), RE2 the first one its alternatives and greedy quantifiers find
(``regexp_replace('ab', 'a?(ab)?', 'X')`` is ``X`` in PostgreSQL, ``Xb`` in RE2).  With
no alternation and at most one quantifier the two coincide: the leftmost match's length
is decided by that one quantifier, tried greatest first where it is greedy, least first
where it is lazy -- in both.  Other patterns are refused.

The replacement is PostgreSQL's -- ``\\1``..``\\9`` a group (empty where the pattern
has fewer), ``\\&`` the match, ``\\\\`` a backslash, any other backslash itself --
written in RE2's rewrite syntax.  ``.`` matches a newline, as in PostgreSQL's default
mode; flags other than ``g`` are refused."""

from __future__ import annotations

from psycopg import errors as pg_errors
from sqlglot import exp

from .function_types import not_text_error, not_text_operand
from .kinds import kind_of, udf
from .runtime import refusal as _refuse

# what a regular expression may hold for PostgreSQL's ARE and the client engine's RE2 to
# match the same strings: literals, ., anchors, groups, alternation, quantifiers, bracket
# expressions of literal characters and ranges; escapes only of these metacharacters
_REGEX_ESCAPABLE = set(".^$*+?()|[]{}\\-/")


def portable_regex(pattern: str) -> bool:
    """Does ``pattern`` (for ``~``) match the same strings in both engines?  Left out:
    character classes and class escapes (``\\d``, ``[[:alpha:]]``: the locale's in
    PostgreSQL), back-references, ``(?`` constructs, and anything case-insensitive."""
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            if i + 1 >= n or pattern[i + 1] not in _REGEX_ESCAPABLE:
                return False
            i += 2
            continue
        if ch == "(" and pattern.startswith("(?", i):
            return False
        if ch == "{":
            close = pattern.find("}", i)
            body = pattern[i + 1 : close] if close > 0 else ""
            if not body or not all(part.isdigit() for part in body.split(",", 1) if part):
                return False
            i = close + 1
            continue
        if ch == "[":
            end: int | None = None
            j = i + 1
            if j < n and pattern[j] == "^":
                j += 1
            if j < n and pattern[j] == "]":
                return False  # a leading ]: read alike? not relied on
            while j < n:
                if pattern[j] in "[\\":
                    return False  # classes, collating elements, escapes
                if pattern[j] == "]":
                    end = j
                    break
                j += 1
            if end is None:
                return False
            i = end + 1
            continue
        if ord(ch) < 32:
            return False
        i += 1
    return True


def _outside_brackets(pattern: str) -> list[tuple[int, str]]:
    """The pattern's characters outside bracket expressions and escapes, by position
    (a portable pattern: brackets hold no ``]`` first nor classes)."""
    out, i = [], 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if ch == "[":
            i = pattern.index("]", i + 2 if pattern.startswith("[^", i) else i + 1) + 1
            continue
        out.append((i, ch))
        i += 1
    return out


def replacing_regex(pattern: str) -> bool:
    """Do both engines replace the same matches of ``pattern``?  Portable, without
    alternation, with at most one quantifier."""
    if not portable_regex(pattern):
        return False
    chars = _outside_brackets(pattern)
    if any(ch == "|" for _, ch in chars):
        return False
    quantifiers = 0
    previous = ""
    for _, ch in chars:
        if ch in "*+{" or (ch == "?" and previous not in "*+?}"):
            quantifiers += 1
        previous = ch
    return quantifiers <= 1


def group_count(pattern: str) -> int:
    """How many groups a portable pattern captures (every ``(`` outside brackets)."""
    return sum(1 for _, ch in _outside_brackets(pattern) if ch == "(")


def rewrite(replacement: str, groups: int) -> str:
    """PostgreSQL's replacement string in RE2's rewrite syntax."""
    out, i = [], 0
    while i < len(replacement):
        ch = replacement[i]
        nxt = replacement[i + 1] if i + 1 < len(replacement) else ""
        if ch == "\\" and nxt.isdigit() and nxt != "0":
            out.append(f"\\{nxt}" if int(nxt) <= groups else "")
            i += 2
        elif ch == "\\" and nxt == "&":
            out.append("\\0")
            i += 2
        elif ch == "\\" and nxt == "\\":
            out.append("\\\\")
            i += 2
        elif ch == "\\":
            out.append("\\\\")  # (a lone backslash is itself)
            i += 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def _string(node: exp.Expression | None) -> str | None:
    return str(node.this) if isinstance(node, exp.Literal) and node.is_string else None


def regexp_replace(node: exp.RegexpReplace) -> exp.Expression:
    if kind_of(node.this) != "text":
        raise not_text_error(node, node.this)
    if node.args.get("position") is not None or node.args.get("occurrence") is not None:
        raise _refuse("regexp_replace() from a position or of the Nth match", node)
    pattern, replacement = _string(node.expression), _string(node.args.get("replacement"))
    flags = _string(node.args.get("modifiers")) if node.args.get("modifiers") else ""
    if pattern is None or replacement is None or flags is None:
        raise _refuse("regexp_replace() of other than constant strings", node)
    if not replacing_regex(pattern):
        raise _refuse("regexp_replace() of a pattern whose matches the engines tell apart", node)
    if set(flags) - {"g"}:
        raise _refuse("regexp_replace() with flags other than g", node)
    options = "s" + ("g" if flags else "")
    rewritten = exp.Literal.string(rewrite(replacement, group_count(pattern)))
    call = udf("regexp_replace", node.this, node.expression, rewritten, exp.Literal.string(options))
    call.type = exp.DataType.build("VARCHAR", dialect="duckdb")
    return call


# the SIMILAR TO characters written otherwise in the regular expression
_SIMILAR_OPERATORS = {"%": ".*", "_": ".", "(": "(?:", ".": "\\.", "^": "\\^", "$": "\\$"}


def _bounds(pattern: str, at: int) -> bool:
    """Whether the ``{`` at ``at`` opens a repetition count both engines read."""
    close = pattern.find("}", at)
    bounds = pattern[at + 1 : close].split(",", 1) if close > 0 else []
    return bool(bounds) and bounds[0].isdigit() and all(b.isdigit() for b in bounds[1:] if b)


def similar_regex(pattern: str) -> str | None:
    """The regular expression PostgreSQL matches a SIMILAR TO ``pattern`` (with the
    default escape, a backslash) as (regexp.c similar_to_escape: ``%`` is ``.*``, ``_``
    is ``.``, a group does not capture, the whole string must match), where RE2 reads it
    alike; None where it would not (classes, class escapes, ``\\"`` separators); a
    quantifier of nothing and a bad repetition count are PostgreSQL's 2201B."""
    out, i, n = ["^(?:"], 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ord(ch) < 32:
            return None
        if ch == "\\":
            if i + 1 >= n or pattern[i + 1].isalnum() or pattern[i + 1] == '"':
                return None  # (a class escape or back-reference in ARE; a separator)
            escaped = pattern[i + 1]
            out.append("\\" + escaped if escaped in _REGEX_ESCAPABLE else escaped)
            i += 2
            continue
        if ch == "[":
            end = pattern.find("]", i + 1)
            body = pattern[i + 1 : end] if end > 0 else ""
            if not body or body.startswith(("]", "^]")) or "[" in body or "\\" in body:
                return None
            out.append(pattern[i : end + 1])
            i = end + 1
            continue
        if ch == "{" and not _bounds(pattern, i):
            if pattern[i + 1 : i + 2].isdigit():
                raise pg_errors.InvalidRegularExpression(
                    "invalid regular expression: invalid repetition count(s)"
                )
            return None  # (a literal brace in ARE: not relied on)
        after = out[-1][-1]
        if (ch in "*+{" and after in "(:|*+?}") or (ch == "?" and after in "(:|"):
            raise pg_errors.InvalidRegularExpression(
                "invalid regular expression: quantifier operand invalid"
            )
        out.append(_SIMILAR_OPERATORS.get(ch, ch))
        i += 1
    out.append(")$")
    return "".join(out)


def similar_to(node: exp.SimilarTo) -> exp.Expression:
    """``s SIMILAR TO 'pattern'``: its regular expression matched by the engine."""
    if kind_of(node.this) != "text":
        node.meta["operator"] = "~"
        not_text_operand(node)
        raise _refuse("SIMILAR TO of a non-text value", node)
    if isinstance(node.parent, exp.Escape):
        raise _refuse("SIMILAR TO ... ESCAPE", node)
    pattern = _string(node.expression)
    regex = similar_regex(pattern) if pattern is not None else None
    if regex is None:
        raise _refuse("SIMILAR TO of other than a constant pattern both engines read alike", node)
    # ('s': '.' matches a newline, as in PostgreSQL's default mode)
    call = udf("regexp_matches", node.this, exp.Literal.string(regex), exp.Literal.string("s"))
    call.type = exp.DataType.build("BOOLEAN", dialect="duckdb")
    return call


__all__ = [
    "group_count",
    "portable_regex",
    "regexp_replace",
    "replacing_regex",
    "rewrite",
    "similar_regex",
    "similar_to",
]
