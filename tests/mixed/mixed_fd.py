"""Finite-difference checks of stencil terms, shared by the tests of the mixed model's elements
(imported as ``mixed_fd``).

Central differences of the per-stencil energy (for the gradient) and of the analytic gradient
(for the Hessian), one global coordinate at a time: perturbing ``q[d]`` by ``+-h`` changes the
stencils that hold ``d``, and each reads its own derivative from its own output row.  The error
is reported relative to the largest entry of the stencil's analytic gradient (Hessian).

Tolerance.  With a step ``h`` a fraction ``r`` of the smallest length ``l`` of the element, the
central difference errs by the truncation ``~ r^2 l^2 |f'''| / 6`` plus the rounding
``~ eps |f| / h``; relative to the derivative's size (``|f'| ~ |f| / l``, ``|f'''| ~ |f'| / l^2``
for a smooth element of size ``l``) both are ``~ r^2`` and ``~ eps / r``: about 1e-10 for
``r = 1e-5``.  The largest entry comes from the element's largest length ``L``, so a sliver of
aspect ``L / l`` loses that factor (or its square, for the Hessian) in relative terms: the
tests use ``rtol = 1e-6`` for regular elements and ``1e-5 .. 1e-4`` for slivers of aspect
1e-3 (always orders of magnitude below what a wrong term, factor or sign gives: >= 1e-2).
"""
from __future__ import annotations

import numpy as np

__all__ = ["evaluate", "fd_errors", "assert_exact_derivatives", "assert_twins_agree", "assembled"]


def evaluate(term, q, hess=True):
    """``(energy [n], grad [n, k], hess [n, k, k] or None)`` of ``term`` at ``q``."""
    n, k = term.dofs.shape
    e, g = np.zeros(n), np.zeros((n, k))
    h = np.zeros((n, k, k)) if hess else None
    term.evaluate(q, e, g, h)
    return e, g, h


def fd_errors(term, q, step):
    """Largest relative errors ``(gradient, Hessian)`` over the stencils of ``term`` at ``q``
    against central differences with ``step``."""
    e, g, H = evaluate(term, q)
    g_fd = np.zeros_like(g)
    H_fd = np.zeros_like(H)
    for d in np.unique(term.dofs):
        qp = q.copy()
        qm = q.copy()
        qp[d] += step
        qm[d] -= step
        ep, gp, _ = evaluate(term, qp, hess=False)
        em, gm, _ = evaluate(term, qm, hess=False)
        s, i = np.nonzero(term.dofs == d)
        g_fd[s, i] = (ep[s] - em[s]) / (2 * step)
        H_fd[s, :, i] = (gp[s] - gm[s]) / (2 * step)
    ge = np.max(np.abs(g - g_fd), axis=1) / np.max(np.abs(g), axis=1)
    he = np.max(np.abs(H - H_fd), axis=(1, 2)) / np.max(np.abs(H), axis=(1, 2))
    return float(ge.max()), float(he.max())


def assembled(term, q):
    """Total energy [J] and the assembled gradient [N] and Hessian [N, N] of ``term``."""
    e, g, H = evaluate(term, q)
    gq = np.zeros(len(q))
    np.add.at(gq, term.dofs, g)
    Hq = np.zeros((len(q), len(q)))
    np.add.at(Hq, (term.dofs[:, :, None], term.dofs[:, None, :]), H)
    return float(e.sum()), gq, Hq


def assert_exact_derivatives(term, q, step, rtol, *, amplitude=0.0, seed=1):
    """Gradient and Hessian at ``q`` (plus Gaussian noise of std ``amplitude`` [m]) within
    ``rtol`` of central differences, Hessian exactly symmetric."""
    q = q + amplitude * np.random.default_rng(seed).normal(size=q.shape)
    g_err, h_err = fd_errors(term, q, step)
    assert g_err < rtol, f"gradient error {g_err:.2e}"
    assert h_err < rtol, f"Hessian error {h_err:.2e}"
    H = evaluate(term, q)[2]
    assert np.array_equal(H, np.transpose(H, (0, 2, 1)))


def assert_twins_agree(term, q, kernels, args):
    """The parallel and serial kernels (``kernels``, called as ``kern(q, *args, e, g, H,
    True)`` on outputs prefilled with garbage) give the same values bit for bit, no
    degenerate stencil, and the term's own evaluation gives them too."""
    n, k = term.dofs.shape
    out = []
    for kern in kernels:
        e, g, H = np.full(n, 9.0), np.full((n, k), 9.0), np.full((n, k, k), 9.0)
        out.append((kern(q, *args, e, g, H, True), e, g, H))
    assert out[0][0] == out[1][0] == 0
    for a, b in zip(out[0][1:], out[1][1:]):
        assert np.array_equal(a, b)
    for a, b in zip(evaluate(term, q), out[0][1:]):
        assert np.array_equal(a, b)
