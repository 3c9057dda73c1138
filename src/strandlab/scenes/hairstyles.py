"""Procedural hairstyles: straight, wavy, curly and coiled hair rooted on a scalp.

No measured hair can ship with strandlab, so :func:`generate_hairstyle` builds plausible ones
from a few parameters and a seed.  The result is a :class:`~strandlab.io.hairfile.Hair`, which
writes to ``.hair`` and ``.data`` files and turns into a simulation scene.

How a strand is built (all lengths in metres):

1. **Roots** lie on a cap of the scalp, the ellipsoid ``|(x - centre) / radii| = 1`` above the
   polar angle ``cap_angle`` (measured from +z): Fibonacci points, uniform in area on the unit
   sphere, jittered by the seed, then stretched to the ellipsoid.
2. **Centreline**: the strand leaves along the scalp normal and turns (at most ``1 /
   bend_radius`` per metre) to follow the scalp downwards, combed along the meridians with a
   seeded sideways tilt, at a per-strand height of 2-6 mm above the scalp (plus the curl radius
   for curly and coiled hair); below the scalp's equator it hangs straight down (-z).
3. **Style**, an offset from the centreline in its rotation-minimizing frame (``N`` points into
   the scalp along the combed part, ``B = T x N`` sideways), faded in over the first 3 cm (or a
   quarter of the strand): *straight* none; *wavy* a sideways sine of amplitude ``amplitude``
   and wavelength ``period`` (8 mm, 60 mm); *curly* a helix of radius ``amplitude`` and pitch
   ``period`` (7 mm, 15 mm); *coiled* a tight helix (3 mm, 5 mm).  Each strand has its own
   seeded length, amplitude and period (each scaled by ``1 + variation * U(-1, 1)``), phase and
   (for helices) handedness.
4. **Resampling**: ``vertices_per_strand`` vertices at equal distances ``h = length_i /
   (vertices - 1)`` along the curve (each vertex at chord distance exactly ``h`` from the last),
   so every edge of a strand has the same length and no two consecutive vertices coincide.  A
   style needs edges shorter than its features to show (``h`` below the curl radius).

The same seed gives the same roots and per-strand numbers for every style.
"""
from __future__ import annotations

import math

import numpy as np

from ..io.hairfile import Hair

__all__ = ["generate_hairstyle", "HAIRSTYLES", "scalp_height"]

#: Style name -> (amplitude [m], period [m]) defaults: wave amplitude and wavelength, or helix
#: radius and pitch.
HAIRSTYLES: dict[str, tuple[float, float]] = {
    "straight": (0.0, 0.0),
    "wavy": (0.008, 0.060),
    "curly": (0.007, 0.015),
    "coiled": (0.003, 0.005),
}

_FADE = 0.03            # [m] the style fades in over this length (or a quarter of the strand)
_BASE_HEIGHT = 0.002    # [m] lowest height of a combed strand above the scalp
_STEP = 1e-3            # [m] step of the centreline integration
_SAMPLES_PER_PERIOD = 32  # samples of the styled curve per wave or helix period
_CHUNK_POINTS = 500_000   # samples of styled curves held at once
_CHUNK_STRANDS = 2048     # centrelines integrated at once


def scalp_height(points, *, center=(0.0, 0.0, 0.0), radius=0.1) -> np.ndarray:
    """First-order signed distance [m] of ``points`` [..., 3] from the scalp ellipsoid
    (``F / |grad F|`` with ``F = |(x - center) / radii|^2 - 1``): negative inside, 0 on it."""
    c, r = _scalp(center, radius)
    q = (np.asarray(points, dtype=np.float64) - c) / r
    f = np.sum(q * q, axis=-1) - 1.0
    g = 2.0 * np.linalg.norm(q / r, axis=-1)
    return f / np.maximum(g, 1e-300)


