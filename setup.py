"""The build reads pyproject.toml; this file only keeps the research harnesses (tpcc,
tpch, netem) out of a built wheel.  pyproject.toml lists them with the package so that
an editable install of the checkout (make venv) maps them, as the tests and bench/
scripts import them; a wheel is the library alone."""

from __future__ import annotations

from setuptools import setup
from setuptools.command.build_py import build_py

HARNESSES = ("tpcc", "tpch", "netem")


class BuildPy(build_py):
    """``build_py`` without the research harnesses' packages."""

    def finalize_options(self) -> None:
        super().finalize_options()
        self.packages = [p for p in self.packages or [] if p.split(".")[0] not in HARNESSES]


setup(cmdclass={"build_py": BuildPy})
