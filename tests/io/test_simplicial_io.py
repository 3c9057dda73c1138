"""Labelled meshes through Gmsh and VTU files (strandlab.io.simplicial): round trips keep
vertices, cells and part names; a tag without a material or a material that does not fit its
cells is named."""
import numpy as np
import pytest

from strandlab.io.simplicial import read_simplicial, write_simplicial
from strandlab.scenes.meshing import box_tets
from strandlab.sim.material import Material
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder, SolidMaterial

ROD = Material(young_modulus=1e7, density=1e3, radius=0.01)
SHELL = ShellMaterial(1e6, 0.3, 1e-3, 500.0)
SOLID = SolidMaterial(1e5, 0.4, 1e3)


def _spec():
    x, tets = box_tets((0, 0, 0), (0.2, 0.1, 0.1), (2, 1, 1))
    top = np.nonzero(np.isclose(x[:, 2], 0.1))[0]
    k = len(x)
    x = np.concatenate([x, [[0.1, 0.05, 0.3]]])
    mb = SimplicialBuilder(x, name="box with a flag")
    mb.add_solids(tets, material=SOLID, name="box")
    mb.add_shells([[top[0], top[1], top[2]]], material=SHELL, name="skin")
    mb.add_rods([[top[0], k]], material=ROD, name="pole")
    return mb.build()


@pytest.mark.parametrize("suffix", [".msh", ".vtu"])
def test_round_trip(tmp_path, suffix):
    spec = _spec()
    p = write_simplicial(tmp_path / f"m{suffix}", spec)
    back = read_simplicial(p, materials={"box": SOLID, "skin": SHELL, "pole": ROD})
    assert np.allclose(back.vertices, spec.vertices)
    assert [(q.name, q.kind) for q in back.parts] == [("pole", "rod"), ("skin", "shell"),
                                                      ("box", "solid")]
    for a, b in ((back.tets, spec.tets), (back.triangles, spec.triangles),
                 (back.rod_edges, spec.rod_edges)):
        assert np.array_equal(a, b)
    moved = write_simplicial(tmp_path / f"n{suffix}", spec, positions=spec.vertices * 2)
    assert np.allclose(read_simplicial(moved, materials={"box": SOLID, "skin": SHELL,
                                                         "pole": ROD}).vertices,
                       2 * spec.vertices)


def test_scale_and_errors(tmp_path):
    p = write_simplicial(tmp_path / "m.msh", _spec())
    cm = read_simplicial(p, materials={"box": SOLID, "skin": SHELL, "pole": ROD}, scale=0.01)
    assert np.allclose(cm.vertices, _spec().vertices * 0.01)
    with pytest.raises(ValueError, match=r"line 0 has part 'pole', which has no material "
                                         r"\(give one in materials=\)$"):
        read_simplicial(p, materials={"box": SOLID, "skin": SHELL})
    # a key with a typo (and a tag the file has not) is named; a tag the file has is not
    with pytest.raises(ValueError, match=r"no material \(give one in materials=; 'Pole', 99 "
                                         r"name no part or face subset of the file\)"):
        read_simplicial(p, materials={"box": SOLID, 2: SHELL, "Pole": ROD, 99: ROD})
    with pytest.raises(ValueError, match="part 'skin' .* needs a ShellMaterial"):
        read_simplicial(p, materials={"box": SOLID, "skin": SOLID, "pole": ROD})
    with pytest.raises(FileNotFoundError, match="no mesh file"):
        read_simplicial(tmp_path / "none.msh", materials={})
    bad = tmp_path / "bad.msh"
    bad.write_text("$MeshFormat\nnonsense\n")
    with pytest.raises(ValueError, match="cannot read the mesh"):
        read_simplicial(bad, materials={})
    with pytest.raises(ValueError, match="unknown mesh format '.obj'"):
        write_simplicial(tmp_path / "m.obj", _spec())
    assert not list(tmp_path.glob(".*tmp*"))


@pytest.mark.parametrize("name, text", [("junk.msh", "not a mesh\n"), ("empty.vtu", "")])
def test_a_file_meshio_gives_up_on_is_a_located_error(tmp_path, capfd, name, text):
    """meshio prints its readers' failures and calls sys.exit(1) for a file that none of the
    formats of its suffix reads: neither reaches the caller."""
    bad = tmp_path / name
    bad.write_text(text)
    with pytest.raises(ValueError, match=rf"{name}: cannot read the mesh \(.*Couldn't read"):
        read_simplicial(bad, materials={})
    out, err = capfd.readouterr()
    assert out == "" and err == ""


def test_what_meshio_prints_on_a_good_read_becomes_a_warning(tmp_path, monkeypatch, capfd):
    import meshio

    import strandlab.io.simplicial as module

    p = tmp_path / "m.msh"
    write_simplicial(p, _spec())

    class Talking:
        @staticmethod
        def read(path):
            print("Warning: something odd in the file")
            return meshio.read(path)

    monkeypatch.setattr(module, "_meshio", lambda: Talking)
    with pytest.warns(UserWarning, match=r"m\.msh: meshio: Warning: something odd in the file"):
        spec = read_simplicial(p, materials={"box": SOLID, "skin": SHELL, "pole": ROD})
    assert len(spec.tets) == len(_spec().tets)
    assert capfd.readouterr().out == ""
