"""Floating-point plane geometry and the numeric sketch of each construction (the lowest layer)."""
