"""Groups of a Gmsh file that are no parts: a physical surface on a solid's face, a physical
point, authored in Gmsh to be held; their cells stay out of the mesh, their vertices are held by
name in a scene file.  Gmsh numbers physical groups per dimension: a surface 1 and a volume 1
are two groups with their own names."""
import numpy as np
import pytest

from strandlab.io.scenefile import load_scene_file
from strandlab.io.simplicial import file_cells, file_groups, read_simplicial
from strandlab.sim.runner import simulate
from strandlab.sim.simplicial import SolidMaterial

gmsh = pytest.importorskip("gmsh")
pytest.importorskip("meshio")

SCENE = """
[scene]
dt = 0.01
frames = 3
[solver]
type = "mixed"
[[simplicial]]
file = "block.msh"
[simplicial.parts.block]
kind = "solid"
young_modulus = 2e4
poisson_ratio = 0.3
density = 1000
[[simplicial.holds]]
part = "clamp"
"""


def block_msh(path, *, tag_per_dimension: bool = False):
    """A 0.2 m x 0.1 m x 0.1 m block of tetrahedra written by Gmsh itself: the physical volume
    ``block``, the physical surface ``clamp`` (its face at x = 0) and the physical point
    ``corner`` (the origin); with ``tag_per_dimension`` the surface and the volume are both
    numbered 1, as a ``.geo`` file's ``Physical Surface(1)`` and ``Physical Volume(1)``."""
    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        gmsh.model.add("block")
        v = gmsh.model.occ.addBox(0, 0, 0, 0.2, 0.1, 0.1)
        gmsh.model.occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.06)
        face = [t for _, t in gmsh.model.getBoundary([(3, v)], oriented=False)
                if abs(gmsh.model.occ.getCenterOfMass(2, t)[0]) < 1e-9]
        corner = [t for _, t in gmsh.model.getEntities(0)
                  if np.allclose(gmsh.model.getValue(0, t, []), 0.0)]
        one = 1 if tag_per_dimension else -1
        gmsh.model.addPhysicalGroup(3, [v], tag=one, name="block")
        gmsh.model.addPhysicalGroup(2, face, tag=one, name="clamp")
        gmsh.model.addPhysicalGroup(0, corner, name="corner")
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    return path


@pytest.fixture(params=[False, True], ids=["tags apart", "tags per dimension"])
def folder(tmp_path, request):
    block_msh(tmp_path / "block.msh", tag_per_dimension=request.param)
    return tmp_path


def test_groups_are_sets_of_the_files_vertices(folder):
    x, groups = file_groups(folder / "block.msh")
    assert set(groups) == {"block", "clamp", "corner"}
    _, _, cells = file_cells(folder / "block.msh")
    assert set(cells) == {"block", "clamp"}                     # each named as in Gmsh
    assert len(cells["clamp"][1]) > 4 and not len(cells["clamp"][2])
    assert len(cells["block"][2]) > 20 and not len(cells["block"][1])
    np.testing.assert_array_equal(groups["clamp"], np.unique(cells["clamp"][1]))
    np.testing.assert_array_equal(groups["block"], np.unique(cells["block"][2]))
    assert np.all(x[groups["clamp"], 0] == 0.0)
    face = np.nonzero(x[groups["block"], 0] == 0.0)[0]
    assert len(groups["clamp"]) == len(face) >= 6               # the whole face, only it
    (corner,) = groups["corner"]
    assert np.all(x[corner] == 0.0)


def test_a_group_left_out_is_no_part(folder):
    mat = SolidMaterial(1e5, 0.3, 1000.0)
    with pytest.raises(ValueError, match=r"block\.msh: triangle \d+ has part 'clamp', which "
                                         r"has no material"):
        read_simplicial(folder / "block.msh", materials={"block": mat})
    spec = read_simplicial(folder / "block.msh", materials={"block": mat},
                           groups=("clamp", "corner"))
    assert [(p.name, p.kind) for p in spec.parts] == [("block", "solid")]
    assert not len(spec.triangles) and len(spec.tets) > 20


def test_a_scene_file_holds_a_group_by_name(folder):
    (folder / "s.toml").write_text(SCENE)
    sim = load_scene_file(folder / "s.toml")
    (spec,) = sim.scene.simplicial
    assert [p.name for p in spec.parts] == ["block"] and not len(spec.triangles)
    (hold,) = spec.holds
    held = np.array(hold.vertices)
    assert np.all(spec.vertices[held, 0] == 0.0)
    assert len(held) == np.count_nonzero(spec.vertices[:, 0] == 0.0)
    # the soft block hangs from its clamped face: the face stays, its far end sags
    x = np.asarray(simulate(sim).extra_points)
    assert np.abs(x[:, held] - x[0, held]).max() == 0.0
    assert x[0, :, 2].min() - x[-1, :, 2].min() > 1e-4


