"""Mistakes in mixed rod/shell/solid mesh files are refused naming the file and what is wrong
with it, as the file numbers it: a vertex that is not finite (used by a cell or not), materials
for parts the file does not have, a name two Gmsh groups share, VTU part tags that are no whole
numbers or have two names, Gmsh files meshio cannot read (cut off, a count that is wrong, an
element naming a node that is not there, elements without tags, empty), a Gmsh script meshed
to nothing, a folder given as the mesh file."""
import re

import numpy as np
import pytest

from strandlab.cli import main
from strandlab.io.mesh_info import describe_mesh_file
from strandlab.io.simplicial import (
    file_contents,
    file_groups,
    read_simplicial,
    write_simplicial,
)
from strandlab.sim.material import Material
from strandlab.sim.simplicial import ShellMaterial, SolidMaterial

meshio = pytest.importorskip("meshio")

ROD = Material(young_modulus=1e9, density=1e3, radius=0.005)
SHELL = ShellMaterial(1e7, 0.3, 1e-3, 1e3)
SOLID = SolidMaterial(1e6, 0.3, 1e3)
MATS = {"pole": ROD, "flap": SHELL, "block": SOLID}

# a rod (pole) standing on a block of tetrahedra (block) with a flap of triangles on its side,
# as Gmsh 2.2 writes it: nodes 1-12, elements 1-10
NODES = [(0, 0, 0), (0.1, 0, 0), (0, 0.1, 0), (0.1, 0.1, 0), (0, 0, 0.1), (0.1, 0, 0.1),
         (0, 0.1, 0.1), (0.1, 0.1, 0.1), (0.2, 0, 0.1), (0.2, 0.1, 0.1), (0, 0.1, 0.2),
         (0, 0.1, 0.3)]
ELEMENTS = ["1 1 2 1 1 7 11", "2 1 2 1 1 11 12", "3 2 2 2 2 6 9 10", "4 2 2 2 2 6 10 8",
            "5 4 2 3 3 1 2 3 5", "6 4 2 3 3 2 3 5 6", "7 4 2 3 3 5 6 3 7",
            "8 4 2 3 3 2 3 6 4", "9 4 2 3 3 3 7 6 4", "10 4 2 3 3 6 7 8 4"]
NAMES = ['1 1 "pole"', '2 2 "flap"', '3 3 "block"']


def _msh_text(nodes=NODES, elements=ELEMENTS, names=NAMES, *, node_count=None,
              name_count=None) -> str:
    """A Gmsh 2.2 ASCII file of ``nodes``, ``elements`` (lines) and physical ``names`` (lines),
    the sections' counts given where they should be wrong."""
    rows = [f"{k + 1} {x!r} {y!r} {z!r}" for k, (x, y, z) in enumerate(nodes)]
    return "\n".join(["$MeshFormat", "2.2 0 8", "$EndMeshFormat", "$PhysicalNames",
                      str(len(names) if name_count is None else name_count), *names,
                      "$EndPhysicalNames", "$Nodes",
                      str(len(nodes) if node_count is None else node_count), *rows,
                      "$EndNodes", "$Elements", str(len(elements)), *elements,
                      "$EndElements"]) + "\n"


def _msh(tmp_path, name="base.msh", **kw):
    p = tmp_path / name
    p.write_text(_msh_text(**kw))
    return p


def test_the_base_file_is_read(tmp_path):
    """The files below are this one with one mistake each."""
    spec = read_simplicial(_msh(tmp_path), materials=MATS)
    assert [p.name for p in spec.parts] == ["pole", "flap", "block"]
    assert len(spec.vertices) == 12 and len(spec.tets) == 6


# ------------------------------------------------------------------ 1, 2: vertices not finite
@pytest.mark.parametrize("bad, shown", [(float("nan"), r"\[0\.0, 0\.1, nan\]"),
                                        (float("inf"), r"\[0\.0, 0\.1, inf\]")])
