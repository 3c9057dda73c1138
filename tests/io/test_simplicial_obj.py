"""Labelled meshes from OBJ files, as modelling tools export them: parts by object or group,
rods from lines, shells from faces, solids filled from closed surfaces, coincident vertices of
different objects welded."""
import numpy as np
import pytest

import strandlab as sl
from helpers import step_mesh
from strandlab.io.simplicial import read_simplicial
from strandlab.sim.simplicial import Connection, MeshHold, ShellMaterial, SolidMaterial

ROD = sl.Material(young_modulus=7e10, density=2700.0, radius=0.005)
CLOTH = ShellMaterial(young_modulus=1e8, poisson_ratio=0.3, thickness=1e-4, density=1140.0)
BLOCK = SolidMaterial(young_modulus=1e6, poisson_ratio=0.3, density=1000.0)
MATS = {"pole": ROD, "flag": CLOTH, "foot": BLOCK}

# Blender's OBJ exporter's layout (forward Y, up Z): each object's vertices apart, loose edges
# as lines, faces with normal indices; the pole stands on the foot's top corner (0.1, 0.1, 0.1)
# and the flag hangs from the pole's upper half
CUBE = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 0, 1), (1, 0, 1), (1, 1, 1), (0, 1, 1)]
CUBE_FACES = [(1, 4, 3, 2), (5, 6, 7, 8), (1, 2, 6, 5), (2, 3, 7, 6), (3, 4, 8, 7), (4, 1, 5, 8)]


def blender_obj(pole_top=0.5):
    out = ["# Blender 5.0.1", "o foot"]
    out += [f"v {0.1 * a:.6f} {0.1 * b:.6f} {0.1 * c:.6f}" for a, b, c in CUBE]
    out += ["vn 0 0 1", "s 0"] + [f"f {' '.join(f'{i}//1' for i in f)}" for f in CUBE_FACES]
    out += ["o pole"] + [f"v 0.100000 0.100000 {z:.6f}" for z in (0.1, 0.3, pole_top)]
    out += ["l 9 10", "l 10 11"]
    out += ["o flag"] + [f"v {x:.6f} 0.100000 {z:.6f}" for x, z in
                         ((0.1, 0.3), (0.1, pole_top), (0.4, pole_top), (0.4, 0.3))]
    out += ["vn 0 -1 0", "s 0", "f 12//2 15//2 14//2 13//2"]
    return "\n".join(out) + "\n"


@pytest.fixture
def obj(tmp_path):
    p = tmp_path / "flag.obj"
    p.write_text(blender_obj())
    return p


def test_parts_kinds_and_welding(obj):
    spec = read_simplicial(obj, materials=MATS,
                           connections=[Connection("point", ("pole", "foot"), mode="free"),
                                        Connection("curve", ("pole", "flag"), mode="free")],
                           holds=[MeshHold((0, 1, 2, 3))])
    names = [pt.name for pt in spec.parts]
    assert names == ["pole", "flag", "foot"]          # rods, shells, solids
    assert [pt.kind for pt in spec.parts] == ["rod", "shell", "solid"]
    assert len(spec.rod_edges) == 2 and len(spec.triangles) == 2
    # 15 file vertices, 3 welded away (the pole's foot onto the cube's corner, two of the
    # flag's corners onto the pole), plus the solid's interior vertices, all used and distinct
    x = spec.vertices
    surface = np.unique(np.concatenate([spec.rod_edges.ravel(), spec.triangles.ravel()]))
    cube = np.all(np.isclose(x, 0.0) | np.isclose(x, 0.1), axis=1)
    assert len(surface) + np.count_nonzero(cube & ~np.isin(np.arange(len(x)), surface)) == 12
    assert len(np.unique(np.round(x, 9), axis=0)) == len(x)
    pole = np.unique(spec.rod_edges)
    flag = np.unique(spec.triangles)
    foot = np.unique(spec.tets)
    assert len(np.intersect1d(pole, foot)) == 1 and len(np.intersect1d(pole, flag)) == 2
    assert np.allclose(x[np.intersect1d(pole, foot)], [[0.1, 0.1, 0.1]])
    # the foot's tetrahedra fill the cube, positive volumes
    e = [x[spec.tets[:, k]] - x[spec.tets[:, 0]] for k in (1, 2, 3)]
    vol = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])) / 6
    assert vol.min() > 0 and vol.sum() == pytest.approx(1e-3, rel=1e-12)
    # the held vertices are the file's first four: the cube's bottom
    assert np.allclose(x[list(spec.holds[0].vertices)][:, 2], 0.0)
    assert [c.parts for c in spec.connections] == [(0, 2), (0, 1)]


