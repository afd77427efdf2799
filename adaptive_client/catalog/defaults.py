"""Column defaults computed when a row is written: sequences and run-time expressions.

A ``serial``/``bigserial``/``smallserial`` or identity column keeps a plain sequence on
the server (its numbers are what the provider could count anyway: one per inserted
row).  The client draws the values, encrypts them like any other, and sends them with
the row.  It draws them in blocks, as a pooled sequence optimizer does (PostgreSQL's own
``CACHE`` option): a bulk insert pays one round trip per block, not one per row.  A
value drawn and not used is a gap, as a rolled-back ``nextval`` is; the block survives
a rollback, as a sequence's values do, so a connection hands out the same numbers
PostgreSQL would.  ``currval``/``lastval`` answer what this connection handed out.

A non-constant default (``now()``, ``CURRENT_TIMESTAMP``, ``CURRENT_DATE``,
``now() + interval '7 days'``) holds no application data: the client asks the server
to evaluate it, cast to the column's type, and encrypts the result.  Expressions stable
within a transaction (``now()`` is the transaction's start) are evaluated once per
transaction; volatile ones (``clock_timestamp()``, ``random()``) once per row.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from contextvars import ContextVar
from decimal import Decimal
from typing import Any

import psycopg
from psycopg import sql
from sqlglot import exp

from ..errors import UnsupportedQuery
from ..syntax.names import relation_named
from ..values.session import RUNTIME

# Functions a default may call: stable within a transaction, or volatile (once per row).
STABLE = {
    "now",
    "current_timestamp",
    "current_date",
    "current_time",
    "localtimestamp",
    "localtime",
    "transaction_timestamp",
}
VOLATILE = {"clock_timestamp", "statement_timestamp", "random", "timeofday"}
_SQLGLOT_FUNCS: dict[type, str] = {
    exp.CurrentTimestamp: "now",
    exp.CurrentDate: "current_date",
    exp.CurrentTime: "current_time",
    exp.Rand: "random",
}
_EXPRESSION_NODES = (
    exp.Literal,
    exp.Boolean,
    exp.Null,
    exp.Cast,
    exp.DataType,
    exp.Interval,
    exp.Var,
    exp.Paren,
    exp.Add,
    exp.Sub,
    exp.Mul,
    exp.Div,
    exp.Neg,
    exp.Anonymous,
    exp.Identifier,
    *_SQLGLOT_FUNCS,
)
_FIRST_BLOCK, _LAST_BLOCK = 16, 4096


def constant(node: exp.Expression) -> tuple[bool, Any]:
    """``(True, value)`` for a constant default (a literal, NULL, a signed number, a
    literal cast, as pg_dump writes ``'x'::text``), else ``(False, None)``."""
    if isinstance(node, exp.Paren):
        return constant(node.this)
    if isinstance(node, exp.Literal):
        return True, (node.this if node.is_string else node.to_py())
    if isinstance(node, exp.Boolean):
        return True, node.this
    if isinstance(node, exp.Null):
        return True, None
    if isinstance(node, exp.Neg):
        ok, inner = constant(node.this)
        if ok and isinstance(inner, int | float | Decimal):
            return True, -inner
    if isinstance(node, exp.Cast) and isinstance(node.this, exp.Literal | exp.Neg):
        ok, inner = constant(node.this)
        if ok and node.to.this is not exp.DataType.Type.INTERVAL:
            return True, inner
    return False, None


def sequence_named(node: exp.Expression) -> str | None:
    """The sequence of ``nextval('name')`` / ``nextval('name'::regclass)``, else None."""
    if isinstance(node, exp.Anonymous) and node.name.lower() == "nextval":
        args = node.expressions
        arg = args[0] if len(args) == 1 else None
        if isinstance(arg, exp.Cast):
            arg = arg.this
        if isinstance(arg, exp.Literal) and arg.is_string:
            return relation_named(str(arg.this))
    return None


def runtime_expression(node: exp.Expression, where: str) -> tuple[str, bool]:
    """A default the server evaluates: its PostgreSQL text and whether it is volatile.
    Only functions of the clock (and ``random()``), constants and arithmetic: a default
    naming a column, a table or another function is refused, naming ``where``."""
    volatile = False
    for n in node.walk():
        if not isinstance(n, _EXPRESSION_NODES):
            raise UnsupportedQuery(
                f"{where}: DEFAULT {node.sql('postgres')} is not supported (a default may "
                "be a constant, a sequence, or an expression of the clock)",
                "DEFAULT",
            )
        name = _SQLGLOT_FUNCS.get(type(n)) or (
            n.name.lower() if isinstance(n, exp.Anonymous) else None
        )
        if name is not None:
            if name in VOLATILE:
                volatile = True
            elif name not in STABLE:
                raise UnsupportedQuery(
                    f"{where}: DEFAULT calls {name}(), which the client does not evaluate",
                    "DEFAULT",
                )
    return node.sql("postgres"), volatile


# -- at run time ---------------------------------------------------------------------------


class Runtime:
    """One connection's sequence blocks and per-transaction values of stable defaults;
    the session the values of its statements read (a ``session.SessionRuntime``: set in
    ``session.RUNTIME``, re-exported here as ``RUNTIME``, while a statement runs)."""

    def __init__(self, conn: psycopg.Connection[Any]) -> None:
        self.conn = conn
        self._pools: dict[str, deque[int]] = {}
        self._handed: dict[str, int] = {}  # server sequence -> last value handed out of it
        self._block: dict[str, int] = {}
        self._current: dict[str, int] = {}  # plain sequence name -> last value handed out
        # the sequence nextval() drew from last: lastval() is its current value
        self._last: str | None = None
        # the session's values of the sequences dropped in the open transaction (name,
        # current value, whether it was the last drawn): a rollback gives them back
        self._dropped: list[tuple[str, int, bool]] = []
        self._stable: dict[tuple[str, str], Any] = {}
        # sequences created or restarted in the open transaction: a rollback undoes that,
        # so the values drawn from them since are void then
        self._touched: set[str] = set()
        # sequences renamed in the open transaction (old, new): a rollback undoes that
        self._renames: list[tuple[str, str]] = []

    def nextval(self, anon: str, plain: str) -> int:
        pool = self._pools.get(anon)
        if not pool:
            block = self._block.get(anon, _FIRST_BLOCK // 2) * 2
            self._block[anon] = min(block, _LAST_BLOCK)
            # a block, but no more than the sequence has left before its bound (at least
            # one: past the bound, the server's error) -- a short sequence is drawn as
            # PostgreSQL draws it
            draw = sql.SQL(
                "SELECT nextval({name}) FROM generate_series(1, coalesce((SELECT least(%s, "
                "greatest(1, trunc((CASE WHEN increment_by > 0 THEN max_value - {last} "
                "ELSE {last} - min_value END) / abs(increment_by::numeric)))) "
                "FROM pg_sequences WHERE sequencename = %s LIMIT 1), %s))"
            ).format(
                name=sql.Literal(sql.Identifier(anon).as_string(self.conn)),
                # (in numeric: a descending sequence's distance to its bound is 2**63)
                last=sql.SQL("coalesce(last_value::numeric, start_value - increment_by::numeric)"),
            )
            try:
                block = self._block[anon]
                rows = self.conn.execute(draw, (block, anon, block)).fetchall()
            except psycopg.errors.SequenceGeneratorLimitExceeded as exc:
                # (the server names its sequence: the application knows it by its own)
                raise psycopg.errors.SequenceGeneratorLimitExceeded(
                    str(exc).replace(anon, plain)
                ) from None
            drawn = [int(r[0]) for r in rows]
            # (in the order drawn: ascending, or descending for a negative increment)
            pool = self._pools[anon] = deque(sorted(drawn, reverse=drawn[0] > drawn[-1]))
        value = pool.popleft()
        self._handed[anon] = value
        self._current[plain] = value
        self._last = plain
        return value

    def currval(self, plain: str) -> int:
        if plain not in self._current:
            raise psycopg.errors.ObjectNotInPrerequisiteState(
                f'currval of sequence "{plain}" is not yet defined in this session'
            )
        return self._current[plain]

    def last(self) -> int:
        if self._last is None:
            raise psycopg.errors.ObjectNotInPrerequisiteState(
                "lastval is not yet defined in this session"
            )
        return self._current[self._last]

    def forget(self, anon: str) -> None:
        """The sequence was set (``setval``): its drawn block is void."""
        self._pools.pop(anon, None)
        self._block.pop(anon, None)
        self._handed.pop(anon, None)

    def set(self, anon: str, plain: str, value: int, called: bool) -> None:
        """``setval(plain, value, called)`` ran: the drawn block is void, and where
        ``called`` the session's current value is ``value`` (as PostgreSQL's)."""
        self.forget(anon)
        if called:
            self._current[plain] = value

    def dropped(self, plain: str) -> None:
        """The sequence was dropped: the session's values of it are gone (``currval`` of
        a new one of the name is not yet defined, nor ``lastval`` where it was the last
        drawn) -- until a rollback of the drop gives them back.  (Its drawn block stays:
        a rollback gives the sequence back where those values were drawn from.)"""
        if plain in self._current:
            self._dropped.append((plain, self._current.pop(plain), self._last == plain))
        if self._last == plain:
            self._last = None

    def renamed(self, old: str, new: str, undoing: bool = False) -> None:
        """The sequence ``old`` is ``new`` now: the session's current value of it too (a
        current value is PostgreSQL's by the sequence, whatever its name) -- until a
        rollback of the rename names it ``old`` again."""
        if old in self._current:
            self._current[new] = self._current.pop(old)
        if self._last == old:
            self._last = new
        if not undoing:
            self._renames.append((old, new))

    def _unrename(self) -> None:
        for old, new in reversed(self._renames):
            self.renamed(new, old, undoing=True)
        self._renames.clear()

    def give_back(self, anon: str) -> None:
        """Before an ``ALTER SEQUENCE`` of ``anon``: the values this session drew ahead and
        has not handed out returned to the sequence, where no other session drew after
        them -- so that the alteration (a new increment, a bound below the values drawn
        ahead) applies from the last value handed out, as in PostgreSQL.

        The sequence is held (an ``ALTER SEQUENCE`` of its cache to what it is: a sequence
        cannot be ``LOCK``ed) from the check to the ``setval``, so another session's
        ``nextval`` cannot come between them and be drawn again.  Inside the
        application's transaction the lock lasts until it ends, as an ``ALTER
        SEQUENCE``'s own does."""
        pool = self._pools.get(anon)
        handed = self._handed.get(anon)
        if not pool or handed is None:
            return
        name = sql.Identifier(anon)
        with self.conn.transaction():
            # (an option set to what it is: ALTER SEQUENCE's lock, which nextval waits on)
            row = self.conn.execute(
                "SELECT seqcache FROM pg_sequence WHERE seqrelid = %s::regclass",
                (name.as_string(self.conn),),
            ).fetchone()
            if row is None:
                return
            self.conn.execute(
                sql.SQL("ALTER SEQUENCE {} CACHE {}").format(name, sql.Literal(int(row[0])))
            )
            self.conn.execute(
                sql.SQL(
                    "SELECT setval(%s::regclass, %s, true) FROM {} "
                    "WHERE last_value = %s AND is_called"
                ).format(name),
                (name.as_string(self.conn), handed, pool[-1]),
            )
        self.forget(anon)

    def reset(self, anon: str) -> None:
        """The sequence was created or restarted in this transaction."""
        self.forget(anon)
        self._touched.add(anon)

    def evaluate(self, text: str, type_sql: str, volatile: bool) -> Any:
        key = (text, type_sql)
        in_tx = self.conn.info.transaction_status == psycopg.pq.TransactionStatus.INTRANS
        if not volatile and in_tx and key in self._stable:
            return self._stable[key]

        def value() -> Any:
            # (in binary: whatever the session's DateStyle)
            sql = f"SELECT CAST(({text}) AS {type_sql})"
            row = self.conn.execute(sql, binary=True).fetchone()
            return row[0] if row else None

        if not volatile and not in_tx:
            # (a statement outside a transaction is its own: every row it writes takes
            # the one now() of that transaction -- once per bind, all its rows)
            return once_per_bind(("stable default", key), value)
        found = value()
        if not volatile:
            self._stable[key] = found
        return found

    def transaction_ended(self, rolled_back: bool = False) -> None:
        self._stable.clear()
        if rolled_back:
            for anon in self._touched:
                self.forget(anon)
            self._undrop()
            self._unrename()
        self._dropped.clear()
        self._touched.clear()
        self._renames.clear()

    def savepoint_rolled_back(self) -> None:
        for anon in self._touched:
            self.forget(anon)
        self._undrop()
        self._unrename()

    def _undrop(self) -> None:
        for plain, value, last in reversed(self._dropped):
            self._current.setdefault(plain, value)
            if last:
                self._last = plain
        self._dropped.clear()


