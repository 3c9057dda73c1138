"""Exports opened in Blender: small runs written to USD (z-up and y-up), Alembic, OBJ and PLY
are imported by Blender's own importers, and what Blender then holds (reported by
``strandlab/io/blender_probe.py``) is compared with the trajectory: curve, point and face
counts, world positions in metres in Blender's z-up world (to float32 precision), radii and
the frame mapping.

Marked ``blender`` (not in the default run): ``pytest -m blender``.  They need Blender: set
``STRANDLAB_BLENDER_PYTHON`` to a Python with the ``bpy`` module or ``STRANDLAB_BLENDER`` to a
``blender`` executable (docs/contributing.md); without either they fail, saying so.
"""
import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import run_fixtures as rf
from interchange_fixtures import sample_trajectory

import strandlab.io.blender_probe as probe_module
from strandlab.io.interchange import export_trajectory
from strandlab.io.selection import rod_chains

pytestmark = pytest.mark.blender

PROBE = Path(probe_module.__file__)
F32 = 2e-7              # Blender keeps positions and radii as 32-bit floats [m]
MESH = slice(3, 14)     # the mixed run's mesh among its extra points
OBJ_AXES = {"up_axis": "Z", "forward_axis": "Y"}     # keep strandlab's axes (docs)
INSTALL = ("the Blender tests need Blender: set STRANDLAB_BLENDER_PYTHON to a Python 3.11 "
           "that has the bpy module (python3.11 -m venv venv-bpy && venv-bpy/bin/pip install "
           "bpy), or STRANDLAB_BLENDER to a blender executable (or put blender on the PATH); "
           "see docs/contributing.md")


def blender_command(script: Path = PROBE) -> list[str]:
    """The command that runs ``script`` (default: the probe) in Blender:
    ``$STRANDLAB_BLENDER_PYTHON script.py`` or ``blender --background ... --python script.py
    --``, its arguments to follow; fails the test when neither exists."""
    py = os.environ.get("STRANDLAB_BLENDER_PYTHON")
    if py:
        return [py, str(script)]
    exe = os.environ.get("STRANDLAB_BLENDER") or shutil.which("blender")
    if exe:
        return [exe, "--background", "--factory-startup", "--python-exit-code", "1",
                "--python", str(script), "--"]
    pytest.fail(INSTALL)


@pytest.fixture(scope="module")
def blender():
    """The probe's command (checked before the runs are made)."""
    return blender_command()


@pytest.fixture(scope="module")
def runs():
    return {"strands": rf.tapered_run(10), "mixed": rf.mixed_run(3)}


@pytest.fixture(scope="module")
def seen(blender, runs, tmp_path_factory):
    """Every export of the module, imported by Blender in one process: {job name: report}."""
    d = tmp_path_factory.mktemp("blender")
    st, mx = runs["strands"], runs["mixed"]
    jobs = {}

    def job(name, traj, fmt, out, at, *, fps=None, options=None, **export):
        """Export ``traj`` and report Blender's scene at its frames ``at``."""
        path = export_trajectory(traj, fmt, d / out, **export)
        path = path[0] if isinstance(path, list) else path
        jobs[name] = {"path": str(path), "frames": at, "fps": fps, "options": options or {}}

    job("usd_z", st, "usd", "z.usd", [0, 4, 10])
    job("usd_y", st, "usd", "y.usda", [3], up_axis="Y")
    job("usd_fps", st, "usd", "f.usdc", [2, 9], fps=rf.FPS)
    job("abc_24", st, "abc", "s24.abc", [0, 1, 2])
    job("abc_fps", st, "abc", "s.abc", [0, 7, 10], fps=rf.FPS)
    job("abc_z", st, "abc", "z.abc", [5], fps=rf.FPS, up_axis="Z")
    job("obj", st, "obj", "obj", [1], frames="6", options=OBJ_AXES)
    job("ply", st, "ply", "ply", [1], frames="6")
    job("mixed_usd", mx, "usd", "m.usd", [0, 3])
    job("mixed_abc", mx, "abc", "m.abc", [3], fps=rf.FPS)
    job("mixed_obj", mx, "obj", "mobj", [1], frames="3", options=OBJ_AXES)
    job("mixed_ply", mx, "ply", "mply", [1], frames="3")
    job("sample_obj", sample_trajectory(3), "obj", "sobj", [1], frames="2", options=OBJ_AXES)
    names = list(jobs)
    (d / "jobs.json").write_text(json.dumps([jobs[n] for n in names]))
    cmd = blender + [str(d / "jobs.json"), str(d / "report.json")]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, f"{' '.join(cmd)} failed:\n{done.stdout}\n{done.stderr}"
    report = json.loads((d / "report.json").read_text())
    return {n: r for n, r in zip(names, report)}


def _objects(report, kind=None):
    return {o["name"]: o for o in report["objects"] if kind is None or o["type"] == kind}


