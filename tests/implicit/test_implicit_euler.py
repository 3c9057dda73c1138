"""ImplicitEuler on toy models: analytic backward Euler results, Newton convergence, Dirichlet
DOFs, conservation, regularisation, errors."""
from __future__ import annotations

import numpy as np
import pytest
from implicit_toys import QuadraticTerm, SpringTerm, ToySystem, chain_springs, objective

from strandlab.implicit import (
    ImplicitEuler,
    ImplicitStepError,
    NewtonSettings,
    static_equilibrium,
)


def oscillators(k, m, kind="banded", **settings):
    """Independent 1-DOF oscillators ``E = k q^2 / 2`` (one block each)."""
    n = len(k)
    term = QuadraticTerm(np.arange(n)[:, None], np.asarray(k, float)[:, None, None], name="osc")
    sys_ = ToySystem(n, m, [term], np.arange(n + 1))
    return ImplicitEuler(sys_, NewtonSettings(**settings), linear_solver=kind)


@pytest.mark.parametrize("kind", ["banded", "sparse"])
def test_undamped_oscillator_energy_factor(kind):
    """Backward Euler multiplies a linear oscillator's energy by exactly 1 / (1 + w^2 h^2) per
    step, whatever the phase: (w q, v) is rotated and scaled by 1 / sqrt(1 + w^2 h^2)."""
    k = np.array([1.0, 40.0, 900.0, 1e4])
    m = np.array([1.0, 0.5, 2.0, 0.01])
    integ = oscillators(k, m, kind)
    h = 0.02
    q, v = np.array([0.1, -0.3, 0.02, 1e-3]), np.array([0.0, 1.0, -2.0, 0.5])
    w2 = k / m
    for _ in range(20):
        e0 = 0.5 * m * v**2 + 0.5 * k * q**2
        integ.step(q, v, q, v, h)
        e1 = 0.5 * m * v**2 + 0.5 * k * q**2
        # one exact Newton step on a quadratic objective: only round-off (relative 1e-15)
        np.testing.assert_allclose(e1 / e0, 1.0 / (1.0 + w2 * h * h), rtol=1e-12)


@pytest.mark.parametrize("damping", ["mass", "stiffness"])
def test_damped_oscillator_step_map(damping):
    """One-step map G of q'' + c q' + w^2 q = 0: det G = 1 / D, tr G = (2 + c h) / D with
    D = 1 + c h + w^2 h^2; stiffness damping beta acts as c = beta w^2."""
    k = np.array([4.0, 100.0, 2500.0])
    m = np.array([1.0, 1.0, 0.1])
    w2 = k / m
    h = 0.01
    if damping == "mass":
        c = np.full(3, 3.0)
        integ = oscillators(k, m, mass_damping=3.0)
    else:
        beta = 2e-3
        c = beta * w2
        integ = oscillators(k, m, stiffness_damping=beta)
    cols = []
    for q0, v0 in [(1.0, 0.0), (0.0, 1.0)]:
        q, v = np.full(3, q0), np.full(3, v0)
        integ.step(q, v, q, v, h)
        cols.append((q.copy(), v.copy()))
    G = np.array([[cols[0][0], cols[1][0]], [cols[0][1], cols[1][1]]])  # [2, 2, 3]
    det = G[0, 0] * G[1, 1] - G[0, 1] * G[1, 0]
    D = 1 + c * h + w2 * h * h
    np.testing.assert_allclose(det, 1 / D, rtol=1e-12)
    np.testing.assert_allclose(G[0, 0] + G[1, 1], (2 + c * h) / D, rtol=1e-12)


def spring_chains(n_chains=4, n_points=8, seed=0, k=50.0, rest=0.1, mass=0.02):
    rng = np.random.default_rng(seed)
    pairs, k, rest = chain_springs(n_chains, n_points, k=k, rest=rest)
    n = 3 * n_chains * n_points
    x = np.zeros((n_chains * n_points, 3))
    x[:, 0] = np.tile(np.arange(n_points) * rest, n_chains)
    x[:, 1] = np.repeat(np.arange(n_chains), n_points)
    x += 0.03 * rng.normal(size=x.shape)
    sys_ = ToySystem(n, np.full(n, mass), [], np.arange(n_chains + 1) * 3 * n_points)
    sys_.terms.append(SpringTerm(pairs, k, rest, system=sys_))
    return sys_, x.reshape(-1), 0.5 * rng.normal(size=n)


def test_banded_and_sparse_agree_one_newton_step():
    out = {}
    for kind in ("banded", "sparse"):
        sys_, q, v = spring_chains()
        integ = ImplicitEuler(sys_, linear_solver=kind)
        assert integ.linear_solver.kind == kind
        info = integ.step(q, v, q, v, 0.01)
        assert info.iterations == 1 and info.converged is None and info.evaluations == 1
        out[kind] = q
        assert sys_.unprepared == 0 and sys_.begin_calls == 1
    # same linear system, two factorisations: differences are round-off (cond ~ 1e3)
    np.testing.assert_allclose(out["banded"], out["sparse"], rtol=0, atol=1e-13)


