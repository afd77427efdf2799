"""PyICU is an extra (``adaptive-client[icu]``): without it a ``C`` database works as
before, and connecting to an ICU database raises CollationUnavailable at once, with the
install hint, rather than when a statement first orders text.

The client runs in a subprocess where ``import icu`` fails (``sys.modules['icu'] = None``,
as when PyICU is not installed), against real databases of both kinds.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable

from adaptive_client.catalog.keys import MasterKey

WITHOUT_ICU = textwrap.dedent(
    """
    import json
    import sys

    sys.modules["icu"] = None  # PyICU is not installed: `import icu` raises ImportError

    import adaptive_client
    from adaptive_client.errors import CollationUnavailable

    c_dsn, icu_dsn = sys.argv[1:3]
    out = {}
    with adaptive_client.connect(c_dsn, autocommit=True) as conn:
        conn.execute("CREATE TABLE word (id integer PRIMARY KEY, w text)")
        conn.cursor().executemany(
            "INSERT INTO word VALUES (%s, %s)", [(1, "b"), (2, "a"), (3, "B"), (4, "ab")]
        )
        rows = conn.execute("SELECT w FROM word WHERE w > %s ORDER BY w", ("A",)).fetchall()
        out["c_rows"] = [r[0] for r in rows]
    try:
        conn = adaptive_client.connect(icu_dsn)
    except CollationUnavailable as e:
        out["icu_error"] = str(e)
    else:
        conn.close()
        out["icu_error"] = None
    print(json.dumps(out))
    """
)


def test_without_pyicu_c_works_and_icu_is_refused_at_connect(
    new_database: Callable[..., str], master_key: MasterKey
) -> None:
    c_dsn = new_database("noicu_c", locale="LOCALE 'C'")
    icu_dsn = new_database(
        "noicu_icu", locale="LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C.UTF-8'"
    )
    env = {**os.environ, "ADAPTIVE_MASTER_KEY": master_key.hex()}
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_ICU, c_dsn, icu_dsn],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["c_rows"] == ["B", "a", "ab", "b"]  # byte order, as PostgreSQL's C collation
    error = out["icu_error"]
    assert error is not None, "connecting to an ICU database without PyICU did not raise"
    assert "pip install 'adaptive-client[icu]'" in error
    assert "en-US" in error
