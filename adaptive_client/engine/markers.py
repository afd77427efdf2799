"""The marker of a refusal raised from inside a client engine statement: ``error()`` of
it and a reason in the engine's SQL, or a Python function of the engine raising an error
whose message holds it (a NaN cast to a numeric, a date read from the clock); the
statement is then refused with the reason (engine/runtime.py ``translate``)."""

from __future__ import annotations

from typing import Final

REFUSAL_MARKER: Final = "refused by the client engine: "

__all__ = ["REFUSAL_MARKER"]
