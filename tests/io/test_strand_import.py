"""Strand import: OBJ polylines and hair files into points + offsets and a SceneBuilder; the
frame selection and grouping the exporters share."""
import numpy as np
import pytest
from interchange_fixtures import sample_trajectory

import strandlab as sl
from strandlab.io.export import write_obj_polylines
from strandlab.io.hairfile import Hair, write_hair
from strandlab.io.selection import extra_parts, frame_rate, select_frames, strand_groups
from strandlab.io.strands import Strands, read_obj_strands, read_strands

MAT = sl.Material(young_modulus=1e7, density=1000.0, radius=0.003)


def test_obj_round_trip_with_a_closed_strand(tmp_path):
    traj = sample_trajectory(2)
    p = write_obj_polylines(tmp_path / "s.obj", traj.positions[1], traj.strand_offsets,
                            traj.closed)
    s = read_strands(p)
    assert np.array_equal(s.offsets, traj.strand_offsets)
    assert np.array_equal(s.closed, traj.closed)
    assert np.array_equal(s.points, traj.positions[1])          # %.17g: exact
    assert s.radius is None
    assert np.array_equal(read_strands(p, scale=0.01).points, 0.01 * traj.positions[1])


def test_obj_relative_indices_and_ignored_statements(tmp_path):
    p = tmp_path / "r.obj"
    p.write_text("o hair\nv 0 0 0\nv 0 0 1\nv 0 1 1\nvn 0 0 1\nl -3 -2 -1\n"
                 "v 5 5 5\nv 6 5 5\nf 1 2 3\nl 4/1 5/2\n")
    s = read_obj_strands(p)
    assert s.vertex_counts.tolist() == [3, 2] and not s.closed.any()
    assert np.array_equal(s.strand(1), [[5, 5, 5], [6, 5, 5]])


@pytest.mark.parametrize("text, message", [
    ("v 0 0 0\nv 1 0 0\nl 1 3\n", r"line 3: vertex index 3 refers to no vertex \(2 defined"),
    ("v 0 0 0\nv 1 x 0\n", "line 2: malformed vertex"),
    ("v 0 0 0\nl 1\n", "line 2: a polyline needs 2 vertices"),
    ("v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n", "no polyline"),
])
def test_malformed_obj_is_named(tmp_path, text, message):
    p = tmp_path / "bad.obj"
    p.write_text(text)
    with pytest.raises(ValueError, match=message):
        read_strands(p)


def test_hair_file_and_builder(tmp_path):
    pts = [np.array([[0, 0, 0.0], [0, 0, -0.01], [0, 0.001, -0.02]]),
           np.array([[0.01, 0, 0], [0.01, 0, -0.01], [0.01, 0, -0.02], [0.01, 0, -0.03]])]
    hair = Hair.from_strands(pts, thickness=[np.full(3, 1e-4), np.full(4, 2e-4)])
    p = write_hair(tmp_path / "h.hair", hair)
    s = read_strands(p)
    assert s.vertex_counts.tolist() == [3, 4] and not s.closed.any()
    assert np.allclose(s.points, np.vstack(pts), atol=1e-9)
    assert np.allclose(s.radius, np.r_[np.full(3, 5e-5), np.full(4, 1e-4)])
    b = sl.SceneBuilder()
    handles = s.add_to(b, material=MAT, clamp_roots=True)
    scene = b.build()
    assert handles.tolist() == [0, 1] and scene.n_vertices == 7
    assert np.allclose(scene.strands[1].radius, 1e-4)
    assert len(scene.frames) == 2 and len(scene.frame_attachments) == 2
    b2 = sl.SceneBuilder()
    s.add_to(b2, material=MAT, use_radius=False)
    assert np.allclose(b2.build().strands[0].radius, 0.003)


def test_builder_keeps_closed_strands_and_names_bad_ones():
    ring = np.array([[1, 0, 0], [0, 1, 0], [-1, 0, 0], [0, -1, 0.0]])
    s = Strands(np.vstack([ring, [[0, 0, 0], [0, 0, 0]]]), [0, 4, 6], [True, False])
    b = sl.SceneBuilder()
    with pytest.raises(ValueError, match="imported 1: points 0 and 1 coincide"):
        s.add_to(b, material=MAT, name="imported")
    scene = sl.SceneBuilder()
    s.subset([0]).add_to(scene, material=MAT)
    assert scene.build().strands[0].closed


def test_read_strands_errors(tmp_path):
    (tmp_path / "x.ply").write_text("ply\n")
    with pytest.raises(ValueError, match=r"unknown strand file format '\.ply'"):
        read_strands(tmp_path / "x.ply")
    with pytest.raises(FileNotFoundError, match="nope.obj"):
        read_strands(tmp_path / "nope.obj")
    (tmp_path / "a.obj").write_text("v 0 0 0\nv 1 0 0\nl 1 2\n")
    with pytest.raises(ValueError, match="time applies to animated USD and Alembic"):
        read_strands(tmp_path / "a.obj", time=0.5)
    with pytest.raises(ValueError, match="scale must be a positive number"):
        read_strands(tmp_path / "a.obj", scale=-1)


@pytest.mark.parametrize("spec, want", [
    (None, [0, 1, 2, 3, 4, 5]), ("2", [2]), (5, [5]), ("1:5:2", [1, 3]), (":3", [0, 1, 2]),
    ("4:", [4, 5]), ("::3", [0, 3]), ("0:6", [0, 1, 2, 3, 4, 5]),
])
def test_frame_selection(spec, want):
    assert select_frames(spec, 6).tolist() == want


@pytest.mark.parametrize("spec, message", [
    ("6", r"frame 6 is out of range: the run has 6 frames \(0 .. 5\)"),
    ("0:7", "stop 7 is past the end"), ("6:", "start 6 is out of range"),
    ("3:3", "selects no frame"), ("::0", "step must be >= 1"), ("-1", "is negative"),
    ("a:b", "is not 'A:B:S'"), ("1:2:3:4", "is not 'A:B:S'"),
])
def test_frame_selection_errors(spec, message):
    with pytest.raises(ValueError, match=message):
        select_frames(spec, 6)


def test_groups_and_parts_follow_the_recorded_scene():
    traj = sample_trajectory(2)
    groups = strand_groups(traj)
    assert [(g.name, g.strands.tolist(), g.closed) for g in groups] == [
        ("material_0", [0, 3], False), ("material_1_closed", [1], True),
        ("material_1", [2], False)]
    assert groups[0].vertex_index(traj.strand_offsets).tolist() == [0, 1, 2, 3, 12, 13]
    parts = extra_parts(traj)
    assert [(p.kind, p.name, p.start, p.stop) for p in parts] == [
        ("points", "frames", 0, 3), ("mesh", "cloth", 3, 7)]
    assert parts[1].triangles.tolist() == [[0, 1, 2], [0, 2, 3]]
    assert frame_rate(traj) == pytest.approx(30.0)
    traj.metadata = {}                          # a trajectory that records nothing
    assert [g.name for g in strand_groups(traj)] == ["strands", "strands_closed"]
    assert [(p.kind, p.name, p.stop) for p in extra_parts(traj)] == [("mesh", "extra_mesh", 7)]
    assert frame_rate(traj) == pytest.approx(30.0)          # from the frame times
