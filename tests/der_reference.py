"""Reference discrete-elastic-rod energies in plain NumPy, written from the definitions
(Bergou et al. 2008, 2010; ``../shared/notes/sag_free_formulation.md``), independently of
``strandlab.der``.  Imported by the DER tests as ``der_reference``.

The energy of a bend-twist stencil is the function a Newton step minimises: its reference frames
are carried from a base configuration by time-parallel transport,
``a1(x) = P_{t^0 -> t(x)}(a1^0)`` with ``P(a) = a - (a . t) / (1 + t^0 . t) (t^0 + t)`` (the
minimal rotation, for ``a`` perpendicular to ``t^0``), ``a2 = t x a1``, and its reference twist
is measured from these frames and unwrapped continuously from its base value.
"""
from __future__ import annotations

import numpy as np

__all__ = ["unit", "transport_perp", "signed_angle", "wrap", "Base", "stencil_parts",
           "bend_energy", "twist_energy", "stretch_energy", "slots", "rigid_velocity",
           "strand_layout"]


def unit(v):
    return v / np.linalg.norm(v)


def transport_perp(a, t0, t):
    """Minimal-rotation transport of ``a`` (perpendicular to unit ``t0``) to unit ``t``."""
    return a - np.dot(a, t) / (1.0 + np.dot(t0, t)) * (t0 + t)


def signed_angle(u, v, axis):
    """Angle from ``u`` to ``v`` about ``axis`` in (-pi, pi]."""
    return np.arctan2(np.dot(np.cross(u, v), axis), np.dot(u, v))


def wrap(a):
    """``a`` shifted by a multiple of 2 pi into [-pi, pi)."""
    return (a + np.pi) % (2.0 * np.pi) - np.pi


def slots(y):
    """``(x0, theta0, x1, theta1, x2)`` of an 11-slot stencil vector."""
    return y[0:3], y[3], y[4:7], y[7], y[8:11]


class Base:
    """Reference frames of a stencil's two edges at a base configuration ``y0`` [11].

    ``a1`` [2, 3] are unit directors perpendicular to the base tangents; ``m_ref`` is the
    reference twist at the base on the branch nearest ``near``.
    """

    def __init__(self, y0, a1, near=0.0):
        x0, _, x1, _, x2 = slots(np.asarray(y0, dtype=float))
        self.t = np.array([unit(x1 - x0), unit(x2 - x1)])
        self.a1 = np.array([unit(a - np.dot(a, t) * t) for a, t in zip(a1, self.t)])
        self.a2 = np.cross(self.t, self.a1)
        m = signed_angle(transport_perp(self.a1[0], self.t[0], self.t[1]), self.a1[1], self.t[1])
        self.m_ref = near + wrap(m - near)


def stencil_parts(y, base):
    """Curvature [4], reference twist [rad] and twist [rad] at ``y`` with frames transported
    from ``base``; also the transported ``a1`` [2, 3] and ``a2``."""
    x0, th0, x1, th1, x2 = slots(np.asarray(y, dtype=float))
    e0, e1 = x1 - x0, x2 - x1
    t = [unit(e0), unit(e1)]
    a1 = np.array([transport_perp(base.a1[j], base.t[j], t[j]) for j in range(2)])
    a2 = np.array([np.cross(t[j], a1[j]) for j in range(2)])
    kb = 2.0 * np.cross(e0, e1) / (np.linalg.norm(e0) * np.linalg.norm(e1) + np.dot(e0, e1))
    kappa = []
    for j, th in enumerate((th0, th1)):
        m1 = np.cos(th) * a1[j] + np.sin(th) * a2[j]
        m2 = -np.sin(th) * a1[j] + np.cos(th) * a2[j]
        kappa += [np.dot(kb, m2), -np.dot(kb, m1)]
    m = signed_angle(transport_perp(a1[0], t[0], t[1]), a1[1], t[1])
    m = base.m_ref + wrap(m - base.m_ref)
    return np.array(kappa), m, th1 - th0 + m, a1, a2