def _strand_rows(traj, strands):
    so = traj.strand_offsets
    return np.concatenate([np.arange(so[s], so[s + 1]) for s in strands])


# the tapered run's groups: material 0 open (the tapered strand), material 1 open (the plain
# strand), material 0 closed (the ring)
GROUPS = {"material_0": [0], "material_1": [1], "material_0_closed": [2]}


def _check_strands(report, traj, frames: dict, names=GROUPS):
    """Curves objects of the strand groups: sizes, cyclic flags, radii and world positions
    at Blender frame f equal to trajectory frame ``frames[f]``."""
    curves = _objects(report, "CURVES")
    for name, strands in names.items():
        o = curves[name]
        rows = _strand_rows(traj, strands)
        for f, k in frames.items():
            geo = o["frames"][str(f)]
            assert geo["curve_sizes"] == [len(rows)], name
            assert np.allclose(geo["positions"], traj.positions[k][rows], rtol=0, atol=F32), \
                (name, f, k)
            assert np.allclose(geo["radius"], traj.vertex_radii[rows], rtol=1e-6, atol=0), name
            cyclic = geo["cyclic"] or [False]
            assert cyclic == [name.endswith("_closed")], name


# ---------------------------------------------------------------------------------- USD
def test_usd_strands_z_up(seen, runs):
    """USD time code k is Blender frame k; the scene keeps Blender's 24 fps (the importer
    does not read timeCodesPerSecond) and gets the exported frame range."""
    r = seen["usd_z"]
    assert r["scene"]["frame_start"] == 0 and r["scene"]["frame_end"] == 10
    assert r["scene"]["fps"] == 24.0 and r["scene"]["unit_scale"] == 1.0
    _check_strands(r, runs["strands"], {0: 0, 4: 4, 10: 10})
    tapered = _objects(r)["material_0"]["frames"]["4"]["radius"]
    assert tapered[0] == pytest.approx(rf.ROOT) and tapered[-1] == pytest.approx(rf.TIP)


def test_usd_strands_y_up_stand_upright(seen, runs):
    _check_strands(seen["usd_y"], runs["strands"], {3: 3})


def test_usd_at_the_runs_frame_rate(seen, runs):
    """Set to the run's frame rate before importing, the scene keeps it and time code k is
    still frame k: the animation plays in real time."""
    r = seen["usd_fps"]
    assert r["scene"]["fps"] == pytest.approx(rf.FPS)
    assert (r["scene"]["frame_start"], r["scene"]["frame_end"]) == (0, 10)
    _check_strands(r, runs["strands"], {2: 2, 9: 9})


# ---------------------------------------------------------------------------------- Alembic
def test_alembic_frames_follow_seconds(seen, runs):
    """Alembic samples are placed in seconds: in Blender's default 24 fps scene, frame f shows
    the run at f / 24 s (run frame 5 f at 120 fps), and the frame range is a fifth as long."""
    r = seen["abc_24"]
    assert r["scene"]["fps"] == 24.0
    assert (r["scene"]["frame_start"], r["scene"]["frame_end"]) == (0, round(10 / rf.FPS * 24))
    _check_strands(r, runs["strands"], {0: 0, 1: 5, 2: 10})


def test_alembic_at_the_runs_frame_rate(seen, runs):
    """With the scene's frame rate set to the run's before importing, frame k is run frame k,
    in y-up and z-up archives (Blender turns y-up Alembic to its z-up world)."""
    r = seen["abc_fps"]
    assert r["scene"]["fps"] == pytest.approx(rf.FPS)
    assert (r["scene"]["frame_start"], r["scene"]["frame_end"]) == (0, 10)
    _check_strands(r, runs["strands"], {0: 0, 7: 7, 10: 10})
    z = seen["abc_z"]
    # a z-up archive read as y-up: Blender turns it, (x, y, z) -> (x, -z, y)
    o = _objects(z, "CURVES")["material_1"]["frames"]["5"]
    want = runs["strands"].positions[5][_strand_rows(runs["strands"], [1])]
    assert np.allclose(o["positions"], want @ np.array([[1, 0, 0], [0, 0, -1], [0, 1, 0]]).T,
                       atol=F32)


# ---------------------------------------------------------------------------------- OBJ, PLY
def _edges_of_strands(traj):
    out = []
    for s in range(traj.n_strands):
        a, b = int(traj.strand_offsets[s]), int(traj.strand_offsets[s + 1])
        idx = list(range(a, b)) + ([a] if traj.closed[s] else [])
        out += [sorted(p) for p in zip(idx[:-1], idx[1:])]
    return sorted(out)