def test_the_mesh_command_names_the_file_and_the_vertex_not_finite(tmp_path, capsys, bad,
                                                                   shown):
    p = _msh(tmp_path, nodes=NODES[:-1] + [(0, 0.1, bad)])
    assert main(["mesh", str(p)]) == 2
    err = capsys.readouterr().err
    assert re.search(rf"base\.msh: vertex 11 \(node 12 of the file\) is not finite: {shown}",
                     err), err
    with pytest.raises(ValueError, match=r"base\.msh: vertex 11 \(node 12 of the file\) is "
                                         r"not finite"):
        describe_mesh_file(p)


def test_a_vertex_no_cell_uses_must_be_finite_too(tmp_path):
    p = _msh(tmp_path, nodes=NODES + [(np.nan, np.nan, np.nan)])
    with pytest.raises(ValueError, match=r"base\.msh: vertex 12 \(node 13 of the file\) is not "
                                         r"finite: \[nan, nan, nan\]"):
        read_simplicial(p, materials=MATS)
    with pytest.raises(ValueError, match="vertex 12 .* is not finite"):
        file_groups(p)
    # a VTU file's points are numbered from 0, as its cells name them
    spec = read_simplicial(_msh(tmp_path), materials=MATS)
    v = write_simplicial(tmp_path / "m.vtu", spec)
    mesh = meshio.read(v)
    mesh.points = np.concatenate([mesh.points, [[0.0, np.inf, 0.0]]])
    meshio.write(v, mesh)
    with pytest.raises(ValueError, match=r"m\.vtu: vertex 12 is not finite: \[0\.0, inf, 0\.0\]"):
        read_simplicial(v, materials=MATS)


# ---------------------------------------------------------------- 3: materials of no part
def test_materials_for_parts_the_file_does_not_have_are_refused(tmp_path):
    names = NAMES + ['0 4 "tip"']
    p = _msh(tmp_path, names=names, elements=ELEMENTS + ["11 15 2 4 4 12"])
    with pytest.raises(ValueError, match=r"base\.msh: materials name 'flapp', which the file "
                                         r"does not have as a part; its parts: pole, flap, "
                                         r"block; its groups of points: tip$"):
        read_simplicial(p, materials={**MATS, "flapp": SHELL})
    with pytest.raises(ValueError, match=r"materials name 'tip', a group of points of the "
                                         r"file, which is no part"):
        read_simplicial(p, materials={**MATS, "tip": ROD})
    # a part by its tag, a group held by name (no material), a group's material left out
    # with it: all names of the file
    spec = read_simplicial(p, materials={1: ROD, "flap": SHELL, "block": SOLID})
    assert [q.name for q in spec.parts] == ["pole", "flap", "block"]
    spec = read_simplicial(p, materials={"pole": ROD, "block": SOLID}, groups=["flap", "tip"])
    assert [q.name for q in spec.parts] == ["pole", "block"]


def test_a_usd_material_of_no_part_is_refused_and_its_names_still_work(tmp_path):
    pytest.importorskip("pxr")
    from pxr import Usd, UsdGeom

    p = tmp_path / "banner.usda"
    stage = Usd.Stage.CreateNew(str(p))
    UsdGeom.SetStageUpAxis(stage, UsdGeom.Tokens.z)
    m = UsdGeom.Mesh.Define(stage, "/root/Banner/Grid")
    m.CreatePointsAttr([(0, 0, 0), (0.1, 0, 0), (0.2, 0, 0), (0, 0, 0.1), (0.1, 0, 0.1),
                        (0.2, 0, 0.1)])
    m.CreateFaceVertexCountsAttr([4, 4])
    m.CreateFaceVertexIndicesAttr([0, 1, 4, 3, 1, 2, 5, 4])
    UsdGeom.Subset.CreateGeomSubset(m, "hem", UsdGeom.Tokens.face, [1])
    UsdGeom.Subset.CreateGeomSubset(m, "pins", UsdGeom.Tokens.point, [0, 3])
    stage.GetRootLayer().Save()
    for mats in ({"Banner": SHELL}, {"/root/Banner/Grid": SHELL}, {"Grid": SHELL, "hem": SHELL},
                 {"Banner": SHELL, "pins": SHELL}):
        assert read_simplicial(p, materials=mats).parts
    with pytest.raises(ValueError, match=r"banner\.usda: materials name 'Baner', which the "
                                         r"file does not have as a part; its parts: "
                                         r"/root/Banner/Grid, hem; its face subsets: "
                                         r"/root/Banner/Grid/hem"):
        read_simplicial(p, materials={"/root/Banner/Grid": SHELL, "hem": SHELL,
                                      "Baner": SHELL})


