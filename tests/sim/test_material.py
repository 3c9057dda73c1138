"""Material and cross-section properties (sim/material.py).

References: circular section A = pi r^2, I = pi r^4 / 4, J = pi r^4 / 2 (validation.md);
rectangle w x t: I1 = w t^3 / 12 (bending about d1, the width direction), I2 = t w^3 / 12,
Roark's torsion constant J = a b^3 (1/3 - 0.21 (b/a) (1 - b^4 / (12 a^4))) (a >= b), which gives
0.1406 a^4 for a square (Roark, Table 10.7: 2.25 (a/2)^4 = 0.1406 a^4) and tends to a b^3 / 3 for a
thin strip; G = E / (2 (1 + nu)); stiffness (E I1, E I2, G J); every invalid input is a
ValueError naming the field.
"""
import dataclasses
import math

import pytest

from strandlab import Material


def test_circular_section():
    # Reference: A = pi r^2, I1 = I2 = pi r^4 / 4, J = pi r^4 / 2 (validation.md).
    r = 0.003
    m = Material(young_modulus=2e9, density=1100.0, radius=r)
    assert m.area == pytest.approx(math.pi * r ** 2, rel=1e-15)
    i1, i2 = m.second_moments
    assert i1 == pytest.approx(math.pi * r ** 4 / 4, rel=1e-15)
    assert i2 == pytest.approx(math.pi * r ** 4 / 4, rel=1e-15)
    assert m.torsion_constant == pytest.approx(math.pi * r ** 4 / 2, rel=1e-15)
    assert m.contact_radius == r
    assert not m.is_rectangular


def test_rectangular_section():
    # Reference: I1 = w t^3 / 12, I2 = t w^3 / 12; Roark's J; A = w t; contact radius w / 2.
    w, t = 0.01, 0.002
    m = Material(young_modulus=1e9, density=900.0, width=w, thickness=t)
    assert m.area == pytest.approx(w * t, rel=1e-15)
    i1, i2 = m.second_moments
    assert i1 == pytest.approx(w * t ** 3 / 12, rel=1e-15)
    assert i2 == pytest.approx(t * w ** 3 / 12, rel=1e-15)
    a, b = w, t
    assert m.torsion_constant == pytest.approx(a * b ** 3 * (1 / 3 - 0.21 * (b / a) * (1 - b ** 4 / (12 * a ** 4))), rel=1e-15)
    assert m.contact_radius == pytest.approx(w / 2)
    assert m.is_rectangular
    # width and thickness swapped: I1 and I2 swap, J unchanged
    s = Material(young_modulus=1e9, density=900.0, width=t, thickness=w)
    assert s.second_moments == pytest.approx((i2, i1), rel=1e-15)
    assert s.torsion_constant == pytest.approx(m.torsion_constant, rel=1e-15)


def test_rectangular_torsion_constant_limits():
    # Reference: Roark: square J = 0.1406 a^4; thin strip J -> a b^3 / 3.
    sq = Material(young_modulus=1e9, density=1000.0, width=0.01, thickness=0.01)
    assert sq.torsion_constant == pytest.approx(0.1406 * 0.01 ** 4, rel=2e-3)
    strip = Material(young_modulus=1e9, density=1000.0, width=0.1, thickness=0.0001)
    assert strip.torsion_constant == pytest.approx(0.1 * 0.0001 ** 3 / 3, rel=1e-3)


def test_stiffness_and_shear_modulus():
    # Reference: G = E / (2 (1 + nu)) (default nu = 0.5), K = (E I1, E I2, G J);
    # polar inertia per length rho (I1 + I2).
    r, E, rho = 0.002, 3e9, 1200.0
    m = Material(young_modulus=E, density=rho, radius=r)
    assert m.shear == pytest.approx(E / 3.0, rel=1e-15)
    k1, k2, k3 = m.stiffness
    assert k1 == pytest.approx(E * math.pi * r ** 4 / 4, rel=1e-15)
    assert k2 == pytest.approx(k1, rel=1e-15)
    assert k3 == pytest.approx(E / 3.0 * math.pi * r ** 4 / 2, rel=1e-15)
    assert m.polar_inertia_per_length == pytest.approx(rho * math.pi * r ** 4 / 2, rel=1e-15)
    nu = Material(young_modulus=E, density=rho, radius=r, poisson_ratio=0.3)
    assert nu.shear == pytest.approx(E / 2.6, rel=1e-15)
    g = Material(young_modulus=E, density=rho, radius=r, shear_modulus=1e9)
    assert g.shear == 1e9
    assert g.stiffness[2] == pytest.approx(1e9 * math.pi * r ** 4 / 2, rel=1e-15)