def test_y_up_files_and_scale(tmp_path):
    p = tmp_path / "y.obj"
    # the same pole written y-up (Blender's default: (x, y, z) -> (x, z, -y)), in centimetres
    p.write_text("o pole\nv 10 10 -10\nv 10 30 -10\nv 10 50 -10\nl 1 2 3\n")
    spec = read_simplicial(p, materials={"pole": ROD}, up="y", scale=0.01)
    assert np.allclose(spec.vertices, [[0.1, 0.1, 0.1], [0.1, 0.1, 0.3], [0.1, 0.1, 0.5]])
    assert spec.rod_edges.tolist() == [[0, 1], [1, 2]]


def test_groups_name_parts_and_the_mesh_runs(tmp_path):
    # Houdini writes groups (g); a cloth square of two groups, one held, swings down
    p = tmp_path / "cloth.obj"
    p.write_text("v 0 0 1\nv 0.1 0 1\nv 0.1 0.1 1\nv 0 0.1 1\nv 0.2 0 1\nv 0.2 0.1 1\n"
                 "g left\nf 1 2 3 4\ng right\nf 2 5 6 3\n")
    spec = read_simplicial(p, materials={"left": CLOTH, "right": CLOTH},
                           holds=[MeshHold((0, 3))])
    x = step_mesh(spec, 5)
    assert np.allclose(x[[0, 3]], spec.vertices[[0, 3]])
    assert x[4, 2] < 1.0 - 1e-3                        # the far edge falls


@pytest.mark.parametrize("edit, message", [
    (lambda t: t.replace("o flag", "o banner"), r"line \d+: part 'banner' has no material "
     r"\(give one in materials=; 'flag', 'flag\d' name no part or face subset of the file\)"),
    (lambda t: t + "o flag2\nl 12 13\n", r"part 'flag2' has no material \(give one in "
     r"materials=\)$"),
    (lambda t: t.replace("l 9 10", "f 9 10 11"),
     r"line \d+: part 'pole' is a rod part \(its material a Material\), which takes lines"),
    (lambda t: t.replace("f 12//2 15//2 14//2 13//2", "l 12 13"),
     r"line \d+: part 'flag' is a shell part .* which takes faces \(f\), not lines"),
    (lambda t: t.replace("f 5//1 6//1 7//1 8//1", ""),
     r"part 'foot': the surface is not closed: 4 of its edges .* the edge of vertices \d+ "
     r"and \d+, its middle at \(.*\)\); it must be closed"),
    (lambda t: t.replace("l 10 11", "l 10 99"), r"line \d+: vertex 99 does not exist"),
    (lambda t: t.replace("v 0.100000 0.100000 0.300000", "v 0.1 0.1 nan"),
     r"line \d+: a vertex needs three finite coordinates"),
    (lambda t: t.replace("l 9 10", "l 9"), r"line \d+: a line needs at least 2 vertices"),
])
def test_mistakes_name_the_file_line_and_part(tmp_path, edit, message):
    p = tmp_path / "bad.obj"
    p.write_text(edit(blender_obj()))
    mats = dict(MATS, flag2=CLOTH) if "flag2" not in message else MATS
    with pytest.raises(ValueError, match=message):
        read_simplicial(p, materials=mats)


def test_vertices_within_the_welding_distance_of_one_edge_are_an_error(tmp_path):
    p = tmp_path / "short.obj"
    p.write_text("o pole\nv 0 0 0\nv 0 0 0.1\nv 0 0 0.1000005\nl 1 2 3\n")
    with pytest.raises(ValueError, match=r"line 5: part 'pole': two vertices of this edge are "
                                         r"within the welding distance 1e-06"):
        read_simplicial(p, materials={"pole": ROD})
    spec = read_simplicial(p, materials={"pole": ROD}, weld=1e-8)
    assert len(spec.rod_edges) == 2


