"""A static solve across a mechanism: Newton's retry with a diagonal shift after a failed line
search (strandlab.implicit.integrator, ``_newton``)."""
import pytest

from strandlab.implicit.ldl import qdldl_available
from strandlab.mixed import MixedSolver
from strandlab.scenes.mixed_strips import mixed_strips


@pytest.mark.skipif(not qdldl_available(), reason="needs the qdldl extra (the test extra)")
def test_static_solve_across_a_free_hinge_retries_with_a_shift():
    # the strip's shell half hangs from its solid half on a free hinge (no curve connection):
    # the static stiffness is singular along the hinge, QDLDL's pivot there passes the
    # positivity test (2e-13 of its diagonal) and the unshifted Newton direction is too long
    # for 30 halvings; retried with a diagonal shift, Newton swings the half down
    sim = mixed_strips(kind="solid_shell", coupling=0.0)
    sol = MixedSolver(sim.scene, sim.settings)
    s = sol.state()
    info = sol.equilibrium(s)
    assert sol.integrator.linear_solver.backend == "qdldl"
    assert info.converged and not info.line_search_failed
    assert info.max_shift > 0.0
    x0 = sim.scene.simplicial[0].vertices
    tip = x0[:, 0] > 0.1 - 1e-9
    drop = -(sol.output(s).extra[tip, 2] - x0[tip, 2]).mean()
    assert drop == pytest.approx(0.05, abs=0.002)     # the 5 cm shell half hangs straight down
