"""Django's own test suite through ``ENGINE = "adaptive_client.django"``, against Django's
PostgreSQL backend as the baseline.

The suite ships in Django's source distribution (``tests/runtests.py`` and one directory
per app).  This script fetches the sdist of the installed Django into a cache directory
(``ADAPTIVE_DJANGO_SUITE_CACHE``, else ``~/.cache/adaptive-client``) if it is not there,
writes a settings module for each backend, runs the named app modules one at a time with
each backend (``--parallel 1``), and prints the pass counts side by side.  What the
backend cannot pass is listed by name with its reason in the backend's features
(:mod:`adaptive_client.django.expected_failures`) and runs as an expected failure: an
unexpected success counts as a failure, so the list stays exact.

    python tests/ecosystem/django_suite.py [module ...]

The databases are made on the server of ``ADAPTIVE_TEST_DSN`` (else the embedded
cluster) and dropped after each run; the master key is a fresh one per run.  Exit status
0 when the backend has no failure or error outside the list.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tarfile
import tempfile
import uuid
from dataclasses import dataclass, field
from pathlib import Path

#: the app test modules the backend answers for (issue 45's list)
MODULES = [
    "basic",
    "lookup",
    "queries",
    "aggregation",
    "annotations",
    "expressions",
    "model_fields",
    "ordering",
    "select_related",
    "prefetch_related",
    "transactions",
    "bulk_create",
    "update",
    "delete",
    "get_or_create",
    "many_to_one",
    "many_to_many",
    "migrations",
    "introspection",
    "backends",
]

BACKENDS = {"adaptive": "adaptive_client.django", "postgresql": "django.db.backends.postgresql"}

SETTINGS = """\
DATABASES = {{
    "default": {{**{default!r}, "NAME": {name!r}}},
    "other": {{**{default!r}, "NAME": {name!r} + "_other"}},
}}
SECRET_KEY = "django_tests_secret_key"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = False
"""

# a verbose unittest line: "test_x (app.tests.Class.test_x) ... ok"
_RESULT = re.compile(
    r"^(\w+) \(([\w.]+)\)(?:\n.*?)? \.\.\. "
    r"(ok|FAIL|ERROR|skipped.*|expected failure|unexpected success)$",
    re.M,
)
# a class or module that failed as a whole: "ERROR: setUpClass (app.tests.Class)"
_WHOLE = re.compile(r"^(?:ERROR|FAIL): (setUpClass|setUpModule|tearDownClass) \(([\w.]+)\)", re.M)


def cache_dir() -> Path:
    env = os.environ.get("ADAPTIVE_DJANGO_SUITE_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "adaptive-client"


def suite_dir() -> Path:
    """The ``tests`` directory of the installed Django's sdist, fetched if absent."""
    import django

    version = django.__version__
    root = cache_dir() / f"django-{version}"
    tests = root / "tests"
    if (tests / "runtests.py").exists():
        return tests
    cache_dir().mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=cache_dir()) as tmp:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-binary",
                ":all:",
                "--no-deps",
                f"django=={version}",
                "-d",
                tmp,
            ],
            check=True,
        )
        (sdist,) = Path(tmp).glob("*.tar.gz")
        with tarfile.open(sdist) as tar:
            tar.extractall(tmp, filter="data")
        (Path(tmp) / f"django-{version}").rename(root)
    return tests


def server() -> dict[str, str]:
    """HOST, PORT, USER, PASSWORD of the test server."""
    from psycopg.conninfo import conninfo_to_dict

    dsn = os.environ.get("ADAPTIVE_TEST_DSN")
    if not dsn:
        from adaptive_client.admin.embedded import EmbeddedCluster

        cluster = EmbeddedCluster.default()
        cluster.up()
        dsn = cluster.dsn("postgres")
    info = conninfo_to_dict(dsn)
    return {k.upper(): str(info[k]) for k in ("host", "port", "user", "password") if info.get(k)}


def write_settings(where: Path, key_file: Path) -> dict[str, str]:
    """A settings module per backend in ``where``; their module names."""
    names = {}
    for label, engine in BACKENDS.items():
        default: dict[str, object] = {"ENGINE": engine, **server()}
        if label == "adaptive":
            default["OPTIONS"] = {"key_file": str(key_file)}
        module = f"suite_settings_{label}"
        name = f"djsuite_{label[:4]}_{uuid.uuid4().hex[:8]}"
        (where / f"{module}.py").write_text(SETTINGS.format(default=default, name=name))
        names[label] = module
    return names


