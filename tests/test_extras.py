"""Optional dependencies: a missing one raises MissingExtra naming the package and the extra
that installs it, and the command line prints that message (exit status 1), not a
traceback."""
import doctest
import sys
from pathlib import Path

import pytest

from strandlab import extras
from strandlab.cli import main
from strandlab.extras import MissingExtra, require

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def test_require_names_the_package_and_the_extra(monkeypatch):
    assert require("math", "Maths", "math", "mesh").pi > 3
    monkeypatch.setitem(sys.modules, "gmsh", None)
    with pytest.raises(MissingExtra, match=r"^Meshing solids needs the gmsh package \(import "
                                           r"gmsh\); install it with pip install "
                                           r"'strandlab\[mesh\]' or pip install gmsh$"):
        from strandlab.geometry.tetmesh import gmsh_tets
        gmsh_tets(lambda gmsh: None)
    assert issubclass(MissingExtra, ImportError)
    runner = doctest.DocTestRunner()
    for t in doctest.DocTestFinder().find(extras):
        runner.run(t)
    assert runner.failures == 0 and runner.tries == 2


@pytest.mark.parametrize("module, argv, message", [
    ("meshio", ["run", str(EXAMPLES / "flag.toml"), "--frames", "1", "--quiet"],
     "Reading and writing mesh files needs the meshio package (import meshio); install it "
     "with pip install 'strandlab[mesh]'"),
    ("pxr", ["mesh", "flag.usda"], "Reading or writing USD files needs the usd-core package"),
    ("alembic3d", ["mesh", "flag.abc"], "pip install 'strandlab[interchange]' or pip install "
                                        "alembic3d"),
])
def test_the_command_line_says_what_to_install(tmp_path, monkeypatch, capsys, module, argv,
                                               message):
    (tmp_path / "flag.usda").write_text("#usda 1.0\n")
    (tmp_path / "flag.abc").write_bytes(b"")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setitem(sys.modules, module, None)
    assert main(argv + (["--out", str(tmp_path / "run")] if argv[0] == "run" else [])) == 1
    err = capsys.readouterr().err
    assert err.startswith("strandlab: error: ") and message in err
    assert "Traceback" not in err and not (tmp_path / "run").exists()
