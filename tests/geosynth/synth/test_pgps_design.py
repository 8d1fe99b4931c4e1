"""How many steps PGPS problems take (``pgps_design``): the odds of growing a problem forward and backward.

The default odds are those every bundled corpus was made with (the golden digests of
``test_pgps_writing.py`` pin the problems they make); higher odds make more problems of several steps on
the same figures, each still executing to its answer, and the setting stays out of configurations that
do not change it.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from geodsl import execute
from geodsl.data import load_pgps
from geosynth.engine import parse_problem, realise
from geosynth.synth import (
    PGPSDesign,
    SynthConfigError,
    config_from_mapping,
    load_config,
    step_histogram,
    write_dataset,
)
from geosynth.synth._pgps_out import PGPSProblem, pgps_problems
from geosynth.synth._sample import Figure

SHAPES = (
    "a b = segment a b; c = on_tline c a a b, s_angle a b c 35; d = foot d a b c",
    "a b = segment a b; c = on_bline c a b, s_angle b a c 40; d = midpoint d a b; e = midpoint e a c",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = on_pline d c a b, on_tline d a a b",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = parallelogram a b c d; e = foot e d a b",
    "a b = segment a b; c = on_circle c a b, s_angle b a c 50; d = mirror d b a",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = circle d a b c; e = midpoint e a b; "
    "f = intersection_lc f e d c",
    "a b c d = isquare a b c d; e = eq_triangle e d c",
)


def _problems(growth: PGPSDesign | None) -> list[PGPSProblem]:
    out: list[PGPSProblem] = []
    for i, text in enumerate(SHAPES):
        for seed in range(3):
            problem = parse_problem(text)
            figure = Figure(problem, realise(problem, np.random.default_rng(seed)), ("a", "b"), 10)
            out.extend(pgps_problems(figure, source=f"s{i}-{seed}", seed=seed, count=4, growth=growth))
    return out


def test_the_default_odds_are_those_of_a_design_left_out() -> None:
    assert [p.record for p in _problems(PGPSDesign())] == [p.record for p in _problems(None)]


def test_higher_odds_make_more_problems_of_several_steps_and_each_executes_to_its_answer() -> None:
    plain = _problems(None)
    grown = _problems(PGPSDesign(forward=0.8, backward=0.7))
    plain_steps = step_histogram(p.record for p in plain)
    grown_steps = step_histogram(p.record for p in grown)
    assert grown_steps.get("1", 0) / len(grown) < plain_steps["1"] / len(plain)  # fewer one-step problems
    assert max(map(int, grown_steps)) >= 3
    for problem in grown:
        record = problem.record
        answer = float(record.answer)
        assert execute(record.expression, record.numbers).answer == pytest.approx(answer, abs=5e-3), record.id


def test_the_design_stays_out_of_a_default_configuration_and_round_trips_when_set(tmp_path: Path) -> None:
    config = load_config("pgps")
    assert "pgps_design" not in json.loads(config.model_dump_json())
    grown = config.model_copy(
        update={"pgps_design": PGPSDesign(forward=0.6, backward=0.5), "time_limit": None}
    )
    write_dataset(grown, 1, 0, tmp_path, task="calculation", pgps=3)
    manifest = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["config"]["pgps_design"] == {"forward": 0.6, "backward": 0.5}
    assert config_from_mapping(manifest["config"]) == grown  # a rerun of the folder makes the same corpus
    assert load_pgps(tmp_path / "pgps" / "pgps.json")


def test_odds_outside_zero_to_one_are_refused_naming_the_field() -> None:
    data = json.loads(load_config("pgps").model_dump_json())
    data["pgps_design"] = {"forward": 1.5}
    with pytest.raises(SynthConfigError, match=r"pgps_design\.forward"):
        config_from_mapping(data, "steps.yaml")
