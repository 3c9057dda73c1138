"""A whole hairstyle on a head whose roots are moved and stopped (Takahashi and Batty's hair
examples): optimized with ``strandlab sagfree --stabilize``, the hair returns to its shape after
the head nods by 20 degrees and back (8 s in all); the same hair with its input shape as rest shape stays
sagged, and the unstabilized exact optimum (saddles for some thin lifted strands) falls off it.

Thin human hair (radius 40 um, E = 3.5 GPa), 24 wavy strands of 30 vertices, 17 to 23 cm."""
import numpy as np
import pytest

from strandlab.cli import main
from strandlab.io.hairfile import read_hair
from strandlab.io.restshape import read_rest_shape
from strandlab.scenes.hair_head import hair_on_head

SECONDS = 8.0


@pytest.fixture(scope="module")
def hair_file(tmp_path_factory):
    d = tmp_path_factory.mktemp("head")
    path = d / "h.hair"
    assert main(["hair", "generate", "--style", "wavy", "--strands", "24", "--vertices", "30",
                 "--length", "0.2", "--seed", "3", "--out", str(path)]) == 0
    return path


def _rest(hair_file, *flags):
    out = hair_file.with_name("rest" + "".join(flags).replace("-", "_") + ".npz")
    assert main(["sagfree", str(hair_file), "--out", str(out), "--quiet", *flags]) == 0
    return read_rest_shape(out)


def _deviation_after_nod(hair, rest):
    """Largest vertex distance [m] from the input shape after the head nodded and stopped
    (``SECONDS`` in all), and the largest edge strain on the way."""
    solver = hair_on_head(hair, rest=rest).make_solver()
    m = solver.model
    st = solver.state()
    x0 = solver.output(st).positions.copy()
    strain = 0.0
    for _ in range(int(SECONDS * 60)):
        solver.step(st, st, 1 / 60)
        x = solver.output(st).positions
        ln = np.linalg.norm(x[m.edge_v1] - x[m.edge_v0], axis=1)
        strain = max(strain, float(np.max(np.abs(ln / m.rest_length - 1.0))))
    return float(np.linalg.norm(solver.output(st).positions - x0, axis=1).max()), strain


def test_stabilized_hairstyle_returns_to_its_shape_after_the_head_stops(hair_file):
    hair = read_hair(hair_file)
    length = float(hair.lengths().min())
    stable = _rest(hair_file, "--stabilize")
    assert set(stable.status) <= {"converged", "stiffened"}
    assert stable.stiffness_scale.max() > 1.0       # a few lifted strands, a little stiffer
    assert stable.stiffness_scale.max() < 4.0
    back, strain = _deviation_after_nod(hair, stable)
    sagged, _ = _deviation_after_nod(hair, None)
    saddle, _ = _deviation_after_nod(hair, _rest(hair_file, "--mode", "exact"))
    print(f"\nafter the nod: {back / length:.1e} of the length with the stabilized rest shape, "
          f"{sagged / length:.2f} with the input as rest shape, {saddle / length:.2f} with the "
          f"unstabilized exact optimum; largest strain {strain:.3f}")
    assert back < 2e-3 * length          # back where it was (6 um measured)
    assert sagged > 50 * back            # the input shape as rest shape sags (2.4 cm)
    assert saddle > 50 * back            # saddles are left for another equilibrium (11 cm)
    assert strain < 0.01                 # 1e-3 measured