def test_obj_statements_as_tools_write_them(tmp_path):
    from strandlab.io.obj_parts import read_obj_parts

    p = tmp_path / "all.obj"
    p.write_text("# a comment\nmtllib a.mtl\nv 0 0 0 1.0\nv 1 0 0\nv 1 1 0 0.5 0.5 0.5\n"
                 "v 0 1 0\nv 2 0 0\nl 1 2 5\n"                 # before any o or g: "default"
                 "o sheet\nvt 0 0\nvn 0 0 1\nusemtl cloth\ns off\n"
                 "f 1/1/1 2/1/1 3/1/1 4/1/1  # a quad\n"
                 "g sheet hem\nf -5//1 -4//1 -1//1\np 1\nl -1 -2\n")
    x, parts = read_obj_parts(p)
    assert x.shape == (5, 3) and x[2].tolist() == [1.0, 1.0, 0.0]
    assert list(parts) == ["default", "sheet", "sheet hem"]
    assert parts["default"].edges == [(0, 1), (1, 4)] and parts["default"].edge_at == ["line 8"] * 2
    assert parts["sheet"].triangles == [(0, 1, 2), (0, 2, 3)]      # a fan from the first
    assert parts["sheet"].triangle_at == ["line 14"] * 2
    assert parts["sheet hem"].triangles == [(0, 1, 4)] and parts["sheet hem"].edges == [(4, 3)]
    assert parts["sheet hem"].triangle_at == ["line 16"]
    (tmp_path / "tabs.obj").write_text("v\t0 0 0\nv 1\t0 0\no\tbar\nl\t1\t2\n")
    x, parts = read_obj_parts(tmp_path / "tabs.obj")
    assert x.shape == (2, 3) and parts["bar"].edges == [(0, 1)]
    (tmp_path / "empty.obj").write_text("# nothing\n")
    with pytest.raises(ValueError, match=r"empty\.obj: no vertices: not an OBJ mesh"):
        read_obj_parts(tmp_path / "empty.obj")
    (tmp_path / "zero.obj").write_text("v 0 0 0\nv 1 0 0\nl 0 1\n")
    with pytest.raises(ValueError, match=r"zero\.obj, line 3: vertex 0 does not exist"):
        read_obj_parts(tmp_path / "zero.obj")
    (tmp_path / "word.obj").write_text("v 0 0 0\nv 1 0 0\nl 1 b\n")
    with pytest.raises(ValueError, match=r"word\.obj, line 3: 'b' is not a vertex index"):
        read_obj_parts(tmp_path / "word.obj")


def test_a_concave_polygon_is_refused_naming_its_line(tmp_path):
    from strandlab.io.obj_parts import read_obj_parts

    p = tmp_path / "arrow.obj"
    # an arrowhead: its fan from a back corner folds over the notch; from the notch it does not
    p.write_text("v 0 0 0\nv 1 0.5 0\nv 0 1 0\nv 0.3 0.5 0\no head\nf 1 2 3 4\n")
    with pytest.raises(ValueError, match=r"arrow\.obj, line 6: a concave or twisted polygon of 4 "
                                         r"vertices"):
        read_obj_parts(p)
    p.write_text("v 0 0 0\nv 1 0.5 0\nv 0 1 0\nv 0.3 0.5 0\no head\nf 4 1 2 3\n")
    assert read_obj_parts(p)[1]["head"].triangles == [(3, 0, 1), (3, 1, 2)]


def test_parts_that_nearly_touch_are_warned(tmp_path):
    p = tmp_path / "gap.obj"
    # the pole stands 2.5 um above the foot's corner: beyond the welding distance
    p.write_text(blender_obj().replace("v 0.100000 0.100000 0.100000\nv 0.100000 0.100000 "
                                       "0.300000", "v 0.100000 0.100000 0.1000025\nv 0.100000 "
                                       "0.100000 0.300000"))
    with pytest.warns(UserWarning, match=r"gap\.obj: parts 'foot' and 'pole' come within "
                                         r"2\.5e-06 \(file units\) of each other without sharing "
                                         r"a vertex there: not joined \(a larger weld, now 1e-06"):
        spec = read_simplicial(p, materials=MATS)
    pole, foot = np.unique(spec.rod_edges), np.unique(spec.tets)
    assert not len(np.intersect1d(pole, foot))
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = read_simplicial(p, materials=MATS, weld=1e-5)      # joined, quietly
    assert len(np.intersect1d(np.unique(spec.rod_edges), np.unique(spec.tets))) == 1


