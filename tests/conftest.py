"""Test set-up shared by the whole suite.

Numba's ``cache=True`` keys a cached kernel on its own source file only: an edit to a module the
kernel imports (``pbd/constraints.py``, ``collision/*``, ``geometry/*``) leaves the stale machine
code in place.  The tests therefore point Numba at a cache directory named after a hash of every
source file of the package, so any edit starts from an empty cache.  This must happen before
Numba is imported, which is why it is done here, at the top of the first conftest pytest loads.
"""
from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[1]
_SOURCES = _ROOT / "src" / "strandlab"


def _source_hash(root: Path) -> str:
    """SHA-1 of the relative paths and contents of every source file under ``root``."""
    h = hashlib.sha1()
    for path in sorted(root.rglob("*")):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix in (".pyc", ".nbi",
                                                                                ".nbc"):
            continue
        h.update(path.relative_to(root).as_posix().encode())
        h.update(b"\0")
        h.update(path.read_bytes())
        h.update(b"\0")
    return h.hexdigest()


def _cache_dir() -> Path:
    """``<base>/<hash>``: base is $NUMBA_CACHE_DIR when set, else ``.numba_cache`` at the root
    (or the system temp dir when the root is not writable)."""
    base = os.environ.get("NUMBA_CACHE_DIR")
    if base:
        base = Path(base)
    elif os.access(_ROOT, os.W_OK):
        base = _ROOT / ".numba_cache"
    else:
        base = Path(tempfile.gettempdir()) / "strandlab_numba_cache"
    return base / _source_hash(_SOURCES)


NUMBA_CACHE = _cache_dir()
NUMBA_CACHE.mkdir(parents=True, exist_ok=True)
os.environ["NUMBA_CACHE_DIR"] = str(NUMBA_CACHE)
if "numba" in sys.modules:  # imported by a plugin already: its configuration is read
    sys.modules["numba"].config.CACHE_DIR = str(NUMBA_CACHE)
if "strandlab" in sys.modules:  # kernels already bound to another cache: refuse to go on
    raise RuntimeError("strandlab was imported before tests/conftest.py set NUMBA_CACHE_DIR")

# the shared helpers (tests/helpers.py) import as ``helpers`` from every test folder
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.insert(0, str(Path(__file__).resolve().parent))


def pytest_report_header(config):
    import strandlab

    return [f"strandlab: {Path(strandlab.__file__).parent}",
            f"numba cache: {NUMBA_CACHE}"]
