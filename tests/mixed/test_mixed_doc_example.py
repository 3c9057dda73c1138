"""The first example of docs/mixed.md runs as written: half solid, half shell, one strip of one
material joined by a stiff curve connection, clamped at its root, at rest under gravity."""
import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "mixed.md"


def test_the_first_example_runs_and_its_strip_sags_as_a_cantilever():
    code = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    ns: dict = {}
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), ns)
    x, y = ns["x"], ns["sol"].output(ns["s"]).extra
    assert float(printed.getvalue()) == y[:, 2].min() < -0.005     # the solid's lower face
    tip = x[:, 0] > 0.1 - 1e-9
    sag = -(y[tip, 2] - x[tip, 2]).mean()
    # beam theory for the strip (L = 0.1 m, t = 1 cm, E = 1e7 Pa, 1000 kg/m^3) under its own
    # weight: q L^4 / (8 E I) = 12 rho g L^4 / (8 E t^2) = 1.47 mm; the solid half of linear
    # tetrahedra, four through the thickness, bends stiffer than the beam (measured: 0.98 mm)
    beam = 12 * 1000.0 * 9.81 * 0.1 ** 4 / (8 * 1e7 * 0.01 ** 2)
    assert 0.5 * beam < sag < beam
