from __future__ import annotations

from importlib import resources
from pathlib import Path

import pytest

from geosynth import DefinitionError, default_definitions, load_definitions, parse_definitions
from geosynth.engine import parse_definition
from geosynth.engine.geometry.sketches import SKETCHES


def test_bundled_definitions_load() -> None:
    defs = default_definitions()
    # AlphaGeometry's 68 and the 5 that Newclid's problem files add
    assert len(defs) == 68 + 5
    assert {"acute_triangle", "between", "between_bound", "iso_trapezoid2", "eqratio6"} <= defs.keys()
    on_line = defs["on_line"]
    assert (on_line.args, on_line.outputs, on_line.inputs, on_line.params) == (
        ("x", "a", "b"),
        ("x",),
        ("a", "b"),
        (),
    )
    assert [s.text() for s in on_line.sketches] == ["line a b"]
    assert defs["s_angle"].params == ("y",)
    assert defs["rectangle"].outputs == ("a", "b", "c", "d")
    assert defs["2l1c"].outputs == ("x", "y", "z", "i")
    assert [s.text() for s in defs["intersection_ll"].preconditions] == ["npara a b c d", "ncoll a b c d"]


def test_every_sketch_is_implemented_and_used() -> None:
    used = {s.name for d in default_definitions().values() for s in d.sketches}
    assert used == set(SKETCHES)


def test_definitions_print_and_parse_back() -> None:
    for definition in default_definitions().values():
        assert parse_definition(definition.text()) == definition


def test_bundled_copy_matches_shared_data(alphageometry_dir: Path) -> None:
    folder = alphageometry_dir
    bundled = resources.files("geosynth.engine").joinpath("rules", "defs.txt").read_text(encoding="utf-8")
    assert bundled == (folder / "defs.txt").read_text(encoding="utf-8")
    # the defaults are AlphaGeometry's definitions, unchanged, plus the five of newclid_defs.txt
    shared = load_definitions(folder / "defs.txt")
    assert {k: v for k, v in default_definitions().items() if k in shared} == shared
    assert len(default_definitions()) == len(shared) + 5


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ("foo x a\nx : a\na = diff a\nx : zork x a\nline a a", "unknown predicate 'zork'"),
        ("foo x a\nx : a\na = diff a\nx : coll x a a\nnosuch a", "unknown sketch 'nosuch'"),
        ("foo x a\nx : a\na diff a\nx : coll x a a\nline a a", "lacks '='"),
        ("foo x a\nx : a\na = diff a", "expected 5 lines"),
        ("foo x a\nx : a\nb = diff b\nx : coll x b b\nline b b", "not arguments"),
    ],
)
def test_malformed_definitions_name_the_definition(block: str, message: str) -> None:
    with pytest.raises(DefinitionError, match=message) as info:
        parse_definition(block)
    assert info.value.source == "foo x a"


def test_duplicate_definitions_are_rejected() -> None:
    block = "foo x a b\nx : a b\na b = diff a b\nx : coll x a b\nline a b"
    with pytest.raises(DefinitionError, match="defined twice"):
        parse_definitions(f"{block}\n\n{block}\n")


def test_a_misplaced_blank_line_is_reported_with_its_line_number() -> None:
    block = "foo x a b\nx : a b\na b = diff a b\nx : coll x a b\nline a b"
    with pytest.raises(DefinitionError, match="line 7: empty header line"):
        parse_definitions(f"{block}\n\n\n{block.replace('foo', 'bar')}\n")
