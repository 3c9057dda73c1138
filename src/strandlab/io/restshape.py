"""Rest-shape files: the optimized rest parameters of a hair's strands (``strandlab sagfree``).

A rest-shape file is a NumPy ``.npz`` archive (format ``"strandlab-rest-shape"``, version 1):

| key | shape | meaning |
|---|---|---|
| ``format``, ``version`` | () | ``"strandlab-rest-shape"``, 1 |
| ``vertex_counts`` | [S] int | vertices of each strand (checked against the hair it is used with) |
| ``points_sha256`` | () str | SHA-256 of the strands' float64 points [m] (the same check) |
| ``rest_length`` | [E] | rest length of every edge [m], strand after strand |
| ``rest_curvature`` | [B, 4] | rest curvature of every inner vertex |
| ``rest_twist`` | [B] | rest twist of every inner vertex [rad] |
| ``stiffness_scale`` | [S] | factor on each strand's stiffnesses (1 unless stiffened) |
| ``status`` | [S] str | how each strand's optimization ended |

An open strand of ``n`` vertices has ``n - 1`` edges and ``n - 2`` inner vertices.  The file is
written to a temporary file and renamed, so it is never left half-written.
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["RestShapeFile", "write_rest_shape", "read_rest_shape", "points_digest"]

FORMAT = "strandlab-rest-shape"
VERSION = 1


def points_digest(points: np.ndarray) -> str:
    """SHA-256 of ``points`` as C-ordered float64 (the identity of a hair's geometry)."""
    return hashlib.sha256(np.ascontiguousarray(points, dtype=np.float64).tobytes()).hexdigest()


@dataclass(frozen=True)
class RestShapeFile:
    """The contents of a rest-shape file (see the module docstring for the fields)."""

    vertex_counts: np.ndarray
    points_sha256: str
    rest_length: np.ndarray
    rest_curvature: np.ndarray
    rest_twist: np.ndarray
    stiffness_scale: np.ndarray
    status: np.ndarray

    @property
    def n_strands(self) -> int:
        return len(self.vertex_counts)

    def strand_options(self, s: int, stiffness: dict | None = None) -> dict:
        """The ``der`` strand options of strand ``s``: its explicit rest shape, and with
        ``stiffness`` (``{"stretch_stiffness": k_s, "bend_stiffness": k_b, "twist_stiffness":
        k_t}``, scalars) scaled stiffnesses when its scale is not 1."""
        n = self.vertex_counts
        e0 = int(np.sum(n[:s] - 1))
        b0 = int(np.sum(n[:s] - 2))
        ne, nb = int(n[s] - 1), int(n[s] - 2)
        out = {"rest_length": self.rest_length[e0:e0 + ne],
               "rest_curvature": self.rest_curvature[b0:b0 + nb],
               "rest_twist": self.rest_twist[b0:b0 + nb]}
        sc = float(self.stiffness_scale[s])
        if stiffness and sc != 1.0:
            out.update({k: sc * v for k, v in stiffness.items()})
        return out

    def check_matches(self, vertex_counts, points, where: str) -> None:
        """ValueError naming ``where`` when the file was not made for these strands."""
        vc = np.asarray(vertex_counts, dtype=np.int64)
        if len(vc) != self.n_strands:
            raise ValueError(f"{where}: the rest-shape file holds {self.n_strands} strands, the "
                             f"hair has {len(vc)}")
        bad = np.nonzero(vc != self.vertex_counts)[0]
        if len(bad):
            s = int(bad[0])
            raise ValueError(f"{where}: strand {s} has {int(vc[s])} vertices, the rest-shape "
                             f"file {int(self.vertex_counts[s])}")
        if points_digest(points) != self.points_sha256:
            raise ValueError(f"{where}: the rest-shape file was made for other strand points "
                             "(SHA-256 differs)")


def write_rest_shape(path, rest: RestShapeFile) -> Path:
    """Write ``rest`` to ``path`` (``.npz`` added when missing), atomically."""
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    arrays = {"format": np.array(FORMAT), "version": np.array(VERSION),
              "vertex_counts": np.asarray(rest.vertex_counts, dtype=np.int64),
              "points_sha256": np.array(rest.points_sha256),
              "rest_length": np.asarray(rest.rest_length, dtype=np.float64),
              "rest_curvature": np.asarray(rest.rest_curvature, dtype=np.float64).reshape(-1, 4),
              "rest_twist": np.asarray(rest.rest_twist, dtype=np.float64),
              "stiffness_scale": np.asarray(rest.stiffness_scale, dtype=np.float64),
              "status": np.asarray(rest.status, dtype=str)}
    _check(arrays, str(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent or ".")
    try:
        with os.fdopen(fd, "wb") as fh:
            np.savez(fh, **arrays)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def read_rest_shape(path) -> RestShapeFile:
    """Read a rest-shape file; ValueError naming the file and the entry for a wrong format or
    version, a missing or misshapen entry, or non-finite values."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such rest-shape file")
    try:
        with np.load(path, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # zip, pickle and format errors alike
        raise ValueError(f"{path}: not a readable rest-shape file ({exc})") from None
    _check(arrays, str(path))
    return RestShapeFile(vertex_counts=arrays["vertex_counts"].astype(np.int64),
                         points_sha256=str(arrays["points_sha256"]),
                         rest_length=arrays["rest_length"].astype(np.float64),
                         rest_curvature=arrays["rest_curvature"].astype(np.float64),
                         rest_twist=arrays["rest_twist"].astype(np.float64),
                         stiffness_scale=arrays["stiffness_scale"].astype(np.float64),
                         status=arrays["status"].astype(str))


def _check(a: dict, where: str) -> None:
    for k in ("format", "version", "vertex_counts", "points_sha256", "rest_length",
              "rest_curvature", "rest_twist", "stiffness_scale", "status"):
        if k not in a:
            raise ValueError(f"{where}: rest-shape file lacks {k!r}")
    if str(a["format"]) != FORMAT:
        raise ValueError(f"{where}: not a rest-shape file (format {str(a['format'])!r})")
    if int(a["version"]) != VERSION:
        raise ValueError(f"{where}: rest-shape file version {int(a['version'])}; this strandlab "
                         f"reads version {VERSION}")
    n = np.asarray(a["vertex_counts"])
    if n.ndim != 1 or np.any(n < 3):
        raise ValueError(f"{where}: vertex_counts must list at least 3 vertices per strand")
    ne, nb, ns = int(np.sum(n - 1)), int(np.sum(n - 2)), len(n)
    shapes = {"rest_length": (ne,), "rest_curvature": (nb, 4), "rest_twist": (nb,),
              "stiffness_scale": (ns,), "status": (ns,)}
    for k, shape in shapes.items():
        if np.shape(a[k]) != shape:
            raise ValueError(f"{where}: {k} has shape {np.shape(a[k])}, expected {shape} for "
                             f"the strands' vertex counts")
        if k != "status" and not np.all(np.isfinite(a[k])):
            raise ValueError(f"{where}: {k} is not finite at entry "
                             f"{int(np.argmin(np.isfinite(a[k]).reshape(len(a[k]), -1).all(1)))}")
    if np.any(np.asarray(a["rest_length"]) <= 0):
        raise ValueError(f"{where}: rest_length must be positive")
