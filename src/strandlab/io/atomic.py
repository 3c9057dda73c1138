"""Atomic file writing: a file appears under its final name complete, or not at all.

Every writer of strandlab that produces a file a user keeps (hair files, checkpoints, exports)
writes to a temporary file in the target's folder and renames it over the target
(``os.replace``, atomic on POSIX and Windows) only once the file is complete.  A failure or an
interruption part way (an exception, Ctrl-C) removes the temporary file and leaves an existing
file under the final name unchanged.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

__all__ = ["atomic_path", "write_bytes_atomic", "check_writable_folder"]


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def check_writable_folder(path) -> Path:
    """``path`` as a Path after checking that its folder exists and is a folder
    (FileNotFoundError / NotADirectoryError naming the file asked for)."""
    p = Path(path)
    folder = p.parent if str(p.parent) else Path(".")
    if not folder.exists():
        raise FileNotFoundError(f"cannot write {p}: folder {folder} does not exist")
    if not folder.is_dir():
        raise NotADirectoryError(f"cannot write {p}: {folder} is not a folder")
    if p.is_dir():
        raise IsADirectoryError(f"cannot write {p}: it is a folder")
    return p


@contextlib.contextmanager
def atomic_path(path) -> Iterator[Path]:
    """Context manager yielding a temporary path next to ``path`` (same suffix, so libraries
    that choose a format by suffix see the right one); on a normal exit the temporary file is
    renamed to ``path``, on an exception it is removed and the exception propagates.

    An existing file keeps its permissions; a new one gets the usual ``0o666 & ~umask``.
    OSError (naming ``path``) when the folder cannot be written.
    """
    p = check_writable_folder(path)
    folder = p.parent if str(p.parent) else Path(".")
    try:
        mode = p.stat().st_mode & 0o777
    except OSError:
        mode = 0o666 & ~_umask()
    try:
        fd, tmp = tempfile.mkstemp(dir=folder, prefix=f".{p.stem}.", suffix=f".tmp{p.suffix}")
    except OSError as exc:  # name the file asked for, not the temporary one
        raise type(exc)(exc.errno, exc.strerror, str(p)) from None
    os.close(fd)
    tmp_path = Path(tmp)
    try:
        yield tmp_path
        os.chmod(tmp_path, mode)
        os.replace(tmp_path, p)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_path)
        raise


def write_bytes_atomic(path, chunks: Iterable[bytes]) -> Path:
    """Write ``chunks`` to ``path`` atomically (see :func:`atomic_path`), synced to disk."""
    p = Path(path)
    with atomic_path(p) as tmp, open(tmp, "wb") as f:
        for chunk in chunks:
            f.write(chunk)
        f.flush()
        os.fsync(f.fileno())
    return p