def test_newton_converges_quadratically():
    sys_, q, v = spring_chains(n_chains=2, seed=1, k=50.0, mass=0.02)
    v *= 5.0  # far enough from the start that the first steps are damped by the line search
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-13, max_iterations=30))
    info = integ.step(q, v, q, v, 0.02)
    assert info.converged and sys_.unprepared == 0 and info.line_search_steps > 0
    r = np.array(info.residuals) / info.residuals[0]
    # quadratic rate: once e_k < 1e-3, e_{k+1} <= 100 e_k^2 (a linear rate would fail this)
    tail = [(a, b) for a, b in zip(r[:-1], r[1:]) if 1e-11 < a < 1e-3]
    assert tail, r
    for a, b in tail:
        assert b <= 100 * a * a, r


def test_at_rest_stays_at_rest():
    pairs, k, rest = chain_springs(2, 5, rest=0.125)  # exact in binary: zero forces
    x = np.zeros((10, 3))
    x[:, 0] = np.tile(np.arange(5) * rest, 2)
    x[5:, 2] = 1.0
    q = x.reshape(-1).copy()
    sys_ = ToySystem(30, np.full(30, 0.1), [SpringTerm(pairs, k, rest)], [0, 15, 30])
    for settings in (NewtonSettings(), NewtonSettings(tolerance=1e-10)):
        integ = ImplicitEuler(sys_, settings)
        q1, v1 = np.zeros(30), np.zeros(30)
        info = integ.step(q, np.zeros(30), q1, v1, 0.01)
        np.testing.assert_array_equal(q1, q)
        np.testing.assert_array_equal(v1, 0.0)
        assert info.residual == 0.0


@pytest.mark.parametrize("settings", [NewtonSettings(),
                                      NewtonSettings(tolerance=1e-13, max_iterations=40)])
def test_free_system_conserves_linear_momentum(settings):
    """Internal forces only: the gradient of E sums to zero per direction (translation
    invariance), and so do the columns of K, so one linearised step and a converged Newton
    solve both keep sum(m v); the mass varies per point to make the check non-trivial."""
    sys_, q, v = spring_chains(n_chains=1, n_points=12, seed=3)
    sys_.mass = np.repeat(np.linspace(0.05, 0.2, 12), 3)
    sys_.block_start = np.array([0, 36])
    integ = ImplicitEuler(sys_, settings)
    p0 = (sys_.mass * v).reshape(-1, 3).sum(axis=0)
    scale = np.abs(sys_.mass * v).sum()
    for _ in range(5):
        info = integ.step(q, v, q, v, 0.01)
        assert info.shifted_blocks == 0  # a shift would break the column sums of A
    p1 = (sys_.mass * v).reshape(-1, 3).sum(axis=0)
    np.testing.assert_allclose(p1, p0, rtol=0, atol=1e-12 * scale)


@pytest.mark.parametrize("kind", ["banded", "sparse"])
def test_free_fall(kind):
    """No terms, f = m g: backward Euler gives v + h g and q + h v + h^2 g exactly."""
    n = 12
    m = np.linspace(0.1, 1.0, n)
    g = np.tile([0.0, 0.0, -9.81], 4)
    sys_ = ToySystem(n, m, [], [0, 6, 12])
    integ = ImplicitEuler(sys_, linear_solver=kind)
    q, v = np.linspace(0, 1, n), np.linspace(-1, 1, n)
    q1, v1 = np.zeros(n), np.zeros(n)
    h = 0.01
    integ.step(q, v, q1, v1, h, f_ext=m * g)
    np.testing.assert_allclose(q1, q + h * v + h * h * g, rtol=0, atol=1e-15)
    np.testing.assert_allclose(v1, v + h * g, rtol=0, atol=1e-12)


