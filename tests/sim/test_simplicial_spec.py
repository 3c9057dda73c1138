"""Labelled simplicial meshes (strandlab.sim.simplicial): every bad input is a clear error naming
the simplex, part or connection; nothing half-built."""
import numpy as np
import pytest

from strandlab.sim.material import Material
from strandlab.sim.simplicial import (
    Connection,
    MeshHold,
    ShellMaterial,
    SimplicialBuilder,
    SimplicialSpec,
    SolidMaterial,
    boundary_faces,
)

ROD = Material(young_modulus=1e7, density=1e3, radius=0.01)
SHELL = ShellMaterial(1e6, 0.3, 1e-3, 500.0)
SOLID = SolidMaterial(1e5, 0.4, 1e3)
X = np.array([[0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1.0], [0, 0, 2.0]])


def _builder():
    mb = SimplicialBuilder(X, name="demo")
    return mb


def test_a_valid_mesh_keeps_its_labels_and_surfaces():
    mb = _builder()
    r = mb.add_rods([[3, 4]], material=ROD, name="stalk")
    s = mb.add_shells([[0, 1, 2]], material=SHELL, name="cloth")
    b = mb.add_solids([[0, 1, 2, 3]], material=SOLID, name="ball")
    mb.connect(r, b, kind="point", twist_stiffness=1.0, bend_stiffness=2.0)
    mb.connect(s, b, kind="curve", bend_stiffness=1.0)
    spec = mb.build()
    assert spec.part_index("ball") == 2
    assert [p.kind for p in spec.parts] == ["rod", "shell", "solid"]
    assert len(spec.surface_triangles()) == 1 + 4
    with pytest.raises(KeyError, match="parts: stalk, cloth, ball"):
        spec.part_index("tail")


def test_boundary_faces_point_outwards():
    x = X[:4]
    faces = boundary_faces(np.array([[0, 1, 2, 3]]))
    c = x.mean(axis=0)
    for f in faces:
        n = np.cross(x[f[1]] - x[f[0]], x[f[2]] - x[f[0]])
        assert n @ (x[f].mean(axis=0) - c) > 0


@pytest.mark.parametrize("build, message", [
    (lambda mb: mb.add_solids([[0, 2, 1, 3]], material=SOLID), "tetrahedron 0 .* is inverted"),
    (lambda mb: mb.add_shells([[0, 1, 1]], material=SHELL), "triangle 0 repeats a vertex"),
    (lambda mb: mb.add_shells([[0, 1, 7]], material=SHELL), r"triangle 0 names vertex .*0\.\.4"),
    (lambda mb: mb.add_rods([[3, 4], [4, 3]], material=ROD), "rod edge 1 .* more than once"),
    (lambda mb: mb.add_shells([[0, 1, 2]], material=ROD), "a shell part needs a ShellMaterial"),
])
def test_bad_cells_are_named(build, message):
    mb = _builder()
    with pytest.raises((ValueError, TypeError), match=message):
        build(mb)
        mb.build()


def test_degenerate_cells_are_named():
    x = X.copy()
    x[2] = [2.0, 0.0, 0.0]                      # vertices 0, 1, 2 on a line
    mb = SimplicialBuilder(x, name="flat")
    mb.add_shells([[0, 1, 3], [0, 1, 2]], material=SHELL)
    with pytest.raises(ValueError, match=r"triangle 1 \[0, 1, 2\] has zero area"):
        mb.build()
    mb = SimplicialBuilder(x, name="flat")
    mb.add_solids([[0, 1, 2, 3]], material=SOLID)
    with pytest.raises(ValueError, match="tetrahedron 0 .* zero volume"):
        mb.build()


def test_non_conforming_parts_are_refused():
    x = np.concatenate([X, X[:1]])               # vertex 5 sits on vertex 0
    mb = SimplicialBuilder(x, name="loose")
    mb.add_shells([[0, 1, 2]], material=SHELL)
    mb.add_rods([[5, 3]], material=ROD)
    with pytest.raises(ValueError, match="not conforming: vertices 0 and 5 coincide"):
        mb.build()


def test_connections_must_name_shared_simplices():
    mb = _builder()
    r = mb.add_rods([[3, 4]], material=ROD, name="stalk")
    s = mb.add_shells([[0, 1, 2]], material=SHELL, name="cloth")
    mb.connect(r, s, kind="point", twist_stiffness=1.0)
    with pytest.raises(ValueError, match="'stalk' and 'cloth': they share no vertex"):
        mb.build()
    mb = _builder()
    r = mb.add_rods([[0, 3]], material=ROD, name="stalk")
    s = mb.add_shells([[0, 1, 2]], material=SHELL, name="cloth")
    mb.connect(r, s, kind="curve", bend_stiffness=1.0)
    with pytest.raises(ValueError, match="curve connection .* share no edge"):
        mb.build()
    with pytest.raises(ValueError, match="hard connection needs hard_stiffness"):
        Connection(kind="point", parts=(0, 1), mode="hard")
    with pytest.raises(ValueError, match="angle_update must be one of"):
        Connection(kind="point", parts=(0, 1), twist_stiffness=1.0, angle_update="smart")


