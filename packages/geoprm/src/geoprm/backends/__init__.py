"""Reward-model backends; each one needs an extra and is imported on its own (``geoprm.backends.transformers``)."""
