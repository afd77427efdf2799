"""The ``adaptive-tpcc`` command ``make venv`` writes into the checkout's virtualenv.

The sweep's latency proxy runs in a process started with multiprocessing's ``spawn``,
which imports the parent's main module -- this script -- under the name
``__mp_main__``.  An unguarded ``sys.exit(main())`` ran the whole command again in the
child: the second ``make demo``, or any sweep past its 0 ms point, stopped with "the
latency proxy did not start".
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(sys.executable).parent / "adaptive-tpcc"


@pytest.mark.skipif(not SCRIPT.exists(), reason="adaptive-tpcc is written by make venv")
def test_a_spawned_child_imports_the_command_without_running_it() -> None:
    child = (
        "import runpy, sys\n"
        "sys.argv = ['adaptive-tpcc', '--help']\n"
        f"runpy.run_path({str(SCRIPT)!r}, run_name='__mp_main__')\n"
        "print('imported only')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", child], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "imported only"  # (not the command's --help)


@pytest.mark.skipif(not SCRIPT.exists(), reason="adaptive-tpcc is written by make venv")
def test_the_command_runs_as_a_script() -> None:
    done = subprocess.run([str(SCRIPT), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "sweep" in done.stdout
