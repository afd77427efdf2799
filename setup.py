"""The build reads pyproject.toml; this file keeps the research harnesses (tpcc, tpch,
netem) out of a built wheel, and puts the database's SQL (the repository's top-level
``sql/``) into the package as ``adaptive_client/sql``.  pyproject.toml lists the harnesses
with the package so that an editable install of the checkout (make venv) maps them, as the
tests and bench/ scripts import them; a wheel is the library alone."""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

HARNESSES = ("tpcc", "tpch", "netem")
SQL = Path(__file__).resolve().parent / "sql"


class BuildPy(build_py):
    """``build_py`` without the research harnesses' packages."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.packages = [p for p in self.packages or [] if p.split(".")[0] not in HARNESSES]

    def run(self) -> None:
        super().run()
        if not self.editable_mode:  # (an editable install reads sql/ where it is)
            target = Path(self.build_lib, "adaptive_client", "sql")
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(SQL, target, ignore=shutil.ignore_patterns("*~", "__pycache__"))


setup(cmdclass={"build_py": BuildPy})
