"""A busy machine for the benchmarks' ``--busy`` modes: one core burnt by another process.

Imported by the scripts in this folder (run as ``python benchmarks/<script>.py``, which puts
this folder on the import path)."""
from __future__ import annotations

import contextlib
import subprocess
import sys


@contextlib.contextmanager
def busy_core(enabled: bool):
    """Burn one core in a child process for the duration (``enabled``); stopped by its pid."""
    proc = subprocess.Popen([sys.executable, "-c", "while True: pass"]) if enabled else None
    try:
        yield
    finally:
        if proc is not None:
            proc.kill()
            proc.wait()
