"""The compiled OPE and RND layers (``native/``, Rust) and their pure-Python fallbacks.

The project's wheel carries them as ``adaptive_client.adaptive_ope_native`` and
``adaptive_client.adaptive_rnd_native``; an install from source builds them where cargo
is installed.  Where they are missing the schemes fall back to pyope and to OpenSSL
through ``cryptography``: the same bytes, much slower (OPE about 200 times).  The first
use of a fallback logs one warning per process on the package's logger.
"""

from __future__ import annotations

import importlib
import logging
import os
import threading
from types import ModuleType

logger = logging.getLogger("adaptive_client")

_warned = False
_lock = threading.Lock()


# ADAPTIVE_PURE_PYTHON=1: every compiled module taken for absent (the fallbacks, and the
# Python statement path, as an install without a Rust toolchain has them)
PURE_PYTHON = os.environ.get("ADAPTIVE_PURE_PYTHON", "") not in ("", "0")


def load(name: str) -> ModuleType | None:
    """The compiled module ``adaptive_client.<name>``, or None where it was not built
    (or ``ADAPTIVE_PURE_PYTHON`` is set)."""
    if PURE_PYTHON:
        return None
    try:
        return importlib.import_module(f"adaptive_client.{name}")
    except ImportError:
        return None


def fallback_used(layer: str) -> None:
    """Log, once per process, that ``layer`` runs on its pure-Python fallback."""
    global _warned
    if _warned:
        return
    with _lock:
        if _warned:
            return
        _warned = True
    logger.warning(
        "adaptive_client: the compiled %s layer is not installed; using the pure-Python "
        "fallback (the same ciphertexts, much slower). Install a wheel of adaptive-client "
        "for this platform, or install from source with a Rust toolchain (cargo) on the PATH.",
        layer,
    )
