"""An opt-in log of the statements a connection rewrote, for ``adaptive-db advise``.

``connect(..., statement_log="path")`` (or ``[defaults] statement_log = "path"`` in the
onion configuration) appends each statement the connection parses, once per distinct
text and connection, as a JSON line ``{"sql": ...}`` with its placeholders as the
rewrite names them (``%(u0)s``) -- never a parameter's value.  The statements are the
application's own plaintext SQL: the file stays on the client's side, like the master
key, and nothing of it reaches the server.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path

from ..errors import ConfigError
from ..syntax.sqltext import split_statements


class StatementLog:
    """Appends statements to a JSON-lines file (one line per write: safe to share)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        try:
            self.path.touch(mode=0o600, exist_ok=True)
        except OSError as exc:
            raise ConfigError(
                f"cannot write the statement log {self.path}: {exc.strerror}"
            ) from None

    def record(self, sql: str) -> None:
        line = json.dumps({"sql": sql}) + "\n"
        with self._lock, self.path.open("a", encoding="utf-8") as out:
            out.write(line)


def read_statements(path: str | os.PathLike[str]) -> list[str]:
    """The statements of a log (JSON lines); a plain ``.sql`` file of statements separated
    by semicolons is read as well."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"cannot read the statement log {path}: {exc.strerror}") from None
    if text.lstrip().startswith("{"):
        out = []
        for n, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                out.append(str(json.loads(line)["sql"]))
            except (ValueError, KeyError, TypeError):
                raise ConfigError(f"{path}:{n}: not a statement log line") from None
        return out
    return [s for s in split_statements(text) if s.strip()]
