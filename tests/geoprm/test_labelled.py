"""geoprm.labelled: critiques from exact step labels, balanced records, the data table, bad lines."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from pydantic import ValidationError

from geoprm import critic_prompt, parse_critique
from geoprm.data import DataError
from geoprm.evaluation import step_f1
from geoprm.labelled import (
    LabelledSolution,
    LabelledStep,
    build_labelled_records,
    data_table,
    labelled_critique,
    read_labelled,
)
from geotts import StepJudgement

QUESTION = "m \\angle ACE = 105\nFind y."


def _step(text: str, correct: bool = True, failed: str | None = None) -> LabelledStep:
    return LabelledStep.model_validate(
        {
            "text": text,
            "correct": correct,
            "failed": failed,
            "intent": f"Use {text.split()[0]}.",
            "figure_note": "It fits the figure."
            if failed != "figure"
            else "y = 95 is no angle of the figure.",
            "logic_note": "Its operands are known." if failed != "logic" else "Reads 20; the answer is 75.",
        }
    )


def _solution(
    sid: str, *labels: tuple[str, bool, str | None], problem: str = "p1", **extra: object
) -> LabelledSolution:
    steps = tuple(_step(t, ok, f) for t, ok, f in labels)
    wrong = any(not ok for _, ok, _ in labels)
    data = {"id": sid, "problem": problem, "question": QUESTION, "steps": steps,
            "correction": "Sum 105 y 180" if wrong else None, **extra}  # fmt: skip
    return LabelledSolution.model_validate(data)


RIGHT = (("Sum 105 y 180", True, None), ("Get y", True, None))
FIGURE_SLIP = (("Sum 105 V0 180", True, None), ("Sum y 85 V0", False, "figure"), ("Get y", False, "logic"))


def test_the_critique_judges_up_to_the_first_wrong_step_and_corrects_it() -> None:
    critique = labelled_critique(_solution("a", *FIGURE_SLIP))
    assert critique.judgements == ("Correct", "Incorrect")
    assert critique.steps[1].image_judgement == "Incorrect" and critique.steps[1].logic_judgement == "Correct"
    assert critique.steps[1].image_analysis == "y = 95 is no angle of the figure."
    assert critique.correction == "Sum 105 y 180"
    right = labelled_critique(_solution("b", *RIGHT))
    assert right.judgements == ("Correct", "Correct") and right.correction is None


def test_a_wrong_step_names_the_check_it_fails_and_a_correct_one_none() -> None:
    with pytest.raises(ValidationError, match="names the check it fails"):
        _step("Sum 1 2 V0", correct=False)
    with pytest.raises(ValidationError, match="names the check it fails"):
        _step("Sum 1 2 V0", correct=True, failed="logic")
    with pytest.raises(ValidationError, match="at least 1 item"):
        LabelledSolution(id="x", problem="p", question=QUESTION, steps=())
    with pytest.raises(DataError, match="solution c: step 2 is wrong but no correction"):
        labelled_critique(_solution("c", *FIGURE_SLIP).model_copy(update={"correction": None}))


def test_records_drop_duplicates_and_wrong_solutions_without_a_correction_then_balance() -> None:
    solutions = [
        _solution("p1/s0", *RIGHT),
        _solution("p1/s1", *RIGHT),  # the same steps again
        _solution("p1/s2", *FIGURE_SLIP),
        _solution("p2/s0", *FIGURE_SLIP, problem="p2", origin="corrupted:operand"),
        _solution("p2/s1", ("Get y", False, "logic"), problem="p2").model_copy(update={"correction": None}),
        _solution("p2/r", *RIGHT, problem="p2", origin="reference"),
        _solution("p3/s0", ("Equal 105 y", False, "figure"), ("Get y", False, "logic"), problem="p3"),
        _solution("p3/s1", ("Sum 105 y 180", True, None), problem="p3", finished=False),  # no answer step
    ]
    built = build_labelled_records(solutions, rng=random.Random(0))
    assert built.drops["p1/s1"] == "duplicate" and built.drops["p2/s1"] == "no_correction"
    assert built.drops["p3/s1"] == "unfinished"
    stats = built.stats
    assert (stats.solutions, stats.problems, stats.with_error, stats.without_error) == (8, 3, 2, 2)
    assert stats.dropped == {"unfinished": 1, "duplicate": 1, "no_correction": 1, "balance": 1}
    assert sum(stats.first_error) == 2 and sum(stats.failed.values()) == 2
    for record in built.records:
        solution = next(s for s in solutions if s.id == record.id)
        assert record.prompt == critic_prompt(QUESTION, solution.step_texts)
        parsed = parse_critique(record.completion)  # strict: the canonical text form
        assert parsed.has_error == record.has_error == (solution.first_wrong is not None)
    unbalanced = build_labelled_records(solutions, rng=random.Random(0), balanced=False)
    assert unbalanced.stats.records == 5 and unbalanced.stats.first_error == (1, 2)
    assert unbalanced.stats.by_origin["reference"] == {"with_error": 0, "without_error": 1}
    assert "p2/r" in {r.id for r in unbalanced.records}
    with pytest.raises(DataError, match="unique"):
        build_labelled_records([solutions[0], solutions[0]], rng=random.Random(0))


def test_the_data_table_sets_our_counts_beside_the_papers() -> None:
    built = build_labelled_records(
        [_solution("a", *RIGHT), _solution("b", *FIGURE_SLIP, problem="p2")], rng=random.Random(0)
    )
    table = data_table(built.stats)
    assert "| samples (solutions) | 19,614 | 2 |" in table
    assert "| with an incorrect step | 9,061 (46.2%) | 1 (50.0%) |" in table
    assert "| every step correct | 10,553 (53.8%) | 1 (50.0%) |" in table
    assert "step 2: 1" in table and "figure: 1, logic: 0" in table


def test_bad_lines_get_one_line_errors_naming_the_record_and_reading_goes_on(tmp_path: Path) -> None:
    good = _solution("p1/s0", *RIGHT).model_dump(mode="json")
    no_steps = {**good, "id": "p1/s1", "steps": []}
    no_check = {**good, "id": "p1/s2", "steps": [{**good["steps"][0], "correct": False}]}
    no_judgement = {
        **good,
        "id": "p1/s3",
        "steps": [{k: v for k, v in good["steps"][0].items() if k != "correct"}],
    }
    lines = [
        json.dumps(good),
        "{not json",
        json.dumps(no_steps),
        json.dumps(no_check),
        json.dumps(no_judgement),
    ]
    path = tmp_path / "solutions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = list(read_labelled(path))
    assert [s.id for s, _ in out if s is not None] == ["p1/s0"]
    errors = [e for _, e in out if e is not None]
    assert errors[0].startswith(f"{path}: line 2: not valid JSON")
    assert "line 3 (record p1/s1): steps:" in errors[1]
    assert "line 4 (record p1/s2): steps.0:" in errors[2] and "names the check it fails" in errors[2]
    assert "line 5 (record p1/s3): steps.0.correct: Field required" in errors[3]
    assert all("\n" not in e for e in errors)


def test_step_f1_counts_the_steps_up_to_the_first_wrong_one() -> None:
    pairs = [
        # right solution, critic passes both steps
        ((True, True), StepJudgement(scores=(0.9, 0.9))),
        # wrong at step 2 (of 3), critic flags step 2: steps 1-2 compared, both right
        ((True, False, False), StepJudgement(scores=(0.9, 0.2), first_wrong=1, correction="x")),
        # wrong at step 1, critic passes it and flags step 2: step 1 compared, missed
        ((False, True), StepJudgement(scores=(0.8, 0.3), first_wrong=1, correction="x")),
        # right solution, critic flags step 1: both steps count as flagged
        ((True, True), StepJudgement(scores=(0.4,), first_wrong=0)),
    ]
    f1 = step_f1(pairs)
    assert (f1.correct_as_correct, f1.correct_as_incorrect, f1.incorrect_as_correct, f1.incorrect_as_incorrect) == (
        3, 2, 1, 1,
    )  # fmt: skip
    assert f1.steps == 7 and f1.solutions == 4
    assert f1.f1_correct == pytest.approx(2 * 3 / (2 * 3 + 2 + 1))
    assert f1.f1_incorrect == pytest.approx(2 * 1 / (2 * 1 + 1 + 2))
    assert f1.macro_f1 == pytest.approx((f1.f1_correct + f1.f1_incorrect) / 2)
    assert (f1.first_wrong_found, f1.with_error, f1.all_correct_found, f1.without_error) == (1, 2, 1, 2)