def generate_hairstyle(kind: str = "straight", *, n_strands: int = 1000,
                       vertices_per_strand: int = 100, length: float = 0.25,
                       scalp_center=(0.0, 0.0, 0.0), scalp_radius=0.1, cap_angle: float = 110.0,
                       seed: int = 0, variation: float = 0.15, amplitude: float | None = None,
                       period: float | None = None, bend_radius: float = 0.005,
                       thickness: float = 7e-5) -> Hair:
    """A procedural hairstyle of ``n_strands`` strands (see the module documentation).

    Parameters
    ----------
    kind : ``"straight"``, ``"wavy"``, ``"curly"`` or ``"coiled"``.
    n_strands : number of strands (>= 1).
    vertices_per_strand : vertices of every strand (>= 2).
    length : mean strand length [m] (the polyline length; each strand's is scaled by
        ``1 + variation * U(-1, 1)``).
    scalp_center : centre of the scalp ellipsoid [m], 3 numbers.
    scalp_radius : its radius [m]: one number (a sphere) or three semi-axes (x, y, z).
    cap_angle : roots lie within this polar angle of +z [deg], in (0, 180].
    seed : seed of every random choice.
    variation : relative spread of length, amplitude and period, in [0, 0.9].
    amplitude, period : wave amplitude and wavelength, or helix radius and pitch [m]; default
        :data:`HAIRSTYLES` (not for straight hair).
    bend_radius : smallest bending radius of the centreline as it leaves the scalp [m].
    thickness : hair diameter [m], stored as the Hair's ``default_thickness``.

    Returns
    -------
    :class:`~strandlab.io.hairfile.Hair` with ``n_strands * vertices_per_strand`` points [m].
    """
    if kind not in HAIRSTYLES:
        raise ValueError(f"unknown hairstyle {kind!r}; known: {', '.join(HAIRSTYLES)}")
    n = _int_at_least("n_strands", n_strands, 1)
    nv = _int_at_least("vertices_per_strand", vertices_per_strand, 2)
    length = _positive("length", length)
    c, radii = _scalp(scalp_center, scalp_radius)
    cap = float(cap_angle)
    if not 0.0 < cap <= 180.0:
        raise ValueError(f"cap_angle must be in (0, 180] degrees, got {cap_angle!r}")
    variation = float(variation)
    if not 0.0 <= variation <= 0.9:
        raise ValueError(f"variation must be in [0, 0.9], got {variation!r}")
    amp0, per0 = HAIRSTYLES[kind]
    if kind == "straight" and (amplitude is not None or period is not None):
        raise ValueError("straight hair has no amplitude or period; leave them out")
    if kind != "straight":
        amp0 = amp0 if amplitude is None else _positive("amplitude", amplitude)
        per0 = per0 if period is None else _positive("period", period)
    bend = _positive("bend_radius", bend_radius)
    thickness = _positive("thickness", thickness)

    rng = np.random.default_rng(seed)
    roots_u = _fibonacci_cap(n, math.radians(cap), variation, rng)
    # per-strand numbers, drawn in one order for every style
    u_len, u_amp, u_per = (rng.uniform(-1.0, 1.0, n) for _ in range(3))
    phase = rng.uniform(0.0, 2.0 * math.pi, n)
    hand = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    lift = _BASE_HEIGHT * (1.0 + 2.0 * rng.random(n))
    tilt = min(2.0 * variation, 0.6) * rng.uniform(-1.0, 1.0, n)   # [rad] combing sideways
    lengths = length * (1.0 + variation * u_len)
    amp = amp0 * (1.0 + variation * u_amp)
    per = per0 * (1.0 + variation * u_per) if per0 > 0 else np.ones(n)
    helix = kind in ("curly", "coiled")
    height = lift + (amp if helix else 0.0)
    h_edge = lengths / (nv - 1)

    roots = c + radii * roots_u
    ds_f = min(_STEP, float(np.min(h_edge)) / 2.0)
    if kind != "straight":
        ds_f = min(ds_f, float(np.min(per)) / _SAMPLES_PER_PERIOD)
    # centreline needed: a helix of radius r and pitch p is sqrt(1 + (2 pi r / p)^2) times
    # longer than its axis (a lower bound of the mean for a bent axis too); with room to spare,
    # doubled whenever a strand still comes out short
    stretch = np.sqrt(1.0 + (2.0 * math.pi * amp / per) ** 2) if helix else np.ones(n)
    span = 1.2 * (np.minimum(_FADE, lengths) + lengths / stretch) + 4.0 * h_edge
    for _ in range(8):
        try:
            pts = _strands(kind, roots, roots_u, c, radii, height, tilt, bend, span, ds_f, amp,
                           per, phase, hand, lengths, h_edge, nv)
            break
        except _TooShort:
            span = 2.0 * span
    else:  # pragma: no cover - the span doubles past any strand's length
        raise RuntimeError("hairstyle: could not generate long enough strands")
    flat = pts.reshape(-1, 3)
    depth = scalp_height(flat, center=c, radius=radii).reshape(n, nv)
    inside = np.argwhere(depth[:, 1:] <= 0.0)
    if len(inside):
        i, v = (int(x) for x in inside[0])
        raise ValueError(f"strand {i} enters the scalp at vertex {v + 1}: amplitude "
                         f"{amp[i]:.3g} m is too large for this scalp; reduce it")
    offsets = np.arange(n + 1, dtype=np.int64) * nv
    return Hair(flat, offsets, info=f"strandlab {kind} hairstyle, seed {seed}",
                default_thickness=thickness)


