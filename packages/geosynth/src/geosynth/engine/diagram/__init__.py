"""Diagrams: the numeric realiser, numeric truth of relations, diagrammatic relations, quantity values."""
