"""Exact algebra over the fact store: elimination, angle / ratio / length systems, transversals, triangles."""
