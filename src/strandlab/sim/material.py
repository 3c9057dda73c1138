"""Physical materials and cross-sections of strands (SI units)."""
from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

from .validate import show

__all__ = ["Material", "PHYSICAL_MAX", "PHYSICAL_MIN", "positive_parameter"]


#: Upper bounds of material parameters, past any material's (the stiffest, diamond: E about
#: 1.2e12 Pa; the densest, osmium: 22 590 kg/m^3) by about 800 and 44 times, and sections
#: from an atom's size to a kilometre: a value past them is a slip of units or exponent, and
#: overflows (or, a section's fourth power, underflows) the solvers' stiffness-scaled settings.
PHYSICAL_MAX = {"young_modulus": (1e15, "Pa"), "shear_modulus": (1e15, "Pa"),
                "density": (1e6, "kg/m^3"), "radius": (1e3, "m"), "width": (1e3, "m"),
                "thickness": (1e3, "m")}
#: Lower bounds of the same kind (zero excluded for every parameter).
PHYSICAL_MIN = {"radius": (1e-10, "m"), "width": (1e-10, "m"), "thickness": (1e-10, "m")}


def positive_parameter(name: str, value, owner: str = "") -> float:
    """``value`` (a real number, not a string or a boolean) as a float, checked positive and
    finite, and within its :data:`PHYSICAL_MIN` and :data:`PHYSICAL_MAX` where it has them;
    TypeError or ValueError naming ``owner: name``."""
    label = f"{owner}: {name}" if owner else name
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{label} must be a number, got {type(value).__name__} {show(value)}")
    v = float(value)
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{label} must be a positive finite number, got {show(value)}")
    top, unit = PHYSICAL_MAX.get(name, (math.inf, ""))
    low, _ = PHYSICAL_MIN.get(name, (0.0, ""))
    if not low <= v <= top:
        side = f"at most {top:g} {unit} (past any material's)" if v > top else \
            f"at least {low:g} {unit} (below any real section)"
        raise ValueError(f"{label} must be {side}, got {show(value)}")
    return v


@dataclass(frozen=True)
class Material:
    """Material and cross-section of a strand.

    Parameters
    ----------
    young_modulus : Young's modulus E [Pa].
    density : mass density rho [kg/m^3].
    radius : radius of a circular section [m]; for a rectangular (ribbon) section give
        ``width`` and ``thickness`` instead and leave ``radius`` as the contact radius
        (defaults to half the width).
    shear_modulus : G [Pa]; default ``E / (2 (1 + poisson_ratio))``.
    poisson_ratio : used only when ``shear_modulus`` is not given (default 0.5).
    width, thickness : rectangular section [m]; ``width`` lies along the material direction
        ``d1`` (towards the ghost point), ``thickness`` along ``d2``.

    Section properties (all SI): area ``A``; second moments ``I1`` (bending about ``d1``) and
    ``I2`` (bending about ``d2``); torsion constant ``J``. Circle: ``I1 = I2 = pi r^4 / 4``,
    ``J = pi r^4 / 2``. Rectangle ``w x t`` (``w >= t`` or not): ``I1 = w t^3 / 12``,
    ``I2 = t w^3 / 12``, ``J = a b^3 (1/3 - 0.21 (b/a) (1 - b^4 / (12 a^4)))`` with ``a`` the longer
    and ``b`` the shorter side (Roark). Stiffnesses: ``K11 = E I1``, ``K22 = E I2``,
    ``K33 = G J`` [N m^2]; stretching ``E A`` [N].
    """

    young_modulus: float
    density: float
    radius: float | None = None
    shear_modulus: float | None = None
    poisson_ratio: float = 0.5
    width: float | None = None
    thickness: float | None = None

    def __post_init__(self):
        positive_parameter("young_modulus", self.young_modulus)
        positive_parameter("density", self.density)
        if self.shear_modulus is not None:
            positive_parameter("shear_modulus", self.shear_modulus)
        nu = float(self.poisson_ratio)
        if not (-1.0 < nu <= 0.5):
            raise ValueError(f"poisson_ratio must be in (-1, 0.5], got {show(self.poisson_ratio)}")
        rect = self.width is not None or self.thickness is not None
        if rect:
            if self.width is None or self.thickness is None:
                raise ValueError("a rectangular section needs both width and thickness")
            positive_parameter("width", self.width)
            positive_parameter("thickness", self.thickness)
            if self.radius is not None:
                positive_parameter("radius", self.radius)
        else:
            if self.radius is None:
                raise ValueError("material needs a radius (or width and thickness)")
            positive_parameter("radius", self.radius)

    # -- section -------------------------------------------------------------------------
    @property
    def is_rectangular(self) -> bool:
        return self.width is not None

    @property
    def contact_radius(self) -> float:
        """Radius used for collisions [m]."""
        if self.radius is not None:
            return float(self.radius)
        return 0.5 * float(self.width)

    @property
    def area(self) -> float:
        """Cross-section area A [m^2]."""
        if self.is_rectangular:
            return float(self.width) * float(self.thickness)
        return math.pi * float(self.radius) ** 2

    @property
    def second_moments(self) -> tuple[float, float]:
        """(I1, I2) [m^4]: bending about d1 and about d2."""
        if self.is_rectangular:
            w, t = float(self.width), float(self.thickness)
            return w * t ** 3 / 12.0, t * w ** 3 / 12.0
        i = math.pi * float(self.radius) ** 4 / 4.0
        return i, i

    @property
    def torsion_constant(self) -> float:
        """J [m^4]."""
        if self.is_rectangular:
            a = max(float(self.width), float(self.thickness))
            b = min(float(self.width), float(self.thickness))
            return a * b ** 3 * (1.0 / 3.0 - 0.21 * (b / a) * (1.0 - b ** 4 / (12.0 * a ** 4)))
        return math.pi * float(self.radius) ** 4 / 2.0

    @property
    def shear(self) -> float:
        """G [Pa]."""
        if self.shear_modulus is not None:
            return float(self.shear_modulus)
        return float(self.young_modulus) / (2.0 * (1.0 + float(self.poisson_ratio)))

    @property
    def stiffness(self) -> tuple[float, float, float]:
        """(K11, K22, K33) = (E I1, E I2, G J) [N m^2]."""
        i1, i2 = self.second_moments
        e = float(self.young_modulus)
        return e * i1, e * i2, self.shear * self.torsion_constant

    @property
    def polar_inertia_per_length(self) -> float:
        """rho (I1 + I2): rotational inertia about the centreline per unit length [kg m]."""
        i1, i2 = self.second_moments
        return float(self.density) * (i1 + i2)

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in ("young_modulus", "density", "radius", "shear_modulus",
                                               "poisson_ratio", "width", "thickness")
                if getattr(self, k) is not None}
