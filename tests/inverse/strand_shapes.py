"""Hair-like test strands for the sag-free optimizer (imported by the tests as
``strand_shapes``): a root on a sphere, a centreline that leaves the scalp along its normal and
turns down towards gravity, with waves or a coil around it, resampled to equal edge lengths."""
from __future__ import annotations

import numpy as np

__all__ = ["hair_strand", "coil_strand", "resample", "max_displacement", "HAIR"]

#: Human-hair-like material: E 3.5 GPa, G = E / 3, density 1300 kg/m^3, radius 50 um.
HAIR = {"young_modulus": 3.5e9, "density": 1300.0, "radius": 50e-6,
        "shear_modulus": 3.5e9 / 3.0}


def resample(points: np.ndarray, n: int) -> np.ndarray:
    """``n`` points at equal arclength along the polyline ``points`` [m, 3]."""
    seg = np.linalg.norm(np.diff(points, axis=0), axis=1)
    s = np.concatenate([[0.0], np.cumsum(seg)])
    t = np.linspace(0.0, s[-1], n)
    return np.stack([np.interp(t, s, points[:, k]) for k in range(3)], axis=1)


def _frame(d):
    """Two unit vectors perpendicular to unit ``d`` and to each other."""
    a = np.array([1.0, 0.0, 0.0]) if abs(d[0]) < 0.9 else np.array([0.0, 1.0, 0.0])
    u = np.cross(d, a)
    u /= np.linalg.norm(u)
    return u, np.cross(d, u)


def hair_strand(n: int, *, length: float = 0.25, root=(0.0, 0.0, 0.0), normal=(1.0, 0.0, 0.3),
                droop: float = 0.9, wave_amplitude: float = 0.01, wave_length: float = 0.06,
                wave_phase: float = 0.0, out_of_plane: float = 0.5, coil_radius: float = 0.0,
                coil_pitch: float = 0.02, fine: int = 4000) -> np.ndarray:
    """A strand of ``n`` vertices [m, 3]: from ``root`` along ``normal``, its tangent turning
    towards -z by ``droop`` (fraction of the turn from ``normal`` to -z), with a sinusoidal
    wave in the plane of the turn (amplitude [m], wavelength [m]) and one of half its
    wavenumber out of that plane (``out_of_plane`` times the amplitude), and an optional coil
    (radius, pitch [m]) about the centreline."""
    nrm = np.asarray(normal, dtype=float)
    nrm /= np.linalg.norm(nrm)
    down = np.array([0.0, 0.0, -1.0])
    s = np.linspace(0.0, length, fine)
    ang_total = np.arccos(np.clip(nrm @ down, -1, 1)) * droop
    axis = np.cross(nrm, down)
    axis = axis / np.linalg.norm(axis) if np.linalg.norm(axis) > 1e-12 else _frame(nrm)[0]
    ang = ang_total * np.sqrt(s / length)
    c, sn = np.cos(ang)[:, None], np.sin(ang)[:, None]
    tan = c * nrm + sn * np.cross(axis, nrm) + (1 - c) * (axis @ nrm) * axis
    ds = np.diff(s, prepend=0.0)[:, None]
    centre = np.asarray(root, dtype=float) + np.cumsum(tan * ds, axis=0)
    u = np.cross(axis, tan)
    ramp = np.minimum(1.0, s / (0.2 * length))[:, None]
    k = 2 * np.pi / wave_length
    pts = centre + ramp * wave_amplitude * (np.sin(k * s + wave_phase)[:, None] * u
                                            + out_of_plane * np.sin(0.5 * k * s)[:, None] * axis)
    if coil_radius > 0:
        phi = 2 * np.pi * s / coil_pitch
        pts = pts + ramp * coil_radius * (np.cos(phi)[:, None] * u + np.sin(phi)[:, None] * axis)
    return resample(pts, n)


def coil_strand(n: int, *, radius: float = 0.01, pitch: float = 0.01, turns: float = 6.0,
                root=(0.0, 0.0, 0.0), lead: float = 0.01) -> np.ndarray:
    """A helix of ``turns`` turns hanging down (axis -z) from ``root``, reached by a short
    straight lead [m] out of the root; ``n`` vertices."""
    t = np.linspace(0.0, turns * 2 * np.pi, 4000)
    helix = np.stack([radius * (np.cos(t) - 1.0) + lead, radius * np.sin(t),
                      -pitch * t / (2 * np.pi)], axis=1)
    start = np.array([[0.0, 0.0, 0.0]])
    pts = np.concatenate([start, helix]) + np.asarray(root, dtype=float)
    return resample(pts, n)


def max_displacement(scene, *, duration: float = 5.0, dt: float = 1.0 / 60.0,
                     settings=None) -> float:
    """Largest vertex displacement [m] from the initial shape over ``duration`` [s] of DER
    simulation with step ``dt`` (default DER settings unless ``settings``)."""
    import strandlab as sl

    sol = sl.DERSolver(scene, settings or sl.DERSettings())
    st = sol.state()
    x0 = sol.output(st).positions.copy()
    worst = 0.0
    for _ in range(int(round(duration / dt))):
        sol.step(st, st, dt)
        worst = max(worst, float(np.max(np.abs(sol.output(st).positions - x0))))
    return worst