def bend_energy(y, base, kbar, ltilde, k1, k2):
    """``1/(4 ltilde) sum_j [k1 (kappa_j1 - kbar_j1)^2 + k2 (kappa_j2 - kbar_j2)^2]`` [J]."""
    r = stencil_parts(y, base)[0] - np.asarray(kbar)
    return (k1 * (r[0] ** 2 + r[2] ** 2) + k2 * (r[1] ** 2 + r[3] ** 2)) / (4.0 * ltilde)


def twist_energy(y, base, taubar, ltilde, kt):
    """``k_t / (2 ltilde) (tau - taubar)^2`` [J]."""
    tau = stencil_parts(y, base)[2]
    return kt / (2.0 * ltilde) * (tau - taubar) ** 2


def stretch_energy(y6, lbar, ks):
    """``1/2 k_s lbar (|e| / lbar - 1)^2`` [J] of an edge ``(x_a, x_b)``."""
    ln = np.linalg.norm(y6[3:6] - y6[0:3])
    return 0.5 * ks * lbar * (ln / lbar - 1.0) ** 2


def rigid_velocity(y, omega, v):
    """Generalized velocity [11] of the rigid motion (angular velocity ``omega``, translation
    ``v``) of a stencil whose frames follow by time-parallel transport: vertices move by
    ``v + omega x x``; each edge angle by ``omega . t_j`` (the transported reference frame turns
    by ``-omega . t_j`` about the edge relative to the rigidly rotated one)."""
    x0, _, x1, _, x2 = slots(np.asarray(y, dtype=float))
    t0, t1 = unit(x1 - x0), unit(x2 - x1)
    out = np.zeros(11)
    for k, x in ((0, x0), (4, x1), (8, x2)):
        out[k:k + 3] = v + np.cross(omega, x)
    out[3] = np.dot(omega, t0)
    out[7] = np.dot(omega, t1)
    return out


def strand_layout(sizes, closed=None, rng=None):
    """Index arrays of strands with ``sizes`` vertices (``closed[s]``: a closing edge), laid out
    as ``[x_0, theta_0, x_1, ...]`` strand after strand and then, when ``rng`` is given,
    scattered by a random permutation of ``q`` (to show nothing assumes contiguity).

    Returns a dict: ``n_dofs``, ``vertex_xyz`` [V, 3] (indices of each vertex's coordinates),
    ``edge_dof`` [E], ``edge_v`` [E, 2], ``stretch_dofs`` [E, 6], ``bend_dofs`` [B, 11],
    ``bend_edges`` [B, 2], ``strand_of_bend`` [B].
    """
    closed = [False] * len(sizes) if closed is None else list(closed)
    vxyz, edof, ev, bd, be, bs = [], [], [], [], [], []
    off = 0
    for s, (n, c) in enumerate(zip(sizes, closed)):
        ne = n if c else n - 1
        v0, e0 = len(vxyz), len(edof)
        vxyz += [off + 4 * i + np.arange(3) for i in range(n)]
        edof += [off + 4 * j + 3 for j in range(ne)]
        ev += [(v0 + j, v0 + (j + 1) % n) for j in range(ne)]
        for i in (range(n) if c else range(1, n - 1)):
            jm = (i - 1) % n
            bd.append(np.r_[vxyz[v0 + jm], edof[e0 + jm], vxyz[v0 + i], edof[e0 + i],
                            vxyz[v0 + (i + 1) % n]])
            be.append((e0 + jm, e0 + i))
            bs.append(s)
        off += 4 * n if c else 4 * n - 1
    vxyz = np.array(vxyz, dtype=np.int64)
    edof = np.array(edof, dtype=np.int64)
    ev = np.array(ev, dtype=np.int64)
    bd = np.array(bd, dtype=np.int64)
    perm = rng.permutation(off) if rng is not None else np.arange(off)
    return {"n_dofs": off, "vertex_xyz": perm[vxyz], "edge_dof": perm[edof], "edge_v": ev,
            "stretch_dofs": perm[np.hstack([vxyz[ev[:, 0]], vxyz[ev[:, 1]]])],
            "bend_dofs": perm[bd], "bend_edges": np.array(be, dtype=np.int64),
            "strand_of_bend": np.array(bs)}
