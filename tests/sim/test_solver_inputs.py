"""Every built-in solver's constructor checks what it is given before compiling it: a scene (or,
for the strand solvers, their own compiled model) and its own Settings, or None for defaults."""
import numpy as np
import pytest

import strandlab as sl
from strandlab.sim.simplicial import ShellMaterial, SimplicialBuilder
from strandlab.sim.solver import get_solver, solver_inputs

MAT = sl.Material(young_modulus=1e7, density=1000.0, radius=0.005)
BUILTIN = ("pbd", "der", "csm", "mixed")


def _scene(name):
    b = sl.SceneBuilder()
    if name == "mixed":
        x = np.array([[0.0, 0, 0], [0.1, 0, 0], [0, 0.1, 0]])
        mb = SimplicialBuilder(x, name="patch")
        mb.add_shells([[0, 1, 2]], material=ShellMaterial(
            young_modulus=1e6, poisson_ratio=0.3, thickness=1e-3, density=500.0))
        b.add_simplicial_mesh(mb.build())
    else:
        b.add_strand(np.c_[np.linspace(0, 0.3, 4), np.zeros(4), np.zeros(4)], material=MAT)
    return b.build()


@pytest.mark.parametrize("name", BUILTIN)
def test_defaults_when_settings_is_none(name):
    cls = get_solver(name)
    solver = cls(_scene(name))
    assert solver.settings == cls.Settings()


@pytest.mark.parametrize("name", BUILTIN)
def test_a_non_scene_is_refused_naming_the_solver(name):
    cls = get_solver(name)
    with pytest.raises(TypeError, match=rf"{cls.__name__} needs a Scene .* got str"):
        cls("rope.toml")


@pytest.mark.parametrize("name", BUILTIN)
def test_another_solvers_settings_are_refused(name):
    cls = get_solver(name)
    other = get_solver("csm" if name == "pbd" else "pbd").Settings()
    with pytest.raises(TypeError, match=rf"settings must be {cls.Settings.__name__}, got "
                                        rf"{type(other).__name__}"):
        cls(_scene(name), other)


def test_settings_are_checked_before_the_scene_is_compiled():
    compiled = []

    class Probe:
        Settings = dict

    with pytest.raises(TypeError, match="settings must be dict, got list"):
        solver_inputs(Probe, _scene("pbd"), [], compiled.append)
    assert compiled == []
    assert solver_inputs(Probe, _scene("pbd"), {"a": 1}, lambda s: "model") == ("model", {"a": 1})


@pytest.mark.parametrize("name", ("pbd", "der", "csm"))
def test_a_compiled_model_is_taken_as_it_is(name):
    cls = get_solver(name)
    first = cls(_scene(name))
    second = cls(first.model)
    assert second.model is first.model
    assert second.scene is first.scene


def test_the_docstring_example_holds():
    import doctest

    import strandlab.sim.solver as module

    finder = doctest.DocTestFinder()
    runner = doctest.DocTestRunner()
    for t in finder.find(module.solver_inputs, "solver_inputs", globs=vars(module)):
        runner.run(t)
    assert runner.failures == 0 and runner.tries >= 6
