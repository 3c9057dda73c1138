"""Stencils of the connection terms and finite-difference checks shared by the mixed tests."""
from __future__ import annotations

import numpy as np

from strandlab.mixed.joint_terms import (
    CurveHardTerm,
    CurveJointTerm,
    PointHardTerm,
    PointJointTerm,
)

__all__ = ["POINT_KINDS", "N_OTHER", "rotation", "unit", "perp", "point_case", "curve_case",
           "evaluate", "assembled", "fd_errors"]

POINT_KINDS = [("rod", "rod"), ("rod", "triangle"), ("triangle", "rod"), ("rod", "tet"),
               ("triangle", "triangle"), ("triangle", "tet"), ("tet", "tet")]
N_OTHER = {"rod": 1, "triangle": 2, "tet": 3}


def rotation(axis, angle):
    """Rotation matrix about ``axis`` by ``angle`` [rad] (Rodrigues)."""
    a = np.asarray(axis, float) / np.linalg.norm(axis)
    k = np.array([[0, -a[2], a[1]], [a[2], 0, -a[0]], [-a[1], a[0], 0]])
    return np.eye(3) + np.sin(angle) * k + (1 - np.cos(angle)) * k @ k


def unit(v):
    v = np.asarray(v, float)
    return v / np.linalg.norm(v)


def perp(t, hint=(0.3, -0.2, 0.9)):
    """A unit vector perpendicular to unit ``t``."""
    return unit(np.cross(t, hint))


class Case:
    """A term on one stencil, its coordinates ``q`` and the rods' step start arrays."""

    def __init__(self, term, q, rod_pairs, t_start, a1_start):
        self.term, self.q = term, q
        self.rod_pairs = rod_pairs      # (first vertex, second vertex) of each rod edge, in q
        self.t_start, self.a1_start = t_start, a1_start

    def x(self, q, i):
        return q[3 * i:3 * i + 3]

    def restart(self, q):
        """Make ``q`` the step start: the rods' tangents and transported directors."""
        from strandlab.rods.energies import transport
        for r, (a, b) in enumerate(self.rod_pairs):
            t = unit(self.x(q, b) - self.x(q, a))
            a1 = np.array(transport(tuple(self.a1_start[r]), tuple(self.t_start[r]), tuple(t)))
            self.a1_start[r] = unit(a1 - a1.dot(t) * t)
            self.t_start[r] = t
        self.term.begin_step(q)


def _rod_arrays(q, pairs, rng):
    ts = np.zeros((max(len(pairs), 1), 3))
    a1 = np.zeros_like(ts)
    for r, (a, b) in enumerate(pairs):
        ts[r] = unit(q[3 * b:3 * b + 3] - q[3 * a:3 * a + 3])
        a1[r] = perp(ts[r], rng.normal(size=3))
    return ts, a1


def point_case(kinds, *, rng, hard=False, forward=None, X=None, theta=None, **kw):
    """Point stencil of ``kinds`` at random (or given ``X`` [n, 3]) positions, rest set there."""
    nv = 1 + sum(N_OTHER[k] for k in kinds)
    X = rng.normal(size=(nv, 3)) if X is None else np.asarray(X, float)
    rods = [i for i, k in enumerate(kinds) if k == "rod"]
    forward = [bool(rng.integers(2)) for _ in rods] if forward is None else list(forward)
    th = rng.normal(size=len(rods)) if theta is None else np.asarray(theta, float)
    q = np.concatenate([X.ravel(), th])
    pairs, o = [], 1
    for i, k in enumerate(kinds):
        if k == "rod":
            f = forward[rods.index(i)]
            pairs.append((0, o) if f else (o, 0))
        o += N_OTHER[k]
    ts, a1 = _rod_arrays(q, pairs, rng)
    rod = {} if not rods else dict(rod_edge=[list(range(len(rods)))], rod_forward=[forward],
                                   a1_start=a1, t_start=ts)
    dofs = [np.arange(q.size)]
    if hard:
        term = PointHardTerm(kinds=kinds, dofs=dofs, stiffness=[kw.get("k", 3.0)], **rod)
    else:
        term = PointJointTerm(kinds=kinds, dofs=dofs, twist_stiffness=[kw.get("kt", 2.0)],
                              bend_stiffness=[kw.get("kb", 3.0)],
                              mode=kw.get("mode", "incremental2"), **rod)
    term.set_rest(q)
    return Case(term, q, pairs, ts, a1)


def curve_case(kinds, *, rng, hard=False, X=None, theta=0.4, **kw):
    """Curve stencil of ``kinds`` with rest set at the random (or given) positions."""
    nv = 3 if kinds[0] == "rod" else 4
    X = rng.normal(size=(nv, 3)) if X is None else np.asarray(X, float)
    q = np.concatenate([X.ravel(), [theta] if kinds[0] == "rod" else []])
    pairs = [(0, 1)] if kinds[0] == "rod" else []
    ts, a1 = _rod_arrays(q, pairs, rng)
    rod = dict(rod_edge=[0], a1_start=a1, t_start=ts) if pairs else {}
    cls = CurveHardTerm if hard else CurveJointTerm
    extra = {} if hard else {"mode": kw.get("mode", "incremental2")}
    term = cls(kinds=kinds, dofs=[np.arange(q.size)], stiffness=[kw.get("k", 2.0)],
               rest_length=[kw.get("length", 0.7)], **rod, **extra)
    term.set_rest(q)
    return Case(term, q, pairs, ts, a1)