def _prism_obj(name, sides, x0=0.0, fan=False):
    """An OBJ object: a prism of ``sides`` sides, radius 0.05, height 0.2, about x = ``x0``;
    its caps one polygon each, or with ``fan`` triangle fans about a centre vertex."""
    a = 2 * np.pi * np.arange(sides) / sides
    ring = [(x0 + 0.05 * np.cos(t), 0.05 * np.sin(t)) for t in a]
    out = [f"o {name}"] + [f"v {x:.6f} {y:.6f} {z}" for z in (0.0, 0.2) for x, y in ring]
    out += [f"v {x0:.6f} 0 0.0", f"v {x0:.6f} 0 0.2"]
    out += [f"f -{2 * sides + 2 - k} -{2 * sides + 2 - (k + 1) % sides} "
            f"-{sides + 2 - (k + 1) % sides} -{sides + 2 - k}" for k in range(sides)]
    if fan:
        out += [f"f -2 -{2 * sides + 2 - (k + 1) % sides} -{2 * sides + 2 - k}"
                for k in range(sides)]
        out += [f"f -1 -{sides + 2 - k} -{sides + 2 - (k + 1) % sides}" for k in range(sides)]
    else:
        out += ["f " + " ".join(f"-{2 * sides + 2 - k}" for k in reversed(range(sides))),
                "f " + " ".join(f"-{sides + 2 - k}" for k in range(sides))]
    return "\n".join(out) + "\n"


def test_solids_after_other_parts_are_filled_and_slivers_are_warned(tmp_path):
    import warnings

    p = tmp_path / "cans.obj"
    # the first solid's vertices come before the second's: each keeps its own surface
    p.write_text(_prism_obj("fan", 24, fan=True) + _prism_obj("ngon", 24, x0=0.3))
    exact = 0.5 * 24 * 0.05 ** 2 * np.sin(2 * np.pi / 24) * 0.2
    with pytest.warns(UserWarning, match=r"cans\.obj: part 'ngon': \d+ of its \d+ tetrahedra are "
                                         r"slivers \(shape quality below 0\.01, the thinnest"):
        spec = read_simplicial(p, materials={"fan": BLOCK, "ngon": BLOCK})
    x, t = spec.vertices, spec.tets
    e = [x[t[:, k]] - x[t[:, 0]] for k in (1, 2, 3)]
    vol = np.einsum("ij,ij->i", e[0], np.cross(e[1], e[2])) / 6
    for k in range(2):
        part = spec.tet_part == k
        assert vol[part].min() > 0 and vol[part].sum() == pytest.approx(exact, rel=1e-5)
        centre = x[np.unique(t[part])].mean(axis=0)
        assert np.all(np.linalg.norm(x[np.unique(t[part])] - centre, axis=1) < 0.12)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        read_simplicial(p, materials={"fan": BLOCK, "ngon": CLOTH})   # no solid of n-gons


@pytest.mark.parametrize("kwargs, message", [
    (dict(up="x"), r"up must be 'z' or 'y', got 'x'"),
    (dict(scale=0.0), r"scale must be a positive number, got 0.0"),
    (dict(scale=float("nan")), r"scale must be a positive number, got nan"),
    (dict(scale=float("inf")), r"scale must be a positive number, got inf"),
])
def test_bad_axes_and_scales_are_refused_before_the_file_is_read(tmp_path, kwargs, message):
    from strandlab.io.simplicial import file_cells

    junk = tmp_path / "junk.msh"            # unreadable: the arguments are checked first
    junk.write_text("junk\n")
    with pytest.raises(ValueError, match=message):
        read_simplicial(junk, materials={}, **kwargs)
    with pytest.raises(ValueError, match=message):
        file_cells(junk, **kwargs)
