"""Names as PostgreSQL tells them apart, in a form the client's catalog can fold.

PostgreSQL folds an unquoted name's ASCII capitals to lower case and keeps a quoted name
as written: ``Foo`` and ``foo`` are one table, ``"Foo"`` another, ``"A"`` and ``a`` two
columns.  The client's catalog, compiler and engine compare names folded to lower case
(the client's engine tells no case apart even in quoted names).  So that a folding
never merges two names PostgreSQL keeps apart, every name of a parsed statement is
carried in its *folded form*: PostgreSQL's own folding of the name, then each character
a lower-casing would change (a capital) written as :data:`MARK`, its code point in
decimal, :data:`MARK` -- and :data:`MARK` itself as two of it.  The folded form is its
own lower case, one name has one folded form, and a name without capitals or
:data:`MARK` is its own folded form (every name of a database made before this form
existed reads as it did).

What the application sees again -- result column names, error messages, COPY headers,
the names a schema reflection lists -- is the name as written (:func:`shown`)."""

from __future__ import annotations

import functools
import inspect
import re
from collections.abc import Callable
from typing import Any, Final, TypeVar

from sqlglot import exp
from sqlglot.errors import SqlglotError

# a letter without case (U+01C2 LATIN LETTER ALVEOLAR CLICK): a lower-casing keeps it,
# and a name of it needs no quotes in PostgreSQL or sqlglot's output
MARK: Final = "\u01c2"
_MARKED = re.compile(f"{MARK}([0-9]*){MARK}")

E = TypeVar("E", bound=BaseException)
T = TypeVar("T")


def folded(name: str, quoted: bool) -> str:
    """The folded form of ``name`` as written, ``quoted`` or not (see the module)."""
    if not quoted:
        # (PostgreSQL folds only ASCII capitals of an unquoted name: "Ä" stays)
        name = name.translate(_ASCII_LOWER)
    if MARK not in name and name == name.lower():
        return name
    return "".join(_char_folded(c) for c in name)


def _char_folded(c: str) -> str:
    if c == MARK:
        return MARK + MARK
    if c.lower() != c:
        return f"{MARK}{ord(c)}{MARK}"
    return c


_ASCII_LOWER: Final = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def shown(text: str) -> str:
    """``text`` (a name, or a message naming some) with each folded form written as the
    application wrote the name."""
    if MARK not in text:
        return text
    return _MARKED.sub(lambda m: chr(int(m.group(1))) if m.group(1) else MARK, text)


def relation_named(text: str) -> str:
    """The folded form of a relation named in a string, as ``'...'::regclass`` reads it
    (``'t_id_seq'``, ``'"Acct_Id_seq"'``, ``'public.t'``): dot-separated parts (read by
    the SQL parser), each folded as written, quoted or not, the client's schema
    ``public`` dropped."""
    try:
        parts = [
            folded(p.name, bool(p.args.get("quoted")))
            for p in exp.to_table(text, dialect="postgres").parts
        ]
    except SqlglotError:
        return folded(text.strip(), False)  # (no such relation: the caller's error)
    if len(parts) > 1 and parts[0] == "public":
        parts = parts[1:]
    return ".".join(parts)


_PLAIN_NAME = re.compile(r"[a-z_][a-z0-9_$]*")


def quoted_shown(name: str) -> str:
    """A name (folded form) as PostgreSQL's messages print a type's: as written, in
    double quotes where it needs them (``mood``, ``"Mood"``)."""
    text = shown(name)
    return text if _PLAIN_NAME.fullmatch(text) else '"' + text.replace('"', '""') + '"'


def names_shown(exc: E) -> E:
    """``exc`` with its message (the first argument) naming names as written."""
    if exc.args and isinstance(exc.args[0], str) and MARK in exc.args[0]:
        exc.args = (shown(exc.args[0]), *exc.args[1:])
    return exc


# names the client does not fold: of the server's own objects, which the server looks up
# as written (a collation, a role, a tablespace), and a named placeholder's (a key of the
# application's parameters)
_NOT_FOLDED: Final = (
    exp.Placeholder,
    exp.Collate,
    exp.CollateColumnConstraint,
    exp.GrantPrincipal,
    exp.TableSpaceProperty,
)


def fold_names(node: exp.Expression) -> exp.Expression:
    """A transform of a parsed statement's nodes: each name of the application's objects
    (tables, columns, aliases, types) in its folded form."""
    if isinstance(node, exp.Identifier) and not isinstance(node.parent, _NOT_FOLDED):
        name = node.this
        if isinstance(name, str):
            form = folded(name, bool(node.args.get("quoted")))
            if form != name:
                node.set("this", form)
    return node


def show_names(node: exp.Expression) -> exp.Expression:
    """A transform undoing :func:`fold_names`: each name as written, so that the tree's
    SQL, parsed again, has the names it had."""
    if isinstance(node, exp.Identifier) and isinstance(node.this, str) and MARK in node.this:
        node.set("this", shown(node.this))
    return node


def as_written(value: Any) -> Any:
    """A result naming names (strings, in lists, tuples, named tuples and dicts) with
    every folded form shown as written."""
    if isinstance(value, str):
        return shown(value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):
        return type(value)(*(as_written(v) for v in value))
    if isinstance(value, list | tuple):
        return type(value)(as_written(v) for v in value)
    if isinstance(value, dict):
        return {as_written(k): as_written(v) for k, v in value.items()}
    return value


def _names_folded(method: Callable[..., Any]) -> Callable[..., Any]:
    """A reflection method taking names as an ORM gives them -- exact, as quoted names
    are (``"Foo"`` is ``Foo``, ``foo`` is ``foo``) -- and answering in them."""
    params = list(inspect.signature(method).parameters)[2:]  # (after self, connection)
    named = {p: i for i, p in enumerate(params) if p.endswith("_name")}

    @functools.wraps(method)
    def reflect(self: Any, connection: Any, *args: Any, **kw: Any) -> Any:
        bound = list(args)
        for param, i in named.items():
            if param in kw and isinstance(kw[param], str):
                kw[param] = folded(kw[param], True)
            elif i < len(bound) and isinstance(bound[i], str):
                bound[i] = folded(bound[i], True)
        return as_written(method(self, connection, *bound, **kw))

    return reflect


def reflecting_names_as_written(prefixes: tuple[str, ...]) -> Callable[[type[T]], type[T]]:
    """A class decorator for an ORM's reflection (SQLAlchemy's dialect, Django's
    introspection): its methods named with one of ``prefixes`` take the names the ORM
    gives (``table_name``, ``index_name``, ...) and answer with names as written, over
    a catalog holding their folded forms."""

    def decorate(cls: type[T]) -> type[T]:
        for attr, value in list(vars(cls).items()):
            if callable(value) and attr.startswith(prefixes):
                setattr(cls, attr, _names_folded(value))
        return cls

    return decorate


__all__ = [
    "MARK",
    "as_written",
    "fold_names",
    "folded",
    "names_shown",
    "quoted_shown",
    "reflecting_names_as_written",
    "relation_named",
    "show_names",
    "shown",
]