def evaluate(term, q, hess=True):
    n, k = term.dofs.shape
    e, g = np.zeros(n), np.zeros((n, k))
    h = np.zeros((n, k, k)) if hess else None
    term.evaluate(q, e, g, h)
    return e, g, h


def assembled(term, q, hess=True):
    """Total energy, gradient [N] and Hessian [N, N] over ``q`` [N]."""
    e, g, h = evaluate(term, q, hess)
    G = np.zeros(q.size)
    np.add.at(G, term.dofs, g)
    H = None
    if hess:
        H = np.zeros((q.size, q.size))
        for s in range(len(term.dofs)):
            H[np.ix_(term.dofs[s], term.dofs[s])] += h[s]
    return e.sum(), G, H


def fd_errors(term, q, h=1e-6):
    """Relative errors of the gradient (vs differences of the energy) and of the Hessian (vs
    differences of the gradient), and the Hessian's asymmetry."""
    _, G, H = assembled(term, q)
    gn = np.zeros(q.size)
    Hn = np.zeros((q.size, q.size))
    for i in range(q.size):
        d = np.zeros(q.size)
        d[i] = h
        ep, gp, _ = assembled(term, q + d, hess=False)
        em, gm, _ = assembled(term, q - d, hess=False)
        gn[i] = (ep - em) / (2 * h)
        Hn[:, i] = (gp - gm) / (2 * h)
    rel = lambda a, b: float(np.abs(a - b).max() / max(np.abs(b).max(), 1e-300))  # noqa: E731
    return rel(G, gn), rel(H, Hn), float(np.abs(H - H.T).max())


def _many(kinds, n, rng, curve=False):
    """A term of ``n`` independent random stencils of ``kinds`` (soft), rest at ``q``; and a
    perturbed ``q``."""
    cases = [(curve_case if curve else point_case)(kinds, rng=rng) for _ in range(n)]
    k = cases[0].q.size
    q = np.concatenate([c.q for c in cases])
    dofs = np.arange(n * k).reshape(n, k)
    ts = np.concatenate([c.t_start[:len(c.rod_pairs)] for c in cases])
    a1 = np.concatenate([c.a1_start[:len(c.rod_pairs)] for c in cases])
    nr = len(cases[0].rod_pairs)
    rod = {} if not nr else dict(rod_edge=np.arange(n * nr).reshape(n, nr), a1_start=a1,
                                 t_start=ts)
    if curve:
        term = CurveJointTerm(kinds=kinds, dofs=dofs, stiffness=np.ones(n),
                              rest_length=np.ones(n), **rod)
    else:
        if nr:
            rod["rod_forward"] = np.array([[a == 0 for a, _ in c.rod_pairs] for c in cases])
        term = PointJointTerm(kinds=kinds, dofs=dofs, twist_stiffness=np.ones(n),
                              bend_stiffness=np.ones(n), **rod)
    term.set_rest(q)
    return term, q + 0.1 * rng.normal(size=q.size)


def main():
    """Print the figures of docs/mixed.md (Connections): derivative errors and timings."""
    import time  # CPU time of this process: the development machine is shared
    rng = np.random.default_rng(0)
    worst = [0.0, 0.0]
    for kinds in POINT_KINDS:
        for hard in (False, True):
            c = point_case(kinds, rng=rng, hard=hard)
            e = fd_errors(c.term, c.q + 0.15 * rng.normal(size=c.q.size))
            worst = [max(worst[0], e[0]), max(worst[1], e[1])]
    for kinds in (("rod", "triangle"), ("triangle", "triangle")):
        for hard in (False, True):
            c = curve_case(kinds, rng=rng, hard=hard)
            e = fd_errors(c.term, c.q + 0.15 * rng.normal(size=c.q.size))
            worst = [max(worst[0], e[0]), max(worst[1], e[1])]
    print(f"largest relative error vs central differences: gradient {worst[0]:.1e}, "
          f"Hessian {worst[1]:.1e}")
    n = 2000
    for kinds, curve in ((("rod", "triangle"), False), (("tet", "tet"), False),
                         (("rod", "triangle"), True), (("triangle", "triangle"), True)):
        term, q = _many(kinds, n, rng, curve)
        for hess in (False, True):
            evaluate(term, q, hess)
            t0 = time.process_time()
            for _ in range(5):
                evaluate(term, q, hess)
            us = (time.process_time() - t0) / 5 / n * 1e6
            print(f"{'curve' if curve else 'point'} {kinds[0]}-{kinds[1]} "
                  f"({term.dofs.shape[1]} slots), {'with' if hess else 'without'} Hessian: "
                  f"{us:.2f} us per stencil")


if __name__ == "__main__":
    main()
