"""``format(formatstr, ...)`` in the client engine: the call of engine/format_udf.py's
``pg_format`` over the format and the arguments' texts, each as its type's output
function prints it (engine/transforms.py, as for concat()); a format known to hold
``%I`` is refused before anything is fetched."""

from __future__ import annotations

import re

from sqlglot import exp

from .kinds import udf
from .runtime import refusal


def format_call(node: exp.Format, texts: list[exp.Expression]) -> exp.Expression:
    """``format(fmt, ...)`` as the engine's call of :func:`pg_format` over the arguments'
    ``texts``; a format known to hold ``%I`` refused before anything is fetched."""
    fmt = node.this
    if isinstance(fmt, exp.Literal) and fmt.is_string and re.search(r"%[-\d$*]*I", fmt.name):
        raise refusal("format() with %I (an identifier quoted by the keyword list)", node)
    listed = exp.Array(
        expressions=[exp.Cast(this=t, to=exp.DataType.build("VARCHAR")) for t in texts]
    )
    call = udf("pg_format", fmt, listed)
    call.type = exp.DataType.build("VARCHAR")
    return call


__all__ = ["format_call"]
