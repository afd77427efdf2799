"""The README as a new user follows it: its runnable blocks (marked ``<!-- runnable -->``)
run in order, each as the user would run it -- the shell block that makes the master key
with bash, each Python block as its own script -- against a fresh database, with the
database's URL in ``DATABASE_URL`` and the key from the file that block made.  A
``print(...)  # value`` in a block must print that value.  And the links of the README
and docs/ lead to files and headings that exist."""

from __future__ import annotations

import os
import re
import stat
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from psycopg.conninfo import conninfo_to_dict

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"

_BLOCK = re.compile(r"<!-- runnable -->\n```(\w+)\n(.*?)\n```", re.S)
_EXPECTED = re.compile(r"^\s*print\(.*\)\s+# (.+)$")


def runnable_blocks() -> list[tuple[str, str]]:
    """(language, code) of each block marked runnable, in the README's order."""
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(README.read_text())]


def _url(dsn: str) -> str:
    """A libpq conninfo as the ``postgresql://`` URL the README's code reads."""
    d = conninfo_to_dict(dsn)
    user = quote(str(d.get("user", "")), safe="")
    password = f":{quote(str(d['password']), safe='')}" if d.get("password") else ""
    auth = f"{user}{password}@" if user else ""
    host = d.get("host", "localhost")
    port = f":{d['port']}" if d.get("port") else ""
    return f"postgresql://{auth}{host}{port}/{quote(str(d['dbname']), safe='')}"


def _run(argv: list[str], cwd: Path, env: dict[str, str]) -> str:
    proc = subprocess.run(
        argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"{argv[:2]} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


def _in_order(expected: list[str], printed: list[str]) -> bool:
    lines = iter(printed)
    return all(any(line.strip() == want for line in lines) for want in expected)


def test_the_readme_runs(new_database: Callable[..., str], tmp_path: Path) -> None:
    blocks = runnable_blocks()
    assert [lang for lang, _ in blocks][:2] == ["sh", "python"], "key first, then connect"
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ADAPTIVE_MASTER_KEY", "PG")) and k != "PYTHONPATH"
    }
    # `python` on the PATH is this interpreter, as in the user's virtualenv
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["DATABASE_URL"] = _url(new_database("readme"))
    for lang, code in blocks:
        if lang == "sh":
            # the key block: its export is what the Python blocks then read
            out = _run(["bash", "-c", f'{code}\necho "$ADAPTIVE_MASTER_KEY_FILE"'], tmp_path, env)
            key_file = Path(out.split()[-1])
            assert re.fullmatch(r"[0-9a-f]{64}", key_file.read_text().strip())
            assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
            env["ADAPTIVE_MASTER_KEY_FILE"] = str(key_file)
            continue
        assert lang == "python", lang
        printed = _run([sys.executable, "-c", code], tmp_path, env).splitlines()
        expected = [
            m.group(1).strip() for line in code.splitlines() if (m := _EXPECTED.match(line))
        ]
        assert _in_order(expected, printed), f"expected {expected}, printed {printed}\n{code}"


# -- links ------------------------------------------------------------------------------

_LINK = re.compile(r"\]\(([^)\s]+)\)")
_FENCE = re.compile(r"^```.*?^```", re.S | re.M)


def _slug(heading: str) -> str:
    """GitHub's anchor for a heading."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(path: Path) -> set[str]:
    text = _FENCE.sub("", path.read_text())
    return {_slug(m.group(1)) for m in re.finditer(r"^#+ (.+)$", text, re.M)}


DOCS = [README, *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("doc", DOCS, ids=[str(d.relative_to(ROOT)) for d in DOCS])
def test_links_lead_somewhere(doc: Path) -> None:
    broken = []
    for target in _LINK.findall(_FENCE.sub("", doc.read_text())):
        if re.match(r"[a-z]+:", target):  # http(s), mailto: not checked here
            continue
        name, _, anchor = target.partition("#")
        dest = (doc.parent / name).resolve() if name else doc
        missing_anchor = (
            dest.exists() and bool(anchor) and dest.suffix == ".md" and anchor not in _anchors(dest)
        )
        if not dest.exists() or missing_anchor:
            broken.append(target)
    assert not broken, f"{doc.name}: {broken}"
