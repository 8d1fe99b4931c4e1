"""Every dependency a package declares (core or extra) is imported by that package's own code."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
#: Distribution folder -> import package.
PACKAGES = {
    "packages/geodsl": "geodsl",
    "packages/geotts": "geotts",
    "packages/geosynth": "geosynth",
    "packages/geoprm": "geoprm",
    "packages/geotrain": "geotrain",
    "apps/cli": "geo_cli",
}
#: Distributions whose import name differs from their name.
IMPORT_NAMES = {"pillow": "PIL", "pyyaml": "yaml", "geo-cli": "geo_cli"}
#: Dependencies used without an import in the package's code, and what uses them.
USED_WITHOUT_IMPORT = {
    (
        "packages/geotrain",
        "deepspeed",
    ): "the ZeRO launch configs it ships (accelerate/zero2.yaml, zero3.yaml)",
}
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def _requirement_names(folder: str) -> dict[str, str]:
    """Declared distribution -> where it is declared (``dependencies`` or ``extra NAME``)."""
    project = tomllib.loads((ROOT / folder / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {"dependencies": project.get("dependencies", [])}
    declared |= {f"extra {k}": v for k, v in project.get("optional-dependencies", {}).items()}
    names: dict[str, str] = {}
    for where, requirements in declared.items():
        for requirement in requirements:
            match = _NAME.match(requirement)
            assert match, f"{folder}: unreadable requirement {requirement!r}"
            names[match.group(0).lower().replace("_", "-")] = where
    return names


def _used_modules(package: str, folder: str) -> set[str]:
    """Top-level modules the package's code imports, statically or by name (``import_module("x")``)."""
    used: set[str] = set()
    for path in (ROOT / folder / "src" / package).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                used.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                used.add(node.module.split(".")[0])
            elif isinstance(node, ast.Constant) and isinstance(node.value, str):
                used.add(node.value.split(".")[0])  # a module named in a string: imported lazily
    return used


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_every_declared_dependency_is_imported(folder: str) -> None:
    package = PACKAGES[folder]
    used = _used_modules(package, folder)
    unused = {
        f"{name} ({where})"
        for name, where in _requirement_names(folder).items()
        if name != package.replace("_", "-")
        and (folder, name) not in USED_WITHOUT_IMPORT
        and IMPORT_NAMES.get(name, name.replace("-", "_")) not in used
    }
    assert not unused, (
        f"{folder}/pyproject.toml declares dependencies its code never imports: {sorted(unused)}"
    )