def test_a_groups_hold_narrowed_by_a_box(folder):
    (folder / "s.toml").write_text(SCENE.replace('part = "clamp"',
                                                 'part = "clamp"\nbox = [[-1, -1, -1], '
                                                 '[1, 0.05, 1]]'))
    (spec,) = load_scene_file(folder / "s.toml").scene.simplicial
    held = spec.vertices[list(spec.holds[0].vertices)]
    face = spec.vertices[spec.vertices[:, 0] == 0.0]
    assert np.all(held[:, 0] == 0.0) and np.all(held[:, 1] <= 0.05)
    assert len(held) == np.count_nonzero(face[:, 1] <= 0.05) < len(face)


@pytest.mark.parametrize("edit, message", [
    ('part = "clmap"', r"^[^:]*s\.toml: simplicial\[0\]\.holds\[0\]\.part: 'clmap' is no part of the "
                       r"file \(\[simplicial\.parts\]: block\) nor one of its groups \("),
    ('part = "clamp"\nbox = [[1, 1, 1], [2, 2, 2]]',
     r"^[^:]*s\.toml: simplicial\[0\]\.holds\[0\]\.box: no vertex of group 'clamp' lies in the "
     r"box"),
])
def test_group_hold_mistakes_are_located(folder, edit, message):
    (folder / "s.toml").write_text(SCENE.replace('part = "clamp"', edit))
    with pytest.raises(ValueError, match=message):
        load_scene_file(folder / "s.toml")


def test_the_mesh_command_shows_the_groups(folder, capsys):
    from strandlab.cli import main
    from strandlab.io.mesh_info import describe_mesh_file

    info = describe_mesh_file(folder / "block.msh")
    assert [p.name for p in info.parts] == ["clamp", "block"]
    assert info.points == (("corner", 1),) and info.groups
    assert not describe_mesh_file(_obj(folder)).groups
    assert main(["mesh", str(folder / "block.msh")]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[4].split() == ["corner", "0", "0", "0", "1", "held", "only", "(points)"]
    assert "(a hold in a scene file may name a part no material is given: its cells are then " \
           "left out," in out


def _obj(folder):
    """A one-triangle OBJ file in ``folder`` (no groups)."""
    path = folder / "t.obj"
    path.write_text("o t\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n")
    return path


def test_a_physical_group_of_several_curves_is_one_part(tmp_path):
    """A rod drawn in Gmsh as two curves, the first embedded in the block (a curve
    connection), the second sticking out: one physical group, two blocks of cells in the file,
    one part."""
    meshio = pytest.importorskip("meshio")
    from strandlab.sim.material import Material
    from strandlab.sim.simplicial import Connection, part_edges, part_vertices

    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        occ = gmsh.model.occ
        v = occ.addBox(0, 0, 0, 0.2, 0.1, 0.1)
        a, b, c = (occ.addPoint(x, 0.05, 0.05) for x in (0.05, 0.15, 0.4))
        inside, outside = occ.addLine(a, b), occ.addLine(b, c)
        occ.synchronize()
        gmsh.model.mesh.embed(1, [inside], 3, v)
        gmsh.model.mesh.embed(0, [b], 3, v)
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.04)
        gmsh.model.addPhysicalGroup(3, [v], name="block")
        gmsh.model.addPhysicalGroup(1, [inside, outside], name="rod")
        gmsh.model.mesh.generate(3)
        gmsh.write(str(tmp_path / "rod.msh"))
    finally:
        gmsh.finalize()
    blocks = [len(blk.data) for blk in meshio.read(tmp_path / "rod.msh").cells
              if blk.type == "line"]
    assert len(blocks) == 2                                     # a block per curve
    spec = read_simplicial(tmp_path / "rod.msh", materials={
        "rod": Material(young_modulus=2e11, density=7800.0, radius=0.003),
        "block": SolidMaterial(1e6, 0.45, 1000.0)},
        connections=[Connection(kind="curve", parts=("rod", "block"), bend_stiffness=1.0)])
    assert [(p.name, p.kind) for p in spec.parts] == [("rod", "rod"), ("block", "solid")]
    assert len(spec.rod_edges) == sum(blocks)
    rod = part_vertices(spec, 0)
    assert len(rod) == len(spec.rod_edges) + 1                  # one chain, 0.05 to 0.4 m
    assert spec.vertices[rod, 0].min() == pytest.approx(0.05)
    assert spec.vertices[rod, 0].max() == pytest.approx(0.4)
    shared = {tuple(e) for e in part_edges(spec, 0)} & {tuple(e) for e in part_edges(spec, 1)}
    inside_x = spec.vertices[np.array(sorted(shared)).ravel(), 0]
    assert len(shared) >= 2 and inside_x.max() == pytest.approx(0.15)


