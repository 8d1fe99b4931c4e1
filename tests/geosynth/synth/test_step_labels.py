"""Step labels from the realised figure: the figure travels with a PGPS problem, and each program step is
judged on it (reference programs all correct, corrupted steps caught, bad input named)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from geodsl import instantiate
from geodsl.data import PGPSRecord, load_pgps
from geosynth import parse_problem, realise
from geosynth.mts import MTSConfig, load_dataset, run_mts
from geosynth.synth import (
    CORRUPTION_KINDS,
    FIGURE_FIELD,
    DatasetError,
    FiguredProblem,
    FigurePoint,
    RealisedFigure,
    StepLabelError,
    corrupt_program,
    figure_step_labels,
    load_config,
    load_figured,
    write_dataset,
)
from geosynth.synth._pgps_out import PGPSProblem, pgps_problems, problem_from_line
from geosynth.synth._sample import Figure

SHAPES = (  # a right triangle with the altitude to its hypotenuse, a parallelogram with a height, a circle
    "a b = segment a b; c = on_tline c a a b, s_angle a b c 35; d = foot d a b c",
    "a b = segment a b; c = s_angle b a c 50, s_angle a b c -70; d = parallelogram a b c d; e = foot e d a b",
    "a b = segment a b; c = on_circle c a b, s_angle b a c 50; d = mirror d b a",
    "a b c d = isquare a b c d; e = eq_triangle e d c",
)


def _problems() -> list[PGPSProblem]:
    out: list[PGPSProblem] = []
    for k, text in enumerate(SHAPES):
        problem = parse_problem(text)
        for seed in range(2):
            figure = Figure(problem, realise(problem, np.random.default_rng(seed)), ("a", "b"), 10)
            out.extend(pgps_problems(figure, source=f"t{k}s{seed}", seed=seed, count=4))
    return out


PROBLEMS = _problems()


def _triangle(program_answer: float = 4.0) -> FiguredProblem:
    """A 3-4-5 right triangle: AB = 3, BC = 5, the right angle at A; the question asks for AC = y."""
    record = PGPSRecord.build(
        id="tri",
        text="Find y.",
        stru_clauses=["line A B", "line A C", "line B C"],
        sem_clauses=["AB = 3", "BC = 5", "AC = y", "AB \\perp AC on A"],
        expression="Gougu N0 N2 N1 Get y",
        answer=f"{program_answer:.3f}",
        type="Pythagorean Theorem",
        choices=(4.0, 5.0, 6.0, 7.0),
    )
    figure = RealisedFigure(
        points=(
            FigurePoint(name="a", x=0.0, y=0.0),
            FigurePoint(name="b", x=3.0, y=0.0),
            FigurePoint(name="c", x=0.0, y=4.0),
        ),
        lines=(("a", "b"), ("a", "c"), ("b", "c")),
        circles=(),
        variables={"y": 4.0},
        goal=4.0,
        exact=True,
    )
    return FiguredProblem(record=record, figure=figure)


def test_every_step_of_the_generators_reference_programs_is_correct() -> None:
    assert len(PROBLEMS) >= 20
    for problem in PROBLEMS:
        figured = problem.figured()
        record = problem.record
        indexed = figure_step_labels(figured, record.expression)
        values = figure_step_labels(figured, instantiate(record.expression, record.numbers).text)
        assert indexed.style == "indexed" and values.style == "values"
        for labels in (indexed, values):
            assert all(labels.labels), (record.id, [(s.step, s.reason) for s in labels.steps])
            assert labels.first_wrong is None and labels.until_first_wrong() == labels.steps
            assert labels.steps[-1].step.startswith("Get")


def test_the_first_corrupted_step_is_labelled_wrong() -> None:
    rng = random.Random(0)
    counts = {kind: [0, 0] for kind in CORRUPTION_KINDS}
    for problem in PROBLEMS:
        for kind in CORRUPTION_KINDS:
            corrupted = corrupt_program(problem.record.expression, problem.record.numbers, kind, rng)
            if corrupted is None:
                continue
            labels = figure_step_labels(problem.figured(), corrupted.program)
            assert all(labels.labels[: corrupted.step])  # the steps before it are untouched
            counts[kind][0] += 1
            if not labels.at(corrupted.step).correct:
                counts[kind][1] += 1
                assert labels.first_wrong == corrupted.step
                assert labels.until_first_wrong()[-1].index == corrupted.step
    assert all(total >= 5 for total, _ in counts.values()), counts
    assert counts["operator"][1] >= 0.8 * counts["operator"][0], counts
    assert counts["constant"][1] >= 0.8 * counts["constant"][0], counts
    assert counts["operand"][1] >= 0.6 * counts["operand"][0], counts


def test_a_right_triangle_side_is_checked_against_the_figure() -> None:
    problem = _triangle()
    good = figure_step_labels(problem, "Gougu N0 N2 N1 Get y")
    assert good.labels == (True, True)
    assert good.steps[0].solved == pytest.approx({"y": 4.0})
    # the hypotenuse taken for a leg: y = sqrt(34) is no side of the figure, and the answer read is wrong
    swapped = figure_step_labels(problem, "Gougu N0 N1 N2 Get y")
    assert swapped.labels == (False, False)
    assert "y = 5.83095" in swapped.steps[0].reason
    assert "wrong step 0" in swapped.steps[1].reason
    # an intermediate unknown must be a length of the figure: AC = 4 is, 2 * 5 = 10 is not
    assert figure_step_labels(problem, "Gougu N0 V0 N1 Get V0").labels == (True, True)
    assert figure_step_labels(problem, "Multiple N1 C2 V0 Gougu N0 y N1 Get y").labels == (False, True, True)


def test_instantiated_programs_need_values_the_problem_gives() -> None:
    problem = _triangle()
    assert figure_step_labels(problem, "Gougu 3 y 5 Get y").labels == (True, True)
    made_up = figure_step_labels(problem, "Gougu 3 y 7 Get y")
    assert made_up.labels == (False, False)
    assert made_up.steps[0].reason == "operand 7 is not a value the problem gives"
    # a constant is a value the problem may use: 2 * 2 = 4 is AC
    assert figure_step_labels(problem, "Multiple 2 2 y Get y").labels == (True, True)


def test_a_step_with_nothing_left_to_solve_must_hold() -> None:
    problem = _triangle()
    labels = figure_step_labels(problem, "Gougu N0 N2 N1 Gougu N0 y N1 Gougu N0 N1 y Get y")
    assert labels.labels == (True, True, False, True)
    assert "equation fails" in labels.steps[2].reason


def test_bad_input_is_one_error_naming_the_record() -> None:
    problem = _triangle()
    bare = FiguredProblem(record=problem.record, figure=None)
    with pytest.raises(StepLabelError, match="record tri: no realised figure"):
        figure_step_labels(bare, "Gougu N0 N2 N1 Get y")
    with pytest.raises(
        StepLabelError, match="record tri: the program does not parse: unknown operator 'Gogu'"
    ):
        figure_step_labels(problem, "Gogu N0 N2 N1 Get y")
    with pytest.raises(StepLabelError, match="record tri: the program does not parse"):
        figure_step_labels(problem, "Gougu 3 y Get y")
    labels = figure_step_labels(problem, "Gougu N0 N2 N1 Get y")
    with pytest.raises(StepLabelError, match="record tri: step index 5 is out of range"):
        labels.at(5)
    out_of_range = figure_step_labels(problem, "Gougu N0 N7 N1 Get y")
    assert out_of_range.steps[0].reason == "operand N7: the problem has no N7"


def test_the_figure_travels_with_the_problem_and_readers_ignore_it(tmp_path: Path) -> None:
    problems = PROBLEMS[:6]
    plain = [problem.line() for problem in problems]
    figured = [problem.line(figure=True) for problem in problems]
    assert all(FIGURE_FIELD not in line for line in plain)
    for line, full in zip(plain, figured, strict=True):
        assert {k: v for k, v in full.items() if k != FIGURE_FIELD} == line
        again = problem_from_line(json.loads(json.dumps(full)))
        assert again.line(figure=True) == full and again.written.figure is not None
    with_path, without_path = tmp_path / "with.jsonl", tmp_path / "without.jsonl"
    with_path.write_text("".join(json.dumps(e) + "\n" for e in figured), encoding="utf-8")
    without_path.write_text("".join(json.dumps(e) + "\n" for e in plain), encoding="utf-8")
    assert load_pgps(with_path) == load_pgps(without_path)
    loaded, bare = load_dataset(with_path), load_dataset(without_path)
    assert loaded.problems == bare.problems and loaded.drops == bare.drops == ()
    read = load_figured(with_path)
    assert [p.figure for p in read] == [p.written.figure for p in problems]
    assert all(p.figure is None for p in load_figured(without_path))
    labels = figure_step_labels(read[0], read[0].record.expression)
    assert all(labels.labels)


def test_a_malformed_figure_is_named(tmp_path: Path) -> None:
    entry = PROBLEMS[0].line(figure=True)
    entry[FIGURE_FIELD] = {"points": "nowhere"}
    path = tmp_path / "bad.jsonl"
    path.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=f"record {entry['id']}: field 'realised_figure'"):
        load_figured(path)


def test_a_dataset_written_with_figures_keeps_them_in_its_corpus(tmp_path: Path) -> None:
    config = load_config("pgps").model_copy(update={"time_limit": None})
    out = tmp_path / "ds"
    write_dataset(config, 2, 5, out, task="calculation", shard_size=2, pgps=2, pgps_figures=True)
    corpus = out / "pgps" / "pgps.json"
    entries = json.loads(corpus.read_text(encoding="utf-8"))
    assert entries and all(FIGURE_FIELD in e for e in entries.values())
    assert json.loads((out / "manifest.json").read_text(encoding="utf-8"))["pgps_figures"] is True
    read = load_figured(corpus)
    assert [p.record for p in read] == load_pgps(corpus)
    for problem in read:
        assert all(figure_step_labels(problem, problem.record.expression).labels)


def test_geo_synth_mts_reads_problems_with_figures_unchanged(tmp_path: Path) -> None:
    runs: dict[bool, Path] = {}
    for figure in (True, False):
        corpus = {
            p.record.id: {k: v for k, v in p.line(figure=figure).items() if k != "id"} for p in PROBLEMS[:3]
        }
        path = tmp_path / f"corpus-{figure}.json"
        path.write_text(json.dumps(corpus), encoding="utf-8")
        runs[figure] = run_mts(path, tmp_path / f"out-{figure}", MTSConfig(jobs=1, mixtures=False)).out
    assert runs[True] != runs[False]
    skip = {"manifest.json", "stats.json", "timings.json"}  # they name the input file and time the run
    files = sorted(p.relative_to(runs[True]) for p in runs[True].rglob("*") if p.is_file())
    assert files and files == sorted(
        p.relative_to(runs[False]) for p in runs[False].rglob("*") if p.is_file()
    )
    for name in files:
        if name.name not in skip:
            assert (runs[True] / name).read_bytes() == (runs[False] / name).read_bytes(), name