@pytest.mark.parametrize("kwargs, field", [
    ({"young_modulus": 0.0}, "young_modulus"),
    ({"young_modulus": -1e6}, "young_modulus"),
    ({"young_modulus": float("nan")}, "young_modulus"),
    ({"young_modulus": float("inf")}, "young_modulus"),
    ({"density": 0.0}, "density"),
    ({"density": -1000.0}, "density"),
    ({"density": float("nan")}, "density"),
    ({"radius": 0.0}, "radius"),
    ({"radius": -0.001}, "radius"),
    ({"radius": float("inf")}, "radius"),
    ({"shear_modulus": 0.0}, "shear_modulus"),
    ({"shear_modulus": -1.0}, "shear_modulus"),
    ({"poisson_ratio": 0.6}, "poisson_ratio"),
    ({"poisson_ratio": -1.0}, "poisson_ratio"),
])
def test_invalid_values_raise_naming_the_field(kwargs, field):
    # Reference: Material docstring (positive finite E, rho, r, G; -1 < nu <= 0.5).
    args = {"young_modulus": 1e7, "density": 1000.0, "radius": 0.005}
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        Material(**args)


@pytest.mark.parametrize("kwargs, match", [
    ({"width": 0.01}, "width and thickness"),
    ({"thickness": 0.001}, "width and thickness"),
    ({"width": 0.0, "thickness": 0.001}, "width"),
    ({"width": 0.01, "thickness": -0.001}, "thickness"),
    ({}, "radius"),
])
def test_invalid_sections_raise(kwargs, match):
    # Reference: Material docstring: a circle needs a radius, a rectangle width and thickness.
    with pytest.raises(ValueError, match=match):
        Material(young_modulus=1e7, density=1000.0, **kwargs)


def test_material_is_frozen_and_round_trips():
    # Reference: Material is a frozen dataclass; to_dict holds the constructor arguments.
    m = Material(young_modulus=1e7, density=1000.0, width=0.01, thickness=0.002, radius=0.004)
    with pytest.raises(dataclasses.FrozenInstanceError):
        m.density = 5.0
    assert Material(**m.to_dict()) == m
    assert m.contact_radius == 0.004


@pytest.mark.parametrize("kwargs, message", [
    (dict(young_modulus=1e300), r"young_modulus must be at most 1e\+15 Pa \(past any material's\), "
                                r"got 1e\+300"),
    (dict(shear_modulus=2e15), r"shear_modulus must be at most 1e\+15 Pa"),
    (dict(density=1e7), r"density must be at most 1e\+06 kg/m\^3"),
])
def test_parameters_past_any_material_are_refused(kwargs, message):
    """A slip of exponent or units, found before it overflows a solver's settings; the
    stiffest and densest real materials (diamond, osmium) pass."""
    base = dict(young_modulus=1.2e12, density=22590.0, radius=0.001)
    Material(**base)
    with pytest.raises(ValueError, match=message):
        Material(**{**base, **kwargs})


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(radius=1e300), ValueError, r"radius must be at most 1000 m \(past any material's\)"),
    (dict(radius=1e-300), ValueError, r"radius must be at least 1e-10 m \(below any real "
                                      r"section\), got 1e-300"),
    (dict(radius=None, width=0.01, thickness=1e-12), ValueError, "thickness must be at least"),
    (dict(young_modulus="5e7"), TypeError, "young_modulus must be a number, got str '5e7'"),
    (dict(density=True), TypeError, "density must be a number, got bool True"),
])
def test_sections_past_any_real_one_and_values_that_are_no_numbers_are_refused(kwargs, error,
                                                                                message):
    """A radius of 1e300 m overflowed the section's area, one of 1e-300 m underflowed its
    second moment to zero (a division by zero in the solver); a string was kept and failed in
    the solver's kernels."""
    base = dict(young_modulus=5e7, density=1100.0, radius=0.004)
    Material(**{**base, "radius": 1e-10})
    with pytest.raises(error, match=message):
        Material(**{**base, **kwargs})
