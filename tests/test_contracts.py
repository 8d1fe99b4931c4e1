"""Workspace contracts: layering, packaging metadata, lazy heavy imports, and standalone installs."""

from __future__ import annotations

import ast
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = {
    "geodsl": ROOT / "packages" / "geodsl",
    "geotts": ROOT / "packages" / "geotts",
    "geosynth": ROOT / "packages" / "geosynth",
    "geoprm": ROOT / "packages" / "geoprm",
    "geotrain": ROOT / "packages" / "geotrain",
    "geo_cli": ROOT / "apps" / "cli",
}
OURS = set(PACKAGES)
#: Who may import whom (docs/architecture.md). Everything not listed is forbidden.
ALLOWED: dict[str, set[str]] = {
    "geodsl": set(),
    "geotts": set(),
    "geosynth": {"geodsl", "geotts"},
    "geoprm": {"geotts"},
    "geotrain": {"geodsl", "geoprm", "geotts"},
    "geo_cli": OURS - {"geo_cli"},
}
HEAVY = ("torch", "transformers", "vllm", "deepspeed", "ray", "matplotlib", "peft", "trl", "accelerate")


def _imported_roots(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    roots: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            roots.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            roots.add(node.module.split(".")[0])
    return roots


def _source_files(pkg: str) -> list[Path]:
    src = PACKAGES[pkg] / "src" / pkg
    return sorted(src.rglob("*.py"))


@pytest.mark.parametrize("pkg", sorted(PACKAGES))
def test_imports_point_downward_only(pkg: str) -> None:
    offenders = {
        f"{path.relative_to(ROOT)} imports {root}"
        for path in _source_files(pkg)
        for root in _imported_roots(path) & OURS
        if root != pkg and root not in ALLOWED[pkg]
    }
    assert not offenders, sorted(offenders)


@pytest.mark.parametrize("pkg", sorted(PACKAGES))
def test_package_metadata(pkg: str) -> None:
    base = PACKAGES[pkg]
    meta = tomllib.loads((base / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert (base / "README.md").read_text(encoding="utf-8").strip(), "README must not be empty"
    assert (base / "src" / pkg / "py.typed").exists()
    module = __import__(pkg)
    assert module.__version__ == meta["version"]


def _modules_after(code: str) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", code + "\nimport json, sys; print(json.dumps(sorted(sys.modules)))"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


def test_importing_every_package_stays_light() -> None:
    loaded = _modules_after("import geodsl, geotts, geosynth, geoprm, geotrain")
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def test_geo_help_does_not_import_heavy_dependencies() -> None:
    code = (
        "import sys\nfrom geo_cli.main import app\ntry:\n    app(['--help'])\nexcept SystemExit:\n    pass\n"
    )
    loaded = _modules_after(code)
    assert not {m for m in loaded if m.split(".")[0] in HEAVY}


def _fresh_venv_with(tmp_path: Path, package: str) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not on PATH")
    venv = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "UV_PROJECT_ENVIRONMENT"}}
    subprocess.run(
        [uv, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True, env=env, timeout=300
    )
    py = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(py), str(PACKAGES[package])],
        check=True,
        env=env,
        timeout=600,
    )
    return py


def _installed(py: Path) -> set[str]:
    out = subprocess.run(
        [
            str(py),
            "-c",
            "import importlib.metadata as m, json; "
            "print(json.dumps(sorted(d.metadata['Name'].lower() for d in m.distributions())))",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(out.stdout))


@pytest.mark.network
def test_geodsl_installs_and_runs_alone(tmp_path: Path) -> None:
    py = _fresh_venv_with(tmp_path, "geodsl")
    installed = _installed(py)
    assert "geodsl" in installed
    assert not installed & {"geotts", "geosynth", "geoprm", "geotrain", "geo-cli", "torch", "numpy"}
    script = (
        "import geodsl\nr = geodsl.execute('Gougu N0 N1 V0 Get V0', ['3', '4'])\nprint(round(r.answer, 3))\n"
    )
    out = subprocess.run([str(py), "-c", script], capture_output=True, text=True, check=True, timeout=120)
    assert out.stdout.strip() == "5.0"
