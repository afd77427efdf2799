"""A RANGE frame's offset over a date or timestamp order is an interval in PostgreSQL,
written as one (``interval '1 week' PRECEDING``) or as a string (``'3 days'
PRECEDING``, an untyped literal the order's type resolves).  The client engine reads
neither: the string is made the interval it stands for, and the interval is allowed
there (compile/allowed.py)."""

from __future__ import annotations

from sqlglot import exp

from ..engine.kinds import kind_of

_DATED = ("date", "timestamp", "timestamptz")


def frame_offsets_as_intervals(tree: exp.Expression) -> None:
    """Each string offset of a RANGE frame ordered by a date or timestamp made an
    interval, in place (``tree`` annotated)."""
    for spec in tree.find_all(exp.WindowSpec):
        window = spec.parent
        order = window.args.get("order") if isinstance(window, exp.Window) else None
        if str(spec.args.get("kind") or "").upper() != "RANGE" or order is None:
            continue
        if len(order.expressions) != 1 or kind_of(order.expressions[0].this) not in _DATED:
            continue
        for bound in ("start", "end"):
            offset = spec.args.get(bound)
            if isinstance(offset, exp.Literal) and offset.is_string:
                spec.set(bound, exp.Interval(this=offset.copy()))


__all__ = ["frame_offsets_as_intervals"]
