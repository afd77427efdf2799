"""``generate_series`` over integers, as the client engine evaluates it (a set-returning
row function: engine/row_functions.py): in a select list, and in FROM
(engine/set_functions.py makes that a lateral subquery of the call), PostgreSQL's
``int4``/``int8`` overloads with their errors."""

from __future__ import annotations

from typing import Any

from psycopg import errors as pg_errors

# the largest series the engine materializes (PostgreSQL streams one; a larger one is
# refused rather than filling the client's memory)
MAX_ROWS = 10_000_000


def generate_series(enc: Any, start: int, stop: int, step: int = 1) -> list[int]:
    """generate_series(start, stop[, step]): start, start + step, ... up to stop
    (down to it for a negative step); none where it starts beyond stop."""
    if step == 0:
        raise pg_errors.InvalidParameterValue("step size cannot equal zero")
    count = (stop - start) // step + 1
    if count > MAX_ROWS:
        raise pg_errors.ProgramLimitExceeded(
            f"generate_series of {count} rows in a statement the client evaluates "
            f"(at most {MAX_ROWS})"
        )
    return list(range(start, stop + (1 if step > 0 else -1), step)) if count > 0 else []


__all__ = ["MAX_ROWS", "generate_series"]
