"""describe_mesh_file: a mesh file's parts, what each can be, which parts touch; and the
``strandlab mesh`` command that prints it."""
from pathlib import Path

import pytest

from strandlab.cli import main
from strandlab.io.mesh_info import describe_mesh_file

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_the_blender_sign():
    info = describe_mesh_file(EXAMPLES / "sign.obj", up="y")
    assert (info.file_vertices, info.vertices) == (49, 42)     # 7 welded
    assert info.lower == pytest.approx((-0.1, -0.1, 0.0)) and info.upper == pytest.approx(
        (0.7, 0.5, 1.0))
    base, stand, banner = info.parts
    assert (base.name, base.triangles, base.vertices, base.closed) == ("base", 12, 8, True)
    assert base.volume == pytest.approx(0.008) and base.kinds == ("shell", "solid")
    assert (stand.lines, stand.vertices, stand.kinds) == (10, 11, ("rod",))
    assert (banner.triangles, banner.closed, banner.kinds) == (40, False, ("shell",))
    assert info.touching == (("base", "stand", 1, 0), ("stand", "banner", 6, 5))


def test_a_gmsh_file_with_tetrahedra_and_scale():
    info = describe_mesh_file(EXAMPLES / "flag.msh", scale=0.5)
    pole, flag, foot = info.parts
    assert (foot.tetrahedra, foot.kinds) == (24, ("solid",))
    assert foot.volume == pytest.approx(0.004 * 0.5 ** 3)
    assert (pole.kinds, flag.kinds) == (("rod",), ("shell",))
    assert info.touching == (("pole", "flag", 9, 8), ("pole", "foot", 1, 0))
    assert info.upper[2] == pytest.approx(0.6)


def test_a_part_of_lines_and_faces_can_be_nothing(tmp_path):
    p = tmp_path / "m.obj"
    p.write_text("o a\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\nl 1 3\no b\nv 5 5 5\nv 6 5 5\n"
                 "l 4 5\n")
    info = describe_mesh_file(p)
    assert info.parts[0].kinds == () and info.parts[1].kinds == ("rod",)
    assert info.touching == ()


def _cubes_obj(path, corners, drop=0):
    """An OBJ of one part: cubes of side 0.1 m at ``corners``, less the last ``drop`` faces."""
    q = [[0, 1, 3, 2], [4, 6, 7, 5], [0, 4, 5, 1], [2, 3, 7, 6], [0, 2, 6, 4], [1, 5, 7, 3]]
    lines, n = ["o pair"], 0
    for o in corners:
        lines += [f"v {o[0] + 0.1 * i} {o[1] + 0.1 * j} {o[2] + 0.1 * k}"
                  for i in (0, 1) for j in (0, 1) for k in (0, 1)]
        lines += ["f " + " ".join(str(n + i + 1) for i in f) for f in q]
        n += 8
    path.write_text("\n".join(lines[:len(lines) - drop]) + "\n")
    return path


def test_closed_as_the_reader_takes_it(tmp_path):
    # two cubes that touch along an edge: it lies on four faces' triangles, and the reader
    # fills the pair as one solid, so the listing offers one
    from strandlab.io.simplicial import read_simplicial
    from strandlab.sim.simplicial import SolidMaterial

    p = _cubes_obj(tmp_path / "pair.obj", [(0, 0, 0), (0.1, 0.1, 0)])
    part, = describe_mesh_file(p).parts
    assert (part.vertices, part.closed, part.kinds) == (14, True, ("shell", "solid"))
    assert part.volume == pytest.approx(0.002)
    spec = read_simplicial(p, materials={"pair": SolidMaterial(
        young_modulus=1e6, poisson_ratio=0.3, density=1000.0)})
    assert spec.describe()["parts"] == [{"name": "pair", "kind": "solid"}]
    part, = describe_mesh_file(_cubes_obj(tmp_path / "open.obj", [(0, 0, 0)], drop=1)).parts
    assert (part.closed, part.volume, part.kinds) == (False, 0.0, ("shell",))


def test_the_mesh_command(capsys, tmp_path):
    assert main(["mesh", str(EXAMPLES / "sign.obj"), "--up", "y"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].endswith("sign.obj: 42 vertices (49 in the file, 7 welded); extent "
                           "[-0.1, -0.1, 0] to [0.7, 0.5, 1] m")
    assert out[2].split() == ["base", "0", "12", "0", "8", "a", "shell,", "or", "a", "solid",
                              "(closed,", "0.008", "m^3)"]
    assert out[-1] == "  stand - banner: 6 shared vertices, 5 shared edges (a point or curve " \
                      "connection)"
    assert main(["mesh", str(tmp_path / "none.obj")]) == 2
    assert "no mesh file" in capsys.readouterr().err
    (tmp_path / "junk.msh").write_text("junk\n")
    assert main(["mesh", str(tmp_path / "junk.msh")]) == 2
    assert "cannot read the mesh" in capsys.readouterr().err


def test_near_misses_are_reported(tmp_path, capsys):
    p = tmp_path / "gap.obj"
    # b's vertices are written first, though its part comes second
    p.write_text("v 1 0.0002 0\nv 1 1 0\no a\nv 0 0 0\nv 1 0 0\nl 3 4\no b\nl 1 2\n"
                 "o c\nv 0 0 0\nv 0 1 0\nl 5 6\n")
    info = describe_mesh_file(p)
    assert info.touching == (("a", "c", 1, 0),)
    assert info.near == (("a", "b", pytest.approx(2e-4)),)
    assert main(["mesh", str(p)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == (
        "near miss: a - b come within 0.0002 m without sharing a vertex there: not joined "
        "(a larger --weld joins them)")
    assert describe_mesh_file(p, weld=3e-4).near == ()