@dataclass
class Outcome:
    """One module's run with one backend."""

    results: dict[str, str] = field(default_factory=dict)  # test -> ok / FAIL / ...
    whole: list[str] = field(default_factory=list)  # classes failed as a whole
    text: str = ""

    def count(self, *kinds: str) -> int:
        return sum(1 for r in self.results.values() if r.split()[0] in kinds) + (
            len(self.whole) if "ERROR" in kinds else 0
        )

    @property
    def failed(self) -> list[str]:
        bad = ("FAIL", "ERROR", "unexpected")
        return sorted(t for t, r in self.results.items() if r.split()[0] in bad) + self.whole


def run_module(tests: Path, settings: str, where: Path, module: str, timeout: int) -> Outcome:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(where), os.environ.get("PYTHONPATH", "")]),
    }
    args = [sys.executable, "runtests.py", f"--settings={settings}", "--parallel", "1"]
    args += ["--noinput", "-v", "2", module]
    try:
        done = subprocess.run(
            args, cwd=tests, env=env, capture_output=True, text=True, timeout=timeout
        )
        text = done.stdout + done.stderr
    except subprocess.TimeoutExpired as e:
        text = (e.stdout or b"").decode() + (e.stderr or b"").decode() + "\nTIMEOUT"
    out = Outcome(text=text)
    for name, dotted, result in _RESULT.findall(text):
        out.results[dotted if dotted.endswith(name) else f"{dotted}.{name}"] = result
    out.whole = [f"{dotted} ({what})" for what, dotted in _WHOLE.findall(text)]
    if not out.results and not out.whole:
        out.whole = [f"{module} (no result: {text.strip().splitlines()[-1:]})"]
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", default=MODULES)
    parser.add_argument("--backend", choices=[*BACKENDS, "both"], default="both")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per module")
    parser.add_argument("--logs", type=Path, help="write each run's output into this directory")
    opts = parser.parse_args(argv)
    labels = list(BACKENDS) if opts.backend == "both" else [opts.backend]

    from adaptive_client.catalog.keys import MasterKey

    tests = suite_dir()
    with tempfile.TemporaryDirectory() as tmp:
        where = Path(tmp)
        key_file = where / "master.key"
        key_file.write_text(MasterKey.generate().hex())
        key_file.chmod(0o600)
        settings = write_settings(where, key_file)
        totals = {label: [0, 0, 0, 0] for label in labels}  # passed, xfail, skipped, failed
        new_failures: dict[str, list[str]] = {}
        header = f"{'module':<18}" + "".join(
            f"{label + ' pass/xfail/skip/fail':>36}" for label in labels
        )
        print(header, flush=True)
        for module in opts.modules:
            outcomes = {
                label: run_module(tests, settings[label], where, module, opts.timeout)
                for label in labels
            }
            line = f"{module:<18}"
            for label, o in outcomes.items():
                counts = [
                    o.count("ok"),
                    o.count("expected"),
                    o.count("skipped"),
                    len(o.failed),
                ]
                totals[label] = [a + b for a, b in zip(totals[label], counts, strict=True)]
                line += f"{'/'.join(map(str, counts)):>36}"
            print(line, flush=True)
            if "adaptive" in outcomes:
                base = set(outcomes["postgresql"].failed) if "postgresql" in outcomes else set()
                new = [t for t in outcomes["adaptive"].failed if t not in base]
                if new:
                    new_failures[module] = new
            if opts.logs is not None:
                opts.logs.mkdir(parents=True, exist_ok=True)
                for label, o in outcomes.items():
                    (opts.logs / f"{module}.{label}.log").write_text(o.text)
        print(
            f"{'total':<18}"
            + "".join(f"{'/'.join(map(str, totals[label])):>36}" for label in labels)
        )
        for module, names in new_failures.items():
            print(f"\n{module}: {len(names)} failure(s) the baseline does not have")
            for name in names:
                print(f"  {name}")
    return 1 if new_failures else 0


if __name__ == "__main__":
    sys.exit(main())
