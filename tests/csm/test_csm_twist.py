"""Twisting (section 4): the twisting force against finite differences of the twisting energy,
frames carried with the particles, and twist averaging (eqs. 1-3)."""
import numpy as np
import pytest
from csm_helpers import solver_for, wiggly

from strandlab.csm.twist import average_twist, twist_energy, twist_forces, update_frames


def _twisted(seed=0, n=8):
    sol = solver_for(wiggly(n, seed=seed), options={"half_width": 2})
    st = sol.state()
    rng = np.random.default_rng(seed)
    st.arrays.theta[...] += rng.normal(scale=0.8, size=n)
    return sol, st


def _energy_at(sol, st, x_ref, theta_ref, u_ref, x):
    """Twisting energy after moving the particles from ``x_ref`` to ``x`` with the material
    frames carried along (the angles re-measured against the new twist-free frames)."""
    a = st.arrays
    a.x[...] = x
    a.theta[...] = theta_ref
    a.u[...] = u_ref
    update_frames(0, len(x) - 1, sol.model.arrays, a, x_ref, sol.scratch.twist_target)
    return twist_energy(0, len(x) - 1, sol.model.arrays, a)


@pytest.mark.parametrize("seed", [0, 1])
def test_twisting_force_is_minus_the_gradient_of_the_twisting_energy(seed):
    # eqs. (4)-(5): F = -dE/dx at fixed material frames (frames carried by the motion)
    sol, st = _twisted(seed)
    a = st.arrays
    x_ref, th, u = a.x.copy(), a.theta.copy(), a.u.copy()
    f = np.zeros_like(x_ref)
    e0 = twist_forces(0, len(x_ref) - 1, sol.model.arrays, a, f, np.zeros(len(f)))
    assert e0 > 0 and np.abs(f).max() > 0
    eps = 1e-7
    fd = np.zeros_like(f)
    for i in range(len(x_ref)):
        for r in range(3):
            xp, xm = x_ref.copy(), x_ref.copy()
            xp[i, r] += eps
            xm[i, r] -= eps
            fd[i, r] = -(_energy_at(sol, st, x_ref, th, u, xp)
                         - _energy_at(sol, st, x_ref, th, u, xm)) / (2 * eps)
    assert np.abs(fd - f).max() < 1e-6 * np.abs(f).max()
    # internal forces: no net force
    assert np.abs(f.sum(axis=0)).max() < 1e-12 * np.abs(f).max()


def test_twisting_forces_have_no_net_force_and_balance_the_torque_on_the_angles():
    # the net torque of the forces on the particles is what the material frames exert back:
    # sum x x F + sum_e t_e (-dE/dtheta_e) = 0 (as in discrete elastic rods; this quasi-static
    # twist model does not integrate the angles, docs/csm.md)
    sol, st = _twisted(3, n=12)
    a = st.arrays
    f = np.zeros_like(a.x)
    twist_forces(0, 12, sol.model.arrays, a, f, np.zeros(len(f)))
    scale = np.abs(f).max()
    assert np.abs(f.sum(axis=0)).max() < 1e-12 * scale
    torque = np.cross(a.x, f).sum(axis=0)
    t = np.diff(a.x, axis=0)
    t /= np.linalg.norm(t, axis=1)[:, None]
    eps = 1e-7
    for e in range(12):
        th = a.theta[e]
        a.theta[e] = th + eps
        ep = twist_energy(0, 12, sol.model.arrays, a)
        a.theta[e] = th - eps
        em = twist_energy(0, 12, sol.model.arrays, a)
        a.theta[e] = th
        torque += -(ep - em) / (2 * eps) * t[e]
    assert np.abs(torque).max() < 1e-6 * scale * 0.24


def test_twist_averaging_spreads_a_clamped_turn_uniformly():
    # both ends clamped, one end's angle raised by 3 rad: repeated averaging (eqs. 1-3) reaches
    # the uniform twist of a rod between two turned clamps
    n = 20
    x = np.c_[np.linspace(0, 0.4, n + 1), np.zeros(n + 1), np.zeros(n + 1)]
    sol = solver_for(x, clamp=(0, -1), options={"twist_half_width": 2})
    st = sol.state()
    e_last = n - 1
    st.arrays.theta[e_last] = 3.0
    m = sol.model.arrays
    assert m.edge_drive[e_last] >= 0 and m.edge_drive[0] >= 0
    average_twist(0, n, m, st.arrays, sol.scratch.tw_goal, sol.scratch.tw_count, 3000)
    th = st.arrays.theta
    rate = np.diff(th)
    assert abs(th[e_last] - 3.0) < 1e-12 and abs(th[0]) < 1e-12     # clamps hold
    assert np.abs(rate - 3.0 / (n - 1)).max() < 1e-3 * 3.0 / (n - 1)


def test_wider_twist_regions_propagate_faster():
    n = 30
    x = np.c_[np.linspace(0, 0.6, n + 1), np.zeros(n + 1), np.zeros(n + 1)]
    reach = []
    for w in (1, 4):
        sol = solver_for(x, clamp=(0, -1), options={"twist_half_width": w})
        st = sol.state()
        st.arrays.theta[n - 1] = 1.0
        average_twist(0, n, sol.model.arrays, st.arrays, sol.scratch.tw_goal,
                      sol.scratch.tw_count, 5)
        reach.append(st.arrays.theta[n // 2])
    assert 0 <= reach[0] < 1e-6 < reach[1]