def test_a_cell_without_material_is_counted_over_the_files_blocks(tmp_path):
    """Three curves in a chain, the outer two the group ``rod``, the middle one ``tail``: the
    file's line blocks are rod, tail, rod; the first of tail's lines is counted over the file's
    lines."""
    from strandlab.sim.material import Material

    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        geo = gmsh.model.geo
        pts = [geo.addPoint(0.1 * k, 0.0, 0.0) for k in range(4)]
        curves = [geo.addLine(a, b) for a, b in zip(pts, pts[1:])]
        geo.synchronize()
        for c in curves:
            gmsh.model.mesh.setTransfiniteCurve(c, 4)               # 3 lines each
        gmsh.model.addPhysicalGroup(1, [curves[0], curves[2]], name="rod")
        gmsh.model.addPhysicalGroup(1, [curves[1]], name="tail")
        gmsh.model.mesh.generate(1)
        gmsh.write(str(tmp_path / "chain.msh"))
    finally:
        gmsh.finalize()
    steel = Material(young_modulus=2e11, density=7800.0, radius=1e-3)
    with pytest.raises(ValueError, match=r"chain\.msh: line 3 has part 'tail', which has no "):
        read_simplicial(tmp_path / "chain.msh", materials={"rod": steel})
    spec = read_simplicial(tmp_path / "chain.msh", materials={"rod": steel, "tail": steel})
    assert [p.name for p in spec.parts] == ["rod", "tail"]
    assert np.bincount(spec.rod_part).tolist() == [6, 3]


def _recombined(path, *, order: int = 1, volume: bool = False):
    """A 0.4 m x 0.2 m rectangle meshed by Gmsh in quadrilaterals (the group ``cloth``), or a
    box in hexahedra (``volume``, the group ``block``), of elements of ``order``."""
    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        occ = gmsh.model.occ
        tag = occ.addBox(0, 0, 0, 0.4, 0.2, 0.1) if volume else occ.addRectangle(0, 0, 0, 0.4,
                                                                                0.2)
        occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.05)
        gmsh.option.setNumber("Mesh.RecombineAll", 1)
        if volume:
            gmsh.option.setNumber("Mesh.Recombine3DAll", 1)
            for _, c in gmsh.model.getEntities(1):
                gmsh.model.mesh.setTransfiniteCurve(c, 3)
            for _, f in gmsh.model.getEntities(2):
                gmsh.model.mesh.setTransfiniteSurface(f)
            gmsh.model.mesh.setTransfiniteVolume(tag)
        gmsh.model.addPhysicalGroup(3 if volume else 2, [tag],
                                    name="block" if volume else "cloth")
        gmsh.option.setNumber("Mesh.ElementOrder", order)
        gmsh.model.mesh.generate(3 if volume else 2)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    return path


def test_quadrilaterals_are_cut_into_triangles(tmp_path):
    from strandlab.sim.simplicial import ShellMaterial

    path = _recombined(tmp_path / "quad.msh")
    quads = [len(b.data) for b in __import__("meshio").read(path).cells if b.type == "quad"]
    with pytest.raises(ValueError, match=r"quad\.msh: quadrilateral 0 has part 'cloth', which "
                                         r"has no material"):
        read_simplicial(path, materials={})
    spec = read_simplicial(path, materials={"cloth": ShellMaterial(1e6, 0.3, 1e-3, 300.0)})
    assert len(spec.triangles) == 2 * sum(quads) > 0
    x = spec.vertices[spec.triangles]
    n = np.cross(x[:, 1] - x[:, 0], x[:, 2] - x[:, 0])
    assert np.all(n[:, 2] > 0)                                   # as the quads face: +z
    assert 0.5 * n[:, 2].sum() == pytest.approx(0.08)            # no gap, no overlap
    # each quad's two triangles (in turn) share its shorter diagonal
    cuts = 0
    for one, two in spec.triangles.reshape(-1, 2, 3):
        shared = np.intersect1d(one, two)
        other = np.setxor1d(one, two)
        assert len(shared) == len(other) == 2
        d = [np.linalg.norm(np.subtract(*spec.vertices[e])) for e in (shared, other)]
        assert d[0] <= d[1]
        cuts += d[0] < 0.99 * d[1]
    assert cuts > 10                                            # Gmsh's quads are not squares


