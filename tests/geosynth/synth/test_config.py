"""Generator configurations: the bundled default, and clear errors for bad files."""

from __future__ import annotations

from pathlib import Path

import pytest

from geosynth.engine import default_definitions, parse_problem
from geosynth.synth import SynthConfigError, config_from_mapping, load_config
from geosynth.synth._config import placeholders


def test_default_config_rules_name_known_constructions() -> None:
    config = load_config()
    defs = default_definitions()
    assert config.name == "default" and config.start_rules("calculation") and config.extend_rules("proving")
    for rule in (*config.start, *config.rules):
        calls = [c for part in rule.clause.split(";") for c in part.split("=", 1)[1].split(",")]
        assert {c.split()[0] for c in calls} <= set(defs), rule.clause
    for rule in config.start:
        assert parse_problem(rule.clause.format(angle=30, angle2=40)).points
    assert all(r.scale for r in config.start_rules("calculation"))


def test_placeholders_in_order() -> None:
    assert placeholders("{x} = s_angle {a} {b} {x} {angle}") == ("x", "a", "b", "angle")


def _base() -> dict[str, object]:
    return {
        "start": [{"clause": "a b c = triangle a b c", "tasks": ["proving"]}],
        "rules": [{"clause": "{x} = midpoint {x} {a} {b}"}],
    }


def test_a_minimal_mapping_is_valid() -> None:
    config = config_from_mapping(_base())
    assert config.extend_rules("calculation")[0].clause.startswith("{x}")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"rules": [{"clause": "{x} = midpoint {x} {q} {b}"}]}, "unknown placeholders"),
        ({"rules": [{"clause": "a = free a"}]}, "creates no point"),
        ({"goals": {"proving": {"tangent": 1}}}, "unknown goal types"),
        ({"start": [{"clause": "a b = segment a b"}]}, "has no scale segment"),
        ({"min_constructions": 5, "max_constructions": 2}, "exceeds max_constructions"),
        ({"rules": [{"clause": "{x} = midpoint {x} {a} {b}", "weight": 0}]}, "rules.0.weight"),
    ],
)
def test_bad_configs_name_the_problem(change: dict[str, object], message: str) -> None:
    with pytest.raises(SynthConfigError, match=message):
        config_from_mapping({**_base(), **change})


def test_bad_files(tmp_path: Path) -> None:
    with pytest.raises(SynthConfigError, match="does not exist"):
        load_config(tmp_path / "nope.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("start: [unclosed")
    with pytest.raises(SynthConfigError, match="not valid YAML"):
        load_config(bad)
    bad.write_text("- 1\n- 2\n")
    with pytest.raises(SynthConfigError, match="must be a mapping"):
        load_config(bad)
    with pytest.raises(SynthConfigError, match="no bundled synthesis config named 'tiny'"):
        load_config("tiny")