def test_an_obj_material_of_no_part_is_refused(tmp_path):
    p = tmp_path / "flag.obj"
    p.write_text("o flag\nv 0 0 0\nv 1 0 0\nv 1 1 0\nf 1 2 3\n")
    with pytest.raises(ValueError, match=r"flag\.obj: materials name 'flagg', which the file "
                                         r"does not have as a part; its parts: flag"):
        read_simplicial(p, materials={"flag": SHELL, "flagg": SHELL})


# ------------------------------------------------------------ 4: one name, two Gmsh groups
def test_a_name_two_gmsh_groups_share_is_refused(tmp_path):
    p = _msh(tmp_path, names=['1 1 "pole"', '2 2 "pole"', '3 3 "block"'])
    with pytest.raises(ValueError, match=r"base\.msh: two physical groups are named 'pole' in "
                                         r"\$PhysicalNames: the curve 1 and the surface 2"):
        read_simplicial(p, materials=MATS)
    with pytest.raises(ValueError, match=r"names the physical curve 1 twice, 'pole' and "
                                         r"'mast'"):
        file_contents(_msh(tmp_path, names=NAMES + ['1 1 "mast"']))


# --------------------------------------------------------------------------- 5: VTU tags
def _vtu(tmp_path, change):
    spec = read_simplicial(_msh(tmp_path), materials=MATS)
    p = write_simplicial(tmp_path / "m.vtu", spec)
    text = p.read_text()
    p.write_text(change(text))
    return p


def test_vtu_part_tags_that_are_no_whole_numbers_are_refused(tmp_path):
    from strandlab.io.vtu_series import add_field_data

    mesh = meshio.read(_vtu(tmp_path, lambda t: t))
    names = {"pole": np.array([1, 1]), "flap": np.array([2, 2]), "block": np.array([3, 3])}
    p = tmp_path / "f.vtu"
    for shift, ok in ((0.5, False), (0.0, True)):   # whole numbers written as floats: read
        mesh.cell_data["part"] = [np.asarray(a, dtype=float) + shift
                                  for a in meshio.read(tmp_path / "m.vtu").cell_data["part"]]
        meshio.write(p, mesh)
        add_field_data(p, names)
        if ok:
            assert len(read_simplicial(p, materials=MATS).parts) == 3
            continue
        with pytest.raises(ValueError, match=r"f\.vtu: cell block 0 \(line cells\), cell 0: "
                                             r"part tag 1\.5 is not a whole number"):
            read_simplicial(p, materials=MATS)


def test_two_names_of_one_vtu_tag_are_refused(tmp_path):
    def second_name(text):
        row = re.search(r'<DataArray[^>]*Name="pole".*?</DataArray>\n', text, re.S).group(0)
        return text.replace(row, row + row.replace('Name="pole"', 'Name="mast"'), 1)

    p = _vtu(tmp_path, second_name)
    with pytest.raises(ValueError, match=r"m\.vtu: tag 1 \(of dimension 1\) has two names in "
                                         r"the file, 'pole' and 'mast'"):
        read_simplicial(p, materials=MATS)


