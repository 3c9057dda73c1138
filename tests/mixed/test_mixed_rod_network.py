"""Rod edges of a simplicial mesh (strandlab.mixed with rods only): chains and junctions are
found, and a cantilever converges to beam theory under refinement, as the DER rods it reuses."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.mixed import MixedSettings, MixedSolver
from strandlab.mixed.rod_graph import rod_graph
from strandlab.sim.simplicial import SimplicialBuilder


def test_rod_graph_orients_chains_and_pairs_junction_edges():
    # a Y: 0-1-2 and 1-3 (vertex 1 a junction), edges given in mixed directions, and a loop
    edges = np.array([[1, 0], [1, 2], [3, 1], [4, 5], [6, 5], [4, 6]])
    g = rod_graph(edges, 7)
    for verts, redges in zip(g.chains, g.chain_edges):
        assert np.array_equal(g.edges[redges, 0], verts[:-1])
        assert np.array_equal(g.edges[redges, 1], verts[1:])
    assert sorted(map(tuple, g.junction_pairs.tolist())) == [(0, 1), (0, 2), (1, 2)]
    assert set(g.junction_vertex.tolist()) == {1}
    # stencils: the loop's three vertices; none at the junction or the chain ends
    assert sorted(g.stencil_vertex.tolist()) == [4, 5, 6]
    for (j0, j1), v in zip(g.stencil_edges, g.stencil_vertex):
        assert g.edges[j0, 1] == v and g.edges[j1, 0] == v
    assert g.flipped.tolist() == [False, False, True, False, True, False] or \
        np.array_equal(np.any(g.edges != edges, axis=1), g.flipped)


def _cantilever_tip(n: int) -> float:
    # reference (validation.md 2): self-weight cantilever, delta = q L^4 / (8 E I)
    L, r, E, rho = 1.0, 0.02, 1e9, 1000.0
    h = L / (n - 0.5)                     # the held first edge straddles the root x = 0
    x = np.c_[np.linspace(-h / 2, L, n + 1), np.zeros(n + 1), np.zeros(n + 1)]
    mb = SimplicialBuilder(x, name="beam")
    mb.add_rods(np.c_[np.arange(n), np.arange(1, n + 1)],
                material=sl.Material(young_modulus=E, density=rho, radius=r))
    mb.hold([0, 1])
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b.build(), MixedSettings())
    s = sol.state()
    info = sol.equilibrium(s)
    assert info.converged
    q, ei = rho * np.pi * r * r * 9.81, E * np.pi * r ** 4 / 4
    return -sol.output(s).extra[-1, 2] / (q * L ** 4 / (8 * ei))


def test_rod_cantilever_converges_to_beam_theory():
    ratios = [_cantilever_tip(n) for n in (6, 12, 24)]
    errors = [abs(r - 1.0) for r in ratios]
    assert errors[2] < 0.01
    assert errors[2] < errors[1] < errors[0]


def test_rods_fall_freely_and_keep_momentum():
    # validation.md 10: no gravity, no holds: momentum constant, rest shape stays at rest
    x = np.c_[np.linspace(0, 1, 6), np.zeros(6), np.zeros(6)]
    mb = SimplicialBuilder(x, name="stick", velocities=np.tile([0.1, 0.0, 0.2], (6, 1)))
    mb.add_rods(np.c_[np.arange(5), np.arange(1, 6)],
                material=sl.Material(young_modulus=1e7, density=1e3, radius=0.01))
    b = sl.SceneBuilder(gravity=(0, 0, 0))
    b.add_simplicial_mesh(mb.build())
    sol = MixedSolver(b.build())
    s = sol.state()
    for _ in range(20):
        sol.step(s, s, 0.01)
    assert np.allclose(sol.output(s).extra - x, [0.02, 0.0, 0.04], atol=1e-12)
    assert np.allclose(s.v[:18].reshape(-1, 3), [0.1, 0.0, 0.2], atol=1e-12)


def test_strands_and_other_solvers_are_refused():
    b = sl.SceneBuilder()
    b.add_strand(np.c_[np.linspace(0, 1, 4), np.zeros(4), np.zeros(4)],
                 material=sl.Material(young_modulus=1e7, density=1e3, radius=0.01))
    with pytest.raises(sl.UnsupportedFeature, match="rods as rod edges of a simplicial mesh"):
        MixedSolver(b.build())
