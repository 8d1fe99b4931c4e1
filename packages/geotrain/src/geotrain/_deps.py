"""Lazy imports of the heavy optional dependencies, with the install command on failure."""

from __future__ import annotations

import contextlib
import importlib
import warnings
from collections.abc import Generator
from typing import Any

from geotrain.errors import MissingExtraError

__all__ = ("quiet_peft", "require_train")


def require_train(module: str) -> Any:
    """Import ``module`` from the ``train`` extra, or fail with the command that installs it.

    Args:
        module: A module name (``torch``, ``transformers``, ``peft``, ...).

    Returns:
        The imported module.

    Raises:
        MissingExtraError: when the module cannot be imported.
    """
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingExtraError(f'geotrain needs {module}: pip install "geotrain[train]" ({exc})') from exc


@contextlib.contextmanager
def quiet_peft() -> Generator[None]:
    """Silence the deprecation warning peft triggers in transformers 5 (a library detail, not the user's)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*is_gradient_checkpointing.*", category=FutureWarning)
        yield
