"""Discrete elastic rods (Bergou et al. 2008, 2010) integrated implicitly."""