@pytest.mark.parametrize("order, volume, message", [
    (2, False, r"quad\.msh: group 'cloth' has quad9 cells: second-order elements are not taken: "
               r"mesh with first-order ones \(in Gmsh: Mesh\.ElementOrder = 1\)"),
    (1, True, r"quad\.msh: group 'block' has hexahedron cells: mesh solids with tetrahedra"),
])
def test_cells_strandlab_does_not_take_are_refused(tmp_path, order, volume, message):
    from strandlab.sim.simplicial import ShellMaterial

    path = _recombined(tmp_path / "quad.msh", order=order, volume=volume)
    with pytest.raises(ValueError, match=message):
        read_simplicial(path, materials={"cloth": ShellMaterial(1e6, 0.3, 1e-3, 300.0),
                                         "block": SolidMaterial(1e6, 0.3, 1e3)})


def _unnamed(path, *, surface: bool):
    """A block whose physical volume 7 has no name, with (``surface``) its face at x = 0 the
    physical surface 7, also without name."""
    gmsh.initialize(["-noenv"])
    try:
        gmsh.option.setNumber("General.Terminal", 0)
        v = gmsh.model.occ.addBox(0, 0, 0, 0.2, 0.1, 0.1)
        gmsh.model.occ.synchronize()
        gmsh.option.setNumber("Mesh.MeshSizeMax", 0.06)
        gmsh.model.addPhysicalGroup(3, [v], tag=7)
        if surface:
            face = [t for _, t in gmsh.model.getBoundary([(3, v)], oriented=False)
                    if abs(gmsh.model.occ.getCenterOfMass(2, t)[0]) < 1e-9]
            gmsh.model.addPhysicalGroup(2, face, tag=7)
        gmsh.model.mesh.generate(3)
        gmsh.write(str(path))
    finally:
        gmsh.finalize()
    return path


def test_groups_without_names_go_by_their_tags(tmp_path):
    mat = SolidMaterial(2e4, 0.3, 1000.0)
    alone = _unnamed(tmp_path / "alone.msh", surface=False)
    assert set(file_cells(alone)[2]) == {"7"}
    for key in (7, "7"):                                        # Python's int, a scene's str
        (part,) = read_simplicial(alone, materials={key: mat}).parts
        assert part.name == "7"
    # a surface 7 and a volume 7 are two groups: named by Gmsh's words for their dimensions
    both = _unnamed(tmp_path / "both.msh", surface=True)
    assert set(file_cells(both)[2]) == {"surface 7", "volume 7"}
    with pytest.raises(ValueError, match=r"triangle 0 has part 'surface 7', which has no "):
        read_simplicial(both, materials={7: mat})               # the number names neither
    (tmp_path / "s.toml").write_text(SCENE.replace("block.msh", "both.msh")
                                     .replace("parts.block", 'parts."volume 7"')
                                     .replace('part = "clamp"', 'part = "surface 7"'))
    (spec,) = load_scene_file(tmp_path / "s.toml").scene.simplicial
    assert [(p.name, p.kind) for p in spec.parts] == [("volume 7", "solid")]
    held = spec.vertices[list(spec.holds[0].vertices)]
    assert np.all(held[:, 0] == 0.0) and len(held) == np.count_nonzero(spec.vertices[:, 0] == 0)


def test_a_name_given_without_dimension_names_its_tag(tmp_path):
    """A VTU file of another tool: its field data name the tag alone (no dimension)."""
    meshio = pytest.importorskip("meshio")
    from strandlab.sim.simplicial import ShellMaterial

    x = np.array([[0.0, 0, 0], [1, 0, 0], [0, 1, 0], [1, 1, 0]])
    path = tmp_path / "cloth.vtu"
    meshio.write(path, meshio.Mesh(x, [("triangle", np.array([[0, 1, 2], [1, 3, 2]]))],
                                   cell_data={"part": [np.array([3, 3])]}))
    path.write_text(path.read_text().replace(
        "<UnstructuredGrid>", '<UnstructuredGrid>\n<FieldData>\n<DataArray type="Int64" '
        'Name="cloth" NumberOfTuples="1" format="ascii">3</DataArray>\n</FieldData>', 1))
    (part,) = read_simplicial(path, materials={
        "cloth": ShellMaterial(1e6, 0.3, 1e-3, 300.0)}).parts
    assert part.name == "cloth"