@pytest.mark.parametrize("fmt", ["obj", "ply"])
def test_obj_and_ply_strands(seen, runs, fmt):
    traj = runs["strands"]
    (o,) = _objects(seen[fmt], "MESH").values()
    geo = o["frames"]["1"]
    assert np.allclose(geo["positions"], traj.positions[6], rtol=0, atol=F32)
    assert sorted(sorted(e) for e in geo["edges"]) == _edges_of_strands(traj)
    assert geo["faces"] == []
    if fmt == "ply":
        assert np.allclose(geo["radius"], traj.vertex_radii, rtol=1e-6, atol=0)


# ---------------------------------------------------------------------------------- mixed
def _faces(faces):
    """Faces as rotations starting at their smallest index (orientation kept)."""
    out = []
    for f in faces:
        i = int(np.argmin(f))
        out.append(tuple(f[i:] + f[:i]))
    return sorted(out)


def _check_mesh(o, traj, frame: int, k: int, first: int = 0):
    geo = o["frames"][str(frame)]
    pts = np.asarray(geo["positions"])
    assert np.allclose(pts[first:first + 11], traj.extra_points[k][MESH], rtol=0, atol=F32)
    tri = (traj.extra_triangles - 3 + first).tolist()
    assert _faces(geo["faces"]) == _faces(tri)          # the same triangles, facing out


def _check_rods(objs, traj, frame: int, k: int):
    """Each rod part a curves object of its own: ``thin`` (3 curves) and ``thick`` (1)."""
    for name, radius in (("thin", rf.THIN), ("thick", rf.THICK)):
        geo = objs[name]["frames"][str(frame)]
        chains = [c for c, r in rf.MIXED_CHAINS if r == radius]
        assert geo["curve_sizes"] == [len(c) for c in chains]
        idx = np.concatenate(chains)
        assert np.allclose(geo["positions"], traj.extra_points[k][MESH][idx], rtol=0, atol=F32)
        assert np.allclose(geo["radius"], radius, rtol=1e-6)


def test_mixed_mesh_usd(seen, runs):
    """The Mesh prim is a mesh object, each rod part a curves object; the TetMesh (purpose
    guide) is not imported by default; the frame's points are a point cloud."""
    r, traj = seen["mixed_usd"], runs["mixed"]
    objs = _objects(r)
    geometry = {n: o["type"] for n, o in objs.items() if o["type"] != "EMPTY"}
    assert geometry == {"gadget": "MESH", "thin": "CURVES", "thick": "CURVES",
                        "frames": "POINTCLOUD"}
    empties = {n for n, o in objs.items() if o["type"] == "EMPTY"}
    assert empties == {"strandlab", "strands", "meshes", "points", "rods", "tetmeshes"}
    for f in (0, 3):
        _check_mesh(objs["gadget"], traj, f, f)
        _check_rods(objs, traj, f, f)
        assert np.allclose(objs["frames"]["frames"][str(f)]["positions"],
                           traj.extra_points[f][:3], atol=F32)


def test_mixed_mesh_alembic(seen, runs):
    r, traj = seen["mixed_abc"], runs["mixed"]
    objs = _objects(r)
    assert {n: o["type"] for n, o in objs.items()} == {
        "gadget": "MESH", "thin": "CURVES", "thick": "CURVES", "frames": "CURVES"}
    _check_mesh(objs["gadget"], traj, 3, 3)
    _check_rods(objs, traj, 3, 3)


@pytest.mark.parametrize("fmt", ["mixed_obj", "mixed_ply"])
def test_mixed_mesh_obj_and_ply(seen, runs, fmt):
    traj = runs["mixed"]
    (o,) = _objects(seen[fmt], "MESH").values()
    _check_mesh(o, traj, 1, 3)
    chains = rod_chains(traj.extra_segments - 3, traj.extra_segment_radii)
    rod_edges = {tuple(sorted(p)) for c in chains for p in zip(c.points[:-1], c.points[1:])}
    assert rod_edges <= {tuple(sorted(e)) for e in o["frames"]["1"]["edges"]}
    if fmt == "mixed_ply":
        r = np.asarray(o["frames"]["1"]["radius"])
        assert r[6] == pytest.approx(rf.THIN) and r[9] == pytest.approx(rf.THICK)



def test_obj_objects_of_strands_and_a_mesh(seen):
    """Strands and a deformable mesh in one OBJ: two mesh objects, edges and faces."""
    traj = sample_trajectory(3)
    objs = _objects(seen["sample_obj"], "MESH")
    assert set(objs) == {"strands", "cloth"}
    strands, cloth = objs["strands"]["frames"]["1"], objs["cloth"]["frames"]["1"]
    assert np.allclose(strands["positions"], traj.positions[2], atol=F32)
    assert len(strands["edges"]) == len(_edges_of_strands(traj)) and strands["faces"] == []
    assert np.allclose(cloth["positions"], traj.extra_points[2][3:7], atol=F32)
    assert _faces(cloth["faces"]) == _faces((traj.extra_triangles - 3).tolist())