# ---------------------------------------------------------------------------------- steps
class _TooShort(Exception):
    """A generated curve ended before its strand was complete."""


def _strands(kind, roots, roots_u, c, radii, height, tilt, bend, span, ds_f, amp, per, phase,
             hand, lengths, h_edge, nv):
    """Points of every strand, [n, nv, 3], built chunk by chunk."""
    n = len(roots)
    pts = np.empty((n, nv, 3))
    n_f = int(math.ceil(float(np.max(span)) / ds_f)) + 1
    s = np.arange(n_f) * ds_f
    fine = int(np.clip(_CHUNK_POINTS // n_f, 16, _CHUNK_STRANDS))
    for a in range(0, n, _CHUNK_STRANDS):
        sl = slice(a, min(a + _CHUNK_STRANDS, n))
        cp, cd, cn = _centrelines(roots[sl], roots_u[sl], c, radii, height[sl], tilt[sl], bend,
                                  float(np.max(span[sl])))
        for b in range(sl.start, sl.stop, fine):
            f = slice(b, min(b + fine, sl.stop))
            g = slice(b - a, f.stop - a)
            m_f = int(math.ceil(float(np.max(span[f])) / ds_f)) + 1
            x = _styled(kind, s[:m_f], cp[g], cd[g], cn[g], amp[f], per[f], phase[f], hand[f],
                        lengths[f])
            pts[f] = _equal_chords(x, h_edge[f], nv)
    return pts


def _fibonacci_cap(n, cap, variation, rng) -> np.ndarray:
    """Unit vectors [n, 3] on the cap ``polar angle <= cap``: Fibonacci points, jittered."""
    k = np.arange(n) + 0.5
    z = 1.0 - k / n * (1.0 - math.cos(cap))
    phi = k * math.pi * (3.0 - math.sqrt(5.0))
    rho = np.sqrt(np.clip(1.0 - z * z, 0.0, None))
    u = np.stack([rho * np.cos(phi), rho * np.sin(phi), z], axis=1)
    spacing = math.sqrt(2.0 * math.pi * (1.0 - math.cos(cap)) / n)   # mean root distance
    jitter = rng.normal(size=(n, 3)) * (variation * spacing)
    jitter -= np.sum(jitter * u, axis=1)[:, None] * u
    moved = u + jitter
    moved /= np.linalg.norm(moved, axis=1)[:, None]
    inside = moved[:, 2] >= math.cos(cap)                       # jitter stays on the cap
    return np.where(inside[:, None], moved, u)


def _centrelines(roots, roots_u, c, radii, height, tilt, bend, span):
    """Integrate the combed centrelines of a chunk of strands.

    Returns positions, unit tangents and unit frame normals at arclengths ``0, _STEP, ...``,
    each [m, steps, 3].  Vectors are handled by component (rows of [3, m]) in the loop.
    """
    m = len(roots)
    steps = int(math.ceil(span / _STEP)) + 2
    c = np.asarray(c)[:, None]
    r = np.asarray(radii)[:, None]
    hor = roots_u.T * np.array([1.0, 1.0, 0.0])[:, None]
    hn = np.sqrt(hor[0] ** 2 + hor[1] ** 2)
    hor = np.where(hn > 1e-9, hor / np.maximum(hn, 1e-300), np.array([[1.0], [0.0], [0.0]]))
    a = 0.05 * hor
    a[2] -= 1.0                                     # comb direction before projection: down
    ct, st = np.cos(tilt), np.sin(tilt)
    p = roots.T.copy()
    d = _cunit(roots_u.T / r)                       # the scalp normal at the root
    nv = _comb(a, d, ct, st)                        # frame normal: where the strand will bend
    max_turn = _STEP / bend
    P, D, N = (np.empty((steps, m, 3)) for _ in range(3))
    for k in range(steps):
        P[k], D[k], N[k] = p.T, d.T, nv.T
        q = (p - c) / r
        grad = q / r
        gn = np.sqrt(_cdot(grad, grad))
        normal = grad / gn
        h = (_cdot(q, q) - 1.0) / (2.0 * gn)
        err = np.clip((height - h) / height, -0.5, 1.0)
        t = _comb(a, normal, ct, st)
        g = np.where(q[2] > 0.0, t + 2.0 * err * normal, 2.0 * np.maximum(err, 0.0) * normal)
        g[2] -= np.where(q[2] > 0.0, 0.0, 1.0)      # below the equator: hang down
        g = _cunit(g)
        d_new, nv = _turn(d, nv, g, max_turn)
        p = p + 0.5 * _STEP * (d + d_new)
        d = d_new
    return (X.transpose(1, 0, 2) for X in (P, D, N))


def _comb(a, normal, ct, st):
    """``a`` projected on the plane of ``normal``, normalized, turned by the tilt about it."""
    t = _cunit(a - _cdot(a, normal) * normal)
    return ct * t + st * _ccross(normal, t)


def _turn(d, nv, g, max_angle):
    """Rotate unit vectors ``d`` (and the frame normals ``nv`` with them) towards ``g`` by at
    most ``max_angle`` about ``d x g`` (vectors [3, m])."""
    axis = _ccross(d, g)
    s = np.sqrt(_cdot(axis, axis))
    angle = np.minimum(np.arctan2(s, _cdot(d, g)), max_angle)
    ok = s > 1e-12
    axis = np.where(ok, axis / np.maximum(s, 1e-300), 0.0)
    angle = np.where(ok, angle, 0.0)
    cos, sin = np.cos(angle), np.sin(angle)
    return _rotate(d, axis, cos, sin), _rotate(nv, axis, cos, sin)


def _rotate(v, axis, cos, sin):
    return v * cos + _ccross(axis, v) * sin + axis * (_cdot(axis, v) * (1.0 - cos))


def _cdot(a, b):
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def _ccross(a, b):
    return np.stack([a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2],
                     a[0] * b[1] - a[1] * b[0]])


def _cunit(v):
    return v / np.maximum(np.sqrt(_cdot(v, v)), 1e-300)


def _styled(kind, s, P, D, N, amp, per, phase, hand, lengths):
    """The styled curves of a chunk of strands at centreline arclengths ``s`` [f]: [m, f, 3]
    (``P``, ``D``, ``N``: the centrelines' points, tangents and frame normals, [m, steps, 3])."""
    x = s / _STEP
    k = np.minimum(x.astype(np.int64), P.shape[1] - 2)
    t = (x - k)[None, :, None]
    t2, t3 = t * t, t * t * t
    p0, p1, d0, d1 = P[:, k], P[:, k + 1], D[:, k], D[:, k + 1]
    c = ((2 * t3 - 3 * t2 + 1) * p0 + ((t3 - 2 * t2 + t) * _STEP) * d0
         + (-2 * t3 + 3 * t2) * p1 + ((t3 - t2) * _STEP) * d1)       # cubic Hermite
    if kind == "straight":
        return c
    tan = _unit((6 * t2 - 6 * t) / _STEP * (p0 - p1) + (3 * t2 - 4 * t + 1) * d0
                + (3 * t2 - 2 * t) * d1)
    nrm = (1.0 - t) * N[:, k] + t * N[:, k + 1]
    nrm = _unit(nrm - _dot3(nrm, tan)[..., None] * tan)
    bin_ = _cross3(tan, nrm)
    fade = np.minimum(_FADE, 0.25 * lengths)
    r = np.clip(s[None, :] / fade[:, None], 0.0, 1.0)
    env = (r * r * (3.0 - 2.0 * r)) * amp[:, None]                  # [m, f]
    psi = 2.0 * math.pi * s[None, :] / per[:, None] + phase[:, None]
    if kind == "wavy":
        return c + (env * np.sin(psi))[..., None] * bin_
    return c + ((env * np.cos(psi))[..., None] * nrm
                + (env * hand[:, None] * np.sin(psi))[..., None] * bin_)


def _equal_chords(x, h, nv):
    """``nv`` points along each polyline ``x`` [m, f, 3], each at distance exactly ``h[i]``
    from the previous one (the first is ``x[i, 0]``): [m, nv, 3]."""
    m, f, _ = x.shape
    dx = np.diff(x, axis=1)
    seg = np.sqrt(_dot3(dx, dx))
    cum = np.concatenate([np.zeros((m, 1)), np.cumsum(seg, axis=1)], axis=1)
    big = float(cum[:, -1].max()) + 1.0
    rows = np.arange(m)
    keys = (cum + rows[:, None] * big).ravel()
    out = np.empty((m, nv, 3))
    q = x[:, 0].copy()
    sq = np.zeros(m)
    out[:, 0] = q
    for v in range(1, nv):
        target = sq + h
        if np.any(target > cum[:, -1]):
            raise _TooShort
        k = np.searchsorted(keys, target + rows * big) - rows * f
        k = np.clip(k, 1, f - 1)
        while True:
            far = np.linalg.norm(x[rows, k] - q, axis=1) >= h
            if np.all(far):
                break
            if np.any(k[~far] >= f - 1):
                raise _TooShort
            k = np.where(far, k, k + 1)
        a, b = x[rows, k - 1], x[rows, k]
        e = b - a
        dq = a - q
        ee = np.sum(e * e, axis=1)
        de = np.sum(dq * e, axis=1)
        dd = np.sum(dq * dq, axis=1) - h * h
        t = (-de + np.sqrt(np.maximum(de * de - ee * dd, 0.0))) / ee
        t = np.clip(t, 0.0, 1.0)
        q = a + t[:, None] * e
        sq = cum[rows, k - 1] + t * np.sqrt(ee)
        out[:, v] = q
    return out


# ---------------------------------------------------------------------------------- checks
def _unit(v):
    return v / np.maximum(np.sqrt(_dot3(v, v)), 1e-300)[..., None]


def _dot3(a, b):
    """Dot products over the last axis (of length 3)."""
    return np.einsum("...i,...i->...", a, b)


def _cross3(a, b):
    """Cross products over the last axis (of length 3)."""
    out = np.empty(np.broadcast_shapes(a.shape, b.shape))
    out[..., 0] = a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1]
    out[..., 1] = a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2]
    out[..., 2] = a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    return out


def _scalp(center, radius):
    c = np.asarray(center, dtype=np.float64)
    if c.shape != (3,) or not np.all(np.isfinite(c)):
        raise ValueError(f"scalp_center must be 3 finite numbers [m], got {center!r}")
    r = np.asarray(radius, dtype=np.float64)
    if r.ndim == 0:
        r = np.full(3, float(r))
    if r.shape != (3,) or not np.all(np.isfinite(r) & (r > 0)):
        raise ValueError(f"scalp_radius must be one positive number or three (semi-axes) [m], "
                         f"got {radius!r}")
    return c, r


def _positive(name, value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number, got {value!r}") from None
    if not math.isfinite(v) or v <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")
    return v


def _int_at_least(name, value, low) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)
