"""Rods, shells and solids on one simplicial mesh (Chang et al. 2019), on the shared implicit
integrator."""
