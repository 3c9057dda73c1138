"""A run as a VTU time series for ParaView: each frame's grid holds the frame's points, the
strands and rod edges as lines, shell triangles, solids as tetrahedra (not their faces), the
parts named in the field data; the .pvd collection lists each file at its time, and VTK's own
readers read both."""
import dataclasses
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

from strandlab.cli import main
from strandlab.io.interchange import export_trajectory
from strandlab.io.scenefile import load_scene_file
from strandlab.io.vtu_series import PVD_NAME, write_vtu_series
from strandlab.sim.runner import simulate

meshio = pytest.importorskip("meshio")
EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


@pytest.fixture(scope="module")
def flag(tmp_path_factory):
    """The flag example, its mesh named apart from its parts ("flagpole")."""
    folder = tmp_path_factory.mktemp("flag")
    text = (EXAMPLES / "flag.toml").read_text()
    text = text.replace('file = "flag.msh"', f'file = {str(EXAMPLES / "flag.msh")!r}\n'
                                             'name = "flagpole"')
    (folder / "flag.toml").write_text(text)
    return simulate(load_scene_file(folder / "flag.toml").with_overrides(frames=3))


def _cells(mesh):
    """{cell type: (cells, part names, kinds)} of a meshio mesh read back."""
    names = {int(v[0]): k for k, v in mesh.field_data.items()}
    return {b.type: (b.data, [names[int(p)] for p in part], np.asarray(kind))
            for b, part, kind in zip(mesh.cells, mesh.cell_data["part"],
                                     mesh.cell_data["kind"])}


def test_each_frame_is_its_points_and_the_meshes_cells(flag, tmp_path):
    files = write_vtu_series(flag, tmp_path / "vtu", frames="1:4")
    assert [p.name for p in files] == ["frame_00001.vtu", "frame_00002.vtu",
                                       "frame_00003.vtu", PVD_NAME]
    m = meshio.read(files[2])
    np.testing.assert_allclose(m.points, flag.extra_points[3], rtol=0, atol=1e-15)
    cells = _cells(m)
    assert set(cells) == {"line", "triangle", "tetra"}
    lines, line_parts, line_kinds = cells["line"]
    np.testing.assert_array_equal(lines, flag.extra_segments)
    assert set(line_parts) == {"pole"} and np.all(line_kinds == 1)
    # the flag's 192 shell triangles, none of the foot's boundary faces
    triangles, tri_parts, tri_kinds = cells["triangle"]
    assert len(triangles) == 192 and set(tri_parts) == {"flag"} and np.all(tri_kinds == 2)
    assert not np.isin(triangles, flag.extra_tetrahedra).all(axis=1).any()
    tets, tet_parts, tet_kinds = cells["tetra"]
    np.testing.assert_array_equal(tets, flag.extra_tetrahedra)
    assert set(tet_parts) == {"foot"} and np.all(tet_kinds == 3)
    r = m.point_data["radius"]
    pole = np.unique(flag.extra_segments)
    assert np.all(r[pole] == 0.01) and np.all(np.delete(r, pole) == 0.0)


def test_the_collection_lists_each_file_at_its_time_and_vtk_reads_it(flag, tmp_path):
    files = write_vtu_series(flag, tmp_path)
    sets = ET.parse(tmp_path / PVD_NAME).getroot().find("Collection").findall("DataSet")
    assert [float(d.get("timestep")) for d in sets] == list(flag.times)
    assert [d.get("file") for d in sets] == [p.name for p in files[:-1]]
    pv = pytest.importorskip("pyvista")
    reader = pv.get_reader(tmp_path / PVD_NAME)
    assert reader.time_values == pytest.approx(list(flag.times))
    reader.set_active_time_value(reader.time_values[2])
    grid = reader.read()[0]
    np.testing.assert_allclose(grid.points, flag.extra_points[2], atol=1e-15)
    assert sorted(grid.field_data.keys()) == ["flag", "foot", "pole"]
    assert np.bincount(grid.celltypes).nonzero()[0].tolist() == [3, 5, 10]  # line tri tetra


def test_a_run_without_its_parts_writes_a_mesh_s_solid_once(flag, tmp_path):
    bare = dataclasses.replace(flag, metadata={})
    (path, _) = write_vtu_series(bare, tmp_path, frames="0")
    cells = _cells(meshio.read(path))
    assert len(cells["tetra"][0]) == 24 and len(cells["triangle"][0]) == 192
    assert {n for c in cells.values() for n in c[1]} == {"extra_mesh"}     # no record


def test_strands_are_lines_with_their_radii(tmp_path):
    traj = simulate(load_scene_file(EXAMPLES / "hanging_rope.toml").with_overrides(frames=2))
    (path, _) = write_vtu_series(traj, tmp_path, frames="2")
    m = meshio.read(path)
    lines, parts, kinds = _cells(m)["line"]
    n = int(traj.strand_offsets[-1])
    assert len(lines) == n - (len(traj.strand_offsets) - 1) and set(parts) == {"strands"}
    assert np.all(kinds == 0)
    np.testing.assert_allclose(m.points[:n], traj.positions[2], atol=1e-15)
    np.testing.assert_allclose(m.point_data["radius"][:n], traj.vertex_radii)


def test_the_export_command_writes_vtu(tmp_path, capsys):
    run = tmp_path / "run"
    assert main(["run", str(EXAMPLES / "flag.toml"), "--frames", "2", "--out", str(run),
                 "--quiet"]) == 0
    assert main(["export", str(run), "--format", "vtu", "--quiet"]) == 0
    assert sorted(p.name for p in (run / "vtu").iterdir()) == [
        "frame_00000.vtu", "frame_00001.vtu", "frame_00002.vtu", PVD_NAME]
    assert main(["export", str(run), "--format", "vtu", "--d1"]) == 2
    assert "d1 is written to USD files only" in capsys.readouterr().err
    with pytest.raises(ValueError, match="vtu export keeps strandlab's z-up coordinates"):
        export_trajectory(__import__("strandlab").io.interchange.open_run(run), "vtu",
                          tmp_path / "v", up_axis="Y")