# The values drawn in the current bind of a statement's parameters, per default: a
# default's value is drawn once per row and bind, however many onions encrypt it.  A
# fresh mapping per bind, in the binding thread's context: a compiled statement (and its
# builders) is shared by every thread using the connection, so nothing about a bind may
# live in the builder itself (a counter per thread keyed it once, and four threads took
# turns drawing one serial value).
_DRAWN: ContextVar[dict[object, Any]] = ContextVar("DRAWN")


def next_bind() -> None:
    _DRAWN.set({})


def once_per_bind(key: object, make: Callable[[], Any]) -> Any:
    """``make()``, called once per bind of a statement for ``key`` (every call for it in
    the same bind gets that value; outside a bind, a call each)."""
    drawn = _DRAWN.get(None)
    if drawn is None:
        return make()
    if key not in drawn:
        drawn[key] = make()
    return drawn[key]


def _runtime() -> Runtime:
    rt = RUNTIME.get()
    # (statements are only bound inside a connection's execute)
    if not isinstance(rt, Runtime):
        raise RuntimeError("a run-time default outside a connection")
    return rt


def builder(column: Any) -> Callable[[Any], Any]:
    """The value of ``column``'s default for one row: a new builder per row of a
    statement, drawing its value once per bind."""
    if column.sequence is None and column.default_sql is None:
        value = column.default
        return lambda p: value

    def draw() -> Any:
        if column.sequence is not None:
            return _runtime().nextval(column.sequence_anon, column.sequence)
        return _runtime().evaluate(column.default_sql, column.type.sql(), column.default_volatile)

    return _drawn_once(draw)


def sequence_builder(plain: str, anon: str) -> Callable[[Any], Any]:
    """A ``nextval('name')`` written in a statement (INSERT ... VALUES (nextval(...))):
    a new builder per place it is written, drawing once per bind."""
    return _drawn_once(lambda: _runtime().nextval(anon, plain))


def _drawn_once(draw: Callable[[], Any]) -> Callable[[Any], Any]:
    key = object()  # (this value, in the bind's mapping of drawn values)

    def build(p: Any) -> Any:
        drawn = _DRAWN.get(None)
        if drawn is None:  # (bound outside a statement's bind: one draw a call)
            return draw()
        if key not in drawn:
            drawn[key] = draw()
        return drawn[key]

    return build


def printed_default(value: Any) -> str | None:
    """A recorded constant default as PostgreSQL prints one (``pg_get_expr``): what
    introspection (SQLAlchemy's reflection, Django's) reports of the column."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return str(value)
    text = str(value).replace("'", "''")
    return f"'{text}'"


__all__ = [
    "RUNTIME",
    "Runtime",
    "builder",
    "constant",
    "next_bind",
    "printed_default",
    "runtime_expression",
    "sequence_builder",
    "sequence_named",
]
