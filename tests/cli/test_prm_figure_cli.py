"""``geo prm figure-data`` and ``figure-eval``: critiques labelled exactly on realised figures, a critic judged on them."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from geo_cli import _figure_prm as fp
from geo_cli.main import app
from geodsl import instantiate
from geoprm import parse_critique
from geoprm.labelled import build_labelled_records, labelled_critique
from geosynth.synth import figure_step_labels, load_figured

runner = CliRunner()
FIGURED = (
    Path(__file__).parent / "data" / "figured_pgps.json"
)  # 6 problems on 2 figures, realised figures kept


def _reference(problem: Any) -> str:
    return f"Solution:\n{instantiate(problem.record.expression, problem.record.numbers).text}"


def test_policy_solutions_are_labelled_on_the_figure_and_wrong_ones_get_a_verified_correction() -> None:
    problems = load_figured(FIGURED)
    rhombus = problems[0]  # ADBC is a rhombus, AC = 3, BC = x: Equal N1 N0 Get x
    samples = {
        rhombus.record.id: [
            _reference(rhombus),  # Equal x 3 Get x
            "Solution:\nEqual x 5 Get x",  # x is 3 on the figure
            "Solution:\n3 Equal x Get x",  # does not start with an operator
            "Solution:\nEqual x 3",  # no Get: no answer to judge
        ]
    }
    labelled = fp.labelled_solutions(
        [rhombus], samples, corruptions=1, references=False, seed=0, report=print
    )
    assert labelled.errors == 0
    by_id = {s.id: s for s in labelled.solutions}
    unfinished = by_id[f"{rhombus.record.id}/s3"]
    assert not unfinished.finished and unfinished.labels == (True,)  # no Get: it answers nothing
    good, wrong_value, malformed = (by_id[f"{rhombus.record.id}/s{i}"] for i in range(3))
    assert good.labels == (True, True) and good.correction is None and good.answer == good.gold == 3.0
    assert wrong_value.labels[0] is False and wrong_value.steps[0].failed == "figure"
    assert wrong_value.steps[0].figure_note == "x = 5; the figure has x = 3."  # x stays lower case
    assert malformed.step_texts == ("3", "Equal x", "Get x") and malformed.steps[0].failed == "logic"
    assert malformed.steps[0].logic_note.startswith("It is not a well-formed step")
    origins = [s.origin for s in labelled.solutions]
    assert origins[:4] == ["policy"] * 4 and len(origins) == 5 and origins[4].startswith("corrupted:")
    for solution in (wrong_value, malformed):
        assert solution.correction is not None
        first = solution.first_wrong
        assert first is not None
        fixed = figure_step_labels(rhombus, " ".join([*solution.step_texts[:first], solution.correction]))
        assert fixed.steps[first].correct  # the correction holds on the figure
        critique = labelled_critique(solution)
        assert critique.first_error == first + 1 and critique.correction == solution.correction
    built = build_labelled_records(labelled.solutions, rng=random.Random(0), balanced=False)
    assert built.drops[unfinished.id] == "unfinished"
    assert all(parse_critique(r.completion).has_error == r.has_error for r in built.records)


def test_corrections_rename_an_unknown_the_solution_already_uses() -> None:
    problems = {p.record.id: p for p in load_figured(FIGURED)}
    problem = problems["calculation-1-0000000-2"]  # Find AD: Sum N1 V0 N2 Gougu N0 V0 V1 Get V1
    reference = fp.layout().split(instantiate(problem.record.expression, problem.record.numbers).text)
    # a first step whose V0 is a quantity of the figure, but not the one the reference's V0 is
    steps = ["Equal V0 9.2", "Get V0"]
    labels = figure_step_labels(problem, " ".join(steps))
    assert labels.labels == (True, False)
    fix = fp.correction(problem, steps, 1, reference)
    assert fix is not None and "V0" not in fix.split()[-1:]  # a fresh unknown, not the solution's V0
    assert figure_step_labels(problem, " ".join([steps[0], fix])).steps[1].correct


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("torch")
    from geotts.testing import tiny_qwen_vl

    return tiny_qwen_vl(tmp_path_factory.mktemp("tiny") / "lm", kind="causal_lm", seed=0)


def test_figure_data_then_figure_eval_with_a_real_tiny_policy_and_critic(tiny: Path, tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"  # the same problems without their figures: joined by id
    plain = {
        k: {f: v for f, v in r.items() if f != "realised_figure"}
        for k, r in json.loads(FIGURED.read_text()).items()
    }
    corpus.write_text(json.dumps(plain), encoding="utf-8")
    out = tmp_path / "data"
    args = ["prm", "figure-data", str(corpus), "--figured", str(FIGURED), "--policy", str(tiny), "--out", str(out),
            "--limit", "3", "--samples", "2", "--max-tokens", "6", "--batch-size", "2"]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["problems"] == 3 and summary["errors"] == 0
    samples = [json.loads(x) for x in (out / "samples.jsonl").read_text().splitlines()]
    assert [len(s["texts"]) for s in samples] == [2, 2, 2]
    records = [json.loads(x) for x in (out / "records.jsonl").read_text().splitlines()]
    assert records and summary["records"] == len(records)
    assert all(parse_critique(r["completion"]).has_error == r["has_error"] for r in records)
    assert sum(r["has_error"] for r in records) == len(records) / 2  # balanced
    assert "19,614" in (out / "data_table.md").read_text()
    again = runner.invoke(app, args)  # resumed: nothing sampled twice, the same records
    assert again.exit_code == 0 and (out / "records.jsonl").read_text().splitlines() == [
        json.dumps(r, sort_keys=True) for r in records
    ]
    flipped = tmp_path / "data-verdict-first"  # the same samples (resumed, no policy call), verdicts first
    flipped.mkdir()
    shutil.copy(out / "samples.jsonl", flipped / "samples.jsonl")
    result = runner.invoke(app, [str(flipped) if a == str(out) else a for a in args] + ["--verdict-first"])
    assert result.exit_code == 0, result.output
    turned = [json.loads(x) for x in (flipped / "records.jsonl").read_text().splitlines()]
    assert [r["id"] for r in turned] == [r["id"] for r in records]
    for new, old in zip(turned, records, strict=True):
        assert parse_critique(new["completion"]) == parse_critique(old["completion"])
        assert (
            new["completion"].splitlines()[1].startswith("Step verdict: ")
            and new["completion"] != old["completion"]
        )
    assert json.loads((flipped / "stats.json").read_text())["verdict_first"] is True

    solutions = (out / "solutions.jsonl").read_text().splitlines()
    broken = json.loads(solutions[0])
    broken["id"] = "broken/1"
    del broken["steps"][0]["correct"]  # a step without its judgement
    (out / "solutions.jsonl").write_text("\n".join([*solutions, json.dumps(broken)]) + "\n")
    judged = tmp_path / "eval"
    eval_args = ["prm", "figure-eval", str(out), "--model", str(tiny), "--out", str(judged),
                 "--max-new-tokens", "12", "--ns", "1,2", "--batch-size", "4"]  # fmt: skip
    result = runner.invoke(app, eval_args)
    assert result.exit_code == 0, result.output
    assert "(record broken/1): steps.0.correct: Field required" in " ".join(result.stderr.split())
    report = json.loads((judged / "summary.json").read_text())
    assert report["bad_lines"] == 1 and report["solutions"] == len(solutions)
    f1 = report["step_f1"]["all"]
    assert 0.0 <= f1["macro_f1"] <= 1.0 and f1["solutions"] == len(solutions) - report["unfinished"]
    assert [row["n"] for row in report["bon"]["curves"]][:2] == [1, 2]
    assert len((judged / "critiques.jsonl").read_text().splitlines()) == len(solutions)
    assert runner.invoke(app, eval_args).exit_code == 0  # resumed: every critique is read back
    assert len((judged / "critiques.jsonl").read_text().splitlines()) == len(solutions)


def test_a_corpus_without_figures_and_no_source_of_them_is_one_error(tmp_path: Path) -> None:
    corpus = tmp_path / "corpus.json"
    corpus.write_text(json.dumps({k: {f: v for f, v in r.items() if f != "realised_figure"}
                                  for k, r in json.loads(FIGURED.read_text()).items()}))  # fmt: skip
    result = runner.invoke(
        app, ["prm", "figure-data", str(corpus), "--policy", "nowhere", "--out", str(tmp_path / "o")]
    )
    assert result.exit_code == 1
    message = " ".join(result.stderr.split())
    assert (
        message.startswith("error:") and "carries no realised figures" in message and "--figured" in message
    )
    assert "Traceback" not in result.output