def test_unstretched_chain_falls_freely():
    sys_, q, _ = spring_chains(n_chains=3, seed=4)
    x = q.reshape(-1, 3)
    sys_.terms[0].rest = np.linalg.norm(x[sys_.terms[0].dofs[:, 3] // 3]
                                        - x[sys_.terms[0].dofs[:, 0] // 3], axis=1)
    g = np.tile([0.0, 0.0, -9.81], len(x))
    v = np.tile([0.3, -0.1, 0.2], len(x))
    q1, v1 = np.zeros_like(q), np.zeros_like(q)
    ImplicitEuler(sys_).step(q, v, q1, v1, 0.01, f_ext=sys_.mass * g)
    np.testing.assert_allclose(q1, q + 0.01 * v + 1e-4 * g, rtol=0, atol=1e-14)


def test_fixed_dofs_follow_their_targets():
    sys_, q, v = spring_chains(n_chains=2, seed=5)
    fixed = np.zeros(len(q), bool)
    fixed[0:3] = True  # first point of chain 0
    fixed[24 + 21:24 + 24] = True  # last point of chain 1
    target = q + 0.01
    for kind in ("banded", "sparse"):
        integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-12), linear_solver=kind)
        q1, v1 = np.zeros_like(q), np.zeros_like(q)
        info = integ.step(q, v, q1, v1, 0.01, fixed=fixed, q_fixed=target)
        assert info.converged
        np.testing.assert_array_equal(q1[fixed], target[fixed])
        np.testing.assert_allclose(v1[fixed], 1.0, rtol=1e-12)
        q2, v2 = np.zeros_like(q), np.zeros_like(q)
        integ.step(q, v, q2, v2, 0.01, fixed=fixed)  # held at q_n
        np.testing.assert_array_equal(q2[fixed], q[fixed])
        np.testing.assert_array_equal(v2[fixed], 0.0)


def _carried_chains(stiffness=5e4):
    """Unstretched spring chains (stiff: a hair-like ratio of stretching to inertia) whose
    first point is held and moving with the whole chain at one velocity, transverse to the
    first spring."""
    sys_, q, _ = spring_chains(n_chains=2, seed=6, k=stiffness)
    x = q.reshape(-1, 3)
    t = sys_.terms[0]
    t.rest = np.linalg.norm(x[t.dofs[:, 3] // 3] - x[t.dofs[:, 0] // 3], axis=1)
    fixed = np.zeros(len(q), bool)
    fixed[0:3] = True            # first point of chain 0
    fixed[24:27] = True          # first point of chain 1
    e = x[1] - x[0]
    u = np.cross(e, [0.0, 0.0, 1.0])
    vel = 2.0 * u / np.linalg.norm(u)          # 2 m/s across the first spring of chain 0
    return sys_, q, np.tile(vel, len(x)), fixed, t.rest


def _lengths(q, pairs):
    x = q.reshape(-1, 3)
    return np.linalg.norm(x[pairs[:, 1]] - x[pairs[:, 0]], axis=1)


@pytest.mark.parametrize("kind", ["banded", "sparse"])
def test_one_newton_step_carries_a_chain_rigidly_with_its_held_end(kind):
    """Linearised at q_n with the held DOFs' increments in the right-hand side, one Newton step
    moves a chain carried at constant velocity by its held end rigidly (K times a translation
    is zero), to round-off.  Setting the held point first and linearising there stretches a
    spring by the tangent's error, up to 3.6e-3 here (measured; integrator docstring)."""
    sys_, q, v, fixed, rest = _carried_chains()
    pairs = sys_.terms[0].dofs[:, [0, 3]] // 3
    h = 0.01
    integ = ImplicitEuler(sys_, linear_solver=kind)
    for _ in range(20):
        info = integ.step(q, v, q, v, h, fixed=fixed, q_fixed=q + h * v)
        assert info.iterations == 1
    strain = np.abs(_lengths(q, pairs) / rest - 1.0).max()
    assert strain < 1e-12
    np.testing.assert_allclose(v, np.tile(v[:3], len(q) // 3), rtol=0, atol=1e-10)
    # with the line search on, the held point is set first (its merit needs it there): the
    # same step then strains the chain (3.6e-3 measured, the full step accepted)
    sys_, q, v, fixed, rest = _carried_chains()
    integ = ImplicitEuler(sys_, NewtonSettings(line_search=True), linear_solver=kind)
    worst = 0.0
    for _ in range(20):
        info = integ.step(q, v, q, v, h, fixed=fixed, q_fixed=q + h * v)
        worst = max(worst, np.abs(_lengths(q, pairs) / rest - 1.0).max())
    print(f"\ncarried chain: strain {strain:.1e} linearised at q_n, {worst:.1e} with the held "
          "point set first")
    assert worst > 1e-3


def test_fixed_count_steps_put_the_held_dofs_on_their_targets():
    sys_, q, v = spring_chains(n_chains=2, seed=5)
    fixed = np.zeros(len(q), bool)
    fixed[0:3] = True
    fixed[24 + 21:24 + 24] = True
    target = q + 0.01
    for iterations in (1, 2):
        integ = ImplicitEuler(sys_, NewtonSettings(iterations=iterations))
        q1, v1 = np.zeros_like(q), np.zeros_like(q)
        info = integ.step(q, v, q1, v1, 0.01, fixed=fixed, q_fixed=target)
        assert info.iterations == iterations
        np.testing.assert_array_equal(q1[fixed], target[fixed])
        np.testing.assert_allclose(v1[fixed], 1.0, rtol=1e-12)


def test_first_step_with_moving_held_dofs_is_the_linear_solve_at_the_start():
    """The fixed-count step is ``A_ff dx_f = -(g_f + A_fh dh)`` with everything at q_n (``A``
    the Newton matrix at q_n, with mass and stiffness damping), written out here with the dense
    Hessian."""
    sys_, q, v = spring_chains(n_chains=2, seed=7)
    fixed = np.zeros(len(q), bool)
    fixed[0:3] = True
    fixed[24:27] = True
    rng = np.random.default_rng(8)
    target = q + np.where(fixed, 0.02 * rng.normal(size=len(q)), 0.0)
    h, c, beta = 0.01, 0.5, 2e-3
    integ = ImplicitEuler(sys_, NewtonSettings(mass_damping=c, stiffness_damping=beta))
    q1, v1 = np.zeros_like(q), np.zeros_like(q)
    integ.step(q, v, q1, v1, h, fixed=fixed, q_fixed=target)
    # the reference: gradient and Hessian of Phi at q_n
    t = sys_.terms[0]
    n, k = t.dofs.shape
    en, g, hs = np.zeros(n), np.zeros((n, k)), np.zeros((n, k, k))
    t.evaluate(q, en, g, hs)
    K = np.zeros((len(q), len(q)))
    grad = np.zeros(len(q))
    for s_ in range(n):
        np.add.at(K, (t.dofs[s_][:, None], t.dofs[s_][None, :]), hs[s_])
        np.add.at(grad, t.dofs[s_], g[s_])
    m = sys_.mass
    grad += m * (1.0 / h ** 2) * (q - (q + h * v))
    A = (1.0 + beta / h) * K + np.diag(m * (1.0 / h ** 2 + c / h))
    f_, h_ = ~fixed, fixed
    dh = (target - q)[h_]
    dx = np.linalg.solve(A[np.ix_(f_, f_)], -(grad[f_] + A[np.ix_(f_, h_)] @ dh))
    np.testing.assert_allclose(q1[f_], q[f_] + dx, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(q1[h_], target[h_])


def test_indefinite_hessian_is_shifted_and_phi_decreases():
    """Springs compressed to half their rest length: transverse stiffness -k, larger than
    m / h^2, so the Newton matrix is indefinite; the shift makes a descent direction and the
    line search a decrease of Phi (computed here from its definition)."""
    n_pts = 6
    x = np.zeros((n_pts, 3))
    x[:, 0] = np.arange(n_pts) * 0.05
    x[:, 1] = 0.002 * np.sin(np.arange(n_pts))
    pairs = np.array([(i, i + 1) for i in range(n_pts - 1)])
    term = SpringTerm(pairs, 100.0, 0.1)
    n = 3 * n_pts
    mass = np.full(n, 1e-3)
    sys_ = ToySystem(n, mass, [term], [0, n])
    q = x.reshape(-1)
    v = np.zeros(n)
    h = 0.05  # m / h^2 = 0.4 << k
    for kind in ("banded", "sparse"):
        integ = ImplicitEuler(sys_, NewtonSettings(iterations=1, line_search=True),
                              linear_solver=kind)
        q1, v1 = np.zeros(n), np.zeros(n)
        info = integ.step(q, v, q1, v1, h)
        assert info.shifted_blocks >= 1 and info.max_shift > 0
        phi0 = objective([term], q, q + h * v, q, mass, h)
        phi1 = objective([term], q1, q + h * v, q, mass, h)
        assert phi1 < phi0 - 1e-3 * abs(phi0)


def test_moving_held_end_of_a_compressed_chain_at_rest_gets_a_shifted_step():
    """A straight chain of springs compressed to half their rest length, at rest in
    equilibrium between its held ends (zero gradient), its Newton matrix indefinite; one end
    moves across: the first step's right-hand side is then the held increment's coupling alone,
    and the indefinite matrix is shifted (regularised) for that step."""
    n_pts = 6
    x = np.zeros((n_pts, 3))
    x[:, 0] = np.arange(n_pts) * 0.0625      # binary fractions: the forces cancel exactly
    pairs = np.array([(i, i + 1) for i in range(n_pts - 1)])
    term = SpringTerm(pairs, 100.0, 0.125)
    n = 3 * n_pts
    sys_ = ToySystem(n, np.full(n, 1e-3), [term], [0, n])
    q = x.reshape(-1)
    fixed = np.zeros(n, bool)
    fixed[:3] = True
    fixed[-3:] = True
    target = q.copy()
    target[-2] += 0.01
    integ = ImplicitEuler(sys_)
    q1, v1 = np.zeros(n), np.zeros(n)
    info = integ.step(q, np.zeros(n), q1, v1, 0.05, fixed=fixed, q_fixed=target)
    assert info.residual_initial == 0.0
    assert info.shifted_blocks >= 1 and info.max_shift > 0
    np.testing.assert_array_equal(q1[fixed], target[fixed])
    assert np.abs(q1 - q)[~fixed].max() > 1e-4            # the chain follows its moved end


def test_static_hanging_chain():
    """Vertical chain hanging from a fixed point: the spring above free point i carries the
    weight of the points from i down, so z_{i+1} = z_i - (L + T_i / k)."""
    n_pts, k, L, m, g = 8, 30.0, 0.1, 0.02, 9.81
    pairs = np.array([(i, i + 1) for i in range(n_pts - 1)])
    term = SpringTerm(pairs, k, L)
    n = 3 * n_pts
    x = np.zeros((n_pts, 3))
    x[:, 2] = -np.arange(n_pts) * L
    x[1::2, 0] = 0.03  # start zig-zag
    q = x.reshape(-1).copy()
    fixed = np.zeros(n, bool)
    fixed[:3] = True
    f = np.tile([0.0, 0.0, -m * g], n_pts)
    sys_ = ToySystem(n, np.full(n, m), [term], [0, n])
    info = static_equilibrium(sys_, q, fixed, f, tolerance=1e-12)
    assert info.converged
    z = [0.0]
    for i in range(n_pts - 1):
        z.append(z[-1] - (L + (n_pts - 1 - i) * m * g / k))
    np.testing.assert_allclose(q.reshape(-1, 3)[:, 2], z, rtol=0, atol=1e-10)
    np.testing.assert_allclose(q.reshape(-1, 3)[:, :2], 0.0, atol=1e-10)


def test_errors_are_named():
    for opt, val in [("iterations", 0), ("iterations", 1.5), ("tolerance", -1.0),
                     ("atol", -1.0), ("max_iterations", 0), ("line_search", "yes"),
                     ("armijo", 1.0), ("backtrack", 0.0), ("max_backtracks", 0),
                     ("mass_damping", -0.1), ("stiffness_damping", float("nan"))]:
        with pytest.raises(ValueError, match=f"NewtonSettings.{opt}"):
            NewtonSettings(**{opt: val})
    term = QuadraticTerm(np.array([[0, 1], [2, 3]]), np.tile(np.eye(2), (2, 1, 1)),
                         x0=np.array([[0.0, 0.0], [np.nan, 0.0]]), name="bad")
    sys_ = ToySystem(4, np.ones(4), [term], [0, 2, 4])
    integ = ImplicitEuler(sys_)
    z = np.zeros(4)
    with pytest.raises(ImplicitStepError, match="term 'bad' gave a non-finite energy at "
                                                "stencil 1 \\(block 1\\)") as exc:
        integ.step(z, z.copy(), np.zeros(4), np.zeros(4), 0.01)
    assert exc.value.block == 1
    sys_ = ToySystem(4, [1.0, 1.0, 0.0, 1.0], [], [0, 2, 4])
    integ = ImplicitEuler(sys_)
    with pytest.raises(ImplicitStepError, match="DOF 2 \\(block 1\\) is free but has mass 0"):
        integ.step(z, z.copy(), np.zeros(4), np.zeros(4), 0.01)
    fixed = np.array([False, False, True, False])
    integ.step(z, z.copy(), np.zeros(4), np.zeros(4), 0.01, fixed=fixed)  # fixed: fine
    with pytest.raises(ValueError, match="time step h"):
        integ.step(z, z.copy(), np.zeros(4), np.zeros(4), 0.0)
    with pytest.raises(ValueError, match="q_out must be"):
        integ.step(z, z.copy(), np.zeros(3), np.zeros(4), 0.01)
    with pytest.raises(TypeError, match="lacks the member 'prepare'"):
        ImplicitEuler(type("S", (), {"n_dofs": 1, "mass": np.ones(1), "terms": [],
                                     "block_start": [0, 1], "begin_step": None})())


def test_converged_step_solves_the_damped_equations():
    """Tolerance mode with mass and stiffness damping and a load: the result satisfies, on the
    free DOFs, M (v1 - v0) / h = -grad E(q1) + f - c M v1 - beta K(q1) v1, with grad E and K
    assembled here by np.add.at from the term's own per-stencil values."""
    sys_, q0, v0 = spring_chains(n_chains=2, seed=6)
    c, beta, h = 2.0, 5e-3, 0.02
    fixed = np.zeros(len(q0), bool)
    fixed[:3] = True
    f = np.tile([0.1, 0.0, -0.3], len(q0) // 3)
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-12, mass_damping=c,
                                               stiffness_damping=beta), linear_solver="sparse")
    q1, v1 = np.zeros_like(q0), np.zeros_like(q0)
    info = integ.step(q0, v0, q1, v1, h, f_ext=f, fixed=fixed)
    assert info.converged and info.iterations >= 2
    t = sys_.terms[0]
    n, k = t.dofs.shape
    e, g, H = np.zeros(n), np.zeros((n, k)), np.zeros((n, k, k))
    sys_._prepared = q1.copy()
    t.evaluate(q1, e, g, H)
    grad = np.zeros(len(q0))
    np.add.at(grad, t.dofs.reshape(-1), g.reshape(-1))
    K = np.zeros((len(q0), len(q0)))
    for s in range(n):
        K[np.ix_(t.dofs[s], t.dofs[s])] += H[s]
    m = sys_.mass
    r = m * (v1 - v0) / h + grad - f + c * m * v1 + beta * K @ v1
    free = ~fixed
    scale = np.abs(m * v0 / h).max()
    assert np.abs(r[free]).max() < 1e-9 * scale


def test_linear_solver_instance_and_options():
    from strandlab.implicit import Assembly, make_linear_solver

    sys_, q, v = spring_chains(n_chains=2, seed=7)
    asm = Assembly(sys_.terms, sys_.n_dofs, sys_.block_start)
    sol = make_linear_solver(asm, "banded", shift_max=1e3)
    integ = ImplicitEuler(sys_, linear_solver=sol)
    assert integ.linear_solver is sol and integ.assembly is asm
    q1, v1 = np.zeros_like(q), np.zeros_like(q)
    integ.step(q, v, q1, v1, 0.01)
    ref = ImplicitEuler(sys_, linear_solver="banded")
    q2, v2 = np.zeros_like(q), np.zeros_like(q)
    ref.step(q, v, q2, v2, 0.01)
    np.testing.assert_array_equal(q1, q2)
    with pytest.raises(ValueError, match="shift_growth must be finite and > 1"):
        ImplicitEuler(sys_, solver_options={"shift_growth": 1.0})
    other = Assembly([], sys_.n_dofs, sys_.block_start)
    with pytest.raises(ValueError, match="made for other terms"):
        ImplicitEuler(sys_, linear_solver=make_linear_solver(other))


class SqrtTerm(QuadraticTerm):
    """E = sqrt(1 + x^2) per DOF: convex, but a Newton step maps x to -x^3, so from |x| > 1
    a full step increases E."""

    def evaluate(self, q, energy_out, grad_out, hess_out):
        x = q[self.dofs[:, 0]]
        r = np.sqrt(1 + x * x)
        energy_out[:] = r
        grad_out[:, 0] = x / r
        if hess_out is not None:
            hess_out[:, 0, 0] = r**-3


def test_line_search_backtracks_to_the_armijo_point():
    """From x = 2 the Newton step is dx = x (1 + x^2) = 10: trials x = -8 (E = 8.06) and
    x = -3 (E = 3.16) increase E = sqrt(5) = 2.24; x = -0.5 (E = 1.12) meets Armijo.  Then
    Newton converges to the minimum x = 0."""
    term = SqrtTerm(np.array([[0]]), np.ones((1, 1, 1)), name="sqrt")
    sys_ = ToySystem(1, np.ones(1), [term], [0, 1])
    q = np.array([2.0])
    info = static_equilibrium(sys_, q, max_iterations=1)
    assert info.line_search_steps == 2 and info.min_step == 0.25
    assert q[0] == -0.5
    info = static_equilibrium(sys_, q, tolerance=1e-12)
    assert info.converged and abs(q[0]) < 1e-12
    # without the line search (and negligible inertia) the full step lands at -x^3 = -8
    q = np.array([2.0])
    ImplicitEuler(sys_, NewtonSettings(line_search=False)).step(q, np.zeros(1), q, np.zeros(1),
                                                                1e8)
    assert q[0] == pytest.approx(-8.0, rel=1e-12)


class HalfMoveTerm(QuadraticTerm):
    """No energy; admits half of every move (``limits_step``) and records the moves asked."""

    limits_step = True

    def __init__(self, n):
        super().__init__(np.arange(n)[:, None], np.zeros((n, 1, 1)), name="half moves")
        self.asked = []

    def max_step(self, q, dq):
        self.asked.append((q.copy(), dq.copy()))
        return 0.5


def test_moves_limited_by_a_term():
    """A term with ``limits_step`` cuts the inertial first iterate and every Newton move to
    the part it admits (here half); fixed DOFs still go to their targets.  A free particle:
    the first iterate is ``q_n + h v / 2``, one Newton step (the exact step to ``q_n + h v``)
    is cut to half of it."""
    term = HalfMoveTerm(3)
    sys_ = ToySystem(3, np.ones(3), [term], [0, 3])
    q0, v0, h = np.array([0.1, -0.2, 0.3]), np.array([1.0, 2.0, -4.0]), 0.01
    fixed = np.array([False, False, True])
    target = np.array([0.0, 0.0, 0.25])
    integ = ImplicitEuler(sys_, NewtonSettings(initial_guess="inertial"), linear_solver="sparse")
    q, v = np.zeros(3), np.zeros(3)
    info = integ.step(q0, v0, q, v, h, fixed=fixed, q_fixed=target)
    assert info.limited_moves == 2 and len(term.asked) == 2
    np.testing.assert_allclose(term.asked[0][1][:2], h * v0[:2], rtol=1e-15)   # the guess
    first = q0[:2] + 0.5 * h * v0[:2]
    np.testing.assert_allclose(term.asked[1][0][:2], first, rtol=1e-15)
    np.testing.assert_allclose(term.asked[1][1][:2], q0[:2] + h * v0[:2] - first, rtol=1e-12)
    assert term.asked[1][1][2] == 0.0                      # fixed DOFs do not move in Newton
    np.testing.assert_allclose(q[:2], q0[:2] + 0.75 * h * v0[:2], rtol=1e-12)
    assert q[2] == target[2]
    # with a tolerance: each move halves the error, the line search starts at the cut step
    term.asked.clear()
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-6, initial_guess="inertial",
                                               max_iterations=60), linear_solver="sparse")
    info = integ.step(q0, v0, q, v, h, fixed=fixed, q_fixed=target)
    assert info.converged and info.line_search_steps == 0 and info.min_step == 0.5
    assert info.iterations >= 15 and info.limited_moves == info.iterations + 1
    np.testing.assert_allclose(q[:2], q0[:2] + h * v0[:2], rtol=1e-6)
    assert q[2] == target[2]
    # a term that limits nothing is never asked
    plain = ImplicitEuler(ToySystem(3, np.ones(3), [QuadraticTerm(np.arange(3)[:, None],
                                                                  np.zeros((3, 1, 1)))], [0, 3]),
                          NewtonSettings(initial_guess="inertial"), linear_solver="sparse")
    info = plain.step(q0, v0, q, v, h)
    assert info.limited_moves == 0
    np.testing.assert_allclose(q, q0 + h * v0, rtol=1e-12)


class _BaseSystem(ToySystem):
    """A toy system with the optional ``accept`` hook; logs the hooks and the evaluations of a
    term that reads the base."""

    def __init__(self, *args):
        super().__init__(*args)
        self.log = []

    def prepare(self, q):
        super().prepare(q)
        self.log.append(("prepare", q.copy()))

    def accept(self, q):
        self.check_prepared(q)                   # prepared at q, nothing else since
        self.log.append(("accept", q.copy()))


class _BaseTerm(QuadraticTerm):
    reads_base = True

    def __init__(self, system, dofs, hess):
        super().__init__(dofs, hess, name="base")
        self.system = system

    def evaluate(self, q, energy_out, grad_out, hess_out):
        self.system.log.append(("base term", q.copy(), hess_out is not None))
        super().evaluate(q, energy_out, grad_out, hess_out)


def _base_system():
    sys_, q, v = spring_chains(n_chains=2, seed=1, k=50.0, mass=0.02)
    base = _BaseTerm(sys_, np.arange(3)[None, :], np.eye(3)[None] * 2.0)
    sys_ = _BaseSystem(sys_.n_dofs, sys_.mass, sys_.terms, sys_.block_start)
    sys_.terms[0].system = sys_
    base.system = sys_
    sys_.terms.append(base)
    return sys_, q, 5.0 * v


def test_accept_rebases_after_each_accepted_move():
    # tolerance mode (line search): accept after every move, at the accepted (prepared)
    # iterate, then the term reading the base evaluated again there with its Hessian
    sys_, q, v = _base_system()
    info = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-12, max_iterations=30)).step(
        q, v, q, v, 0.02)
    assert info.converged and sys_.unprepared == 0
    acc = [k for k, e in enumerate(sys_.log) if e[0] == "accept"]
    assert len(acc) == info.iterations
    for k in acc:
        after = sys_.log[k + 1]
        assert after[0] == "base term" and after[2] and np.array_equal(after[1], sys_.log[k][1])
    np.testing.assert_array_equal(sys_.log[acc[-1]][1], q)
    # the trial point's evaluation left the base term's Hessian out (evaluated again once
    # accepted): one Hessian of it at the start and one per accepted move
    for k in acc:
        trial = next(e for e in reversed(sys_.log[:k]) if e[0] == "base term")
        assert not trial[2] and np.array_equal(trial[1], sys_.log[k][1])
    with_hessian = [e for e in sys_.log if e[0] == "base term" and e[2]]
    assert len(with_hessian) == info.iterations + 1
    # fixed count without line search: accept after each move but the last (not evaluated),
    # the move's iterate prepared once and evaluated next
    sys_, q, v = _base_system()
    info = ImplicitEuler(sys_, NewtonSettings(iterations=3)).step(q, v, q, v, 0.02)
    assert sys_.unprepared == 0 and info.evaluations == 3 and sys_.prepare_calls == 3
    acc = [k for k, e in enumerate(sys_.log) if e[0] == "accept"]
    assert len(acc) == 2
    for k in acc:
        assert sys_.log[k - 1][0] == "prepare" and sys_.log[k + 1][0] == "base term"


@pytest.mark.parametrize("offset", [0.0, 1e4])
def test_static_solve_far_from_the_origin_converges_as_at_the_origin(offset):
    # a triangle of springs (one corner held, one sliding along x) under a couple of 2 kN
    # along x: the load terms f_j q_j of the merit, about 2e7 J each 10 km from the origin,
    # cancel, and their round-off (about 4e-9 J) exceeds the merit's decrease near
    # convergence; the line search's slack allows for it, so the solve takes the same Newton
    # steps there as at the origin (without it: 100 iterations, hundreds of backtracks)
    x = np.array([[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.5, 0.8, 0.0]]) + [offset, 0.0, 0.0]
    side = float(np.hypot(0.5, 0.8))
    term = SpringTerm([[0, 1], [1, 2], [0, 2]], 1e4, [1.0, side, side])
    sys_ = ToySystem(9, np.ones(9), [term], [0, 9])
    fixed = np.zeros(9, bool)
    fixed[[0, 1, 2, 4, 5, 8]] = True
    f = np.zeros(9)
    f[3], f[6] = -2e3, 2e3
    q = x.ravel().copy()
    info = static_equilibrium(sys_, q, fixed, f, tolerance=1e-10)
    assert info.converged and info.line_search_steps == 0 and info.iterations == 13, info
    p = q.reshape(3, 3) - [offset, 0.0, 0.0]
    assert p[1, 0] < 1.0 and p[2, 0] > 0.5          # corner 1 pushed in, corner 2 out


def test_predicts_convergence_from_the_quadratic_rate():
    from strandlab.implicit.integrator import PREDICT_MARGIN, _predicts_convergence

    assert not _predicts_convergence([1.0], 1e-6, 0.0)                    # no rate yet
    assert _predicts_convergence([1.0, 1e-3], 1e-6, 0.0)                 # next ~1e-9
    assert not _predicts_convergence([1.0, 1e-2], 1e-6, 0.0)             # next ~1e-6
    assert not _predicts_convergence([1e-3, 1e-2], 1e-6, 0.0)            # not contracting
    assert not _predicts_convergence([1e-9, 2e-9], 1e-6, 0.0)
    assert _predicts_convergence([1.0, 1e-2], 0.0, 1e-4)                 # atol counts
    # the margin: the predicted 1e-9 must be at most PREDICT_MARGIN times the tolerance
    assert _predicts_convergence([1.0, 1e-3], 1e-9 / PREDICT_MARGIN, 0.0)
    assert not _predicts_convergence([1.0, 1e-3], 0.99e-9 / PREDICT_MARGIN, 0.0)


class _CountingSprings(SpringTerm):
    """Springs that count their evaluations with and without Hessians."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls = {True: 0, False: 0}

    def evaluate(self, q, energy_out, grad_out, hess_out):
        self.calls[hess_out is not None] += 1
        super().evaluate(q, energy_out, grad_out, hess_out)


def _counting_chains():
    sys_, q, v = spring_chains(n_chains=2, seed=3, k=50.0, mass=0.02)
    old = sys_.terms[0]
    sys_.terms[0] = _CountingSprings(old.dofs[:, ::3] // 3, old.k, old.rest, system=sys_)
    return sys_, q, 3.0 * v


def _predicting_step(monkeypatch, rule):
    import strandlab.implicit.integrator as integrator

    if rule is not None:
        monkeypatch.setattr(integrator, "_predicts_convergence", rule)
    sys_, q, v = _counting_chains()
    integ = ImplicitEuler(sys_, NewtonSettings(tolerance=1e-8, max_iterations=30))
    info = integ.step(q, v, q, v, 0.02)
    monkeypatch.undo()
    return q, info, sys_.terms[0].calls, integ.missed_predictions


def test_an_iterate_predicted_to_converge_is_checked_without_hessians(monkeypatch):
    q0, info0, calls0, _ = _predicting_step(monkeypatch, lambda *a: False)
    q1, info1, calls1, missed = _predicting_step(monkeypatch, None)
    assert info0.converged and info1.converged and missed == 0
    assert info1.iterations == info0.iterations >= 3 and info1.residuals == info0.residuals
    np.testing.assert_array_equal(q1, q0)             # the same iterates
    # the last iterate's Hessian, never used, is not computed
    assert calls1[True] == calls0[True] - 1 and calls1[False] == calls0[False] + 1
    # a prediction that misses (here: every iterate after the second) costs an evaluation
    # without Hessians, and the step goes on from the same iterate as before
    q2, info2, calls2, missed = _predicting_step(
        monkeypatch, lambda res, tol, atol: len(res) >= 2)
    assert missed >= 3
    np.testing.assert_array_equal(q2, q0)
    assert info2.iterations == info0.iterations and info2.residuals == info0.residuals
    assert sum(calls2.values()) >= sum(calls0.values()) + missed