# ------------------------------------------------------------- 6: Gmsh files meshio fails on
BROKEN = {
    "node_past_the_nodes": (dict(elements=ELEMENTS[:1] + ["2 1 2 1 1 11 99"] + ELEMENTS[2:]),
                            r"element 2 \(line 28\) names node 99, which the file does not "
                            r"have: its 12 nodes are numbered 1 to 12"),
    "element_without_tags": (dict(elements=ELEMENTS[:2] + ["3 2 0 6 9 10"] + ELEMENTS[3:]),
                             r"element 3 \(line 29\) has no tags, so no physical group"),
    "names_count": (dict(name_count=5),
                    r"\$PhysicalNames \(line 4\) announces 5 names but lists 3"),
    "nodes_count": (dict(node_count=14), r"\$Nodes announces 14 nodes but lists 12"),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_a_broken_gmsh_file_is_named_in_words(tmp_path, capsys, case):
    edits, said = BROKEN[case]
    p = _msh(tmp_path, **edits)
    with pytest.raises(ValueError, match=rf"base\.msh: (cannot read the mesh \()?{said}"):
        read_simplicial(p, materials=MATS)
    assert main(["mesh", str(p)]) == 2
    assert re.search(said, capsys.readouterr().err)


def test_an_empty_or_cut_off_gmsh_file_is_named(tmp_path):
    p = tmp_path / "empty.msh"
    p.write_text("")
    with pytest.raises(ValueError, match=r"empty\.msh: cannot read the mesh \(the file is "
                                         r"empty\)"):
        read_simplicial(p, materials=MATS)
    text = _msh_text()
    p.write_text(text[:text.index("6 4 2 3 3") + len("6 4 2")])
    with pytest.raises(ValueError, match=r"empty\.msh: cannot read the mesh \(the file ends "
                                         r"inside \$Elements, at line 32, 6 lines into the 10 "
                                         r"elements it announces: it is cut off\)"):
        file_contents(p)
    p.write_text(text[:text.index("8 0.1 0.1")])
    with pytest.raises(ValueError, match=r"the file ends inside \$Nodes"):
        file_groups(p)


def test_an_element_naming_a_node_number_the_file_skips_is_refused(tmp_path):
    """Node numbers need not be 1 to N: meshio reads a number the file skips as node -1."""
    text = _msh_text(elements=ELEMENTS[:1] + ["2 1 2 1 1 11 13"] + ELEMENTS[2:])
    p = tmp_path / "gap.msh"
    p.write_text(text.replace("\n12 0 0.1 0.3\n", "\n14 0 0.1 0.3\n"))
    with pytest.raises(ValueError, match=r"gap\.msh: cannot read the mesh \(element 2 \(line "
                                         r"28\) names node 13, which the file does not have: "
                                         r"its 12 nodes are numbered 1 to 14\)"):
        read_simplicial(p, materials=MATS)


# ----------------------------------------------------------------- 7: an empty Gmsh script
def test_an_empty_gmsh_script_is_named(tmp_path):
    pytest.importorskip("gmsh")
    p = tmp_path / "model.geo"
    p.write_text("// nothing yet\n")
    with pytest.raises(ValueError, match=r"model\.geo: Gmsh made no mesh of the script \(no "
                                         r"elements"):
        read_simplicial(p, materials=MATS)


# --------------------------------------------------------------- 8: a folder, not a file
def test_a_folder_given_as_the_mesh_file_is_named_a_folder(tmp_path, capsys):
    folder = tmp_path / "adir.msh"
    folder.mkdir()
    with pytest.raises(IsADirectoryError, match=r"adir\.msh is a directory, not a mesh file"):
        read_simplicial(folder, materials=MATS)
    with pytest.raises(IsADirectoryError, match="is a directory"):
        file_groups(tmp_path)
    assert main(["mesh", str(folder)]) == 2
    assert "adir.msh is a directory, not a mesh file" in capsys.readouterr().err


def test_materials_not_given_as_a_mapping_are_named(tmp_path):
    with pytest.raises(TypeError, match="materials must map part names to materials, got list"):
        read_simplicial(_msh(tmp_path), materials=[ROD, SHELL, SOLID])


def test_connections_not_given_as_connections_are_named(tmp_path):
    with pytest.raises(TypeError, match=r"base\.msh: connections\[0\] must be a Connection, "
                                        r"got dict"):
        read_simplicial(_msh(tmp_path), materials=MATS,
                        connections=[{"kind": "point", "parts": ("pole", "block")}])
