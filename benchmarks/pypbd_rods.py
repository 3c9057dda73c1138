"""Peer-library benchmark: clamped cantilever rods in pypbd (PositionBasedDynamics).

Scene
-----
``n_rods`` straight rods of length 1 m along +x, 5 cm apart, each clamped at
its first end and released under gravity.  Every rod is discretised into
``n_edges`` segments and simulated with pypbd's ``StretchBendingTwistingConstraint``
(Deul, Kugelstadt, Weiler, Bender 2018, "Direct position-based solver for
stiff rods", the iterative per-joint variant; it uses the Cosserat
Darboux-vector formulation of Kugelstadt & Schoemer).

How pypbd models such a rod (this shapes everything below):

* The constraint couples two *rigid bodies*, not particles/quaternions.  Each
  edge is one rigid body (a solid cylinder of radius r and length h = L/n)
  with a position and an orientation; consecutive bodies are joined by one
  constraint at their common end point.  A rod with n edges has n bodies and
  n - 1 constraints.
* Clamp: the first body gets mass 0 (as in the library's
  StretchBendingTwisting demo).  This fixes the position *and* orientation of
  the first edge, which is the counterpart of "fix the first particle and the
  first material frame" of a particle/quaternion rod.
* The constraint reads the rod axis from the body's *local y axis*; bodies
  are therefore rotated by -90 degrees about z so that local y maps to +x.
* Material parameters are physical: ``youngsModulus`` and ``torsionModulus``
  are in Pa and are turned into EI = E*pi*r^4/4 and GJ = 2*G*pi*r^4/4.
  Stretching is *not* elastic: it is a zero-stretch (inextensible) joint
  with a fixed tiny regularisation (compliance 1e-10 / dt^2 inside the
  library), so E does not influence axial strain.
* Gravity cannot be set from Python (``Simulation.GRAVITATION`` is a vector
  parameter and the binding only exposes scalar setters), so the library
  default (0, -9.81, 0) is used.  The scene is built in the library frame
  with rods along +X, spaced along -Z, gravity along -Y.  Mapping to the
  benchmark frame (rods along +x, spaced along +y, gravity along -z):
  x = X, y = -Z, z = Y.

Edge strain
-----------
Rigid segments cannot stretch; the axial error lives in the joints (the gap
between the two connector points of a constraint).  Nodes are defined as
node 0 = start of segment 0, node k = midpoint of the end connector of
segment k-1 and the start connector of segment k, node n = end of segment
n-1; the edge strain is |node_{k+1} - node_k| / h - 1.

Threads
-------
pypbd is built with OpenMP and ships its own libgomp, which reads
``OMP_NUM_THREADS`` once when the extension module is loaded.  Set
``OMP_NUM_THREADS=1`` in the environment of the process *before* it starts,
e.g. ``OMP_NUM_THREADS=1 python benchmarks/pypbd_rods.py``.  ``run_pypbd``
refuses to run otherwise.

Library state
-------------
pypbd keeps process-wide singletons (``Simulation.getCurrent()``,
``TimeManager.getCurrent()``, the ``TimeStepController`` and its static
parameter ids).  This module owns one ``SimulationModel`` for the lifetime of
the process, and every ``run_pypbd`` call resets the simulation time, empties
the model with ``SimulationModel.cleanup()`` and rebuilds the scene, so
consecutive runs in one process are independent.  ``run_pypbd_isolated`` runs
a configuration in a child process instead, which also survives a crash of
the native library.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import subprocess
import sys
import time

__all__ = ["available", "run_pypbd", "run_pypbd_isolated", "main"]

ROD_LENGTH = 1.0  # m
ROD_SPACING = 0.05  # m
RADIUS = 1.0e-3  # m
DENSITY = 1000.0  # kg/m^3
YOUNGS_MODULUS = 1.0e9  # Pa
TORSION_MODULUS = 0.5e9  # Pa
GRAVITY_LIBRARY_FRAME = (0.0, -9.81, 0.0)  # pypbd default, not settable from Python

# The model must outlive every reference the C++ Simulation singleton keeps to
# it: Simulation.setModel stores a raw pointer, and a Python-created model
# would be freed (leaving the pointer dangling) once its wrapper is collected.
_MODEL = None


def available() -> bool:
    """Return True when pypbd can be used.

    Checks that the module is installed.  When it is safe to load it (the
    module is already loaded, or ``OMP_NUM_THREADS`` is ``"1"`` so loading it
    does not fix a different thread count for the process) it is also
    imported to make sure the native extension loads.
    """
    if "pypbd" in sys.modules:
        return True
    try:
        if importlib.util.find_spec("pypbd") is None:
            return False
    except (ImportError, ValueError):
        return False
    if os.environ.get("OMP_NUM_THREADS") != "1":
        return True
    try:
        import pypbd  # noqa: F401
    except Exception:
        return False
    return True


def _check_threads() -> None:
    value = os.environ.get("OMP_NUM_THREADS")
    if value != "1":
        raise RuntimeError(
            "pypbd benchmark needs OMP_NUM_THREADS=1 (found %r). pypbd's bundled "
            "libgomp reads the variable once when pypbd is first imported, so it "
            "must be set in the environment before the process starts, e.g. "
            "'OMP_NUM_THREADS=1 python benchmarks/pypbd_rods.py'." % (value,)
        )


def _library_version() -> str:
    try:
        from importlib.metadata import version

        return version("pypbd")
    except Exception:
        return "unknown"


def _prepare_simulation(pbd):
    """Return (simulation, model) with an empty model and time reset to 0."""
    global _MODEL
    sim = pbd.Simulation.getCurrent()  # creates the singleton + TimeStepController
    if _MODEL is None:
        _MODEL = pbd.SimulationModel()
        _MODEL.init()
    if sim.getModel() is not _MODEL:
        sim.setModel(_MODEL)
    # Restores bodies to their initial state, resets the controller's
    # iteration counters and sets the time to 0; then drop the old scene.
    sim.reset()
    _MODEL.cleanup()
    cd = sim.getTimeStep().getCollisionDetection()
    if cd is not None:
        # Another user of the singleton installed collision detection
        # (Simulation.initDefault does); its objects refer to bodies that no
        # longer exist.
        cd.cleanup()
    return sim, _MODEL


def _build_rods(pbd, model, n_rods: int, n_edges: int) -> dict:
    h = ROD_LENGTH / n_edges
    mass = DENSITY * math.pi * RADIUS**2 * h
    i_axial = 0.5 * mass * RADIUS**2
    i_bend = mass * (3.0 * RADIUS**2 + h * h) / 12.0
    inertia_local = [i_bend, i_axial, i_bend]  # rod axis = local y
    s = math.sqrt(0.5)
    q_local_y_to_x = [0.0, 0.0, -s, s]  # (x, y, z, w): -90 deg about z
    rot = [[0.0, 1.0, 0.0], [-1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]

    # No collision/render geometry: an empty mesh keeps the per-step mesh
    # update free.  addRigidBody (density overload) is only used to create a
    # library-owned body; initBody (mass overload) then sets the analytic
    # mass and inertia of a solid cylinder segment.
    vd = pbd.VertexData()
    mesh = pbd.IndexedFaceMesh()
    for r in range(n_rods):
        z = -ROD_SPACING * r
        first = r * n_edges
        for k in range(n_edges):
            centre = [(k + 0.5) * h, 0.0, z]
            rb = model.addRigidBody(DENSITY, vd, mesh, centre, rot)
            rb.initBody(mass, centre, inertia_local, q_local_y_to_x, vd, mesh, [1.0, 1.0, 1.0])
            if k == 0:
                rb.setMass(0.0)  # clamp: first segment (position + orientation)
        for k in range(n_edges - 1):
            ok = model.addStretchBendingTwistingConstraint(
                first + k, first + k + 1, [(k + 1) * h, 0.0, z], RADIUS, h, YOUNGS_MODULUS, TORSION_MODULUS
            )
            if not ok:
                raise RuntimeError("addStretchBendingTwistingConstraint failed")
    return {
        "segment_length_m": h,
        "segment_mass_kg": mass,
        "segment_inertia_local_kgm2": inertia_local,
    }


def _measure(model, n_rods: int, n_edges: int, h: float):
    import numpy as np

    rbs = model.getRigidBodies()
    nb = n_rods * n_edges
    x = np.empty((nb, 3))
    axis = np.empty((nb, 3))
    for i in range(nb):
        rb = rbs[i]
        x[i] = np.asarray(rb.getPosition()).reshape(3)
        axis[i] = np.asarray(rb.getRotationMatrix())[:, 1]
    x = x.reshape(n_rods, n_edges, 3)
    axis = axis.reshape(n_rods, n_edges, 3)
    start = x - 0.5 * h * axis
    end = x + 0.5 * h * axis
    nodes = np.empty((n_rods, n_edges + 1, 3))
    nodes[:, 0] = start[:, 0]
    nodes[:, 1:-1] = 0.5 * (end[:, :-1] + start[:, 1:])
    nodes[:, -1] = end[:, -1]
    lengths = np.linalg.norm(np.diff(nodes, axis=1), axis=2)
    strain = np.abs(lengths / h - 1.0)
    finite = bool(np.isfinite(x).all() and np.isfinite(axis).all())
    max_strain = float(np.nanmax(strain)) if finite else float("nan")
    max_gap = float(np.linalg.norm(end[:, :-1] - start[:, 1:], axis=2).max()) if n_edges > 1 else 0.0
    # benchmark frame z = library Y; the tip starts at z = 0
    tip_drop = float(-nodes[:, -1, 1].mean())
    return max_strain, finite, max_gap, tip_drop


def run_pypbd(
    n_rods: int,
    n_edges: int,
    *,
    steps: int = 120,
    warmup: int = 10,
    iterations: int = 10,
    dt: float = 1 / 60,
) -> dict:
    """Simulate ``n_rods`` clamped 1 m rods with ``n_edges`` edges each in pypbd.

    Set ``OMP_NUM_THREADS=1`` in the environment of the process before it
    starts (pypbd's OpenMP runtime reads it once at import); a RuntimeError
    is raised if the variable is not ``"1"``.

    One time step of ``dt`` is taken per ``step()`` call (sub-steps = 1) with
    ``iterations`` position-solver iterations and ``iterations`` velocity
    iterations.  ``warmup`` steps are run untimed, then ``steps`` steps are
    timed with ``time.perf_counter``.  The strain and finiteness are measured
    after the last step.

    Returns a dict with ``ms_per_step``, ``max_edge_strain`` (largest
    |edge length / rest length - 1|, see the module docstring for the edge
    definition), ``finite``, ``settings`` (everything that was set), and two
    diagnostics: ``max_joint_gap_m`` and ``tip_drop_m`` (mean vertical drop of
    the rod tips, benchmark frame).
    """
    _check_threads()
    if n_rods < 1 or n_edges < 2:
        raise ValueError("need n_rods >= 1 and n_edges >= 2")
    if steps < 1 or warmup < 0 or iterations < 1 or not dt > 0:
        raise ValueError("need steps >= 1, warmup >= 0, iterations >= 1, dt > 0")

    import pypbd as pbd

    sim, model = _prepare_simulation(pbd)
    tm = pbd.TimeManager.getCurrent()
    tm.setTimeStepSize(float(dt))
    tm.setTime(0.0)

    ts = sim.getTimeStep()
    tsc = pbd.TimeStepController
    ts.setValueUInt(tsc.NUM_SUB_STEPS, 1)  # library default is 5
    ts.setValueUInt(tsc.MAX_ITERATIONS, int(iterations))  # library default is 1
    ts.setValueUInt(tsc.MAX_ITERATIONS_V, int(iterations))  # library default is 5
    ts.setValueInt(tsc.VELOCITY_UPDATE_METHOD, tsc.ENUM_VUPDATE_FIRST_ORDER)

    geometry = _build_rods(pbd, model, n_rods, n_edges)
    h = geometry["segment_length_m"]

    for _ in range(warmup):
        ts.step(model)
    t0 = time.perf_counter()
    for _ in range(steps):
        ts.step(model)
    elapsed = time.perf_counter() - t0

    max_strain, finite, max_gap, tip_drop = _measure(model, n_rods, n_edges, h)
    second_moment = math.pi * RADIUS**4 / 4.0
    settings = {
        "library": "pypbd %s" % _library_version(),
        "rod_model": "rigid-body segments + StretchBendingTwistingConstraint (Deul et al. 2018, iterative)",
        "n_rods": n_rods,
        "n_edges": n_edges,
        "rigid_bodies": len(model.getRigidBodies()),
        "constraints": len(model.getConstraints()),
        "constraint_groups": len(model.getConstraintGroups()),
        "rod_length_m": ROD_LENGTH,
        "rod_spacing_m": ROD_SPACING,
        "radius_m": RADIUS,
        "density_kg_m3": DENSITY,
        "youngs_modulus_pa": YOUNGS_MODULUS,
        "torsion_modulus_pa": TORSION_MODULUS,
        "bending_stiffness_EI_Nm2": YOUNGS_MODULUS * second_moment,
        "torsion_stiffness_GJ_Nm2": 2.0 * TORSION_MODULUS * second_moment,
        "stretch": "inextensible joint, compliance 1e-10/dt^2 (fixed in library)",
        "clamp": "first segment of each rod has mass 0 (position and orientation fixed)",
        "gravity_library_frame": list(GRAVITY_LIBRARY_FRAME),
        "gravity_benchmark_frame": [0.0, 0.0, -9.81],
        "frame_mapping": "x=X, y=-Z, z=Y (rods along +X, spaced along -Z)",
        "dt_s": tm.getTimeStepSize(),
        "sub_steps": ts.getValueUInt(tsc.NUM_SUB_STEPS),
        "position_iterations": ts.getValueUInt(tsc.MAX_ITERATIONS),
        "velocity_iterations": ts.getValueUInt(tsc.MAX_ITERATIONS_V),
        "velocity_update": "first order",
        "collision_detection": None if ts.getCollisionDetection() is None else "present (emptied)",
        "steps": steps,
        "warmup": warmup,
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        **geometry,
    }
    return {
        "ms_per_step": 1000.0 * elapsed / steps,
        "max_edge_strain": max_strain,
        "finite": finite,
        "settings": settings,
        "max_joint_gap_m": max_gap,
        "tip_drop_m": tip_drop,
    }


def run_pypbd_isolated(n_rods: int, n_edges: int, *, timeout: float | None = None, **kwargs) -> dict:
    """Run ``run_pypbd`` in a fresh child process.

    Returns the same dict, or ``{"error": ...}`` if the child failed, crashed
    (e.g. a segfault in the native library) or timed out.  The child inherits
    this process's environment, so ``OMP_NUM_THREADS=1`` must be set here too.
    """
    _check_threads()
    args = json.dumps({"n_rods": n_rods, "n_edges": n_edges, **kwargs})
    code = (
        "import json, sys\n"
        "sys.path.insert(0, %r)\n"
        "import pypbd_rods\n"
        "a = json.loads(sys.argv[1])\n"
        "r = pypbd_rods.run_pypbd(a.pop('n_rods'), a.pop('n_edges'), **a)\n"
        "print('@@RESULT@@' + json.dumps(r))\n"
    ) % (os.path.dirname(os.path.abspath(__file__)),)
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, args], capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return {"error": "timeout after %s s" % timeout}
    for line in proc.stdout.splitlines():
        if line.startswith("@@RESULT@@"):
            return json.loads(line[len("@@RESULT@@"):])
    tail = (proc.stderr or proc.stdout).strip().splitlines()[-3:]
    return {"error": "exit code %d: %s" % (proc.returncode, " | ".join(tail))}


def main(argv=None) -> int:
    """Print a table for N in {1, 50, 200} rods and n in {20, 100} edges.

    Each configuration runs in its own child process; pass ``--in-process``
    to run them all in this process instead.
    """
    argv = sys.argv[1:] if argv is None else argv
    in_process = "--in-process" in argv
    _check_threads()
    if not available():
        print("pypbd is not installed (pip install pypbd)")
        return 1
    header = "%6s %6s %12s %16s %8s %12s" % ("N", "n", "ms/step", "max_edge_strain", "finite", "tip_drop_m")
    print(header)
    print("-" * len(header))
    settings = None
    for n_rods in (1, 50, 200):
        for n_edges in (20, 100):
            if in_process:
                try:
                    res = run_pypbd(n_rods, n_edges)
                except Exception as exc:  # pragma: no cover - reported in the table
                    res = {"error": repr(exc)}
            else:
                res = run_pypbd_isolated(n_rods, n_edges)
            if "error" in res:
                print("%6d %6d  FAILED: %s" % (n_rods, n_edges, res["error"]))
                continue
            settings = res["settings"]
            print(
                "%6d %6d %12.3f %16.3e %8s %12.4f"
                % (n_rods, n_edges, res["ms_per_step"], res["max_edge_strain"], res["finite"], res["tip_drop_m"])
            )
    if settings is not None:
        keys = (
            "library", "rod_model", "dt_s", "sub_steps", "position_iterations", "velocity_iterations",
            "velocity_update", "radius_m", "density_kg_m3", "youngs_modulus_pa", "torsion_modulus_pa",
            "stretch", "clamp", "gravity_library_frame", "frame_mapping", "steps", "warmup", "omp_num_threads",
        )
        print()
        for key in keys:
            print("%-22s %s" % (key, settings[key]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
