"""The engine's layout: imports point one way, and code outside the engine uses its public API.

Imports are read with :mod:`ast` (nothing is imported), so a violation is reported with the file and line
that makes it. The layer order is data (:data:`LAYERS`); docs/engine.md describes the same folders.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
GEOSYNTH = Path("packages/geosynth/src/geosynth")
ENGINE = GEOSYNTH / "engine"

LAYERS = ("geometry", "language", "diagram", "store", "algebra", "deduction", "proofs", "")
"""Engine folders from the bottom up; ``""`` is the engine's top level (solver, workers, Ray, files).

A module may import modules of its own layer and of the layers before it, never of a later one. Two
places differ from the plain reading "language < diagram < deduction < algebra < proofs": ``geometry``
(float geometry and the construction sketches) sits below ``language`` because the construction
definitions check each sketch name against the sketch table when ``defs.txt`` is parsed; and the fact
store has a layer of its own below ``algebra``, because the algebraic systems are built from the store
while the deductive loop in ``deduction`` calls the algebra after each pass over the rules.
"""

SCANNED = ("apps", "bench", "tests", "packages")
"""Folders whose Python files are checked (``packages/geosynth/src`` by the engine's own rules)."""

WHITE_BOX = ("tests", "bench")
"""Folders that may import an engine sub-module (tests of internals, benchmarks that instrument them)."""

PRIVATE_WHITE_BOX = Path("tests/geosynth")
"""The one folder outside geosynth that may import its private modules (not the engine's): its own tests."""

EXEMPT: set[tuple[str, str]] = set()
"""Known imports of a private geosynth module outside geosynth (none)."""


SKIPPED_PARTS = {".venv", "__pycache__", "node_modules", "build"}


def _python_files(base: Path) -> Iterator[Path]:
    for path in sorted(base.rglob("*.py")):
        if not SKIPPED_PARTS.intersection(path.relative_to(base).parts):
            yield path


def _module_name(root: Path, path: Path) -> str:
    parts = list(path.relative_to(root / GEOSYNTH.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(root: Path, name: str) -> bool:
    """Whether ``name`` (a dotted ``geosynth`` name) is a module or package of the source tree."""
    if name != "geosynth" and not name.startswith("geosynth."):
        return False
    path = root / GEOSYNTH.parent / Path(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    """Every ``geosynth`` module a file imports, with its line.

    ``from M import n`` counts as importing ``M``, and ``M.n`` as well when that is a module or when ``M``
    is ``geosynth`` and ``n`` is private (``from geosynth import _x``). A private name of a module
    (``from geosynth.engine.deduction.deductive import _Numeric``) is not a module: tests may use one.
    Relative imports are resolved against the file's package.
    """
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level and not path.is_relative_to(root / GEOSYNTH.parent):
                continue  # a relative import of another package
            if node.level:
                package = _module_name(root, path).split(".")
                if path.name != "__init__.py":
                    package.pop()
                base = package[: len(package) - node.level + 1]
                module = ".".join([*base, module] if module else base)
            yield node.lineno, module
            for alias in node.names:
                full = f"{module}.{alias.name}"
                if (module == "geosynth" and alias.name.startswith("_")) or _is_module(root, full):
                    yield node.lineno, full


def _geosynth_imports(root: Path, path: Path) -> Iterator[tuple[int, str]]:
    for line, name in imports(root, path):
        if name == "geosynth" or name.startswith("geosynth."):
            yield line, name


def _private(name: str) -> bool:
    """A geosynth module with a private part anywhere after ``geosynth.`` (``geosynth.synth._aux``)."""
    return any(part.startswith("_") for part in name.split(".")[1:])


def _sealed(name: str) -> bool:
    """``geosynth._x`` or any engine module with a private part (``geosynth.engine.language._y``).

    These stay private to geosynth's own tests as well.
    """
    parts = name.split(".")
    if len(parts) > 1 and parts[1].startswith("_"):
        return True
    return parts[:2] == ["geosynth", "engine"] and any(p.startswith("_") for p in parts[2:])


def _layer(name: str) -> int:
    """Position in :data:`LAYERS` of an engine module or package (``geosynth.engine...``)."""
    parts = name.split(".")[2:]
    if len(parts) == 1 and parts[0] not in LAYERS:
        return LAYERS.index("")  # a module at the engine's top level
    if parts[0] not in LAYERS:
        raise AssertionError(f"{name}: engine folder {parts[0]!r} is not a layer of LAYERS")
    return LAYERS.index(parts[0])


def _once_per_line(found: list[tuple[Path, int, str]]) -> list[str]:
    """One message per import statement (``from a.b import c`` imports both ``a.b`` and ``a.b.c``)."""
    seen: set[tuple[Path, int]] = set()
    messages: list[str] = []
    for rel, line, message in found:
        if (rel, line) not in seen:
            seen.add((rel, line))
            messages.append(f"{rel.as_posix()}:{line}: {message}")
    return messages


def outside_violations(root: Path) -> list[str]:
    """Imports from outside ``packages/geosynth/src`` that bypass the public API.

    No file there imports a private geosynth module (a name with a part after ``geosynth.`` that starts
    with an underscore), except that geosynth's own tests (:data:`PRIVATE_WHITE_BOX`) may test the private
    modules of its subpackages; only tests and benchmarks import an engine sub-module.
    """
    found: list[tuple[Path, int, str]] = []
    for top in SCANNED:
        if not (root / top).is_dir():
            continue
        for path in _python_files(root / top):
            rel = path.relative_to(root)
            if rel.is_relative_to(GEOSYNTH.parent):
                continue
            white_box = rel.parts[0] in WHITE_BOX
            own_tests = rel.is_relative_to(PRIVATE_WHITE_BOX)
            for line, name in _geosynth_imports(root, path):
                allowed = (own_tests and not _sealed(name)) or (rel.as_posix(), name) in EXEMPT
                if _private(name) and not allowed:
                    found.append((rel, line, f"imports the private module {name}"))
                elif name.startswith("geosynth.engine.") and not white_box:
                    found.append((rel, line, f"imports {name}; use the public API in geosynth.engine"))
    return _once_per_line(found)


def engine_violations(root: Path) -> list[str]:
    """Imports inside the engine that point up a layer or out of the engine."""
    found: list[tuple[Path, int, str]] = []
    for path in _python_files(root / ENGINE):
        rel = path.relative_to(root)
        own = _module_name(root, path)
        mine = _layer(own) if own != "geosynth.engine" else len(LAYERS)
        for line, name in _geosynth_imports(root, path):
            if name == "geosynth.errors":
                continue
            if name != "geosynth.engine" and not name.startswith("geosynth.engine."):
                found.append((rel, line, f"the engine imports {name} (only the engine and geosynth.errors)"))
            elif name == "geosynth.engine":
                if own != "geosynth.engine":
                    found.append((rel, line, "imports the engine's public API from inside the engine"))
            elif _layer(name) > mine:
                layer = LAYERS[_layer(name)] or "top"
                found.append(
                    (rel, line, f"{own} ({LAYERS[mine] or 'top'}) imports {name} ({layer}), a later layer")
                )
    return _once_per_line(found)


def subpackage_violations(root: Path) -> list[str]:
    """Imports of the engine by ``synth``, ``calc`` and ``mts`` that go past ``geosynth.engine``."""
    found: list[tuple[Path, int, str]] = []
    for sub in ("synth", "calc", "mts"):
        for path in _python_files(root / GEOSYNTH / sub):
            rel = path.relative_to(root)
            for line, name in _geosynth_imports(root, path):
                if name.startswith("geosynth.engine.") or (
                    _sealed(name) and not name.startswith(f"geosynth.{sub}.")
                ):
                    found.append((rel, line, f"imports {name}; use the public API in geosynth.engine"))
    return _once_per_line(found)


def test_code_outside_geosynth_uses_the_public_engine_api() -> None:
    assert outside_violations(ROOT) == []


def test_engine_layers_import_downward_only() -> None:
    assert engine_violations(ROOT) == []


def test_synth_calc_and_mts_import_the_engine_through_its_api() -> None:
    assert subpackage_violations(ROOT) == []


def test_every_layer_is_a_folder_of_the_engine() -> None:
    folders = {p.name for p in (ROOT / ENGINE).iterdir() if (p / "__init__.py").is_file()}
    assert folders == {layer for layer in LAYERS if layer}


def _plant(root: Path, rel: str, line: str) -> None:
    path = root / rel
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}\n", encoding="utf-8")


PLANTED_FILES = (
    "apps/app.py",
    "bench/b.py",
    "tests/t.py",
    "tests/geosynth/t.py",
    "packages/geotts/src/geotts/m.py",
    "packages/geosynth/scripts/s.py",
    f"{GEOSYNTH}/synth/gen.py",
    f"{GEOSYNTH}/synth/_render.py",
)
"""Files of the small tree the planted-import tests check (each a bare module)."""


def _small_tree(root: Path) -> None:
    for name in ("language/problem.py", "diagram/realise.py", "proofs/replay.py", "store/factstore.py"):
        target = root / ENGINE / name
        target.parent.mkdir(parents=True, exist_ok=True)
        (target.parent / "__init__.py").touch()
        target.write_text('"""A module."""\n', encoding="utf-8")
    (root / ENGINE / "__init__.py").touch()
    for name in PLANTED_FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text('"""A module."""\n', encoding="utf-8")
    (root / GEOSYNTH / "synth" / "__init__.py").touch()


@pytest.mark.parametrize(
    ("rel", "line", "check", "expected"),
    [
        ("apps/app.py", "from geosynth._realise import Diagram", outside_violations, "private module"),
        ("apps/app.py", "from geosynth import _deductive", outside_violations, "geosynth._deductive"),
        ("apps/app.py", "from geosynth.engine.proofs import proof", outside_violations, "public API"),
        ("tests/t.py", "import geosynth.engine.proofs._hidden", outside_violations, "private module"),
        ("apps/app.py", "from geosynth.synth._aux import AuxExample", outside_violations, "synth._aux"),
        ("apps/app.py", "from geosynth.synth import _render", outside_violations, "synth._render"),
        ("bench/b.py", "import geosynth.mts._llm", outside_violations, "private module"),
        ("packages/geotts/src/geotts/m.py", "from geosynth.calc._x import y", outside_violations, "calc._x"),
        ("tests/t.py", "from geosynth.synth._aux import with_auxiliary", outside_violations, "synth._aux"),
        (
            "tests/geosynth/t.py",
            "from geosynth.engine.language._y import z",
            outside_violations,
            "private module",
        ),
        ("packages/geosynth/scripts/s.py", "import geosynth._x", outside_violations, "geosynth._x"),
        (
            f"{ENGINE}/language/problem.py",
            "from geosynth.engine.proofs.replay import x",
            engine_violations,
            "later",
        ),
        (f"{ENGINE}/language/problem.py", "from ..diagram import realise", engine_violations, "later"),
        (
            f"{ENGINE}/store/factstore.py",
            "import geosynth.synth",
            engine_violations,
            "imports geosynth.synth",
        ),
        (
            f"{GEOSYNTH}/synth/gen.py",
            "from geosynth.engine.diagram.realise import _place",
            subpackage_violations,
            "API",
        ),
    ],
)
def test_the_checks_report_a_planted_import(
    tmp_path: Path, rel: str, line: str, check: Callable[[Path], list[str]], expected: str
) -> None:
    _small_tree(tmp_path)
    assert check(tmp_path) == []
    _plant(tmp_path, rel, line)
    found = check(tmp_path)
    assert len(found) == 1 and expected in found[0] and found[0].startswith(rel), found


@pytest.mark.parametrize(
    "line",
    [
        "from geosynth.synth._aux import with_auxiliary",
        "from geosynth.synth import _render",
        "import geosynth.mts._llm",
    ],
)
def test_geosynth_tests_may_import_a_private_subpackage_module(tmp_path: Path, line: str) -> None:
    _small_tree(tmp_path)
    _plant(tmp_path, "tests/geosynth/t.py", line)
    assert outside_violations(tmp_path) == []
