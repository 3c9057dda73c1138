"""The solver protocol and registry: a second solver plugs in without the shared layers knowing
it, the runner and outputs work through the protocol alone, and the PBD solver conforms."""
from dataclasses import asdict, dataclass

import numpy as np
import pytest

import strandlab as sl
from strandlab.sim.runner import Simulation, simulate
from strandlab.sim.scene import UnsupportedFeature
from strandlab.sim.shapes import line
from strandlab.sim.solver import (
    Output,
    Solver,
    get_solver,
    make_settings,
    register_solver,
    solver_names,
)

MAT = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)


@dataclass(frozen=True)
class BallisticSettings:
    drag: float = 0.0

    def __post_init__(self):
        if self.drag < 0:
            raise ValueError(f"drag must be >= 0, got {self.drag}")

    def to_dict(self):
        return asdict(self)


@dataclass
class BallisticState:
    x: np.ndarray
    v: np.ndarray
    time: float = 0.0
    step: int = 0


class Ballistic:
    """Free strand vertices under gravity, integrated exactly: the smallest complete solver."""

    name = "ballistic"
    Settings = BallisticSettings

    def __init__(self, scene, settings=None):
        for part in ("frame_attachments", "triangle_attachments", "body_attachments", "meshes"):
            if getattr(scene, part):
                raise UnsupportedFeature(f"solver 'ballistic' cannot express {part}")
        self.scene = scene
        self.settings = settings or BallisticSettings()
        self._x0 = np.concatenate([s.points for s in scene.strands])
        self._v0 = np.concatenate([s.velocities for s in scene.strands])

    def state(self):
        return BallisticState(self._x0.copy(), self._v0.copy())

    def step(self, state_in, state_out, dt):
        g = self.scene.gravity
        state_out.x = state_in.x + dt * state_in.v + 0.5 * dt * dt * g
        state_out.v = state_in.v + dt * g
        state_out.time = state_in.time + dt
        state_out.step = state_in.step + 1

    def output(self, state):
        d1 = np.tile([0.0, 0.0, 1.0], (self.scene.n_edges, 1))
        return Output(positions=state.x, d1=d1, extra=np.zeros((0, 3)))

    def save_state(self, state):
        return {"x": state.x, "v": state.v, "time": np.float64(state.time),
                "step": np.int64(state.step)}

    def load_state(self, arrays):
        return BallisticState(arrays["x"].copy(), arrays["v"].copy(), float(arrays["time"]),
                              int(arrays["step"]))


@pytest.fixture(autouse=True)
def _register(monkeypatch):
    # registered for these tests only (other tests list the known solvers)
    from strandlab.sim import solver as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    register_solver("ballistic", Ballistic)


def _free_scene():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    b.add_strand(line((0, 0, 1), (1, 0, 1), 5), material=MAT, velocities=(1.0, 0.0, 2.0))
    return b.build()


def test_registry_knows_pbd_and_a_registered_solver():
    assert get_solver("pbd") is sl.PBDSolver
    assert {"pbd", "ballistic"} <= set(solver_names())
    with pytest.raises(KeyError, match="unknown solver 'fem'; available: .*pbd"):
        get_solver("fem")
    with pytest.raises(ValueError, match="must be an identifier"):
        register_solver("not a name", Ballistic)


def test_settings_are_validated_against_the_chosen_solver():
    assert make_settings("ballistic", {"drag": 0.5}).drag == 0.5
    with pytest.raises(ValueError, match="solver 'ballistic' has no setting 'iterations'; "
                                         "allowed: drag"):
        make_settings("ballistic", {"iterations": 3})
    with pytest.raises(ValueError, match="drag must be >= 0"):
        make_settings("ballistic", {"drag": -1.0})
    with pytest.raises(ValueError, match="solver 'pbd' has no setting 'drag'"):
        make_settings("pbd", {"drag": 0.5})


