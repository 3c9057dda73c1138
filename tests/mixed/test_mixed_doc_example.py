"""The first example of docs/mixed.md runs as written: half solid, half shell, one strip of one
material joined by a stiff curve connection, clamped at its root, at rest under gravity."""
import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "mixed.md"


def test_the_first_example_runs_and_the_strip_sags():
    code = re.search(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S).group(1)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(code, str(DOC), "exec"), {})
    tip = float(printed.getvalue())
    # a 0.1 m strip, 1 cm thick, E = 1e7 Pa, 1000 kg/m^3: the cantilever's tip sag under its
    # own weight, q L^4 / (8 E I) = rho g L^4 12 / (8 E t^2) = 5.9 mm; the solid half (its
    # vertices 5 mm above and below the mid-plane) ends a little higher than the mid-plane
    assert -0.0065 < tip < -0.0045
