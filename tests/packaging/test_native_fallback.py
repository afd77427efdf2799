"""Without the compiled OPE/RND layers (a platform with no wheel, an install without
cargo) the schemes fall back to pure Python, give the same ciphertexts, and say so once
per process through the package's logger -- not once per key or per use."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from adaptive_client.schemes import native

WITHOUT_NATIVE = textwrap.dedent(
    """
    import sys

    # as where the wheel has no compiled layers: importing them fails
    sys.modules["adaptive_client.adaptive_ope_native"] = None
    sys.modules["adaptive_client.adaptive_rnd_native"] = None

    from adaptive_client.schemes.ope import OPE
    from adaptive_client.schemes.rnd import RND

    key = bytes(range(32))
    assert OPE.backend == "pyope"
    for _ in range(3):
        ope, rnd = OPE(key, 32), RND(key)
        assert ope.backend == "pyope"
        assert ope.decrypt(ope.encrypt(12345)) == 12345
        assert rnd.decrypt(rnd.encrypt(b"abc")) == b"abc"
    print(ope.encrypt(12345).hex())
    """
)


def test_fallback_warns_once_per_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-c", WITHOUT_NATIVE],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    warnings = [line for line in proc.stderr.splitlines() if "pure-Python fallback" in line]
    assert len(warnings) == 1, proc.stderr
    assert "compiled OPE layer is not installed" in warnings[0]
    if native.load("adaptive_ope_native") is not None:  # the same bytes as the native layer
        from adaptive_client.schemes.ope import OPE

        assert OPE(bytes(range(32)), 32).encrypt(12345).hex() == proc.stdout.strip()


def test_no_warning_for_an_explicit_pure_python_backend() -> None:
    code = (
        "from adaptive_client.schemes.ope import OPE\n"
        "OPE(bytes(32), 16, backend='pyope').encrypt(3)\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert proc.returncode == 0, proc.stderr
    assert "fallback" not in proc.stderr


@pytest.mark.slow
def test_statement_paths_without_the_compiled_layer() -> None:
    """ADAPTIVE_PURE_PYTHON=1, as an install without a Rust toolchain: the statement-path
    suite (first runs, repeats, writes, the catalog followed) passes on the Python path
    alone, and its check that the compiled layer is in use is skipped."""
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "ADAPTIVE_PURE_PYTHON": "1"}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-rs",
            "tests/client/test_statement_paths.py",
        ],
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
        cwd=root,
        env=env,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    assert "1 skipped" in proc.stdout and "ADAPTIVE_PURE_PYTHON" in proc.stdout, proc.stdout
