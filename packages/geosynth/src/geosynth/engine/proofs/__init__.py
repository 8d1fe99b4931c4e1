"""Proofs: tracing and textbook form, minimal supports, and the replay checker."""
