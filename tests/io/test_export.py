"""OBJ and PLY polyline export, parsed back and compared with the input."""
import numpy as np
import pytest

from strandlab.io.export import export_frames, write_obj_polylines, write_ply_polylines
from strandlab.io.trajectory import Trajectory, load_trajectory, save_trajectory


def _strands():
    """An open strand of 4 vertices and a closed one of 3; points [7, 3], offsets, flags."""
    rng = np.random.default_rng(11)
    return rng.normal(size=(7, 3)) * 0.1, np.array([0, 4, 7]), np.array([False, True])


def _parse_obj(path):
    verts, lines = [], []
    for raw in path.read_text().splitlines():
        parts = raw.split()
        if not parts or parts[0] == "#":
            continue
        if parts[0] == "v":
            verts.append([float(v) for v in parts[1:]])
        elif parts[0] == "l":
            lines.append([int(i) for i in parts[1:]])
        else:
            raise AssertionError(f"unexpected OBJ line {raw!r}")
    return np.array(verts), lines


def _parse_ply(path):
    text = path.read_text().splitlines()
    assert text[0] == "ply" and text[1] == "format ascii 1.0"
    end = text.index("end_header")
    elements, current = [], None
    for line in text[2:end]:
        parts = line.split()
        if parts[0] == "element":
            current = (parts[1], int(parts[2]), [])
            elements.append(current)
        elif parts[0] == "property":
            current[2].append((parts[1], parts[2]))
    rows = text[end + 1:]
    out, k = {}, 0
    for name, count, props in elements:
        block = rows[k:k + count]
        k += count
        out[name] = {pname: np.array([float(r.split()[j]) for r in block])
                     for j, (_, pname) in enumerate(props)}
        out[name + "_types"] = [t for t, _ in props]
    assert k == len(rows)
    return out


def test_obj_round_trip(tmp_path):
    pts, off, closed = _strands()
    p = write_obj_polylines(tmp_path / "s.obj", pts, off, closed)
    verts, lines = _parse_obj(p)
    assert np.array_equal(verts, pts)
    assert lines == [[1, 2, 3, 4], [5, 6, 7, 5]]
    verts, lines = _parse_obj(write_obj_polylines(tmp_path / "open.obj", pts, off))
    assert lines == [[1, 2, 3, 4], [5, 6, 7]]


def test_ply_round_trip_with_radii(tmp_path):
    pts, off, closed = _strands()
    p = write_ply_polylines(tmp_path / "s.ply", pts, off, closed, radii=[0.01, 0.002])
    ply = _parse_ply(p)
    v = ply["vertex"]
    assert np.array_equal(np.c_[v["x"], v["y"], v["z"]], pts)
    assert np.array_equal(v["radius"], [0.01] * 4 + [0.002] * 3)
    edges = np.c_[ply["edge"]["vertex1"], ply["edge"]["vertex2"]].astype(int).tolist()
    assert edges == [[0, 1], [1, 2], [2, 3], [4, 5], [5, 6], [6, 4]]
    assert ply["edge_types"] == ["int", "int"]


def test_ply_without_radii(tmp_path):
    pts, off, _ = _strands()
    ply = _parse_ply(write_ply_polylines(tmp_path / "s.ply", pts, off))
    assert set(ply["vertex"]) == {"x", "y", "z"}
    assert len(ply["edge"]["vertex1"]) == 5


def test_single_vertex_strand_has_no_line(tmp_path):
    pts = np.zeros((3, 3))
    pts[1:, 0] = [1, 2]
    verts, lines = _parse_obj(write_obj_polylines(tmp_path / "a.obj", pts, [0, 1, 3]))
    assert len(verts) == 3 and lines == [[2, 3]]


def test_input_errors_name_the_problem(tmp_path):
    pts, off, closed = _strands()
    with pytest.raises(ValueError, match=r"points must have shape \[n, 3\]"):
        write_obj_polylines(tmp_path / "a.obj", pts[:, :2], off)
    with pytest.raises(ValueError, match="offsets must start at 0 and end at 7"):
        write_obj_polylines(tmp_path / "a.obj", pts, [0, 4, 6])
    with pytest.raises(ValueError, match=r"closed must have shape \[2\]"):
        write_ply_polylines(tmp_path / "a.ply", pts, off, [True])
    with pytest.raises(ValueError, match=r"radii must have shape \[2\]"):
        write_ply_polylines(tmp_path / "a.ply", pts, off, radii=[1.0, 2.0, 3.0])
    with pytest.raises(ValueError, match=r"radii\[1\] = -1"):
        write_ply_polylines(tmp_path / "a.ply", pts, off, radii=[1.0, -1.0])
    bad = pts.copy()
    bad[5, 2] = np.inf
    with pytest.raises(ValueError, match="non-finite coordinates at vertex 5"):
        write_ply_polylines(tmp_path / "a.ply", bad, off)
    with pytest.raises(FileNotFoundError, match="missing_dir"):
        write_obj_polylines(tmp_path / "missing_dir" / "a.obj", pts, off)


def _trajectory(n_frames=5):
    pts, off, closed = _strands()
    shift = np.arange(n_frames)[:, None, None] * np.array([0.0, 0.0, -0.1])
    return Trajectory(times=np.arange(n_frames) * 0.1, positions=pts[None] + shift,
                      d1=np.tile([1.0, 0.0, 0.0], (n_frames, 6, 1)), strand_offsets=off,
                      edge_offsets=[0, 3, 6], closed=closed, radii=[0.01, 0.002],
                      extra_points=np.zeros((n_frames, 0, 3)),
                      extra_triangles=np.zeros((0, 3), dtype=int))


@pytest.mark.parametrize("fmt, stored", [("obj", False), ("ply", False), ("obj", True)])
def test_export_frames(tmp_path, fmt, stored):
    tr = _trajectory()
    if stored:      # read lazily from an .h5 file
        tr = load_trajectory(save_trajectory(tmp_path / "t.h5", tr))
    paths = export_frames(tr, tmp_path / "out" / "seq", fmt=fmt, every=2)
    assert [p.name for p in paths] == [f"frame_0000{k}.{fmt}" for k in (0, 2, 4)]
    for p, k in zip(paths, (0, 2, 4)):
        if fmt == "obj":
            verts, lines = _parse_obj(p)
            assert lines[1] == [5, 6, 7, 5]
        else:
            v = _parse_ply(p)["vertex"]
            verts = np.c_[v["x"], v["y"], v["z"]]
            assert v["radius"][0] == 0.01
        assert np.array_equal(verts, tr.positions[k])
    if stored:
        tr.close()


def test_export_frames_errors(tmp_path):
    tr = _trajectory()
    with pytest.raises(ValueError, match="fmt must be one of obj, ply"):
        export_frames(tr, tmp_path, fmt="stl")
    with pytest.raises(ValueError, match="every must be an integer >= 1"):
        export_frames(tr, tmp_path, every=0)
    with pytest.raises(TypeError, match="Trajectory"):
        export_frames(tr.positions, tmp_path)