def test_runner_drives_a_second_solver_through_the_protocol():
    # Reference: free flight x(t) = x0 + v0 t + g t^2 / 2 (validation.md item 10).
    sim = Simulation("fall", _free_scene(), solver="ballistic", dt=0.1, frames=5)
    traj = simulate(sim)
    t = traj.times[-1]
    assert t == pytest.approx(0.5)
    expected = np.array([0.0, 0.0, 1.0]) + np.array([1.0, 0.0, 2.0]) * t \
        + 0.5 * np.array([0, 0, -9.81]) * t * t
    assert np.allclose(traj.positions[-1, 0], expected, atol=1e-12)
    assert traj.metadata["solver"] == {"type": "ballistic", "settings": {"drag": 0.0}}


def test_a_solver_names_the_part_of_a_scene_it_cannot_express():
    b = sl.SceneBuilder()
    s = b.add_strand(line((0, 0, 0), (1, 0, 0), 4), material=MAT)
    b.attach_to_frame(s, b.add_frame(), end=0)
    with pytest.raises(UnsupportedFeature, match="ballistic.*frame_attachments"):
        Simulation("clamped", b.build(), solver="ballistic").make_solver()


def _pbd_scene():
    b = sl.SceneBuilder(gravity=(0, 0, -9.81))
    s = b.add_strand(line((0, 0, 1), (0.5, 0, 1), 8), material=MAT)
    b.attach_to_frame(s, b.add_frame((0, 0, 1)), end=0)
    b.add_strand(line((0, 0.2, 1), (0.5, 0.2, 1.1), 6), material=MAT, d1=(0, 0, 1))
    verts = [[0, 1, 0], [0.1, 1, 0], [0, 1.1, 0]]
    b.add_mesh(verts, [[0, 1, 2]], mass=0.1)
    return b.build()


def test_pbd_conforms_to_the_protocol():
    scene = _pbd_scene()
    solver = sl.PBDSolver(scene)
    assert isinstance(solver, Solver)
    st = solver.state()
    for _ in range(5):
        solver.step(st, st, 1 / 60)
    out = solver.output(st)
    assert out.positions.shape == (scene.n_vertices, 3)
    assert out.d1.shape == (scene.n_edges, 3)
    assert out.extra.shape == (scene.extra_layout()["n"], 3)
    # d1 is a unit vector across its edge
    e = []
    for k in range(scene.n_strands):
        p = out.positions[scene.strand_vertices(k)]
        e.append(np.diff(p, axis=0))
    e = np.concatenate(e)
    assert np.allclose(np.linalg.norm(out.d1, axis=1), 1.0)
    assert np.max(np.abs(np.einsum("ij,ij->i", out.d1, e))) < 1e-9
    # the second strand's first d1 starts along the given direction (z, across the edge)
    k0 = scene.strand_edge_offsets[1]
    d_in = solver.output(solver.state()).d1[k0]
    edge = scene.strands[1].points[1] - scene.strands[1].points[0]
    want = np.array([0, 0, 1.0]) - np.dot([0, 0, 1.0], edge) / np.dot(edge, edge) * edge
    assert np.allclose(d_in, want / np.linalg.norm(want))
    # save and restore the complete state: the continuation is bitwise identical
    saved = solver.save_state(st)
    other = solver.load_state(saved)
    for _ in range(5):
        solver.step(st, st, 1 / 60)
        solver.step(other, other, 1 / 60)
    assert np.array_equal(st.x, other.x) and np.array_equal(st.v, other.v)


def test_scene_is_frozen_and_names_its_layout():
    scene = _pbd_scene()
    with pytest.raises(ValueError):
        scene.strands[0].points[0, 0] = 1.0
    assert list(scene.strand_vertex_offsets) == [0, 9, 16]
    assert list(scene.strand_edge_offsets) == [0, 8, 14]
    lay = scene.extra_layout()
    assert lay == {"frames": [0], "meshes": [3], "bodies": [], "simplicial": [], "n": 6}
    assert scene.extra_triangles.tolist() == [[3, 4, 5]]
    d = scene.describe()
    assert d["n_strands"] == 2 and d["strands"][1]["n_vertices"] == 7
