"""Optional dependencies (the extras of ``pyproject.toml``): :func:`require` imports one, and
raises :class:`MissingExtra` when it is not installed, an ImportError whose message names the
package and the command that installs it.  The ``strandlab`` command prints that message and
exits with status 1 instead of a traceback.

>>> require("math", "this example", "math", "mesh").sqrt(4.0)
2.0
>>> try:
...     require("no_such_module_here", "Reading widgets", "widgets", "mesh")
... except MissingExtra as exc:
...     print(str(exc).split("; ")[1])
install it with pip install 'strandlab[mesh]' or pip install widgets
"""
from __future__ import annotations

import importlib

__all__ = ["MissingExtra", "require"]


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message says how to install it."""


def require(module: str, what: str, package: str, extra: str):
    """The module ``module``, or :class:`MissingExtra` saying that ``what`` needs ``package``,
    installed by the extra ``extra``."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtra(f"{what} needs the {package} package (import {module}); install it "
                           f"with pip install 'strandlab[{extra}]' or pip install {package}"
                           ) from exc