def test_materials_are_checked():
    with pytest.raises(ValueError, match="poisson_ratio must be in"):
        ShellMaterial(1e6, 0.5, 1e-3, 500.0)
    with pytest.raises(ValueError, match="thickness must be a positive"):
        ShellMaterial(1e6, 0.3, 0.0, 500.0)
    assert ShellMaterial(12.0, 0.0, 1.0, 1.0).bending_stiffness == pytest.approx(1.0)


@pytest.mark.parametrize("cells, message", [
    ([[0, 1], [2, 3], [1, 3]], r"part 'cloth': triangles must have shape \[n, 3\] with n >= 1, "
                               r"got \(3, 2\)"),
    ([[0, 1, 2, 3]], r"got \(1, 4\)"),
    ([0, 1, 2], r"got \(3,\)"),
    ([], r"got \(0,\)"),
    ([[0, 1, "x"]], "part 'cloth': its cells are not an array of vertex indices"),
])
def test_cells_of_the_wrong_shape_are_refused_naming_the_part(cells, message):
    """Not reshaped into other cells: a [3, 2] array is not two triangles."""
    mb = _builder()
    with pytest.raises(ValueError, match=message):
        mb.add_shells(cells, material=SHELL, name="cloth")
    mb.add_rods([[3, 4]], material=ROD, name="stalk")
    assert [q.name for q in mb.build().parts] == ["stalk"]   # nothing half-added


@pytest.mark.parametrize("options, message", [
    (dict(kind="curve", bend_stiffness=1.0, vertices=(0,)), "vertices restrict a point"),
    (dict(kind="point", bend_stiffness=1.0, vertices=()), "vertices is empty"),
    (dict(kind="point", bend_stiffness=1.0, vertices=(6, 2, 6)), "vertex 6 is named twice"),
])
def test_connection_vertices_that_mean_nothing_are_refused(options, message):
    with pytest.raises(ValueError, match=message):
        Connection(parts=(0, 1), **options)


def test_two_connections_on_the_same_vertices_are_refused():
    mb = _builder()
    s = mb.add_shells([[0, 1, 2]], material=SHELL, name="cloth")
    b = mb.add_solids([[0, 1, 2, 3]], material=SOLID, name="ball")
    mb.connect(s, b, kind="point", bend_stiffness=1.0, vertices=(0,))
    mb.connect(b, s, kind="point", bend_stiffness=1.0, vertices=(1, 2))
    mb.connect(s, b, kind="curve", bend_stiffness=1.0)
    assert len(mb.build().connections) == 3                  # other vertices, other kind
    mb.connect(s, b, kind="point", twist_stiffness=2.0, vertices=(2,))    # (b, s) is (s, b)
    with pytest.raises(ValueError, match="connections 1 and 3 are both point connections "
                                         "between parts 'cloth' and 'ball'"):
        mb.build()


def test_a_vertex_moved_two_ways_by_its_holds_is_refused():
    mb = _builder()
    mb.add_solids([[0, 1, 2, 3]], material=SOLID, name="ball")
    mb.hold([0, 1])
    mb.hold([1, 2])                                          # held in place twice: the same
    mb.build()
    mb.hold([2, 3], frame=0)
    with pytest.raises(ValueError, match="vertex 2 is in holds 1 and 2, which move it "
                                         "differently: held in place and by frame 0;"):
        mb.build()
    mb = _builder()
    mb.add_solids([[0, 1, 2, 3]], material=SOLID, name="ball")
    mb.hold([0], until=0.5)
    mb.hold([0])
    with pytest.raises(ValueError, match="vertex 0 is in holds 0 and 1, which move it "
                                         "differently: held in place until 0.5 s and in place;"):
        mb.build()


def test_connections_and_holds_of_other_types_and_bad_directions_are_named():
    mb = _builder()
    mb.add_rods([[3, 4]], material=ROD, name="stalk")
    spec = mb.build()
    with pytest.raises(TypeError, match=r"connections\[0\] must be a Connection, got dict"):
        SimplicialSpec("demo", X, spec.parts, spec.rod_edges, spec.rod_part,
                       connections=[{"kind": "point"}])
    with pytest.raises(TypeError, match=r"holds\[1\] must be a MeshHold, got list"):
        SimplicialSpec("demo", X, spec.parts, spec.rod_edges, spec.rod_part,
                       holds=[MeshHold((0,)), [0]])
    for d1 in ([0.0, 0.0, 0.0], [0.0, 0.0, -2.0]):                   # zero, along the edge
        mb = _builder()
        mb.add_rods([[3, 4]], material=ROD, name="stalk", d1=[d1])
        with pytest.raises(ValueError, match=r"rod_d1 of rod edge 0 \(.*\) is zero or along "
                                             r"the edge \(\[3, 4\]\)"):
            mb.build()
    mb = _builder()
    mb.add_rods([[3, 4]], material=ROD, name="stalk", d1=[[1e-3, 0.0, 1.0]])
    assert mb.build().rod_d1.shape == (1, 3)                 # slanted, not along: kept


def test_two_meshes_of_one_name_are_refused():
    from strandlab.sim.builder import SceneBuilder

    mb = _builder()
    mb.add_rods([[3, 4]], material=ROD, name="stalk")
    b = SceneBuilder()
    b.add_simplicial_mesh(mb.build())
    with pytest.raises(ValueError, match="simplicial mesh name 'demo' is used twice"):
        b.add_simplicial_mesh(mb.build())
